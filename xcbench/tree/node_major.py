"""Exact sparse weights grouped by tree node and sorted by feature: a node's children are
scored together with one lookup per input feature.

A tree node with m children has up to m weight rows (``edge_row``; -1 for a child whose
score is fixed at 0). Stored as separate sorted rows (``xcbench.tree.csr_weights``), scoring
the node costs one binary search per (row, input feature): 99 x 16 searches for a 100-child
node and a 16-feature input, each a likely cache miss once the model outgrows the cache.
Here a node's weights, all its rows together, are one run of (feature, child slot, value)
triples sorted by feature (``node_ptr``: node n's run is ``node_ptr[n]:node_ptr[n + 1]``),
so scoring the node costs one search per input feature in that run, then the triples of
that feature, which sit side by side (as a hashed table's blocked layout keeps a feature's
weights for consecutive rows, ``xcbench.tree.weights``, but without collisions). The search
first runs over a skip index, every ``SKIP``-th feature of the run (``skip_ptr`` /
``skip``: 1/32 of the run, so it stays in cache where the run does not), then inside one
block of ``SKIP`` triples: a few cache lines per lookup instead of one miss per halving of a
long run. Bytes: 16 per weight (int32 feature, int32 slot, float64 value) + 4 / SKIP per
weight + 16 per node as built; a fitted model keeps the ``compact`` store (7 bytes per
weight for nodes of at most 256 children over at most 65,536 features).

The store is the tuple ``(node_ptr, feature, child_slot, value, skip_ptr, skip)`` that
``xcbench.tree.weights.children_dot`` reads.
"""
from __future__ import annotations

import numba
import numpy as np

SKIP = 32  # triples per block of the skip index


def build(n_nodes: int, rows_of_node):
    """The store from ``rows_of_node(node)``: the node's weight rows as a list of (child slot,
    feature ids, values); exact zeros are dropped. Built one node at a time, so the caller
    may free each node's rows as they are handed over (peak: the rows not yet handed over
    plus about twice the store)."""
    feats, slots, vals = [], [], []
    node_ptr = np.zeros(n_nodes + 1, dtype=np.int64)
    for node in range(n_nodes):
        rows = list(rows_of_node(node))
        size = 0
        if rows:
            f = np.concatenate([np.asarray(r[1], dtype=np.int64) for r in rows])
            v = np.concatenate([np.asarray(r[2], dtype=np.float64) for r in rows])
            q = np.concatenate([np.full(len(r[1]), r[0], dtype=np.int32) for r in rows])
            if len(f) and f.max() >= 2**31:
                raise ValueError("node_major stores feature ids as int32: at most 2^31 "
                                 "features")
            keep = v != 0
            f, v, q = f[keep], v[keep], q[keep]
            order = np.lexsort((q, f))
            feats.append(f[order].astype(np.int32))
            slots.append(q[order])
            vals.append(v[order])
            size = len(order)
        node_ptr[node + 1] = node_ptr[node] + size
    cat = (lambda parts, dt: np.concatenate(parts) if parts else np.zeros(0, dtype=dt))
    feature = cat(feats, np.int32)
    return (node_ptr, feature, cat(slots, np.int32), cat(vals, np.float64),
            *skip_index(node_ptr, feature))


def smallest_uint(largest: int):
    """The smallest unsigned integer dtype that holds 0..``largest`` (int32 above 2^16 - 1:
    the kernels compare these with signed feature ids, which uint32 would not mix with)."""
    for dtype in (np.uint8, np.uint16):
        if largest <= np.iinfo(dtype).max:
            return dtype
    return np.int32


def compact(store, n_features: int):
    """The store as a fitted model keeps it: float32 values (a weight's relative rounding
    is 6e-8, far below the differences between the children's scores that decide a
    beam), child slots in the smallest unsigned type that holds the widest node's
    children (uint8 up to 256 children), feature ids likewise (uint16 up to 65,536
    features). 16 bytes per weight become 7 (100-way nodes, D < 65,536); scores are
    computed in float64 as before."""
    node_ptr, feature, child_slot, value, skip_ptr, skip = store
    feature_type = smallest_uint(max(int(n_features) - 1, 0))
    slot_type = smallest_uint(int(child_slot.max()) if child_slot.size else 0)
    return (node_ptr, feature.astype(feature_type), child_slot.astype(slot_type),
            value.astype(np.float32), skip_ptr, skip.astype(feature_type))


def skip_index(node_ptr, feature):
    """(skip_ptr, skip): node n's entries skip[skip_ptr[n] + k] = feature[node_ptr[n] + k
    SKIP] for every block k of its run."""
    blocks = -(-np.diff(node_ptr) // SKIP)
    skip_ptr = np.zeros(len(node_ptr), dtype=np.int64)
    np.cumsum(blocks, out=skip_ptr[1:])
    k = np.arange(skip_ptr[-1]) - np.repeat(skip_ptr[:-1], blocks)
    return skip_ptr, feature[np.repeat(node_ptr[:-1], blocks) + k * SKIP]


def from_rows(indptr, indices, data, child_ptr, edge_row):
    """The store of CSR weight rows (row r: ``indices``/``data`` in ``indptr[r]:indptr[r +
    1]``, in any order) for the tree's nodes (``child_ptr``: node n's children are
    ``child_ptr[n]:child_ptr[n + 1]``, child q's row ``edge_row[...]``, -1 for none)."""
    def rows_of_node(node):
        start = child_ptr[node]
        for q in range(child_ptr[node + 1] - start):
            r = edge_row[start + q]
            if r >= 0:
                yield q, indices[indptr[r]:indptr[r + 1]], data[indptr[r]:indptr[r + 1]]
    return build(len(child_ptr) - 1, rows_of_node)


@numba.njit(cache=True, nogil=True)
def children_dot(node_ptr, feature, child_slot, value, skip_ptr, skip, node, Xd, indptr,
                 indices, data, i, dense, out):
    """Add w_q . x_i to out[q] for each child slot q of ``node`` (the caller fills the
    biases). CSR input (sorted indices): per input feature, a binary search in the node's
    skip index, then in one block of its run, the lower bound moving forward; dense input:
    a gather over the run."""
    lo, hi = node_ptr[node], node_ptr[node + 1]
    base, s_hi = lo, skip_ptr[node + 1]
    if dense:
        for p in range(lo, hi):
            v = Xd[i, feature[p]]
            if v != 0.0:
                out[child_slot[p]] += value[p] * v
        return
    for t in range(indptr[i], indptr[i + 1]):
        if lo == hi:
            return
        f = indices[t]
        a, b = skip_ptr[node] + (lo - base) // SKIP, s_hi
        while a < b:  # a: the first block whose first feature is >= f
            mid = (a + b) >> 1
            if skip[mid] < f:
                a = mid + 1
            else:
                b = mid
        k = a - skip_ptr[node]
        a, b = max(lo, base + (k - 1) * SKIP), min(hi, base + k * SKIP)
        while a < b:  # the first triple of f is in the block before
            mid = (a + b) >> 1
            if feature[mid] < f:
                a = mid + 1
            else:
                b = mid
        lo = a
        v = data[t]
        while lo < hi and feature[lo] == f:
            out[child_slot[lo]] += value[lo] * v
            lo += 1
