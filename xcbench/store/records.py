"""One result record: its key, its fields and its JSON line (the store that keeps records
is :mod:`xcbench.store.results`).

:func:`run_key` names a measurement, :func:`build_record` builds the record of the current
schema (``SCHEMA_VERSION``), :func:`encode_record` turns it into one JSON line, and
:func:`environment` describes the measuring process.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import socket
from pathlib import Path

import numpy as np

from .identity import KEYED_OPTIONS

SCHEMA_VERSION = 2
STATUSES = ("ok", "timeout", "error", "refused")


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


def numeric_path() -> dict:
    """What decides this machine's floating-point results beyond the package versions:
    ``blas``, every BLAS library loaded and the kernel architecture each picked (e.g.
    ``openblas 0.3.31 (SkylakeX)``; numpy and scipy may each bring one), and ``llvm_cpu``,
    the CPU numba compiles its kernels for and a digest of the CPU features it uses (e.g.
    ``znver4 1a2b3c4d``; ``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES`` override them as numba
    does). Two machines of one CPU name can differ in both, and methods that take discrete
    steps on float comparisons (TAO's softmax trees) then end in different models. None
    where they cannot be read (threadpoolctl before 3.5 does not see numpy 2's BLAS)."""
    out = {"blas": None, "llvm_cpu": None}
    try:
        from threadpoolctl import threadpool_info

        blas = [" ".join(str(part) for part in (info.get("internal_api"), info.get("version"))
                         if part)
                + (f" ({info['architecture']})" if info.get("architecture") else "")
                for info in threadpool_info() if info.get("user_api") == "blas"]
        out["blas"] = "; ".join(dict.fromkeys(blas)) or None
    except Exception:  # noqa: BLE001 - provenance must never fail a run
        pass
    try:
        import llvmlite.binding as llvm
        from numba.core import config

        name = config.CPU_NAME or llvm.get_host_cpu_name()
        features = config.CPU_FEATURES or llvm.get_host_cpu_features().flatten()
        digest = hashlib.sha256(str(features).encode()).hexdigest()[:8]
        out["llvm_cpu"] = f"{name} {digest}"
    except Exception:  # noqa: BLE001
        pass
    return out


def environment(threads: int) -> dict:
    """Versions, host name, CPU (with ``numeric_path``) and thread count of this process,
    for the record (computed where the cell is measured, so ``host`` and ``cpu`` name the
    measuring machine)."""
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
            "host": socket.gethostname(), "cpu": cpu, **numeric_path(),
            "cpu_count": os.cpu_count(), "threads": threads}
