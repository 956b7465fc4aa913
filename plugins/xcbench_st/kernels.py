"""Compiled routing and leaf-softmax inference over a flat softmax tree.

A flat tree is: ``left``/``right`` child per node (-1 at leaves), ``row`` per node (its row in
the decision weights ``dw_*``/``dec_b`` or in the leaf table ``leaf_ptr``), and per leaf a
slice ``leaf_ptr[j]:leaf_ptr[j+1]`` of ``leaf_classes``/``lw_*`` rows/``leaf_b``. Weights are
CSR rows (``*_ptr``, ``*_idx``, ``*_val``: ``xcbench.tree.csr_weights``). An example goes
right at a decision node when w.x + b >= 0. Every kernel reads X through
``xcbench.kernels.kernel_input`` (CSR with sorted indices) so dense and CSR inputs share one
code path; a CSR row costs O(nnz(x) + nnz(w)) per node, never O(D).
"""

import numba
import numpy as np

from xcbench.kernels import log_softmax_inplace
from xcbench.tree import label_stats as ls
from xcbench.tree.csr_weights import row_dot
from xcbench.tree.topk import heap_push, heap_sorted


@numba.njit(cache=True, nogil=True, inline="always")
def row_score(w_ptr, w_idx, w_val, b, r, Xd, indptr, indices, data, i, dense):
    """w_r . x_i + b_r for CSR weight rows."""
    return b[r] + row_dot(w_ptr, w_idx, w_val, r, Xd, indptr, indices, data, i, dense)


@numba.njit(cache=True, nogil=True)
def _descend(node, left, right, row, dw_ptr, dw_idx, dw_val, dec_b, Xd, indptr, indices, data,
             i, dense):
    """Leaf reached by example i from ``node``, and the number of decisions taken."""
    steps = 0
    while left[node] >= 0:
        r = row[node]
        if row_score(dw_ptr, dw_idx, dw_val, dec_b, r, Xd, indptr, indices, data, i,
                     dense) >= 0.0:
            node = right[node]
        else:
            node = left[node]
        steps += 1
    return node, steps


@numba.njit(cache=True, nogil=True)
def route(points, start, left, right, row, dw_ptr, dw_idx, dw_val, dec_b, Xd, indptr, indices,
          data, dense):
    """Leaf node reached by each example ``points[p]`` starting at node ``start[p]``."""
    out = np.empty(len(points), dtype=np.int64)
    for p in range(len(points)):
        out[p], _ = _descend(start[p], left, right, row, dw_ptr, dw_idx, dw_val, dec_b, Xd,
                             indptr, indices, data, points[p], dense)
    return out


@numba.njit(cache=True, nogil=True)
def route_paths(left, right, row, dw_ptr, dw_idx, dw_val, dec_b, Xd, indptr, indices, data,
                dense, n, max_depth):
    """(n, max_depth + 1) array of the node each example visits at each depth (-1 below its
    leaf)."""
    paths = np.full((n, max_depth + 1), -1, dtype=np.int64)
    for i in range(n):
        node, d = 0, 0
        paths[i, 0] = 0
        while left[node] >= 0:
            if row_score(dw_ptr, dw_idx, dw_val, dec_b, row[node], Xd, indptr, indices, data, i,
                         dense) >= 0.0:
                node = right[node]
            else:
                node = left[node]
            d += 1
            paths[i, d] = node
    return paths


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _leaf_log_softmax(j, leaf_ptr, lw_ptr, lw_idx, lw_val, leaf_b, Xd, indptr, indices, data, i,
                      dense, buf):
    """Fill buf[:m] with the log-softmax of leaf j's classes for example i; return m."""
    lo, hi = leaf_ptr[j], leaf_ptr[j + 1]
    m = hi - lo
    for c in range(m):
        buf[c] = row_score(lw_ptr, lw_idx, lw_val, leaf_b, lo + c, Xd, indptr, indices, data, i,
                           dense)
    log_softmax_inplace(buf, m)
    return m


@numba.njit(cache=True, nogil=True)
def _leaf_scores(i, left, right, row, dw_ptr, dw_idx, dw_val, dec_b, leaf_ptr, lw_ptr, lw_idx,
                 lw_val, leaf_b, Xd, indptr, indices, data, dense, buf):
    """Descend example i to its leaf and fill buf with the leaf's log-softmax; return (the
    leaf's row in the leaf table, its number of classes, decisions taken)."""
    node, steps = _descend(0, left, right, row, dw_ptr, dw_idx, dw_val, dec_b, Xd, indptr,
                           indices, data, i, dense)
    j = row[node]
    m = _leaf_log_softmax(j, leaf_ptr, lw_ptr, lw_idx, lw_val, leaf_b, Xd, indptr, indices,
                          data, i, dense, buf)
    return j, m, steps


@numba.njit(cache=True, nogil=True, inline="always")
def _pop_best(buf, m):
    """(index, value) of the largest of buf[:m], whose entry becomes -inf (so repeated
    calls give the top entries in order)."""
    best = 0
    for c in range(1, m):
        if buf[c] > buf[best]:
            best = c
    value = buf[best]
    buf[best] = -np.inf
    return best, value


@numba.njit(cache=True, nogil=True)
def predict_topk(kk, left, right, row, dw_ptr, dw_idx, dw_val, dec_b, leaf_ptr, leaf_classes,
                 lw_ptr, lw_idx, lw_val, leaf_b, max_leaf, Xd, indptr, indices, data, dense, n,
                 out_l, out_s):
    """Top-kk classes of each example's leaf softmax into out_l/out_s (pre-filled -1/-inf);
    returns (decision nodes evaluated, leaf classes scored), summed over examples."""
    buf = np.empty(max(max_leaf, 1))
    evaluated = 0
    scored = 0
    for i in range(n):
        j, m, steps = _leaf_scores(i, left, right, row, dw_ptr, dw_idx, dw_val, dec_b,
                                   leaf_ptr, lw_ptr, lw_idx, lw_val, leaf_b, Xd, indptr,
                                   indices, data, dense, buf)
        evaluated += steps
        scored += m
        for t in range(min(kk, m)):  # kk is small: repeated arg-max beats a heap here
            best, out_s[i, t] = _pop_best(buf, m)
            out_l[i, t] = leaf_classes[leaf_ptr[j] + best]
    return evaluated, scored


@numba.njit(cache=True, nogil=True)
def predict_topk_smoothed(kk, left, right, row, dw_ptr, dw_idx, dw_val, dec_b, leaf_ptr,
                          leaf_classes, lw_ptr, lw_idx, lw_val, leaf_b, max_leaf, Xd, indptr,
                          indices, data, dense, n, weight, floor, n_classes, tab_labels,
                          tab_prob, out_l, out_s):
    """``predict_topk`` ranked by the back-off (smoothing.py): the leaf's classes at
    (1 - weight) p_softmax, the leaf table's outside labels at their stored share; scores
    are log((1 - floor) p + floor / K). Returns what ``predict_topk`` does."""
    buf = np.empty(max(max_leaf, 1))
    best_p = np.empty(kk)
    best_l = np.empty(kk, dtype=np.int64)
    evaluated = 0
    scored = 0
    for i in range(n):
        j, m, steps = _leaf_scores(i, left, right, row, dw_ptr, dw_idx, dw_val, dec_b,
                                   leaf_ptr, lw_ptr, lw_idx, lw_val, leaf_b, Xd, indptr,
                                   indices, data, dense, buf)
        evaluated += steps
        scored += m
        size = 0
        for t in range(min(kk, m)):  # the leaf's kk best classes: only they can be in the top
            best, score = _pop_best(buf, m)
            p = (1.0 - weight) * np.exp(score)
            if p > 0:
                size = heap_push(best_p, best_l, size, kk, p, leaf_classes[leaf_ptr[j] + best])
        for t in range(tab_labels.shape[1]):
            if tab_labels[j, t] < 0:
                break
            if tab_prob[j, t] > 0:
                size = heap_push(best_p, best_l, size, kk, tab_prob[j, t], tab_labels[j, t])
        heap_sorted(best_p, best_l, size)
        for t in range(size):
            out_l[i, t] = best_l[t]
            out_s[i, t] = np.log((1.0 - floor) * best_p[t] + floor / n_classes)
    return evaluated, scored


@numba.njit(cache=True, nogil=True)
def _deleted_prob(parts, path, m, label, own, lam, n_classes):
    """Back-off probability of ``label`` at ``path[0]`` (path leaf first, root last) with one
    count of label ``own`` removed at every node of the path."""
    node_f = parts[4]
    p = 1.0 / n_classes
    for q in range(m - 1, -1, -1):
        j = path[q]
        n = node_f[j, 0] - 1.0
        if n > 0:
            c = ls.count(parts, j, label) - (1.0 if label == own else 0.0)
            p = (1.0 - lam) * c / n + lam * p
    return p


@numba.njit(cache=True, nogil=True)
def deleted_backoff(parts, parent, nodes, labels, leaf_ptr, leaf_classes, leaf_row, lam,
                    n_classes, cap, out_label, out_outside):
    """For training row i at leaf ``nodes[i]`` (its row ``leaf_row[i]`` in the leaf table),
    counted along its path: the back-off probability of its own label and the back-off
    mass outside its leaf's classes, both with the row's own count deleted."""
    path = np.empty(cap, dtype=np.int64)
    for i in range(nodes.shape[0]):
        m = 0
        j = nodes[i]
        while j >= 0:
            path[m] = j
            m += 1
            j = parent[j]
        out_label[i] = _deleted_prob(parts, path, m, labels[i], labels[i], lam, n_classes)
        inside = 0.0
        r = leaf_row[i]
        for t in range(leaf_ptr[r], leaf_ptr[r + 1]):
            inside += _deleted_prob(parts, path, m, leaf_classes[t], labels[i], lam, n_classes)
        out_outside[i] = max(1.0 - inside, 0.0)


@numba.njit(cache=True, nogil=True)
def count_paths(parts, y, start, depth_cap, left, right, row, dw_ptr, dw_idx, dw_val, dec_b,
                Xd, indptr, indices, data, dense):
    """Count y_i at every node example i visits (``xcbench.tree.label_stats``), from example
    ``start`` on; return the example reached (earlier than the end when the table must
    grow first: it may add ``depth_cap`` entries per example)."""
    n = len(y)
    for i in range(start, n):
        if not ls.has_room(parts, depth_cap):
            return i
        node = 0
        ls.add(parts, node, y[i], 1.0)
        while left[node] >= 0:
            if row_score(dw_ptr, dw_idx, dw_val, dec_b, row[node], Xd, indptr, indices, data, i,
                         dense) >= 0.0:
                node = right[node]
            else:
                node = left[node]
            ls.add(parts, node, y[i], 1.0)
    return n


@numba.njit(cache=True, nogil=True)
def log_proba(y, left, right, row, dw_ptr, dw_idx, dw_val, dec_b, leaf_ptr, leaf_classes,
              lw_ptr, lw_idx, lw_val, leaf_b, max_leaf, Xd, indptr, indices, data, dense):
    """log p(y_i | x_i): the leaf's log-softmax entry for y_i, -inf if y_i is not a leaf
    class."""
    n = len(y)
    out = np.full(n, -np.inf)
    buf = np.empty(max(max_leaf, 1))
    for i in range(n):
        node, _ = _descend(0, left, right, row, dw_ptr, dw_idx, dw_val, dec_b, Xd, indptr,
                           indices, data, i, dense)
        j = row[node]
        lo, hi = leaf_ptr[j], leaf_ptr[j + 1]
        pos = -1
        for c in range(hi - lo):
            if leaf_classes[lo + c] == y[i]:
                pos = c
                break
        if pos >= 0:
            _leaf_log_softmax(j, leaf_ptr, lw_ptr, lw_idx, lw_val, leaf_b, Xd, indptr, indices,
                              data, i, dense, buf)
            out[i] = buf[pos]
    return out


@numba.njit(cache=True, nogil=True)
def path_costs(left, right, row, dw_ptr, dw_idx, dw_val, dec_b, leaf_ptr, Xd, indptr, indices,
               data, dense, n):
    """Per example: (decision nodes evaluated, classes in the leaf reached)."""
    steps = np.empty(n, dtype=np.int64)
    sizes = np.empty(n, dtype=np.int64)
    for i in range(n):
        node, steps[i] = _descend(0, left, right, row, dw_ptr, dw_idx, dw_val, dec_b, Xd,
                                  indptr, indices, data, i, dense)
        sizes[i] = leaf_ptr[row[node] + 1] - leaf_ptr[row[node]]
    return steps, sizes
