"""Compiled (numba) inner loops of hierarchical softmax: training, path probabilities, and
the three decoders. Trees are the flat arrays of ``tree.LabelTree``; an input row is read
either from a dense matrix or from CSR parts (``dense`` says which), so one kernel serves
both.
"""
import math

import numba
import numpy as np

from xcbench.kernels import log_softmax_inplace
from xcbench.kernels import row_score as _score

_jit = numba.njit(cache=True, nogil=True)


@_jit
def _child_logprobs(node, child_ptr, edge_row, W, b, Xd, indptr, indices, data, i, dense, out):
    """Fill out[:m] with log p(child | node, x_i); return m (the node's arity)."""
    start, stop = child_ptr[node], child_ptr[node + 1]
    m = stop - start
    for q in range(m):
        r = edge_row[start + q]
        out[q] = _score(W, b, r, Xd, indptr, indices, data, i, dense) if r >= 0 else 0.0
    log_softmax_inplace(out, m)
    return m


@_jit
def path_log_proba(y, path_ptr, path_node, path_pos, child_ptr, edge_row, W, b,
                   Xd, indptr, indices, data, dense, max_arity):
    """log p(y_i | x_i) for every row: the sum of the edge log-probabilities on y_i's path."""
    n = y.shape[0]
    out = np.empty(n)
    buf = np.empty(max_arity)
    for i in range(n):
        total = 0.0
        for s in range(path_ptr[y[i]], path_ptr[y[i] + 1]):
            _child_logprobs(path_node[s], child_ptr, edge_row, W, b, Xd, indptr, indices,
                            data, i, dense, buf)
            total += buf[path_pos[s]]
        out[i] = total
    return out


@_jit
def train_epoch(order, y, path_ptr, path_node, path_pos, child_ptr, edge_row, W, b, VW, Vb,
                Xd, indptr, indices, data, dense, lr, momentum, l2, max_arity):
    """One SGD pass (batch 1) over rows in ``order`` on the NLL of each true path.

    Momentum and L2 act on the coordinates an example touches (all of them for dense
    input). Returns the mean NLL over the pass, measured before each update.
    """
    buf = np.empty(max_arity)
    loss = 0.0
    for t in range(order.shape[0]):
        i = order[t]
        c = y[i]
        for s in range(path_ptr[c], path_ptr[c + 1]):
            node = path_node[s]
            m = _child_logprobs(node, child_ptr, edge_row, W, b, Xd, indptr, indices, data,
                                i, dense, buf)
            loss -= buf[path_pos[s]]
            start = child_ptr[node]
            for q in range(m):
                r = edge_row[start + q]
                if r < 0:
                    continue
                g = math.exp(buf[q]) - (1.0 if q == path_pos[s] else 0.0)
                Vb[r] = momentum * Vb[r] - lr * g
                b[r] += Vb[r]
                if dense:
                    for j in range(Xd.shape[1]):
                        VW[r, j] = momentum * VW[r, j] - lr * (g * Xd[i, j] + l2 * W[r, j])
                        W[r, j] += VW[r, j]
                else:
                    for p in range(indptr[i], indptr[i + 1]):
                        j = indices[p]
                        VW[r, j] = momentum * VW[r, j] - lr * (g * data[p] + l2 * W[r, j])
                        W[r, j] += VW[r, j]
    return loss / max(order.shape[0], 1)


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
def decode_best_first(k, child_ptr, children, edge_row, W, b, Xd, indptr, indices, data, dense,
                      max_arity, n_edges, labels, scores):
    """Exact top-k by best-first search: pop the most probable frontier item; leaves come
    out in order of probability, because log-probabilities only fall along a path.
    Returns the number of internal nodes evaluated over all rows."""
    buf = np.empty(max_arity)
    keys = np.empty(n_edges + 1)
    vals = np.empty(n_edges + 1, dtype=np.int64)
    evaluated = 0
    for i in range(labels.shape[0]):
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
            m = _child_logprobs(item, child_ptr, edge_row, W, b, Xd, indptr, indices, data,
                                i, dense, buf)
            evaluated += 1
            start = child_ptr[item]
            for q in range(m):
                size = _heap_push(keys, vals, size, lp + buf[q], children[start + q], 1.0)
    return evaluated


@_jit
def decode_beam(k, width, child_ptr, children, edge_row, W, b, Xd, indptr, indices, data,
                dense, max_arity, labels, scores):
    """Beam search of ``width`` items (width 1: greedy descent to the more probable child).
    Leaves stay in the beam; it stops when the beam holds only leaves. Returns the number
    of internal nodes evaluated over all rows."""
    buf = np.empty(max_arity)
    beam_lp = np.empty(width)
    beam_item = np.empty(width, dtype=np.int64)
    keys = np.empty(width + 1)
    vals = np.empty(width + 1, dtype=np.int64)
    evaluated = 0
    for i in range(labels.shape[0]):
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
                evaluated += 1
                m = _child_logprobs(item, child_ptr, edge_row, W, b, Xd, indptr, indices,
                                    data, i, dense, buf)
                start = child_ptr[item]
                for q in range(m):
                    size = _keep_best(keys, vals, size, width, lp + buf[q], children[start + q])
            n_beam = size
            beam_lp[:size] = keys[:size]
            beam_item[:size] = vals[:size]
        size = 0  # the beam holds leaves only: best first into the row
        for t in range(n_beam):
            size = _heap_push(keys, vals, size, beam_lp[t], -beam_item[t] - 1, -1.0)
        _emit_sorted(keys, vals, size, labels, scores, i)
    return evaluated
