"""The processed-array cache: parsed datasets stored as .npy files under a content key.

A cache entry is a folder ``<cache_dir>/<name>-<key>/`` holding one .npy per array (CSR
matrices as their data/indices/indptr/shape parts) and ``meta.json``. It is written to a
temporary folder and renamed into place, so a crash never leaves a half-written entry.
Dense arrays load memory-mapped (read-only), so a warm load costs almost nothing.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ENV_CACHE_DIR = "XCBENCH_CACHE_DIR"
CACHE_FORMAT = 1


def cache_dir() -> Path:
    """$XCBENCH_CACHE_DIR, else the user cache directory's ``xcbench/processed``."""
    if os.environ.get(ENV_CACHE_DIR):
        return Path(os.environ[ENV_CACHE_DIR]).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("xcbench")) / "processed"


def cache_key(parts: dict) -> str:
    """16 hex digits identifying a processed dataset (recipe, params, source hashes)."""
    payload = json.dumps({"cache_format": CACHE_FORMAT, **parts}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _entry(name: str, key: str) -> Path:
    return cache_dir() / f"{name}-{key}"


def cache_entry_exists(name: str, key: str) -> bool:
    """Whether a complete cache entry exists for (name, key)."""
    return (_entry(name, key) / "meta.json").exists()


def load_cached(name: str, key: str):
    """(arrays dict, meta dict) of a cache entry, or None if there is none."""
    folder = _entry(name, key)
    meta_path = folder / "meta.json"
    if not meta_path.exists():
        return None
    meta = json.loads(meta_path.read_text())
    arrays = {}
    for array_name, kind in meta["arrays"].items():
        if kind == "csr":
            parts = {p: np.load(folder / f"{array_name}.{p}.npy") for p in
                     ("data", "indices", "indptr", "shape")}
            arrays[array_name] = sp.csr_matrix((parts["data"], parts["indices"], parts["indptr"]),
                                               shape=tuple(parts["shape"]))
        else:
            arrays[array_name] = np.load(folder / f"{array_name}.npy", mmap_mode="r")
    return arrays, meta["meta"]


def save_cached(name: str, key: str, arrays: dict, meta: dict) -> None:
    """Store arrays (ndarray or sparse) and JSON-able meta under (name, key), atomically."""
    final = _entry(name, key)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=final.parent))
    try:
        kinds = {}
        for array_name, value in arrays.items():
            if sp.issparse(value):
                value = sp.csr_matrix(value)
                for part in ("data", "indices", "indptr"):
                    np.save(tmp / f"{array_name}.{part}.npy", getattr(value, part))
                np.save(tmp / f"{array_name}.shape.npy", np.array(value.shape))
                kinds[array_name] = "csr"
            else:
                np.save(tmp / f"{array_name}.npy", np.ascontiguousarray(value))
                kinds[array_name] = "dense"
        (tmp / "meta.json").write_text(json.dumps({"arrays": kinds, "meta": meta}, default=str))
        try:
            os.rename(tmp, final)
        except OSError:  # another process stored the same entry first
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
