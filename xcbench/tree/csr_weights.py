"""Rows of l1-sparse linear weights stored in CSR form, with compiled row dot products.

A ``CSRWeights`` holds R rows over D features: row r's nonzero weights are
``data[indptr[r]:indptr[r+1]]`` at the sorted feature ids ``indices[...]``, so a model costs
O(nonzeros) bytes, never O(R x D). Kernels read an input row i either from a dense matrix
``Xd`` or from CSR parts with sorted indices (``xcbench.kernels.kernel_input`` layout):

- dense input: gather ``Xd[i, f]`` at the row's stored features, O(nnz(w_r));
- CSR input: a sorted merge of the two index lists, O(nnz(w_r) + nnz(x_i)) (``dot_merge``),
  or, to score many rows against one example, scatter x_i once into a zeroed buffer of
  length D and gather per row (``scatter`` / ``dot_gather`` / ``unscatter``); which is
  faster is measured in ``benchmarks/bench_softmax_tree.py`` (CSRRowDot).
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np


@dataclass
class CSRWeights:
    """R rows of weights over ``n_cols`` features in CSR form (sorted indices per row)."""
    indptr: np.ndarray  # (R + 1,) int64
    indices: np.ndarray  # (nnz,) int64, sorted within each row
    data: np.ndarray  # (nnz,) float64
    n_cols: int

    @classmethod
    def from_rows(cls, rows, n_cols: int) -> "CSRWeights":
        """From a list of (sorted feature ids, values) pairs; exact zeros are dropped."""
        idx, val, sizes = [], [], []
        for f, v in rows:
            keep = v != 0
            idx.append(np.asarray(f, dtype=np.int64)[keep])
            val.append(np.asarray(v, dtype=np.float64)[keep])
            sizes.append(int(keep.sum()))
        indptr = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        cat = (lambda parts, dt: np.concatenate(parts).astype(dt) if parts
               else np.zeros(0, dtype=dt))
        return cls(indptr, cat(idx, np.int64), cat(val, np.float64), int(n_cols))

    @classmethod
    def from_blocks(cls, blocks, n_cols: int) -> "CSRWeights":
        """From (sorted feature ids (A,), dense weights (m, A)) blocks, one CSR row per block
        row, in order; exact zeros are dropped. Vectorised per block."""
        idx, val, sizes = [], [], []
        for features, W in blocks:
            W = np.asarray(W, dtype=np.float64)
            W = W.reshape(W.shape[0] if W.ndim == 2 else 1, len(features))
            r, c = np.nonzero(W)
            idx.append(np.asarray(features, dtype=np.int64)[c])
            val.append(W[r, c])
            sizes.append(np.bincount(r, minlength=W.shape[0]))
        indptr = np.zeros(sum(len(z) for z in sizes) + 1, dtype=np.int64)
        if sizes:
            np.cumsum(np.concatenate(sizes), out=indptr[1:])
        cat = (lambda parts, dt: np.concatenate(parts).astype(dt) if parts
               else np.zeros(0, dtype=dt))
        return cls(indptr, cat(idx, np.int64), cat(val, np.float64), int(n_cols))

    @classmethod
    def from_dense(cls, W) -> "CSRWeights":
        """From a dense (R, D) array (for tests and small models)."""
        W = np.asarray(W, dtype=np.float64)
        return cls.from_rows([(np.arange(W.shape[1]), row) for row in W], W.shape[1])

    @property
    def n_rows(self) -> int:
        return len(self.indptr) - 1

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    @property
    def nbytes(self) -> int:
        return int(self.indptr.nbytes + self.indices.nbytes + self.data.nbytes)

    def row(self, r: int):
        """(feature ids, values) of row r."""
        lo, hi = self.indptr[r], self.indptr[r + 1]
        return self.indices[lo:hi], self.data[lo:hi]

    def toarray(self) -> np.ndarray:
        """Dense (R, D) copy (for tests only: O(R x D))."""
        out = np.zeros((self.n_rows, self.n_cols))
        for r in range(self.n_rows):
            f, v = self.row(r)
            out[r, f] = v
        return out

    @property
    def arrays(self):
        """(indptr, indices, data) for the kernels."""
        return self.indptr, self.indices, self.data


@numba.njit(cache=True, nogil=True, inline="always")
def dot_dense(w_ptr, w_idx, w_val, r, Xd, i):
    """w_r . x_i for a dense input row."""
    s = 0.0
    for p in range(w_ptr[r], w_ptr[r + 1]):
        s += w_val[p] * Xd[i, w_idx[p]]
    return s


@numba.njit(cache=True, nogil=True)
def dot_merge(w_ptr, w_idx, w_val, r, indptr, indices, data, i):
    """w_r . x_i for a CSR input row: merge of the two sorted index lists, or, when the
    weight row is much longer than x_i, a binary search of each x feature in the rest of the
    row: O(min(nnz(w) + nnz(x), nnz(x) log nnz(w)))."""
    p, pe = w_ptr[r], w_ptr[r + 1]
    q, qe = indptr[i], indptr[i + 1]
    s = 0.0
    if pe - p > 8 * (qe - q):
        for t in range(q, qe):
            f = indices[t]
            lo, hi = p, pe
            while lo < hi:
                mid = (lo + hi) >> 1
                if w_idx[mid] < f:
                    lo = mid + 1
                else:
                    hi = mid
            if lo < pe and w_idx[lo] == f:
                s += w_val[lo] * data[t]
                lo += 1
            p = lo
        return s
    while p < pe and q < qe:
        a, b = w_idx[p], indices[q]
        if a == b:
            s += w_val[p] * data[q]
            p += 1
            q += 1
        elif a < b:
            p += 1
        else:
            q += 1
    return s


@numba.njit(cache=True, nogil=True, inline="always")
def row_dot(w_ptr, w_idx, w_val, r, Xd, indptr, indices, data, i, dense):
    """w_r . x_i for a dense or CSR input row (kernel_input layout)."""
    if dense:
        return dot_dense(w_ptr, w_idx, w_val, r, Xd, i)
    return dot_merge(w_ptr, w_idx, w_val, r, indptr, indices, data, i)


@numba.njit(cache=True, nogil=True)
def scatter(indptr, indices, data, i, buf):
    """buf[f] = x_i[f] for the stored features of CSR row i (buf zero elsewhere)."""
    for q in range(indptr[i], indptr[i + 1]):
        buf[indices[q]] = data[q]


@numba.njit(cache=True, nogil=True)
def unscatter(indptr, indices, i, buf):
    """Zero buf again after ``scatter`` of row i: O(nnz(x_i)), not O(D)."""
    for q in range(indptr[i], indptr[i + 1]):
        buf[indices[q]] = 0.0


@numba.njit(cache=True, nogil=True)
def dot_gather(w_ptr, w_idx, w_val, r, buf):
    """w_r . x for an input row scattered into ``buf``."""
    s = 0.0
    for p in range(w_ptr[r], w_ptr[r + 1]):
        s += w_val[p] * buf[w_idx[p]]
    return s


@numba.njit(cache=True, nogil=True)
def scores_merge(w_ptr, w_idx, w_val, rows, Xd, indptr, indices, data, dense):
    """(n_examples, len(rows)) dot products of every input row with the given weight rows,
    by ``row_dot`` (merge for CSR input)."""
    n = Xd.shape[0] if dense else len(indptr) - 1
    out = np.empty((n, len(rows)))
    for i in range(n):
        for c in range(len(rows)):
            out[i, c] = row_dot(w_ptr, w_idx, w_val, rows[c], Xd, indptr, indices, data, i,
                                dense)
    return out


@numba.njit(cache=True, nogil=True)
def scores_scatter(w_ptr, w_idx, w_val, rows, indptr, indices, data, n_cols):
    """As ``scores_merge`` for CSR input, by scatter into one length-D buffer per call."""
    n = len(indptr) - 1
    out = np.empty((n, len(rows)))
    buf = np.zeros(n_cols)
    for i in range(n):
        scatter(indptr, indices, data, i, buf)
        for c in range(len(rows)):
            out[i, c] = dot_gather(w_ptr, w_idx, w_val, rows[c], buf)
        unscatter(indptr, indices, i, buf)
    return out


def sorted_kernel_input(X):
    """``xcbench.kernels.kernel_input`` of X with CSR indices sorted within rows (the merge
    kernels need them sorted); X itself is not modified."""
    import scipy.sparse as sp

    from xcbench.kernels import kernel_input

    if sp.issparse(X):
        X = X.tocsr()
        if not X.has_sorted_indices:
            X = X.sorted_indices()
    return kernel_input(X)
