"""Learned representations r = f(x) of the learned M-ary tree: the node softmaxes score r,
not x, and f is trained with them by backpropagating the path objective.

- ``"linear"``: r = A x, A a learned d_r x D map. Its d_r rows live in the tree toolkit's
  flat weight table (``xcbench.tree.weights``: direct d_r x D when it fits, hashed
  otherwise), so sparse inputs with millions of features still fit.
- ``"embedding"``: X holds C word ids per row (``ptb-words``: the 3 previous words) and
  r = sum over positions p of E[p, x_p], a learned d_r-vector per (position, word).
  Embeddings are position-tagged: the same word has one vector as the previous word and
  another two words back, so the sum keeps word order ("of the" and "the of" differ) and the
  model sees the same information as the fastText peers' default ``positional=True``; it
  costs C x V vectors instead of V (3 x 10^4 x 100 floats on PTB). A sum, not a mean: with a
  fixed number of positions the two differ by a constant factor the embeddings absorb.
  This is exactly the linear map of the position-tagged one-hot encoding of the ids
  (feature p x V + id), so the embedding table is stored and trained as that map's weight
  table: the embedding of (p, w) is column p x V + w of A.

Word ids unseen at fit (id >= V, the vocabulary size read from the training ids) have no
trained embedding and contribute nothing to r.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from xcbench.kernels import kernel_input
from xcbench.tree.weights import DIRECT, row_axpy, rows_adagrad_step, rows_dot, slot, \
    table_bytes, table_layout

_jit = numba.njit(cache=True, nogil=True)


@_jit
def represent_row(rep, no_bias, d_r, n_inputs, mask, Xd, indptr, indices, data, i, dense,
                  out):
    """out[:d_r] = A x_i, the map's d_r rows (``no_bias`` is zeros: r = A x)."""
    rows_dot(rep, no_bias, 0, n_inputs, mask, Xd, indptr, indices, data, i, dense, out[:d_r])


@_jit
def represent(rep, d_r, n_inputs, mask, Xd, indptr, indices, data, dense, n_rows):
    """(n_rows, d_r) representations of the rows of X (kernel_input layout)."""
    out = np.empty((n_rows, d_r))
    no_bias = np.zeros(d_r)
    for i in range(n_rows):
        represent_row(rep, no_bias, d_r, n_inputs, mask, Xd, indptr, indices, data, i, dense,
                      out[i])
    return out


@_jit
def represent_columns(columns, Xd, indptr, indices, data, dense, n_rows):
    """As ``represent`` from the map's feature-major copy (``columns``: (D, d_r), row f =
    A[:, f]): r = sum over x's nonzeros of x_f A[:, f], one contiguous read per feature."""
    d_r = columns.shape[1]
    out = np.zeros((n_rows, d_r))
    for i in range(n_rows):
        if dense:
            for f in range(columns.shape[0]):
                v = Xd[i, f]
                if v != 0.0:
                    out[i] += v * columns[f]
        else:
            for p in range(indptr[i], indptr[i + 1]):
                out[i] += data[p] * columns[indices[p]]
    return out


@_jit
def rep_step(rep, rep_acc, d_r, n_inputs, mask, Xd, indptr, indices, data, i, dense, grad_r,
             lr, adagrad):
    """Ascent of the map along dJ/dr = ``grad_r`` for row i (dJ/dA_k = grad_r[k] x_i): an
    AdaGrad step, or with ``adagrad`` False a plain SGD step of size ``lr``."""
    if adagrad:
        rows_adagrad_step(rep, rep_acc, n_inputs, mask, Xd, indptr, indices, data, i, dense,
                          grad_r[:d_r], -1.0, lr)
        return
    for k in range(d_r):
        if grad_r[k] != 0.0:
            row_axpy(rep, k, n_inputs, mask, lr * grad_r[k], Xd, indptr, indices, data, i,
                     dense)


WORD_ID_ERROR = (
    "representation='embedding' needs X to hold non-negative integer word ids, one column per "
    "context position (a words dataset such as ptb-words); for real-valued features use "
    "representation='linear' or 'identity'")


def word_ids(X) -> np.ndarray:
    """X (validated) as an int64 array of word ids; ValueError naming the fix otherwise."""
    ids = np.asarray(X.toarray() if sp.issparse(X) else X)
    if ids.size and (np.any(ids < 0) or np.any(ids != np.round(ids))):
        raise ValueError(WORD_ID_ERROR)
    return ids.astype(np.int64)


def one_hot_inputs(X, vocab: int):
    """kernel_input parts (CSR) of the position-tagged one-hot encoding of word-id rows X:
    feature p x vocab + id; ids >= vocab (unseen at fit) are left out. Built by one compiled
    pass, no scipy matrix (a single-row prediction pays microseconds, not a CSR build)."""
    ids = np.ascontiguousarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    indptr, indices, valid = _one_hot(ids, vocab)
    if not valid:
        raise ValueError(WORD_ID_ERROR)
    return _NO_DENSE, indptr, indices, np.ones(len(indices)), False


_NO_DENSE = np.empty((0, 0))


@_jit
def _one_hot(ids, vocab):
    """(indptr, indices, all ids valid) of the one-hot CSR of float id rows."""
    n, C = ids.shape
    indptr = np.zeros(n + 1, dtype=np.int64)
    indices = np.empty(n * C, dtype=np.int64)
    m = 0
    for i in range(n):
        for p in range(C):
            v = ids[i, p]
            if v < 0 or v != np.floor(v):
                return indptr, indices[:0], False
            if v < vocab:
                indices[m] = p * vocab + int(v)
                m += 1
        indptr[i + 1] = m
    return indptr, indices[:m].copy(), True


def map_layout(d_r: int, n_inputs: int, nnz: float, bits) -> tuple[int, int]:
    """(table size, mask) of a d_r x n_inputs map: every row touches the input's features."""
    return table_layout(d_r, n_inputs, bits, touched_pairs=float(d_r) * min(n_inputs, nnz))


def map_bytes(d_r: int, n_inputs: int, nnz: float, bits) -> int:
    """Bytes of the map and its AdaGrad sums."""
    return table_bytes(d_r, n_inputs, bits, float(d_r) * min(n_inputs, nnz), copies=2)


@dataclass
class LearnedMap:
    """A fitted representation: ``kind`` ("linear" or "embedding"), its d_r x ``n_inputs``
    weight table (``table``, ``mask``: toolkit layout) and, for embeddings, the vocabulary
    size and number of positions."""

    kind: str
    d_r: int
    n_inputs: int
    table: np.ndarray
    mask: int
    vocab: int = 0
    positions: int = 0
    columns: np.ndarray | None = None  # feature-major copy for prediction (``freeze``)

    @classmethod
    def create(cls, kind: str, X, d_r: int, bits, rng) -> "LearnedMap":
        """An untrained map for training data X: Gaussian weights scaled so that r has norm
        about 1 on the average row (node weights start at zero, so the map must not)."""
        vocab = positions = 0
        if kind == "embedding":
            ids = word_ids(X)
            vocab, positions = int(ids.max()) + 1 if ids.size else 1, ids.shape[1]
            n_inputs, nnz, sq_norm = positions * vocab, float(ids.size), float(positions)
        else:
            n_inputs = X.shape[1]
            nnz = float(X.nnz if sp.issparse(X) else X.size)
            sq = X.multiply(X).sum() if sp.issparse(X) else np.einsum("ij,ij->", X, X)
            sq_norm = float(sq) / X.shape[0]
        size, mask = map_layout(d_r, n_inputs, nnz, bits)
        scale = 1.0 / math.sqrt(d_r * max(sq_norm, 1e-12))
        table = rng.normal(scale=scale, size=size)
        return cls(kind, int(d_r), int(n_inputs), table, mask, vocab, positions)

    def inputs(self, X):
        """The kernel_input parts the map reads for X (embeddings: the one-hot encoding)."""
        if self.kind == "embedding":
            return one_hot_inputs(X, self.vocab)
        return kernel_input(X)

    def freeze(self):
        """After training: keep a feature-major copy (D, d_r) of a direct map, so computing r
        reads one contiguous d_r-vector per nonzero feature instead of d_r strided weights
        (ptb-words, d_r = 200: 25 -> 3 us per row). Call again after changing ``table``."""
        self.columns = (np.ascontiguousarray(self.table.reshape(self.d_r, self.n_inputs).T)
                        if self.mask == DIRECT else None)

    def transform(self, X) -> np.ndarray:
        """(n, d_r) representations."""
        Xd, indptr, indices, data, dense = self.inputs(X)
        if self.columns is not None:
            return represent_columns(self.columns, Xd, indptr, indices, data, dense,
                                     X.shape[0])
        return represent(self.table, self.d_r, self.n_inputs, self.mask, Xd, indptr, indices,
                         data, dense, X.shape[0])

    @property
    def cost(self) -> int:
        """Vectors computing r costs: d_r rows of A (linear), C embeddings summed."""
        return self.positions if self.kind == "embedding" else self.d_r

    def weight(self, k: int, feature: int) -> float:
        """A[k, feature] (the embedding of (p, w) is column p x vocab + w)."""
        return float(self.table[slot(k, feature, self.n_inputs, self.mask)])

    @property
    def hashed(self) -> bool:
        return self.mask != DIRECT
