"""SHA-256 of files, remembered by their stat stamp so an unchanged file is hashed only once.

The memo is one JSON file in a folder the caller names (the processed cache). An entry is
reused only while the file's size, mtime, ctime and inode are all unchanged: replacing or
rewriting a file (even with ``cp -p``, which keeps the mtime but not the ctime) rehashes it.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

MEMO_FILE = "file-sha256.json"


def sha256_of(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes (always read in full)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _read(memo_dir: Path) -> dict:
    try:
        memo = json.loads((memo_dir / MEMO_FILE).read_text())
        return memo if isinstance(memo, dict) else {}
    except (OSError, ValueError):  # absent or damaged: start afresh
        return {}


def _write(memo_dir: Path, memo: dict) -> None:
    """Replace the memo atomically; a read-only cache just means hashing again next time."""
    try:
        memo_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".file-sha256-", dir=memo_dir)
        with os.fdopen(fd, "w") as f:
            json.dump(memo, f)
        os.replace(tmp, memo_dir / MEMO_FILE)
    except OSError:
        pass


def remember_sha256(paths_digests: dict, memo_dir: str | os.PathLike) -> None:
    """Record known hashes {path: sha256} of files as they are now (e.g. just written)."""
    memo_dir = Path(memo_dir)
    memo = _read(memo_dir)
    for path, digest in paths_digests.items():
        path = Path(path).resolve()
        memo[str(path)] = {"stamp": _stamp(path), "sha256": digest}
    _write(memo_dir, {p: e for p, e in memo.items() if Path(p).exists()})


def file_sha256(path: str | os.PathLike, memo_dir: str | os.PathLike) -> str:
    """Hex SHA-256 of ``path``: from the memo in ``memo_dir`` while the file is unchanged,
    else read in full (and remembered)."""
    path = Path(path).resolve()
    entry = _read(Path(memo_dir)).get(str(path))
    if isinstance(entry, dict) and entry.get("stamp") == _stamp(path):
        return entry["sha256"]
    digest = sha256_of(path)
    remember_sha256({path: digest}, memo_dir)
    return digest
