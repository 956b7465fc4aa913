"""The sizes of training data that the built-in methods' defaults-by-rule read.

``DataSizes`` is a frozen dataclass of rows, features, stored values, classes and
sparsity; a plugin's own ``DataShape`` extends it with what else its rules read (a row
norm, the label entropy, ...) and with its ``of(X, ...)`` constructor, and states by
``SPARSE_SHARE`` when sizes alone make data sparse. The two lines several rules draw
through the data are here too: sparse by the share of nonzero values whatever the
container (``mostly_zeros``), dense input too narrow for the rules meant for wide
features (``narrow_dense``), and labels skewed like next-word data (``skewed_labels``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

#: data with at most this share of nonzero values counts as sparse, whatever its container
SPARSE_NONZERO_SHARE = 0.1
#: dense data with fewer features than this counts as narrow (letter's 16, ALOI's 27
#: against leaves100's 192, synthetic's 128, ptb's 150)
WIDE_DENSE_FEATURES = 100
#: label entropy / log K below this: skewed (Zipf-like) labels; measured: ptb-sparse 0.705,
#: aloi27d 0.901, synthetic-sparse-1k 0.993, letter 1.0
SKEW_ENTROPY = 0.8


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


def nonzeros(X) -> int:
    """Nonzero values of X, dense or CSR (a CSR's stored values)."""
    return int(X.nnz) if sp.issparse(X) else int(np.count_nonzero(X))


def mostly_zeros(n_nonzeros, n_samples, n_features) -> bool:
    """At most ``SPARSE_NONZERO_SHARE`` of the N x D values are nonzero (so the same data
    stored dense or CSR is treated alike)."""
    return bool(n_nonzeros <= SPARSE_NONZERO_SHARE * n_samples * n_features)


def narrow_dense(sparse: bool, n_features: int) -> bool:
    """Dense input with fewer than ``WIDE_DENSE_FEATURES`` features."""
    return not sparse and n_features < WIDE_DENSE_FEATURES


def label_entropy(y, n_classes: int) -> float:
    """Entropy of the label frequencies over log K (1.0 for K = 1: every class equally
    frequent gives 1)."""
    if n_classes < 2 or len(y) == 0:
        return 1.0
    p = np.bincount(y, minlength=n_classes) / len(y)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum() / math.log(n_classes))


def skewed_labels(entropy: float | None) -> bool:
    """Whether labels of this ``label_entropy`` are skewed (next-word data); unknown
    (None) counts as not skewed."""
    return entropy is not None and entropy < SKEW_ENTROPY
