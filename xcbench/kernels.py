"""Shared compiled building blocks for method plugins: the dense-or-CSR row view that numba
kernels read, a linear score of one row, an in-place log-softmax, one AdaGrad step of one
linear model's row, and the largest |x| that input validation checks.

A kernel reads row i of X either from a dense matrix ``Xd`` or from CSR parts
(``indptr``, ``indices``, ``data``); ``dense`` says which, so one kernel serves both.
"""
import math

import numba
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


@numba.njit(cache=True, nogil=True)
def max_abs(values):
    """Largest |v| of a 1-d array, inf when it holds a NaN: one finiteness test then catches
    NaN and inf. No temporary array, and ~0.2 us on one row where numpy's reductions take
    1.5-2.5 us (input validation runs on every single-example call)."""
    top = 0.0
    for v in values:
        a = abs(v)
        if a != a:
            return math.inf
        if a > top:
            top = a
    return top


# reassociation lets LLVM vectorise the dot product's sum (SIMD); nothing else is relaxed
@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def row_score(W, b, r, Xd, indptr, indices, data, i, dense):
    """w_r . x_i + b_r."""
    s = b[r]
    if dense:
        for f in range(Xd.shape[1]):
            s += W[r, f] * Xd[i, f]
    else:
        for p in range(indptr[i], indptr[i + 1]):
            s += W[r, indices[p]] * data[p]
    return s


@numba.njit(cache=True, nogil=True)
def log_softmax_inplace(buf, m):
    """buf[:m] -= log sum exp(buf[:m]): scores become log-probabilities (m >= 1)."""
    top = -np.inf
    for q in range(m):
        if buf[q] > top:
            top = buf[q]
    total = 0.0
    for q in range(m):
        total += math.exp(buf[q] - top)
    log_z = top + math.log(total)
    for q in range(m):
        buf[q] -= log_z


@numba.njit(cache=True, nogil=True)
def adagrad_row_step(W, b, G, Gb, r, Xd, indptr, indices, data, i, dense, g, lr):
    """One AdaGrad step on row r of a linear model (W, b) for loss gradient g * x_i; G and
    Gb accumulate squared gradients."""
    Gb[r] += g * g
    b[r] -= lr * g / math.sqrt(Gb[r])
    if dense:
        for f in range(Xd.shape[1]):
            gf = g * Xd[i, f]
            if gf != 0.0:
                G[r, f] += gf * gf
                W[r, f] -= lr * gf / math.sqrt(G[r, f])
    else:
        for p in range(indptr[i], indptr[i + 1]):
            f = indices[p]
            gf = g * data[p]
            if gf != 0.0:
                G[r, f] += gf * gf
                W[r, f] -= lr * gf / math.sqrt(G[r, f])
