"""Rows as ``j:v j:v ...`` text (column index : value of each non-zero), the sparse feature
syntax both Vowpal Wabbit's input and the Extreme Classification Repository files (Omikuji's
training format) use."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _pairs(indices, values) -> str:
    flat = np.column_stack((indices, values)).ravel().tolist()  # j, v, j, v, ...
    return " ".join(["%d:%.7g"] * len(indices)) % tuple(flat)


def feature_pairs_text(X) -> list[str]:
    """``j:v ...`` for each row of a dense array or sparse matrix, in column order.

    One %-format per row (no per-feature Python calls, no sparse conversion of dense
    input): peers format inside their measured prediction calls, so it is kept lean.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if not X.has_sorted_indices:
            X = X.sorted_indices()  # a sorted copy: the caller's matrix is left as it is
        return [_pairs(X.indices[X.indptr[i]:X.indptr[i + 1]],
                       X.data[X.indptr[i]:X.indptr[i + 1]]) for i in range(X.shape[0])]
    out = []
    for row in np.asarray(X):
        nz = np.flatnonzero(row)
        out.append(_pairs(nz, row[nz]))
    return out
