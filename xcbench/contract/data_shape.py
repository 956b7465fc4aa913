"""The sizes of training data that the built-in methods' defaults-by-rule read.

``DataSizes`` is a frozen dataclass of rows, features, stored values, classes and
sparsity; a plugin's own ``DataShape`` extends it with what else its rules read (a row
norm, the label entropy, ...) and with its ``of(X, ...)`` constructor, and states by
``SPARSE_SHARE`` when sizes alone make data sparse.
"""
from __future__ import annotations

from dataclasses import dataclass

import scipy.sparse as sp


@dataclass(frozen=True)
class DataSizes:
    """Rows N, features D, stored values (N x D for a dense X), classes K and whether the
    data counts as sparse (by the subclass's test)."""

    n_samples: int
    n_features: int
    nnz: int
    n_classes: int
    sparse: bool

    # sizes alone (``from_sizes``) make data sparse below this share of N x D stored values
    SPARSE_SHARE = 1.0

    @property
    def nnz_per_row(self) -> float:
        return self.nnz / max(self.n_samples, 1)

    @classmethod
    def from_sizes(cls, n_samples, n_features, nnz, n_classes):
        """What ``estimate_memory`` knows, sizes only: sparse when fewer than
        ``SPARSE_SHARE`` x N x D values are stored (1.0: dense when every value is)."""
        return cls(int(n_samples), int(n_features), int(nnz), int(n_classes),
                   sparse=int(nnz) < cls.SPARSE_SHARE * int(n_samples) * int(n_features))


def stored_values(X) -> int:
    """Values X stores: its nonzeros when sparse, every cell when dense."""
    return int(X.nnz) if sp.issparse(X) else int(X.size)
