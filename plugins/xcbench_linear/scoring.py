"""Scores and log-probabilities of a linear model stored as W^T (D, K) C-ordered.

A CSR row costs O(nnz x K): each stored feature adds one contiguous K-vector of W^T to the
row's scores, with no densification of X. Dense rows go through BLAS.
"""
from __future__ import annotations

import math

import numba
import numpy as np
import scipy.sparse as sp

from xcbench.kernels import log_softmax_inplace


@numba.njit(cache=True, nogil=True)
def csr_scores(indptr, indices, data, start, weights, intercept, out):
    """out[r] = x_{start+r} W^T + b for each row r of ``out`` (n_rows, K), X given as CSR
    parts and ``weights`` = W^T (D, K) C-ordered."""
    n_rows, k = out.shape
    for r in range(n_rows):
        i = start + r
        for c in range(k):
            out[r, c] = intercept[c]
        for p in range(indptr[i], indptr[i + 1]):
            row = weights[indices[p]]
            v = data[p]
            for c in range(k):
                out[r, c] += v * row[c]


def linear_scores(X, start: int, stop: int, weights, intercept):
    """Scores (stop - start, K) float64 of rows start..stop-1 of a validated X (dense
    ndarray or CSR)."""
    if sp.issparse(X):
        out = np.empty((stop - start, weights.shape[1]))
        csr_scores(X.indptr, X.indices, X.data, start, weights, intercept, out)
        return out
    out = np.asarray(X[start:stop] @ weights, dtype=np.float64)
    out += intercept
    return out


@numba.njit(cache=True, nogil=True)
def log_normalise_rows(S, sigmoid):
    """Turn each row of scores S (n, K) in place into log-probabilities summing to one:
    log softmax(s), or with ``sigmoid`` log of sigmoid(s) normalised over the row."""
    n, k = S.shape
    for r in range(n):
        if sigmoid:
            for c in range(k):
                z = S[r, c]  # log sigmoid(z) = -log(1 + e^{-z})
                S[r, c] = -(max(-z, 0.0) + math.log1p(math.exp(-abs(z))))
        log_softmax_inplace(S[r], k)
