"""Column compression of node problems: a node's training rows use only some features, so its
problem is solved over those columns alone (an l1 solution puts exact zeros on the others, whose
data gradient is zero), which keeps every node problem O(nnz of its rows), never O(D)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def active_columns(X) -> np.ndarray:
    """Sorted feature ids with a stored value in some row of X (every column if X is dense)."""
    if sp.issparse(X):
        return np.unique(X.indices).astype(np.int64)
    return np.arange(X.shape[1], dtype=np.int64)


def select_columns(X, features: np.ndarray):
    """X[:, features] for sorted ``features``; for CSR in O(nnz log A) (scipy's column
    indexing allocates O(D) per call)."""
    if not sp.issparse(X):
        return X if len(features) == X.shape[1] else X[:, features]
    X = X.tocsr()
    if len(features) == 0:
        return sp.csr_matrix((X.shape[0], 0), dtype=X.dtype)
    pos = np.searchsorted(features, X.indices)
    keep = features[np.minimum(pos, len(features) - 1)] == X.indices
    total = np.concatenate([[0], np.cumsum(keep)])
    return sp.csr_matrix((X.data[keep], pos[keep], total[X.indptr]),
                         shape=(X.shape[0], len(features)))


def place(features: np.ndarray, old_features: np.ndarray):
    """(positions in ``features`` of the ``old_features`` found there, mask of those found)."""
    if len(features) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(len(old_features), dtype=bool)
    pos = np.searchsorted(features, old_features)
    found = features[np.minimum(pos, len(features) - 1)] == old_features
    return pos[found], found
