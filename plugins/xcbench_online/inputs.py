"""Feature matrices in the form the compiled online learners read."""
import numpy as np
import scipy.sparse as sp

from xcbench.kernels import kernel_input  # noqa: F401  (re-exported for the plugins)


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
