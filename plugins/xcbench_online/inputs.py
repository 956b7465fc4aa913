"""Feature matrices in the form the compiled online learners read, and the per-feature
scaling they apply on the fly."""
import numba
import numpy as np
import scipy.sparse as sp

from xcbench.kernels import kernel_input  # noqa: F401  (re-exported for the plugins)
from xcbench.tree.passes import HOLDOUT_PERIOD


@numba.njit(cache=True)
def _column_abs_max(indices, data, n_features):
    top = np.zeros(n_features)
    for p in range(indices.shape[0]):
        v = abs(data[p])
        if v > top[indices[p]]:
            top[indices[p]] = v
    return top


def feature_scale(X) -> np.ndarray:
    """1 / max |x_f| per feature (1 for all-zero features): the per-feature scaling that
    makes online steps scale-invariant, as VW's normalized updates do. No copy of X."""
    if sp.issparse(X):
        top = _column_abs_max(X.indices, X.data, X.shape[1])
    else:
        top = np.abs(X).max(axis=0) if X.shape[0] else np.zeros(X.shape[1])
    return np.where(top > 0, 1.0 / np.where(top > 0, top, 1.0), 1.0)


def input_bytes(n_samples: int, nnz: int) -> int:
    """Upper bound of the bytes ``kernel_input`` copies: int64 indices and float64 values of
    a CSR matrix, its row pointers, and a shuffled row order."""
    return 16 * int(nnz) + 16 * (int(n_samples) + 1)


def holdout_bytes(passes, n_samples: int, nnz: int, keep_out: int = 0) -> int:
    """Upper bound of the held-out rows' copy (``input_rows`` of every HOLDOUT_PERIOD-th
    row, ``xcbench.tree.passes``): all of them with ``passes="auto"``, at most ``keep_out``
    of them otherwise (0 rows: 0 bytes)."""
    rows = n_samples // HOLDOUT_PERIOD
    if passes != "auto":
        rows = min(rows, int(keep_out))
    return input_bytes(rows, nnz // HOLDOUT_PERIOD + 1) if rows else 0


def input_rows(Xd, indptr, indices, data, dense, rows):
    """(Xd, indptr, indices, data) of rows ``rows`` of a ``kernel_input`` matrix (dense rows
    copied, or the CSR rows; the other part stays empty)."""
    if dense:
        return Xd[rows], indptr, indices, data
    starts, lengths = indptr[rows], indptr[rows + 1] - indptr[rows]
    new_ptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    take = np.repeat(starts - new_ptr[:-1], lengths) + np.arange(new_ptr[-1])
    return Xd, new_ptr, indices[take], data[take]
