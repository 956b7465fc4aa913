"""Datasets: specs, loaded splits, the data directory and the registry lookup."""
from __future__ import annotations

import os
from pathlib import Path

from .dataset import Dataset, DatasetSpec, Source

ENV_DATA_DIR = "XCBENCH_DATA_DIR"

__all__ = ["Dataset", "DatasetSpec", "Source", "data_dir", "get_dataset_spec", "load_dataset"]


def data_dir(path: str | os.PathLike | None = None) -> Path:
    """The data directory: ``path`` if given, else $XCBENCH_DATA_DIR, else the user cache."""
    if path is not None:
        return Path(path).expanduser()
    if os.environ.get(ENV_DATA_DIR):
        return Path(os.environ[ENV_DATA_DIR]).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("xcbench")) / "data"


def get_dataset_spec(name: str) -> DatasetSpec:
    """The registered DatasetSpec called ``name``, or for ``file:[FORMAT:]TRAIN[:TEST]`` one
    built from the user's files (``user_files``); KeyError lists the registered ones."""
    from ..contract.plugins import dataset_specs, lookup

    if name.startswith("file:"):
        from .user_files import user_file_spec

        return user_file_spec(name)
    return lookup(dataset_specs(), name, "dataset")


def load_dataset(name: str, data_dir_path: str | os.PathLike | None = None) -> Dataset:
    """Load the dataset ``name`` (labels 0..K-1): a registered one from the data directory,
    or ``file:...`` from the user's files."""
    return get_dataset_spec(name).load(data_dir(data_dir_path))
