"""Getting source files: local copies verified by SHA-256, else checksummed downloads.

Downloads go through pooch: streamed to a temporary name in the target folder, hash checked,
then renamed, so a failed or mismatched download leaves nothing behind.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .dataset import Source


class DataError(RuntimeError):
    """A dataset source is missing, unreachable, corrupt or malformed."""


class ChecksumError(DataError):
    """A file's SHA-256 is not the one its recipe expects."""


def sha256_of(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def verify(path: Path, expected: str | None) -> str:
    """Return the file's SHA-256; raise ChecksumError naming both hashes if it differs."""
    actual = sha256_of(path)
    if expected is not None and actual != expected.lower():
        raise ChecksumError(
            f"{path}: SHA-256 mismatch: expected {expected}, got {actual}. The file is corrupt, "
            f"truncated or a different version; delete it and load again to re-download "
            f"(or place the right file there by hand)."
        )
    return actual


def _download(source: Source, target: Path) -> None:
    import pooch
    import requests

    target.parent.mkdir(parents=True, exist_ok=True)
    known = f"sha256:{source.sha256}" if source.sha256 else None
    try:
        pooch.retrieve(source.url, known_hash=known, fname=target.name, path=target.parent,
                       progressbar=True)
    except requests.exceptions.RequestException as exc:
        raise DataError(
            f"could not download {source.url} ({type(exc).__name__}). If this machine is "
            f"offline, fetch that URL elsewhere and place the file at {target}"
        ) from exc
    except ValueError as exc:  # pooch's hash mismatch; it has deleted the download
        raise ChecksumError(f"download of {source.url} failed its checksum "
                            f"and was deleted: {exc}") from exc


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
                raise DataError(f"{source.filename} is not in the data directory {data_dir}; "
                                f"place it at {target}, or: {exc}") from exc
        if not source.url:
            raise DataError(f"{source.filename} is not in the data directory {data_dir} and has "
                            f"no download URL; place the file at {target} (or point "
                            f"--data-dir / XCBENCH_DATA_DIR at a folder that has it)")
        _download(source, target)
    return target, (verify(target, source.sha256) if verify_local or not source.sha256
                    else source.sha256)
