"""Whether a dataset is ready to load: generated, cached, local, downloadable or missing."""
from __future__ import annotations

from pathlib import Path


def dataset_status(spec, data_dir: Path) -> str:
    """One word: ``your-files`` (a ``file:`` dataset, read from the user's paths),
    ``generated``, ``cached`` (intact processed arrays of the source files as they are now),
    ``local`` (all sources present; a corrupt cache entry is rebuilt from them),
    ``downloadable`` or ``missing``."""
    from .user_files import PREFIX

    if spec.name.startswith(PREFIX):
        return "your-files"
    if not spec.sources:
        return "generated"
    from .recipes import is_cached

    if is_cached(spec, data_dir):
        return "cached"
    present = [(Path(data_dir) / s.filename).exists() for s in spec.sources]
    if all(present):
        return "local"
    if all(s.url for s, ok in zip(spec.sources, present) if not ok):
        return "downloadable"
    return "missing"
