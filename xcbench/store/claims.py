"""Claims on cells, so concurrent ``--resume`` runs into one results folder share the cells
out instead of measuring each one several times.

Before a run measures a cell it claims it: under the store lock it checks that no record of
the cell is stored and no live process holds a claim, then writes ``claims/<key>`` naming
its host and process id and a lease: the time until which the claim holds
(``LEASE_SECONDS`` ahead). The claiming run renews the lease while the cell runs
(:meth:`CellClaims.renew`, at most every ``RENEW_SECONDS``). The claim is removed once the
cell's records are appended (or the run ends). A claim is stale, taken over, or removed when
its cell is stored already, when its lease has expired (whatever its host: a run on another
machine, or in a container restarted under a new hostname, that stopped renewing it) or,
on this host, when its process is gone (killed).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .atomic import replace_atomically
from .temporaries import (HOST, process_alive, remove_stale_temporaries,
                          temporary_prefix)

CLAIMS_DIR = "claims"

#: seconds a claim holds without renewal; a run that measures renews it every RENEW_SECONDS
#: (clocks of the machines sharing a folder may differ by much less than this)
LEASE_SECONDS = 600.0
RENEW_SECONDS = 60.0


class CellClaims:
    """This process's claims on cells of the store ``store`` (a ResultStore)."""

    def __init__(self, store):
        self.store = store
        self.folder = store.path.parent / CLAIMS_DIR
        self.held: set[str] = set()
        self.me = {"host": HOST, "pid": os.getpid()}
        self.renewed = 0.0  # time.time() of the last renewal

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
        if _lease_end(owner, self._path(key)) < time.time():
            return None
        return owner

    def _write(self, key: str) -> None:
        """Write this process's claim on ``key`` with a fresh lease (atomically)."""
        from .results import StoreWriteError, why_not_written

        claim = json.dumps({**self.me, "lease_until": time.time() + LEASE_SECONDS})
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            replace_atomically(self._path(key), lambda f: f.write(claim.encode()),
                               prefix=temporary_prefix(key), suffix=".tmp")
        except OSError as exc:
            raise StoreWriteError(exc.errno, f"{self._path(key)}: the claim on a cell was not "
                                  f"written: {why_not_written(exc)}; nothing half-written was "
                                  "left. Free some space, then rerun with --resume") from exc

    def claim(self, key: str, stored_keys) -> str:
        """Claim the cell named ``key`` (its first record key) unless ``stored_keys(key)``
        says it is stored already or another live process holds it. Returns ``"claimed"``,
        ``"stored"`` or ``"taken"``. Call with the store lock held."""
        if stored_keys(key):
            self._drop_if_stale(key)
            return "stored"
        owner = self.holder(key)
        if owner is not None and not self._mine(owner):
            return "taken"
        self._write(key)
        self.held.add(key)
        return "claimed"

    def _mine(self, owner: dict) -> bool:
        return all(owner.get(k) == v for k, v in self.me.items())

    def renew(self, force: bool = False) -> None:
        """Push the lease of each claim this process holds ``LEASE_SECONDS`` ahead, at most
        every ``RENEW_SECONDS`` (unless ``force``). A claim another run has taken over
        meanwhile (this one stopped renewing for a whole lease) is left to it."""
        if not self.held or (not force and time.time() - self.renewed < RENEW_SECONDS):
            return
        self.renewed = time.time()
        for key in list(self.held):
            try:
                owner = json.loads(self._path(key).read_text())
            except (OSError, ValueError):
                owner = None
            if isinstance(owner, dict) and self._mine(owner):
                self._write(key)

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


def _lease_end(owner: dict, path: Path) -> float:
    """When a claim's lease ends: its ``lease_until``, or for a claim written without one
    (older xcbench) its file's modification time plus ``LEASE_SECONDS``."""
    try:
        return float(owner["lease_until"])
    except (KeyError, TypeError, ValueError):
        try:
            return path.stat().st_mtime + LEASE_SECONDS
        except OSError:
            return 0.0
