"""Linear rows of a tree (node regressors, routers, class scorers) on one flat table, with the
bias stored as an extra constant feature and an AdaGrad step that can stop at its target.

Row r over D features uses ``n_cols = D + 1`` columns of ``xcbench.tree.weights``: columns
0..D-1 hold the feature weights, column D the bias (as VW's constant feature), so one row
id names everything about a row and a hashed table needs no per-row arrays. Training keeps
the AdaGrad sums beside the weights, in a (size, 2) table (column 0 weight, column 1 sum of
squared gradients), so one cache line serves both; prediction keeps column 0 only.

``xscale`` (D,) multiplies each feature on the fly (per-feature normalisation without a
scaled copy of X; pass ones for none). Collisions of hashed layouts are described in
``xcbench.tree.weights``.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from .weights import DIRECT, auto_bits, slot, table_layout

MAX_AUTO_BITS = 26  # "auto" never hashes into more than 2^26 slots (512 MB per column)


def choose_layout(n_rows: int, n_features: int, bits="auto", touched_pairs=None,
                  max_auto_bits: int = MAX_AUTO_BITS, direct_limit_bytes: int = 256 << 20):
    """(size, mask) of a table for ``n_rows`` rows over ``n_features`` features plus the bias
    column: ``bits="auto"`` is direct when rows x (D + 1) x 8 bytes <= ``direct_limit_bytes``,
    else hashed with ``auto_bits(touched_pairs)`` capped at ``max_auto_bits``; an int hashes
    into 2^bits slots."""
    n_cols = n_features + 1
    if bits == "auto" and n_rows * n_cols * 8 > direct_limit_bytes:
        pairs = n_rows * n_cols if touched_pairs is None else touched_pairs
        bits = min(auto_bits(pairs), max_auto_bits)
    return table_layout(n_rows, n_cols, bits, touched_pairs, direct_limit_bytes)


def layout_bytes(n_rows, n_features, bits="auto", touched_pairs=None, columns=1) -> int:
    """Bytes of a table of this layout with ``columns`` float64 columns."""
    size, _ = choose_layout(n_rows, n_features, bits, touched_pairs)
    return 8 * size * columns


@numba.njit(cache=True, nogil=True)
def dot(w, row, n_cols, mask, xscale, Xd, indptr, indices, data, i, dense):
    """w_row . (xscale * x_i) + bias_row, for a weight column ``w`` of the flat table. The
    sum runs in feature order (no reassociation), so a dense row and its CSR copy give the
    same bits: online learners branch on signs of outputs, and a rounding difference would
    grow into a different tree."""
    D = n_cols - 1
    s = w[slot(row, D, n_cols, mask)]
    if dense:
        if mask == DIRECT:
            base = row * n_cols
            for f in range(D):
                s += w[base + f] * (Xd[i, f] * xscale[f])
        else:
            for f in range(D):
                v = Xd[i, f]
                if v != 0.0:
                    s += w[slot(row, f, n_cols, mask)] * (v * xscale[f])
    else:
        for p in range(indptr[i], indptr[i + 1]):
            f = indices[p]
            s += w[slot(row, f, n_cols, mask)] * (data[p] * xscale[f])
    return s


@numba.njit(cache=True, nogil=True, inline="always")
def _feature_step(wa, s, gf, x, lr, accumulate, step):
    """One weight's share of a step; returns its change to the output (if accumulating)."""
    dh = 0.0
    if accumulate:
        wa[s, 1] += gf * gf
        dh = -lr * gf / math.sqrt(wa[s, 1]) * x
    if step != 0.0:
        wa[s, 0] -= step * gf / math.sqrt(wa[s, 1])
    return dh


@numba.njit(cache=True, nogil=True)
def _row_pass(wa, row, n_cols, mask, xscale, Xd, indptr, indices, data, i, dense, g, lr,
              accumulate, step):
    """One pass over row ``row``'s weights for the loss gradient g * x_i: with
    ``accumulate`` add the squared gradients to the AdaGrad sums, with ``step`` != 0 move
    each weight by -step * gradient / sqrt(sum). Returns the change a full step of size
    ``lr`` makes to the output (0 unless accumulating)."""
    D = n_cols - 1
    dh = _feature_step(wa, slot(row, D, n_cols, mask), g, 1.0, lr, accumulate, step)
    if dense:
        for f in range(D):
            x = Xd[i, f] * xscale[f]
            if x != 0.0:
                dh += _feature_step(wa, slot(row, f, n_cols, mask), g * x, x, lr, accumulate,
                                    step)
    else:
        for p in range(indptr[i], indptr[i + 1]):
            f = indices[p]
            x = data[p] * xscale[f]
            if x != 0.0:
                dh += _feature_step(wa, slot(row, f, n_cols, mask), g * x, x, lr, accumulate,
                                    step)
    return dh


@numba.njit(cache=True, nogil=True)
def adagrad_step(wa, row, n_cols, mask, xscale, Xd, indptr, indices, data, i, dense, g, lr,
                 h, target, stop_at_target):
    """One AdaGrad step of row ``row`` of the (size, 2) training table for the loss gradient
    g * x_i, at current output ``h``. With ``stop_at_target`` the step is shortened so the
    output lands on ``target`` rather than jumping past it (for the absolute loss, in the
    spirit of VW's importance-invariant updates; two passes over the row), else it is one
    pass. Returns the output after the step."""
    if g == 0.0:
        return h
    if not stop_at_target:
        return h + _row_pass(wa, row, n_cols, mask, xscale, Xd, indptr, indices, data, i,
                             dense, g, lr, True, lr)
    dh = _row_pass(wa, row, n_cols, mask, xscale, Xd, indptr, indices, data, i, dense, g, lr,
                   True, 0.0)
    scale = 1.0
    if dh != 0.0 and (h + dh - target) * (h - target) < 0.0:
        scale = (target - h) / dh
    _row_pass(wa, row, n_cols, mask, xscale, Xd, indptr, indices, data, i, dense, g, lr, False,
              scale * lr)
    return h + scale * dh


@numba.njit(cache=True, nogil=True)
def clear_row(wa, row, n_cols, mask):
    """Zero a row (weights and sums) of a direct-layout table; hashed tables give a recycled
    row a fresh row id instead (its slots are not known)."""
    if mask == DIRECT:
        base = row * n_cols
        wa[base:base + n_cols, :] = 0.0


def new_table(size: int, dtype=np.float64) -> np.ndarray:
    """A zeroed (size, 2) training table: weights and AdaGrad sums. ``np.float32`` halves
    its memory and cache traffic (VW stores its weights so); the kernels still compute in
    float64 and only round when they store."""
    return np.zeros((size, 2), dtype=dtype)


@numba.njit(cache=True, nogil=True)
def _pack_weights(flat, size, n_columns):
    for s in range(size):  # slot s moves from n_columns * s to s: never over one to move
        flat[s] = flat[n_columns * s]


def weights_only(table: np.ndarray) -> np.ndarray:
    """The weight column (column 0) of a (size, c) training table as a 1-D array, made in
    place (the other columns are dropped and their memory released): no second copy of the
    weights exists at any time. ``table`` must not be used afterwards."""
    size, n_columns = table.shape
    _pack_weights(table.reshape(-1), size, n_columns)
    table.resize((size,), refcheck=False)
    return table
