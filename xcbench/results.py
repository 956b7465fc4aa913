"""The result record schema and the JSON-lines store.

One record per run. Records are appended with a single ``write`` on a file opened with
O_APPEND and then fsync'ed, so a killed runner never leaves half a record; a reader still
skips (and warns about) an unparsable trailing line left by anything else.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import warnings
from pathlib import Path

import numpy as np

SCHEMA_VERSION = 1
STATUSES = ("ok", "timeout", "error")
RESULTS_FILE = "results.jsonl"


def run_key(method: str, params: dict, dataset: str, dataset_checksum: str, seed: int,
            version: str) -> str:
    """A stable 16-hex-digit key for one cell of a plan."""
    payload = json.dumps({"method": method, "params": params, "dataset": dataset,
                          "dataset_checksum": dataset_checksum, "seed": seed,
                          "xcbench_version": version}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


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
    """Versions, CPU and thread count of this process, for the record."""
    import scipy
    import sklearn

    from . import __version__

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
            "platform": platform.platform(), "machine": platform.machine(), "cpu": cpu,
            "cpu_count": os.cpu_count(), "threads": threads}


class ResultStore:
    """Append-only JSON-lines file of run records."""

    def __init__(self, path: str | os.PathLike):
        path = Path(path)
        self.path = path / RESULTS_FILE if path.suffix != ".jsonl" else path

    def append(self, record: dict) -> None:
        """Append one record atomically (one write of one line, then fsync)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = (json.dumps(_jsonable(record), sort_keys=True, allow_nan=False) + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = os.write(fd, line)
            if written != len(line):
                raise OSError(f"short write to {self.path}: {written} of {len(line)} bytes")
            os.fsync(fd)
        finally:
            os.close(fd)

    def records(self) -> list[dict]:
        """All parsable records, in file order; corrupt lines are skipped with a warning."""
        if not self.path.exists():
            return []
        out = []
        with open(self.path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    warnings.warn(f"{self.path}:{lineno}: skipping a corrupt record line",
                                  stacklevel=2)
        return out

    def keys(self) -> set[str]:
        """Keys of every stored record (any status)."""
        return {r["key"] for r in self.records()}

    def latest(self) -> list[dict]:
        """The newest record of each key."""
        by_key = {}
        for r in self.records():
            by_key[r["key"]] = r
        return list(by_key.values())

    def to_frame(self):
        """The newest record of each key as a flat pandas DataFrame."""
        import pandas as pd

        rows = []
        for r in self.latest():
            row = {k: v for k, v in r.items() if not isinstance(v, (dict, list))}
            row["params"] = json.dumps(r.get("params", {}), sort_keys=True)
            for section in ("metrics", "stats", "summary", "dataset_stats"):
                for k, v in (r.get(section) or {}).items():
                    if not isinstance(v, (dict, list)):
                        row[k] = v
            rows.append(row)
        return pd.DataFrame(rows)
