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


def feature_scale(X) -> np.ndarray:
    """1 / max |x_f| per feature (1 for all-zero features): the per-feature scaling that
    makes online steps scale-invariant, as VW's normalized updates do."""
    if sp.issparse(X):
        top = np.asarray(abs(X).max(axis=0).todense()).ravel()
    else:
        top = np.abs(X).max(axis=0) if X.shape[0] else np.zeros(X.shape[1])
    return np.where(top > 0, 1.0 / np.where(top > 0, top, 1.0), 1.0)


def scaled(X, scale):
    """X with each feature multiplied by ``scale`` (a copy; CSR stays CSR)."""
    if scale is None:
        return X
    if sp.issparse(X):
        return sp.csr_matrix(X.multiply(scale[None, :]))
    return X * scale
