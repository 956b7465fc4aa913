"""The JSON-lines store of result records (a record itself: :mod:`xcbench.store.records`).

One record per measurement, built by :func:`~xcbench.store.records.build_record`. The records of one cell are
appended with a single ``write`` on a file opened with O_APPEND and then fsync'ed, under an
inter-process lock on the store (``filelock``), so concurrent runs into one folder never mix
lines and a killed runner never leaves half a cell. A write that fails part-way (disk full,
file size limit) is undone: the file is cut back to its old size and :class:`StoreWriteError`
says why. A partial last line left by anything else is fenced off before the next append,
and readers skip (and warn about) corrupt lines and records of other schema versions. Raw
outputs are written under a unique temporary name, then renamed; the temporaries a killed
run leaves are removed by the next run (:mod:`xcbench.store.temporaries`).
"""
from __future__ import annotations

import errno
import json
import os
import warnings
from pathlib import Path

import numpy as np

from . import raw_format
from .atomic import replace_atomically
from .identity import KEYED_OPTIONS, newest_per_measurement  # noqa: F401 - re-exported
# a record's own names, importable from the store as before
from .records import (SCHEMA_VERSION, STATUSES, build_record, effective_params,  # noqa: F401
                      encode_record, environment, run_key)
from .raw_format import RawFileError  # noqa: F401 - re-exported
from .temporaries import remove_stale_temporaries, temporary_prefix

#: schema versions this code reads; version 1 records have no ``path_cost``, ``memory`` or
#: ``raw`` sections (and keys computed without the run options)
READABLE_SCHEMA_VERSIONS = (1, SCHEMA_VERSION)
#: fields every readable record has
REQUIRED_FIELDS = ("schema_version", "key", "method", "params", "dataset", "seed", "status")
RESULTS_FILE = "results.jsonl"
RAW_DIR = "raw"
LOCK_FILE = ".results.lock"
RETIRED_FILE = "retired.jsonl"  # records moved out of a store by ResultStore.retire
#: errno values that mean the disk (or the file size limit) is full
FULL_ERRNOS = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


class StoreWriteError(OSError):
    """A record or raw file could not be written whole (disk full, size limit, I/O error);
    nothing half-written was left behind."""


def _write(fd: int, data: bytes) -> int:
    """``os.write`` (one place, so tests can simulate a full disk or a short write)."""
    return os.write(fd, data)


def why_not_written(exc: OSError) -> str:
    """Why a write failed, in words (a full disk named as such)."""
    if exc.errno in FULL_ERRNOS:
        return "the disk is full (or the file size limit was reached)"
    return f"the write failed ({exc.strerror or exc})"


class ResultStore:
    """Append-only JSON-lines file of run records, with raw outputs in ``raw/<key>.npz``."""

    def __init__(self, path: str | os.PathLike):
        path = Path(path)
        self.path = path / RESULTS_FILE if path.suffix != ".jsonl" else path
        self.raw_dir = self.path.parent / RAW_DIR

    def lock(self):
        """The store's inter-process lock (re-entrant in one process): hold it to read and
        append as one step, e.g. to claim a cell only if no record of it exists yet."""
        from filelock import FileLock

        self.path.parent.mkdir(parents=True, exist_ok=True)
        # one lock object per file (is_singleton), so holding it while appending nests
        return FileLock(str(self.path.parent / LOCK_FILE), is_singleton=True)

    def append(self, record: dict) -> None:
        """Append one record atomically (see :meth:`append_many`)."""
        self.append_many([record])

    def append_many(self, records: list[dict]) -> None:
        """Append records with one write under the store lock, then fsync: all of them are
        stored or none. A write that fails part-way is cut back and raises StoreWriteError.

        A partial last line (left by a crash of another writer) is fenced off with a newline
        first, so it stays one corrupt line that readers skip, and the new records parse."""
        data = b"".join(encode_record(r) for r in records)  # TypeError before any write
        if not data:
            return
        with self.lock():
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    warnings.warn(f"{self.path}: the last line was incomplete (a killed "
                                  "writer?); it is kept as a corrupt line and new records "
                                  "start after it", stacklevel=2)
                    data = b"\n" + data
                self._write_whole(fd, data, size)
            finally:
                os.close(fd)

    def _write_whole(self, fd: int, data: bytes, size: int) -> None:
        """Write ``data`` at the end of the file (``size`` bytes before) and fsync, or cut
        the file back to ``size`` and raise StoreWriteError."""
        try:
            written = _write(fd, data)
            if written != len(data):
                raise OSError(errno.ENOSPC, f"short write: {written} of {len(data)} bytes")
            os.fsync(fd)
        except OSError as exc:
            try:
                os.ftruncate(fd, size)
                os.fsync(fd)
            except OSError:
                pass
            raise StoreWriteError(
                exc.errno, f"{self.path}: the record was not stored: {why_not_written(exc)}; nothing "
                "half-written was left. Free some space, then rerun with --resume to measure "
                "the missing runs") from exc

    def records(self) -> list[dict]:
        """All readable records, in file order. Corrupt lines, records of a schema version
        this code does not read and records missing a required field are skipped with a
        warning naming the line."""
        if not self.path.exists():
            return []
        out = []
        with open(self.path, encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                problem = None
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    problem = "a corrupt record line"
                else:
                    problem = _unreadable(record)
                if problem:
                    warnings.warn(f"{self.path}:{lineno}: skipping {problem}", stacklevel=2)
                    continue
                out.append(record)
        return out

    def retire(self, leaves) -> int:
        """Move the records for which ``leaves(record)`` is true from the results file to
        ``retired.jsonl`` beside it (appended; their raw outputs stay in ``raw/``), under the
        store lock; returns how many moved. Unreadable lines stay where they are. The moved
        lines are written and synced before the results file is replaced, so a crash in
        between leaves a record in both files, never in neither."""
        with self.lock():
            if not self.path.exists():
                return 0
            keep, move = [], []
            for line in self.path.read_bytes().splitlines(keepends=True):
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    record = None
                gone = isinstance(record, dict) and not _unreadable(record) and leaves(record)
                (move if gone else keep).append(line if line.endswith(b"\n") else line + b"\n")
            if not move:
                return 0
            with open(self.path.parent / RETIRED_FILE, "ab") as f:
                f.write(b"".join(move))
                f.flush()
                os.fsync(f.fileno())
            replace_atomically(self.path, lambda f: f.write(b"".join(keep)),
                                prefix=temporary_prefix("results"), suffix=".tmp")
            return len(move)

    def raw_path(self, key: str) -> Path:
        """Where the raw outputs of record ``key`` are written (the compact format of
        :mod:`xcbench.store.raw_format`)."""
        return self.raw_dir / f"{key}{raw_format.COMPACT_SUFFIX}"

    def save_raw(self, key: str, arrays: dict) -> str:
        """Write ``arrays`` (a cell's raw outputs) in the compact format, each file
        atomically: the test labels to their shared file unless it is there intact (a
        damaged one is written again), the top-k labels,
        then ``raw/<key>.compact.npz`` last (a record's raw outputs exist once it does);
        return its path relative to the store's folder, as recorded in the record's ``raw``
        field."""
        files = raw_format.compact_files(arrays)
        compact, topk = files.pop(raw_format.COMPACT_SUFFIX), files.pop(raw_format.TOPK_SUFFIX)
        checksum = str(compact["y_checksum"])
        for name, shared in files.items():
            if not raw_format.shared_labels_intact(self.raw_dir / name, checksum):
                self._write_raw(name, lambda f, shared=shared: np.savez_compressed(f, **shared))
        self._write_raw(f"{key}{raw_format.TOPK_SUFFIX}",
                        lambda f: np.savez_compressed(f, **topk))
        return self._write_raw(self.raw_path(key).name,
                               lambda f: np.savez_compressed(f, **compact))

    def adopt(self, record: dict, source: "ResultStore") -> dict:
        """``record`` of store ``source`` as this store keeps it: its raw outputs copied
        (atomically, with the test labels they share) into this store's ``raw/``. The
        record is returned, not appended."""
        record = dict(record)
        origin = source.raw_file(record)
        copied = None
        if origin is not None:
            for name in raw_format.files_of(origin):
                if name.startswith(raw_format.TEST_LABELS_PREFIX) and \
                        (self.raw_dir / name).exists():
                    continue
                data = (origin.parent / name).read_bytes()
                written = self._write_raw(name, lambda f, data=data: f.write(data))
                copied = written if name == origin.name else copied
        record["raw"] = copied
        return record

    def _write_raw(self, name: str, write) -> str:
        """``raw/<name>`` written by ``write(binary file)``, atomically; its path relative
        to the store's folder. StoreWriteError if the disk refuses."""
        self.raw_dir.mkdir(parents=True, exist_ok=True)
        target = self.raw_dir / name
        try:
            replace_atomically(target, write, prefix=temporary_prefix(name.split(".")[0]),
                                suffix=".tmp.npz")
        except OSError as exc:
            raise StoreWriteError(exc.errno, f"{target}: the raw outputs were not stored: "
                                  f"{why_not_written(exc)}; nothing half-written was left. Free some "
                                  "space, then rerun with --resume") from exc
        return f"{RAW_DIR}/{target.name}"

    def remove_stale_temporaries(self) -> list[str]:
        """Remove the temporaries left by killed runs of this host (their process is gone):
        the raw outputs' and the results file's (a ``retire`` stopped before its rename);
        return their names."""
        return (remove_stale_temporaries(self.raw_dir)
                + remove_stale_temporaries(self.path.parent))

    def raw_file(self, record: dict) -> Path | None:
        """The file holding ``record``'s raw outputs: its compact file when there is one
        (written by a run, or by ``xcbench compact`` from the old file the record names),
        else the file the record names; None when it has none."""
        if not record.get("raw"):
            return None
        compact = self.raw_path(record["key"])
        if compact.exists():
            return compact
        named = self.path.parent / record["raw"]
        return named if named.exists() else None

    def load_raw(self, record: dict) -> dict | None:
        """The raw outputs of ``record`` as {name: array} (either format, see
        :func:`~xcbench.store.raw_format.read_raw`), or None if it has none. RawFileError
        naming the file and the record when a file is damaged."""
        path = self.raw_file(record)
        return None if path is None else raw_format.read_raw(path, record.get("key"))

    def load_raw_or_warn(self, record: dict, consequence: str) -> dict | None:
        """:meth:`load_raw`, but a damaged file gives a warning naming it, its record and
        ``consequence`` (what is left out), and None."""
        try:
            return self.load_raw(record)
        except RawFileError as exc:
            warnings.warn(f"{exc}: {consequence}", stacklevel=2)
            return None

    def keys(self) -> set[str]:
        """Keys of every stored record (any status)."""
        return {r["key"] for r in self.records()}

    def latest(self) -> list[dict]:
        """The newest record of each measurement: a re-run of a cell, by the same code or
        newer code (another key), supersedes the older record."""
        return newest_per_measurement(self.records())

    def to_frame(self):
        """The newest record of each key as a flat pandas DataFrame."""
        import pandas as pd

        rows = []
        for r in self.latest():
            row = {k: v for k, v in r.items() if not isinstance(v, (dict, list))}
            row["params"] = json.dumps(r.get("params", {}), sort_keys=True)
            for section in ("metrics", "stats", "summary", "dataset_stats", "memory"):
                for k, v in (r.get(section) or {}).items():
                    if not isinstance(v, (dict, list)):
                        row[k] = v
            for k, v in (r.get("path_cost") or {}).items():
                row[f"path_cost_{k}"] = v
            rows.append(row)
        return pd.DataFrame(rows)


def _unreadable(record) -> str | None:
    """Why ``record`` cannot be read by this code, or None if it can."""
    if not isinstance(record, dict):
        return "a line that is not a JSON object"
    version = record.get("schema_version")
    if version not in READABLE_SCHEMA_VERSIONS:
        return (f"a record of schema version {version!r} (this xcbench reads "
                f"{', '.join(map(str, READABLE_SCHEMA_VERSIONS))})")
    missing = [f for f in REQUIRED_FIELDS if f not in record]
    if missing:
        return f"a record missing field(s) {', '.join(missing)}"
    wrong = [f"{name} {record[name]!r:.40}" for name, ok in _FIELD_TYPES.items()
             if name in record and not ok(record[name])]
    if wrong:
        return f"a record with field(s) of the wrong type: {', '.join(wrong)}"
    return None


def _is(*types):
    return lambda v: isinstance(v, types) and not isinstance(v, bool)


def _optional(*types):
    return lambda v: v is None or isinstance(v, types)


#: the type each field must have for reports, plots and export to read a record
_FIELD_TYPES = {
    "key": _is(str), "method": _is(str), "dataset": _is(str), "seed": _is(int),
    "status": lambda v: v in STATUSES, "params": _is(dict), "query_params": _optional(dict),
    "error": _optional(str), "metrics": _optional(dict), "summary": _optional(dict),
    "stats": _optional(dict), "memory": _optional(dict), "path_cost": _optional(dict),
    "dataset_stats": _optional(dict), "run_options": _optional(dict),
    "environment": _optional(dict), "raw": _optional(str),
}
