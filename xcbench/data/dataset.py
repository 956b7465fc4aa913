"""What a dataset is once loaded, and how it is declared (its spec)."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

TASKS = ("multiclass", "next-word")


@dataclass
class Source:
    """One file a dataset is built from: where to get it and its expected SHA-256.

    ``filename`` is relative to the data directory. ``sha256`` is None where the checksum
    is not yet known; the hash of the file actually used is then recorded in each run
    record. ``role`` tells the builder what the file is (``train``, ``test``, ...);
    ``fallback`` is another file with the same content (e.g. uncompressed, downloadable)
    used when this one is absent and has no URL.
    """

    filename: str
    url: str | None = None
    sha256: str | None = None
    role: str = ""
    fallback: "Source | None" = None


@dataclass
class Dataset:
    """A loaded train/test split with integer labels 0..K-1.

    ``checksum`` identifies the exact data (source hashes or generator parameters);
    ``info`` carries extra facts about it, e.g. ``bayes_error`` for synthetic data.
    """

    name: str
    X_train: Any
    y_train: np.ndarray
    X_test: Any
    y_test: np.ndarray
    n_classes: int
    checksum: str
    version: str = "1"
    info: dict = field(default_factory=dict)

    @cached_property
    def stats(self) -> dict:
        """Sizes (N_train, N_test, D, K), sparsity (nonzero fraction) and class frequencies."""
        counts = np.bincount(self.y_train, minlength=self.n_classes)
        n_cells = self.X_train.shape[0] * self.X_train.shape[1]
        nnz = self.X_train.nnz if sp.issparse(self.X_train) else np.count_nonzero(self.X_train)
        return {
            "n_train": int(self.X_train.shape[0]),
            "n_test": int(self.X_test.shape[0]),
            "n_features": int(self.X_train.shape[1]),
            "n_classes": int(self.n_classes),
            "sparse": bool(sp.issparse(self.X_train)),
            "density": float(nnz / n_cells) if n_cells else 0.0,
            "classes_in_train": int(np.count_nonzero(counts)),
            "classes_in_test_only": int(np.count_nonzero(
                (np.bincount(self.y_test, minlength=self.n_classes) > 0) & (counts == 0))),
            "train_examples_per_class_min": int(counts.min()),
            "train_examples_per_class_median": float(np.median(counts)),
            "train_examples_per_class_max": int(counts.max()),
            **{k: v for k, v in self.info.items() if np.isscalar(v)},
        }


@dataclass
class DatasetSpec:
    """How a dataset is registered: its name, provenance, and the function that builds it.

    ``loader(spec, data_dir)`` returns a ``Dataset``; ``data_dir`` is the directory where
    source files live or are downloaded to.
    """

    name: str
    task: str
    description: str
    loader: Callable[["DatasetSpec", Path], Dataset]
    citation: str = ""
    licence: str = ""
    sources: list[Source] = field(default_factory=list)
    format: str = ""
    split: str = ""
    preprocessing: str = ""
    params: dict = field(default_factory=dict)
    version: str = "1"
    plugin: str = ""

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")

    def load(self, data_dir: Path) -> Dataset:
        """Build the dataset (from cache, local files, download or generator)."""
        return self.loader(self, Path(data_dir))
