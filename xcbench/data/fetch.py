"""Getting source files: local copies verified by SHA-256, else checksummed downloads.

Downloads go through pooch: streamed to a temporary name in the target folder, hash checked,
then renamed, so a failed or mismatched download leaves nothing behind.

A source whose recipe pins no SHA-256 is trusted on first use: the hash of the first file
used is recorded (``FIRST_SEEN_FILE`` in the processed-data cache), and a later file with
another hash is refused unless ``XCBENCH_ACCEPT_NEW_SOURCE=1`` is set, which records the new
hash instead.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .dataset import Source
from .hashmemo import file_sha256, sha256_of

__all__ = ["ChecksumError", "DataError", "fetch", "local_source", "sha256_of", "verify"]


#: {"source URL (or file name) -> local path": SHA-256} of unpinned sources, as first used
FIRST_SEEN_FILE = "first-seen-sha256.json"
#: set to 1 to accept (and record) an unpinned source whose file changed
ACCEPT_NEW_SOURCE = "XCBENCH_ACCEPT_NEW_SOURCE"


class DataError(RuntimeError):
    """A dataset source is missing, unreachable, corrupt or malformed."""


class ChecksumError(DataError):
    """A file's SHA-256 is not the one its recipe expects."""


def verify(path: Path, expected: str | None) -> str:
    """Return the file's SHA-256 (remembered while the file is unchanged); raise
    ChecksumError naming both hashes if it differs from ``expected``."""
    from .cache import cache_dir

    actual = file_sha256(path, cache_dir())
    if expected is not None and actual != expected.lower():
        raise ChecksumError(
            f"{path} is corrupt, truncated or another version (SHA-256 expected {expected}, "
            f"got {actual}): delete it and load again to re-download it, or put the right "
            f"file there."
        )
    return actual


def check_first_seen(source: Source, path: Path, actual: str) -> None:
    """Record the SHA-256 of an unpinned source the first time it is used; ChecksumError when
    a later file differs, unless ACCEPT_NEW_SOURCE is set (then the new hash is recorded)."""
    from .cache import cache_dir

    memo = cache_dir() / FIRST_SEEN_FILE
    try:
        seen = json.loads(memo.read_text())
        seen = seen if isinstance(seen, dict) else {}
    except (OSError, ValueError):
        seen = {}
    key = f"{source.url or source.filename} -> {Path(path).resolve()}"
    if seen.get(key) == actual:
        return
    if key in seen and os.environ.get(ACCEPT_NEW_SOURCE) != "1":
        raise ChecksumError(
            f"{path} is not the file first used for {key} (SHA-256 first seen {seen[key]}, now "
            f"{actual}). Its recipe pins no checksum, so xcbench keeps the first one: put that "
            f"file back, or if the new one is right, run again with {ACCEPT_NEW_SOURCE}=1 to "
            f"record it (the hash of the file used is in every run record).")
    seen[key] = actual
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".first-seen-", dir=memo.parent)
        with os.fdopen(fd, "w") as f:
            json.dump(seen, f, indent=1, sort_keys=True)
        os.replace(tmp, memo)
    except OSError:  # a read-only cache: nothing recorded, the file is still used
        pass


def local_source(source: Source, data_dir: Path) -> tuple[Source, Path] | None:
    """The source (itself or its fallback) whose file ``fetch`` would use without
    downloading, with its path; None when a download is needed first."""
    target = Path(data_dir) / source.filename
    if target.exists():
        return source, target
    if source.fallback is not None and not source.url:
        return local_source(source.fallback, data_dir)
    return None


def _new_folders(folder: Path) -> list[Path]:
    """``folder`` and its ancestors that do not exist yet, deepest first."""
    new = []
    while not folder.exists():
        new.append(folder)
        folder = folder.parent
    return new


def _download(source: Source, target: Path) -> None:
    import pooch
    import requests

    created = _new_folders(target.parent)
    known = f"sha256:{source.sha256}" if source.sha256 else None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        pooch.retrieve(source.url, known_hash=known, fname=target.name, path=target.parent,
                       progressbar=True)
    except BaseException as exc:
        for folder in created:  # leave no empty folder behind
            try:
                folder.rmdir()
            except OSError:
                break
        if isinstance(exc, requests.exceptions.RequestException):
            raise DataError(
                f"could not download {source.url} ({type(exc).__name__}): if this machine is "
                f"offline, fetch that URL elsewhere and place the file at {target}."
            ) from exc
        if isinstance(exc, ValueError):  # pooch's hash mismatch; it deleted the download
            raise ChecksumError(
                f"the download of {source.url} failed its checksum and was deleted ({exc}): "
                f"try again later, or place a file with SHA-256 {source.sha256} at {target}."
            ) from exc
        raise


def fetch(source: Source, data_dir: Path, verify_local: bool = True) -> tuple[Path, str]:
    """Path of ``source`` under ``data_dir`` and its SHA-256, downloading it if absent.

    A file already present is verified against the recipe's hash (not deleted on mismatch:
    it may be the user's own copy). Raises DataError with the URL and the exact path to
    place the file by hand when it is absent and cannot be downloaded.
    """
    target = Path(data_dir) / source.filename
    if not target.exists():
        if source.fallback is not None and not source.url:
            try:
                return fetch(source.fallback, data_dir, verify_local)
            except DataError as exc:
                raise DataError(f"{source.filename} is not in the data directory {data_dir}: "
                                f"place it at {target}, or: {exc}") from exc
        if not source.url:
            raise DataError(f"{source.filename} is not in the data directory {data_dir} and has "
                            f"no download URL: place the file at {target} (or point "
                            f"--data-dir / XCBENCH_DATA_DIR at a folder that has it).")
        _download(source, target)
    if source.sha256:
        return target, verify(target, source.sha256) if verify_local else source.sha256
    actual = verify(target, None)
    check_first_seen(source, target, actual)
    return target, actual
