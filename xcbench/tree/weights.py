"""Node weights that scale to extreme problems: one flat table for all rows of a linear model.

A tree with R linear rows (nodes, edges or classes) over D features would need an R x D
dense matrix: 2e5 nodes x 8.5e5 sparse features is 1.4 TB. Here row r's weight for feature f
lives at ``slot(r, f)`` of one flat float64 table:

- **direct** (``mask == -1``): slot = r * D + f, exactly the dense matrix; used when
  R x D fits the caller's budget (small D, e.g. dense 128-d data).
- **hashed** (``mask = 2^bits - 1``): rows are grouped in aligned blocks of ``ROW_BLOCK``
  consecutive rows; block (r // B, f) is hashed to one of 2^bits / B places and row r takes
  offset r % B there: slot = (mix(r // B, f) & (mask // B)) * B + r % B. Like Vowpal Wabbit,
  which strides a feature's sub-model weights side by side, the weights of consecutive rows
  for one feature (a node's children, a learned map's rows) then share a few cache lines:
  scoring 2 / 8 / 32 / 317 consecutive rows against a 16-feature sparse row on a hashed
  2^26 table was 2.1x / 3.8x / 6.1x / 5.8x faster than with one random slot per (row,
  feature) in one micro-benchmark (asv: ``HashedRowScoring``). Memory is 8 x 2^bits bytes
  whatever R and D are. Two (row, feature) pairs may share
  a slot (a collision): they then share one weight, which adds noise to both. With M pairs
  ever touched, the expected share of colliding pairs is about M / 2^bits, so choose ``bits``
  with 2^bits >= 4 x M (``auto_bits``). Blocking leaves that rate as it is (a pair can only
  meet the M / B pairs of its own row offset, in 2^bits / B places); it groups collisions.
  Only pairs an input actually touches take slots, which is why sparse problems fit.

Kernels read a row of X from a dense matrix ``Xd`` or from CSR parts (``indptr``,
``indices``, ``data``), ``dense`` saying which (see ``xcbench.kernels.kernel_input``).
"""
from __future__ import annotations

import math

import numba
import numpy as np
from numba.core import types
from numba.extending import overload

from xcbench.tree import node_major

DIRECT = -1  # the mask value meaning "no hashing: slot = row * D + feature"
ROW_BLOCK_BITS = 5  # hashed layout: blocks of ROW_BLOCK = 32 consecutive rows share a place
ROW_BLOCK = 1 << ROW_BLOCK_BITS
MIN_BITS, MAX_BITS = 16, 30
AUTO_MAX_BITS = 26  # "auto" never takes more than 2^26 slots (512 MB a table): accept collisions

_jit = numba.njit(cache=True, nogil=True)


@_jit
def slot(row, feature, n_features, mask):
    """Index of weight (row, feature) in the flat table (see the module docstring)."""
    if mask < 0:
        return row * n_features + feature
    # splitmix64-style finaliser of (row block, feature): cheap, and consecutive blocks and
    # features spread out; the row's offset in its block is kept
    block_bits = np.uint64(ROW_BLOCK_BITS)
    h = (np.uint64(row) >> block_bits) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(feature)
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    place = h & (np.uint64(mask) >> block_bits)
    return np.int64((place << block_bits) | (np.uint64(row) & np.uint64(ROW_BLOCK - 1)))


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def row_dot(table, bias, row, n_features, mask, Xd, indptr, indices, data, i, dense):
    """w_row . x_i + bias[row]."""
    s = bias[row]
    if dense:
        if mask < 0:  # unsigned indices: no negative-index wrap-around, so the loop vectorises
            base = np.uint64(row * n_features)
            x = Xd[i]
            for f in range(np.uint64(n_features)):
                s += table[base + f] * x[f]
        else:
            for f in range(n_features):
                v = Xd[i, f]
                if v != 0.0:
                    s += table[slot(row, f, n_features, mask)] * v
    else:
        for p in range(indptr[i], indptr[i + 1]):
            s += table[slot(row, indices[p], n_features, mask)] * data[p]
    return s


def children_dot(weights, bias, node, child_ptr, edge_row, n_features, mask, Xd, indptr,
                 indices, data, i, dense, out):
    """Fill out[:m] with the scores w_r . x_i + bias[r] of ``node``'s m children (row r =
    ``edge_row[child_ptr[node] + q]``; 0 for a child whose row is -1) and return m. The
    weight store is chosen when compiled by the type of ``weights``: a flat table
    (``row_dot`` per child row: direct or hashed by ``mask``) or exact weights grouped by
    node, the tuple of ``xcbench.tree.node_major`` (one lookup per input feature for all
    children; x's CSR indices must then be sorted). Callable from compiled code only."""
    raise TypeError("children_dot is called from compiled (numba) code only")


@overload(children_dot, jit_options={"cache": True, "nogil": True})
def _children_dot(weights, bias, node, child_ptr, edge_row, n_features, mask, Xd, indptr,
                  indices, data, i, dense, out):
    if isinstance(weights, types.Array):
        def table_children(weights, bias, node, child_ptr, edge_row, n_features, mask, Xd,
                           indptr, indices, data, i, dense, out):
            start = child_ptr[node]
            m = child_ptr[node + 1] - start
            first = edge_row[start] if m > 0 else -1
            consecutive = first >= 0
            for q in range(1, m):
                if edge_row[start + q] != first + q:
                    consecutive = False
                    break
            if consecutive:  # every child owns a row, in order: one matrix-vector product
                rows_dot(weights, bias, first, n_features, mask, Xd, indptr, indices, data,
                         i, dense, out[:m])  # when dense x meets the direct layout
                return m
            for q in range(m):
                r = edge_row[start + q]
                out[q] = row_dot(weights, bias, r, n_features, mask, Xd, indptr, indices,
                                 data, i, dense) if r >= 0 else 0.0
            return m
        return table_children
    if isinstance(weights, types.BaseTuple) and len(weights) == 6:
        def node_major_children(weights, bias, node, child_ptr, edge_row, n_features, mask,
                                Xd, indptr, indices, data, i, dense, out):
            start = child_ptr[node]
            m = child_ptr[node + 1] - start
            for q in range(m):
                r = edge_row[start + q]
                out[q] = bias[r] if r >= 0 else 0.0
            node_major.children_dot(weights[0], weights[1], weights[2], weights[3],
                                    weights[4], weights[5], node, Xd, indptr, indices, data,
                                    i, dense, out)
            return m
        return node_major_children
    return None


@_jit
def row_axpy(table, row, n_features, mask, scale, Xd, indptr, indices, data, i, dense):
    """w_row += scale * x_i (the bias is the caller's)."""
    if dense:
        for f in range(n_features):
            v = Xd[i, f]
            if v != 0.0:
                table[slot(row, f, n_features, mask)] += scale * v
    else:
        for p in range(indptr[i], indptr[i + 1]):
            table[slot(row, indices[p], n_features, mask)] += scale * data[p]


@_jit
def row_adagrad_step(table, acc, bias, bias_acc, row, n_features, mask, Xd, indptr, indices,
                     data, i, dense, g, lr):
    """One AdaGrad step on row ``row`` for the loss gradient g * x_i: ``acc`` / ``bias_acc``
    (same layout as ``table`` / ``bias``) accumulate squared gradients."""
    bias_acc[row] += g * g
    bias[row] -= lr * g / math.sqrt(bias_acc[row])
    row_adagrad_weights(table, acc, row, n_features, mask, Xd, indptr, indices, data, i, dense,
                        g, lr)


@_jit
def row_adagrad_weights(table, acc, row, n_features, mask, Xd, indptr, indices, data, i, dense,
                        g, lr):
    """The weights' part of ``row_adagrad_step`` (a row without a bias)."""
    if dense:
        for f in range(n_features):
            gf = g * Xd[i, f]
            if gf != 0.0:
                s = slot(row, f, n_features, mask)
                acc[s] += gf * gf
                table[s] -= lr * gf / math.sqrt(acc[s])
    else:
        for p in range(indptr[i], indptr[i + 1]):
            gf = g * data[p]
            if gf != 0.0:
                s = slot(row, indices[p], n_features, mask)
                acc[s] += gf * gf
                table[s] -= lr * gf / math.sqrt(acc[s])


@_jit
def rows_dot(table, bias, first_row, n_features, mask, Xd, indptr, indices, data, i, dense,
             out):
    """out[q] = w_r . x_i + bias[r] for the consecutive rows r = first_row + q, q < len(out)
    (a learned map's r = A x with zero biases, or the scores of a node's children). Dense x
    in the direct layout: one matrix-vector product (BLAS), several times faster than
    len(out) calls of ``row_dot``, which numba runs unvectorised when it is called as a
    separate function (0.15 vs 0.03 us per 150-d row)."""
    m = out.shape[0]
    if dense and mask < 0:
        W = table[first_row * n_features:(first_row + m) * n_features].reshape((m, n_features))
        out[:] = W @ Xd[i]
        for q in range(m):
            out[q] += bias[first_row + q]
        return
    for q in range(m):
        out[q] = row_dot(table, bias, first_row + q, n_features, mask, Xd, indptr, indices,
                         data, i, dense)


@_jit
def rows_adagrad_step(table, acc, n_features, mask, Xd, indptr, indices, data, i, dense, grad,
                      scale, lr):
    """AdaGrad step on rows 0..len(grad)-1 (no bias) for the loss gradients
    scale * grad[k] * x_i: a learned map A trained through r = A x (grad = dL/dr, or dJ/dr
    with scale -1 for an ascent on J)."""
    for k in range(grad.shape[0]):
        if grad[k] != 0.0:
            row_adagrad_weights(table, acc, k, n_features, mask, Xd, indptr, indices, data, i,
                                dense, scale * grad[k], lr)


def auto_bits(touched_pairs: float, load: float = 4.0) -> int:
    """Bits of a hashed table for about ``touched_pairs`` (row, feature) pairs: 2^bits >=
    load x pairs (expected colliding share ~ 1/load), clipped to [MIN_BITS, AUTO_MAX_BITS]."""
    need = max(float(touched_pairs) * load, 1.0)
    return int(min(AUTO_MAX_BITS, max(MIN_BITS, math.ceil(math.log2(need)))))


def table_layout(n_rows: int, n_features: int, bits="auto", touched_pairs: float | None = None,
                 direct_limit_bytes: int = 256 << 20) -> tuple[int, int]:
    """(table size, mask) for R = ``n_rows`` rows over D = ``n_features`` features.

    ``bits``: an int forces hashing into 2^bits slots; ``None`` forces the direct R x D
    layout; ``"auto"`` uses the direct layout when R x D x 8 bytes <= ``direct_limit_bytes``
    and otherwise hashes with ``auto_bits(touched_pairs)`` (``touched_pairs`` defaults to
    R x D; at most 2^AUTO_MAX_BITS slots).
    """
    if bits is None or (bits == "auto" and n_rows * n_features * 8 <= direct_limit_bytes):
        return max(n_rows * n_features, 1), DIRECT
    if bits == "auto":
        bits = auto_bits(n_rows * n_features if touched_pairs is None else touched_pairs)
    bits = int(bits)
    if not MIN_BITS <= bits <= MAX_BITS:
        raise ValueError(f"bits must be in {MIN_BITS}..{MAX_BITS}, got {bits}")
    return 1 << bits, (1 << bits) - 1


def table_bytes(n_rows: int, n_features: int, bits="auto", touched_pairs=None,
                copies: int = 1) -> int:
    """Bytes of ``copies`` float64 tables (e.g. weights + AdaGrad sums) of this layout."""
    size, _ = table_layout(n_rows, n_features, bits, touched_pairs)
    return 8 * size * copies


def gather_rows(table, mask, n_features, rows):
    """Dense (len(rows), D) copy of some rows (O(rows x D): for small models, tests, and
    compacting a trained tree's rows into a direct table)."""
    rows = np.asarray(rows, dtype=np.int64)
    out = np.empty((rows.size, n_features))
    _gather(table, mask, n_features, rows, out)
    return out


@_jit
def _gather(table, mask, n_features, rows, out):
    for k in range(rows.shape[0]):
        for f in range(n_features):
            out[k, f] = table[slot(rows[k], f, n_features, mask)]
