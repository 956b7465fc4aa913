"""The processed-array cache: parsed datasets stored as .npy files under a content key.

A cache entry is a folder ``<cache_dir>/<name>-<key>/`` holding one .npy per array (CSR
matrices as their data/indices/indptr/shape parts) and ``meta.json``, which records each
file's size and SHA-256. It is written to a temporary folder and renamed into place, so a
crash never leaves a half-written entry. Every load checks the files against meta.json
(hashes are remembered while a file is unchanged, see ``hashmemo``): a missing, truncated
or altered file makes the entry corrupt, and a corrupt entry is deleted with a warning
naming its folder, so the caller rebuilds it. Dense arrays load memory-mapped (read-only),
so a warm load costs almost nothing.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .hashmemo import file_sha256, remember_sha256, sha256_of

ENV_CACHE_DIR = "XCBENCH_CACHE_DIR"
CACHE_FORMAT = 2  # 2: meta.json records each file's size and SHA-256


class CorruptCacheWarning(UserWarning):
    """A processed cache entry was corrupt and has been deleted (it will be rebuilt)."""


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


def _read_meta(folder: Path) -> dict:
    """meta.json of an entry; ValueError naming what is wrong with the entry's files."""
    try:
        meta = json.loads((folder / "meta.json").read_text())
        files = meta["files"]
        meta["arrays"], meta["meta"]
    except FileNotFoundError:
        raise ValueError("meta.json is missing") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"meta.json is unreadable ({type(exc).__name__})") from None
    for fname, want in files.items():
        path = folder / fname
        if not path.is_file():
            raise ValueError(f"{fname} is missing")
        size = path.stat().st_size
        if size != want["bytes"]:
            raise ValueError(f"{fname} has {size} bytes, {want['bytes']} were written")
        if file_sha256(path, cache_dir()) != want["sha256"]:
            raise ValueError(f"{fname} does not match its recorded SHA-256")
    return meta


def _discard(folder: Path, problem: str) -> None:
    warnings.warn(f"processed cache entry {folder} is corrupt ({problem}); deleted it, the "
                  f"dataset is rebuilt from its source files", CorruptCacheWarning, stacklevel=3)
    shutil.rmtree(folder, ignore_errors=True)


def cache_entry_state(name: str, key: str) -> str:
    """``absent``, ``ok`` (complete and every file matches its checksum) or ``corrupt``."""
    folder = _entry(name, key)
    if not folder.exists():
        return "absent"
    try:
        _read_meta(folder)
    except ValueError:
        return "corrupt"
    return "ok"


def _load_arrays(folder: Path, kinds: dict) -> dict:
    arrays = {}
    for array_name, kind in kinds.items():
        if kind == "csr":
            parts = {p: np.load(folder / f"{array_name}.{p}.npy") for p in
                     ("data", "indices", "indptr", "shape")}
            arrays[array_name] = sp.csr_matrix((parts["data"], parts["indices"], parts["indptr"]),
                                               shape=tuple(parts["shape"]))
        else:
            arrays[array_name] = np.load(folder / f"{array_name}.npy", mmap_mode="r")
    return arrays


def load_cached(name: str, key: str):
    """(arrays dict, meta dict) of a cache entry, or None if there is none. A corrupt entry
    (see the module docstring) is deleted with a CorruptCacheWarning and gives None."""
    folder = _entry(name, key)
    if not folder.exists():
        return None
    try:
        meta = _read_meta(folder)
        return _load_arrays(folder, meta["arrays"]), meta["meta"]
    except (ValueError, OSError) as exc:  # np.load: bad header, short mmap, ...
        _discard(folder, str(exc))
        return None


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
        files = {f.name: {"bytes": f.stat().st_size, "sha256": sha256_of(f)}
                 for f in sorted(tmp.glob("*.npy"))}
        (tmp / "meta.json").write_text(json.dumps({"arrays": kinds, "files": files,
                                                   "meta": meta}, default=str))
        try:
            os.rename(tmp, final)
        except OSError:  # another process stored the same entry first
            shutil.rmtree(tmp, ignore_errors=True)
            return
        remember_sha256({final / f: d["sha256"] for f, d in files.items()}, cache_dir())
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
