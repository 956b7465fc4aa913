"""Feature matrices in the form the compiled online learners read."""
import numpy as np
import scipy.sparse as sp

_EMPTY_2D = np.zeros((0, 0))
_EMPTY_I = np.zeros(1, dtype=np.int64)
_EMPTY_F = np.zeros(0)


def kernel_input(X):
    """(dense, indptr, indices, data, is_dense) for a validated X: one of the two is empty."""
    if sp.issparse(X):
        X = X.tocsr()
        return (_EMPTY_2D, X.indptr.astype(np.int64), X.indices.astype(np.int64),
                X.data.astype(np.float64), False)
    return np.ascontiguousarray(X, dtype=np.float64), _EMPTY_I, _EMPTY_I, _EMPTY_F, True
