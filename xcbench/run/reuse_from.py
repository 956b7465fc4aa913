"""``--reuse-from FOLDER``: take a measurement another results folder already holds.

Two reports often plan the same measurement (the 20-iteration one-vs-all fit on PTB serves
three of them). A record's key names the method, its parameters, the dataset and its
checksum, the seed, the measuring run options and the code that measured it, so a record of
another folder with the key a cell needs is that cell's measurement, made by this code.
``Lenders`` copies such records (``ok`` ones only) with their raw outputs into the run's
folder instead of measuring them again; ``--resume`` then reuses them as its own.
"""
from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from ..store.results import ResultStore
from .resume import made_in_process


class Lenders:
    """The ``ok`` records of the ``folders`` (results folders or their ``results.jsonl``),
    by key, less those made ``--in-process`` when the borrowing run is ``isolated``
    (``resume``'s rule): the first folder that holds a key lends it, its newest record of the key."""

    def __init__(self, folders=(), isolated: bool = True):
        self.by_key: dict[str, tuple[dict, ResultStore]] = {}
        self.copied: Counter = Counter()  # folder -> records copied from it
        for folder in folders:
            store = ResultStore(folder)
            if not store.path.is_file():
                raise ValueError(f"--reuse-from {folder}: no results file there "
                                 f"({store.path}); name a folder that `xcbench run --out` "
                                 "wrote")
            newest = {r["key"]: r for r in store.records()
                      if r["status"] == "ok" and not (isolated and made_in_process(r))}
            for key, record in newest.items():
                self.by_key.setdefault(key, (record, store))

    def lend(self, store: ResultStore, keys, stored: dict) -> int:
        """Copy into ``store`` the lent records of ``keys`` it has no usable record of
        (``stored``: key -> record, updated with what is copied); return how many."""
        wanted = [k for k in keys if k not in stored and k in self.by_key]
        if not wanted:
            return 0
        with store.lock():  # another run into the same folder may have copied them
            have = {r["key"] for r in store.records() if r["status"] == "ok"}
            new = [store.adopt(*self.by_key[k]) for k in wanted if k not in have]
            store.append_many(new)
        for record in new:
            stored[record["key"]] = record
            self.copied[str(self.by_key[record["key"]][1].path.parent)] += 1
        return len(new)

    def summary(self) -> str | None:
        """"copied N record(s) made by this code from FOLDER", or None."""
        if not self.copied:
            return None
        return "--reuse-from: copied " + ", ".join(
            f"{n} record(s) made by this code from {folder}"
            for folder, n in self.copied.items())


def resolve_folders(folders, base: Path | None = None) -> list[Path]:
    """``folders`` as paths, relative ones taken from ``base`` (a suite file's folder), with
    ``..`` folded in so messages name the folder plainly."""
    out = []
    for folder in folders or ():
        path = Path(folder)
        out.append(path if path.is_absolute() or base is None
                   else Path(os.path.normpath(base / path)))
    return out
