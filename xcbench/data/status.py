"""Whether a dataset is ready to load: generated, cached, local, downloadable or missing."""
from __future__ import annotations

from pathlib import Path


def dataset_status(spec, data_dir: Path) -> str:
    """One word: ``generated``, ``local`` (all sources present), ``downloadable`` or ``missing``."""
    if not spec.sources:
        return "generated"
    present = [(Path(data_dir) / s.filename).exists() for s in spec.sources]
    if all(present):
        return "local"
    if all(s.url for s, ok in zip(spec.sources, present) if not ok):
        return "downloadable"
    return "missing"
