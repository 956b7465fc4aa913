"""The result record schema and the JSON-lines store.

One record per measurement, built by :func:`build_record`. The records of one cell are
appended with a single ``write`` on a file opened with O_APPEND and then fsync'ed, under an
inter-process lock on the store (``filelock``), so concurrent runs into one folder never mix
lines and a killed runner never leaves half a cell. A write that fails part-way (disk full,
file size limit) is undone: the file is cut back to its old size and :class:`StoreWriteError`
says why. A partial last line left by anything else is fenced off before the next append,
and readers skip (and warn about) corrupt lines and records of other schema versions. Raw
outputs are written under a unique temporary name, then renamed.
"""
from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import platform
import socket
import tempfile
import warnings
import zipfile
from pathlib import Path

import numpy as np

from .identity import KEYED_OPTIONS, newest_per_measurement

SCHEMA_VERSION = 2
#: schema versions this code reads; version 1 records have no ``path_cost``, ``memory`` or
#: ``raw`` sections (and keys computed without the run options)
READABLE_SCHEMA_VERSIONS = (1, SCHEMA_VERSION)
#: fields every readable record has
REQUIRED_FIELDS = ("schema_version", "key", "method", "params", "dataset", "seed", "status")
STATUSES = ("ok", "timeout", "error", "refused")
RESULTS_FILE = "results.jsonl"
RAW_DIR = "raw"
LOCK_FILE = ".results.lock"
#: errno values that mean the disk (or the file size limit) is full
FULL_ERRNOS = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


class RawFileError(ValueError):
    """A raw outputs file (``raw/<key>.npz``) exists but cannot be read; names the file."""


class StoreWriteError(OSError):
    """A record or raw file could not be written whole (disk full, size limit, I/O error);
    nothing half-written was left behind."""


def _write(fd: int, data: bytes) -> int:
    """``os.write`` (one place, so tests can simulate a full disk or a short write)."""
    return os.write(fd, data)


def _why(exc: OSError) -> str:
    if exc.errno in FULL_ERRNOS:
        return "the disk is full (or the file size limit was reached)"
    return f"the write failed ({exc.strerror or exc})"


def run_key(method: str, params: dict, dataset: str, dataset_checksum: str, seed: int,
            version: str, options: dict | None = None, code: dict | None = None) -> str:
    """A stable 16-hex-digit key for one measurement: the method, its canonical params
    (``C=1`` and ``C=1.0`` give one key), the dataset and its checksum, the seed, the
    xcbench version, the measuring run options (``KEYED_OPTIONS``) and, when given, the
    code that measures it (``provenance.key_code``: commit, uncommitted changes, the
    method's plugin distribution), so records of other code never match."""
    from ..contract.method_params import canonical_params

    payload = json.dumps({"method": method, "params": canonical_params(params),
                          "dataset": dataset, "dataset_checksum": dataset_checksum,
                          "seed": seed, "xcbench_version": version,
                          "options": {k: (options or {}).get(k) for k in KEYED_OPTIONS},
                          **({"code": code} if code is not None else {})},
                         sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def build_record(*, key: str, method: str, spec, params: dict, query_params: dict,
                 dataset, dataset_name: str, dataset_description: str, seed: int,
                 status: str, error: str | None, started_at: str, wall_seconds: float,
                 environment: dict, command: str | None, options: dict,
                 sections: dict | None = None, code: dict | None = None) -> dict:
    """One result record of the current schema; ``code`` is the state of the code that
    made it (``provenance.code_state``). ``sections`` holds the measured parts
    (``metrics``, ``stats``, ``summary``, ``timings``, ``path_cost``, ``memory``,
    ``warnings``, ``raw``) of an ``ok`` record, or the partial ones of a failed cell."""
    if status not in STATUSES:
        raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
    return {
        "schema_version": SCHEMA_VERSION, "key": key, "method": method,
        "plugin": spec.plugin, "family": spec.family, "params": params,
        "query_params": query_params, "dataset": dataset_name,
        "dataset_checksum": dataset.checksum, "dataset_version": dataset.version,
        "dataset_description": dataset_description,
        "dataset_sources": dataset.info.get("source_sha256", {}),
        "seed": seed, "status": status, "error": error, "started_at": started_at,
        "wall_seconds": wall_seconds, "dataset_stats": dataset.stats,
        "environment": environment, "command": command, "run_options": options,
        "code": code,
        "effective_params": _with_resolved(effective_params(spec, params, query_params),
                                           (sections or {}).get("resolved_params")),
        "path_cost": None, "memory": None, **(sections or {}),
    }


def _with_resolved(effective: dict | None, resolved: dict | None) -> dict | None:
    """``effective`` with the values the fitted method resolved for its ``"auto"``
    parameters in place of ``"auto"`` (the record keeps both: ``params`` says what the run
    asked for, ``resolved_params`` what the method chose)."""
    if effective is None or not resolved:
        return effective
    return {**effective, **{k: _jsonable(v) for k, v in resolved.items() if k in effective}}


def effective_params(spec, params: dict, query_params: dict) -> dict | None:
    """Every parameter value the run used (its own, then the method's defaults of this
    version), so a report shows what ran even after a default changes; None if the method
    cannot be built or a value is not JSON."""
    try:
        values = spec.make(**{**params, **query_params}).get_params()
        return {k: _jsonable(v) for k, v in sorted(values.items())}
    except Exception:  # noqa: BLE001 - a record is stored even when this cannot be known
        return None


def _jsonable(value, where: str = "record"):
    """``value`` as plain JSON types (numpy scalars and arrays converted, non-finite floats
    as null / "inf" / "-inf"); TypeError naming ``where`` for anything else."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist(), where)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"{where} is a {type(value).__name__} ({value!r:.60}), which is not "
                    "JSON-serialisable; return numbers, strings, lists or dicts")


def encode_record(record: dict) -> bytes:
    """One JSON line for ``record``; TypeError naming the first field that cannot be stored."""
    return (json.dumps(_jsonable(record), sort_keys=True, allow_nan=False) + "\n").encode()


def _git_commit() -> str | None:
    """The commit of the xcbench checkout in use (None outside a git checkout)."""
    import subprocess

    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def environment(threads: int) -> dict:
    """Versions, host name, CPU and thread count of this process, for the record (computed
    where the cell is measured, so ``host`` and ``cpu`` name the measuring machine)."""
    import scipy
    import sklearn

    from ..version import __version__

    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"xcbench": __version__, "git_commit": _git_commit(),
            "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__,
            "platform": platform.platform(), "machine": platform.machine(),
            "host": socket.gethostname(), "cpu": cpu,
            "cpu_count": os.cpu_count(), "threads": threads}


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
        return FileLock(str(self.path.parent / LOCK_FILE))

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
                exc.errno, f"{self.path}: the record was not stored: {_why(exc)}; nothing "
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

    def raw_path(self, key: str) -> Path:
        """Where the raw outputs of record ``key`` are kept."""
        return self.raw_dir / f"{key}.npz"

    def save_raw(self, key: str, arrays: dict) -> str:
        """Write ``arrays`` to ``raw/<key>.npz`` (atomically); return the path relative to
        the store's folder, as recorded in the record's ``raw`` field."""
        self.raw_dir.mkdir(parents=True, exist_ok=True)
        target = self.raw_path(key)
        fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp.npz", dir=self.raw_dir)
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez_compressed(f, **{k: v for k, v in arrays.items() if v is not None})
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException as exc:
            Path(tmp).unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise StoreWriteError(exc.errno, f"{target}: the raw outputs were not stored: "
                                      f"{_why(exc)}; nothing half-written was left. Free some "
                                      "space, then rerun with --resume") from exc
            raise
        return f"{RAW_DIR}/{target.name}"

    def load_raw(self, record: dict) -> dict | None:
        """The raw outputs of ``record`` as {name: array}, or None if it has none."""
        if not record.get("raw"):
            return None
        path = self.path.parent / record["raw"]
        if not path.exists():
            return None
        try:
            with np.load(path) as data:
                return {k: data[k] for k in data.files}
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
            raise RawFileError(f"{path}: the raw outputs of record {record.get('key')} cannot "
                               f"be read ({type(exc).__name__}: {exc}); the file is truncated "
                               "or corrupt") from exc

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
