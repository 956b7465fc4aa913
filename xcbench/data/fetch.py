"""Getting source files: local copies verified by SHA-256, else checksummed downloads.

Downloads go through pooch: streamed to a temporary name in the target folder, hash checked,
then renamed, so a failed or mismatched download leaves nothing behind.
"""
from __future__ import annotations

import os
from pathlib import Path

from .dataset import Source
from .hashmemo import file_sha256, sha256_of

__all__ = ["ChecksumError", "DataError", "fetch", "local_source", "sha256_of", "verify"]


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
    return target, (verify(target, source.sha256) if verify_local or not source.sha256
                    else source.sha256)
