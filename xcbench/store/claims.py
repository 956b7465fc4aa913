"""Claims on cells, so concurrent ``--resume`` runs into one results folder share the cells
out instead of measuring each one several times.

Before a run measures a cell it claims it: under the store lock it checks that no record of
the cell is stored and no live process holds a claim, then writes ``claims/<key>`` naming
its host and process id. The claim is removed once the cell's records are appended (or the
run ends). A claim whose process is gone (killed) is stale and is taken over, or removed when
its cell is stored already; a claim from another host is respected (its process cannot be
checked from here).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from .temporaries import (HOST, process_alive, remove_stale_temporaries,
                          temporary_prefix)

CLAIMS_DIR = "claims"


class CellClaims:
    """This process's claims on cells of the store ``store`` (a ResultStore)."""

    def __init__(self, store):
        self.store = store
        self.folder = store.path.parent / CLAIMS_DIR
        self.held: set[str] = set()
        self.me = {"host": HOST, "pid": os.getpid()}

    def _path(self, key: str) -> Path:
        return self.folder / key

    def holder(self, key: str) -> dict | None:
        """Who holds a live claim on ``key`` (None if nobody, or the holder is gone)."""
        try:
            owner = json.loads(self._path(key).read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(owner, dict):
            return None
        if owner.get("host") == self.me["host"] and not process_alive(int(owner.get("pid", -1))):
            return None
        return owner

    def claim(self, key: str, stored_keys) -> str:
        """Claim the cell named ``key`` (its first record key) unless ``stored_keys(key)``
        says it is stored already or another live process holds it. Returns ``"claimed"``,
        ``"stored"`` or ``"taken"``. Call with the store lock held."""
        if stored_keys(key):
            self._drop_if_stale(key)
            return "stored"
        owner = self.holder(key)
        if owner is not None and owner != self.me:
            return "taken"
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f"{temporary_prefix(key)}tmp"
        tmp.write_text(json.dumps(self.me))
        os.replace(tmp, self._path(key))
        self.held.add(key)
        return "claimed"

    def _drop_if_stale(self, key: str) -> None:
        """Remove a claim whose process is gone. On a stored cell nothing else would: its
        process was killed after storing the cell's records and before dropping the claim,
        and no run takes over a stored cell."""
        if key not in self.held and self.holder(key) is None:  # gone, or no claim at all
            self._path(key).unlink(missing_ok=True)

    def release(self, key: str) -> None:
        """Drop this process's claim on ``key`` (no-op if it holds none)."""
        if key in self.held:
            self.held.discard(key)
            self._path(key).unlink(missing_ok=True)

    def release_all(self) -> None:
        """Drop this process's claims, and the claims and temporaries left by processes of
        this host that are gone; remove the folder once it is empty."""
        for key in list(self.held):
            self.release(key)
        if not self.folder.is_dir():
            return
        # under the lock claims are written with: no run takes a stale claim over while it
        # is removed, nor writes a claim into the folder between its mkdir and this rmdir
        with self.store.lock():
            for key in [p.name for p in self.folder.iterdir() if not p.name.startswith(".")]:
                self._drop_if_stale(key)
            remove_stale_temporaries(self.folder)
            try:
                self.folder.rmdir()  # only when empty
            except OSError:
                pass
