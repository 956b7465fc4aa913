"""Compiled (numba) inner loops of hierarchical softmax: training, path probabilities, and
the three decoders. Trees are the flat arrays of ``tree.LabelTree``; the weight rows live in
one flat table (``xcbench.tree.weights``: ``table``, ``bias``, ``n_features``, ``mask``). An
input row is read either from a dense matrix or from CSR parts (``dense`` says which), so
one kernel serves both; a CSR row costs O(nnz) per weight row scored.
"""
import math

import numba
import numpy as np

from xcbench.kernels import log_softmax_inplace
from xcbench.tree.node_softmax import child_logprobs as _child_logprobs
from xcbench.tree.node_softmax import path_log_proba  # noqa: F401 (the model calls it here)
from xcbench.tree.weights import children_dot, slot

_jit = numba.njit(cache=True, nogil=True)


@_jit
def _sgd_row(table, vel, bias, vel_b, r, n_features, mask, Xd, indptr, indices, data, i,
             dense, g, lr, momentum, l2):
    """One SGD step on weight row r for the loss gradient g * x_i (+ L2 on the touched
    coordinates), with momentum buffers ``vel`` / ``vel_b`` when momentum > 0. Dense input
    in the direct layout touches every coordinate (as a dense matrix would); otherwise only
    the nonzero features'."""
    if momentum > 0.0:
        vel_b[r] = momentum * vel_b[r] - lr * g
        bias[r] += vel_b[r]
    else:
        bias[r] -= lr * g
    if dense and mask < 0 and momentum == 0.0:
        # unsigned indices and no branch in the loop: numba vectorises it
        base = np.uint64(r * n_features)
        x = Xd[i]
        for f in range(np.uint64(n_features)):
            table[base + f] -= lr * (g * x[f] + l2 * table[base + f])
    elif dense and mask < 0:
        base = r * n_features
        for f in range(n_features):
            s = base + f
            vel[s] = momentum * vel[s] - lr * (g * Xd[i, f] + l2 * table[s])
            table[s] += vel[s]
    elif dense:
        for f in range(n_features):
            x = Xd[i, f]
            if x != 0.0:
                s = slot(r, f, n_features, mask)
                step = -lr * (g * x + l2 * table[s])
                if momentum > 0.0:
                    vel[s] = momentum * vel[s] + step
                    step = vel[s]
                table[s] += step
    else:
        for p in range(indptr[i], indptr[i + 1]):
            s = slot(r, indices[p], n_features, mask)
            step = -lr * (g * data[p] + l2 * table[s])
            if momentum > 0.0:
                vel[s] = momentum * vel[s] + step
                step = vel[s]
            table[s] += step


@_jit
def train_epoch(order, y, path_ptr, path_node, path_pos, child_ptr, edge_row, table, bias,
                vel, vel_b, n_features, mask, Xd, indptr, indices, data, dense, lr, momentum,
                l2, max_arity):
    """One SGD pass (batch 1) over rows in ``order`` on the NLL of each true path.

    Returns the mean NLL over the pass, measured before each update.
    """
    buf = np.empty(max_arity)
    loss = 0.0
    for t in range(order.shape[0]):
        i = order[t]
        c = y[i]
        for s in range(path_ptr[c], path_ptr[c + 1]):
            node = path_node[s]
            m = _child_logprobs(node, child_ptr, edge_row, table, bias, n_features, mask, Xd,
                                indptr, indices, data, i, dense, buf)
            loss -= buf[path_pos[s]]
            start = child_ptr[node]
            for q in range(m):
                r = edge_row[start + q]
                if r >= 0:
                    g = math.exp(buf[q]) - (1.0 if q == path_pos[s] else 0.0)
                    _sgd_row(table, vel, bias, vel_b, r, n_features, mask, Xd, indptr,
                             indices, data, i, dense, g, lr, momentum, l2)
    return loss / max(order.shape[0], 1)


@_jit
def all_finite(values):
    """True when no entry is NaN or infinite (no temporary array, unlike np.isfinite)."""
    for v in values:
        if not math.isfinite(v):
            return False
    return True


@_jit
def edge_scores(table, bias, n_features, mask, child_ptr, edge_row, Xd, indptr, indices, data,
                dense, start, S, max_arity):
    """S[i, r] = w_r . x_(start + i) + b_r for every weight row r (the exact decoder's
    scores without BLAS), node by node (``children_dot``: O(nnz) per row and weight row
    for a flat table, one lookup per input feature and node for the node-major store)."""
    buf = np.empty(max_arity)
    for i in range(S.shape[0]):
        for node in range(child_ptr.shape[0] - 1):
            m = children_dot(table, bias, node, child_ptr, edge_row, n_features, mask, Xd,
                             indptr, indices, data, start + i, dense, buf)
            for q in range(m):
                r = edge_row[child_ptr[node] + q]
                if r >= 0:
                    S[i, r] = buf[q]


# ----- a fixed-capacity binary heap of (key, value) pairs; ``sign`` +1 max-heap, -1 min-heap


@_jit
def _heap_push(keys, vals, size, key, val, sign):
    pos = size
    keys[pos], vals[pos] = key, val
    while pos > 0:
        parent = (pos - 1) // 2
        if sign * keys[parent] >= sign * keys[pos]:
            break
        keys[parent], keys[pos] = keys[pos], keys[parent]
        vals[parent], vals[pos] = vals[pos], vals[parent]
        pos = parent
    return size + 1


@_jit
def _heap_pop(keys, vals, size, sign):
    """Remove the top; return the new size (the popped pair is left at keys[size-1])."""
    size -= 1
    keys[0], keys[size] = keys[size], keys[0]
    vals[0], vals[size] = vals[size], vals[0]
    pos = 0
    while True:
        left, best = 2 * pos + 1, pos
        if left < size and sign * keys[left] > sign * keys[best]:
            best = left
        if left + 1 < size and sign * keys[left + 1] > sign * keys[best]:
            best = left + 1
        if best == pos:
            return size
        keys[pos], keys[best] = keys[best], keys[pos]
        vals[pos], vals[best] = vals[best], vals[pos]
        pos = best


@_jit
def _keep_best(keys, vals, size, capacity, key, val):
    """Offer (key, val) to a min-heap holding the ``capacity`` largest keys; return its size."""
    if size < capacity:
        return _heap_push(keys, vals, size, key, val, -1.0)
    if key > keys[0]:
        size = _heap_pop(keys, vals, size, -1.0)
        return _heap_push(keys, vals, size, key, val, -1.0)
    return size


@_jit
def _emit_sorted(keys, vals, size, labels, scores, i):
    """Write a min-heap's contents into row i, best first."""
    while size > 0:
        size = _heap_pop(keys, vals, size, -1.0)
        labels[i, size] = vals[size]
        scores[i, size] = keys[size]


@_jit
def _node_logprobs_from_scores(node, child_ptr, edge_row, S, i, out):
    """Like ``_child_logprobs`` but reading the edge scores from a precomputed row S[i]."""
    start, stop = child_ptr[node], child_ptr[node + 1]
    m = stop - start
    for q in range(m):
        r = edge_row[start + q]
        out[q] = S[i, r] if r >= 0 else 0.0
    log_softmax_inplace(out, m)
    return m


@_jit
def decode_exact(k, n_classes, child_ptr, children, edge_row, S, max_arity, n_nodes,
                 labels, scores, row_offset):
    """Exact top-k from all edge scores S (rows, n_rows) = X W^T + b: every class's
    log-probability by one top-down pass over the nodes, then the k best. Writes rows
    ``row_offset + i`` of labels/scores."""
    buf = np.empty(max_arity)
    node_lp = np.empty(n_nodes)
    leaf_lp = np.empty(n_classes)
    keys = np.empty(k + 1)
    vals = np.empty(k + 1, dtype=np.int64)
    for i in range(S.shape[0]):
        node_lp[0] = 0.0
        for node in range(n_nodes):  # nodes are numbered top-down (BFS)
            m = _node_logprobs_from_scores(node, child_ptr, edge_row, S, i, buf)
            start = child_ptr[node]
            for q in range(m):
                child = children[start + q]
                if child >= 0:
                    node_lp[child] = node_lp[node] + buf[q]
                else:
                    leaf_lp[-child - 1] = node_lp[node] + buf[q]
        size = 0
        for c in range(n_classes):
            size = _keep_best(keys, vals, size, k, leaf_lp[c], c)
        _emit_sorted(keys, vals, size, labels, scores, row_offset + i)


@_jit
def decode_best_first(k, child_ptr, children, edge_row, table, bias, n_features, mask, Xd,
                      indptr, indices, data, dense, max_arity, n_edges, labels, scores, cost):
    """Exact top-k by best-first search: pop the most probable frontier item; leaves come
    out in order of probability, because log-probabilities only fall along a path.
    Writes the weight rows scored for row i to cost[i]."""
    buf = np.empty(max_arity)
    keys = np.empty(n_edges + 1)
    vals = np.empty(n_edges + 1, dtype=np.int64)
    for i in range(labels.shape[0]):
        cost[i] = 0
        size = _heap_push(keys, vals, 0, 0.0, 0, 1.0)
        found = 0
        while size > 0 and found < k:
            size = _heap_pop(keys, vals, size, 1.0)
            lp, item = keys[size], vals[size]
            if item < 0:
                labels[i, found] = -item - 1
                scores[i, found] = lp
                found += 1
                continue
            m = _child_logprobs(item, child_ptr, edge_row, table, bias, n_features, mask, Xd,
                                indptr, indices, data, i, dense, buf)
            cost[i] += m - 1
            start = child_ptr[item]
            for q in range(m):
                size = _heap_push(keys, vals, size, lp + buf[q], children[start + q], 1.0)


@_jit
def decode_beam(k, width, child_ptr, children, edge_row, table, bias, n_features, mask, Xd,
                indptr, indices, data, dense, max_arity, labels, scores, cost):
    """Beam search of ``width`` >= k items (width 1: greedy descent to the more probable
    child). Leaves stay in the beam; it stops when the beam holds only leaves, whose best k
    are the answer. Writes the weight rows scored for row i to cost[i]."""
    buf = np.empty(max_arity)
    beam_lp = np.empty(width)
    beam_item = np.empty(width, dtype=np.int64)
    keys = np.empty(width + 1)
    vals = np.empty(width + 1, dtype=np.int64)
    for i in range(labels.shape[0]):
        cost[i] = 0
        beam_lp[0], beam_item[0] = 0.0, 0
        n_beam = 1
        expanded = True
        while expanded:
            expanded = False
            size = 0
            for t in range(n_beam):
                item, lp = beam_item[t], beam_lp[t]
                if item < 0:
                    size = _keep_best(keys, vals, size, width, lp, item)
                    continue
                expanded = True
                m = _child_logprobs(item, child_ptr, edge_row, table, bias, n_features, mask,
                                    Xd, indptr, indices, data, i, dense, buf)
                cost[i] += m - 1
                start = child_ptr[item]
                for q in range(m):
                    size = _keep_best(keys, vals, size, width, lp + buf[q], children[start + q])
            n_beam = size
            beam_lp[:size] = keys[:size]
            beam_item[:size] = vals[:size]
        size = 0  # the beam holds leaves only: its best k, best first, into the row
        for t in range(n_beam):
            size = _keep_best(keys, vals, size, k, beam_lp[t], -beam_item[t] - 1)
        _emit_sorted(keys, vals, size, labels, scores, i)
