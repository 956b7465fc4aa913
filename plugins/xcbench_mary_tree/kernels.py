"""Compiled (numba) training and inference of the learned M-ary tree.

Node n's child in slot j has score U[n * M + j] . x + b[n * M + j] (``child_row`` gives each
child's row), rows of the tree toolkit's flat weight table (``xcbench.tree.weights``); g_n(x)
is the softmax over the node's non-empty children (``xcbench.tree.node_softmax``), and
log p(label | x) the sum of log g along the label's path (``node_softmax.path_log_proba``).
"""
import math

import numba
import numpy as np

from xcbench.tree.node_softmax import child_logprobs
from xcbench.tree.weights import row_adagrad_step

_jit = numba.njit(cache=True, nogil=True)


@_jit
def train_chunk(order, y, child_ptr, child_slot, child_row, path_ptr, path_node, path_pos,
                table, acc, bias, bias_acc, n_features, mask, Xd, indptr, indices, data, dense, lr,
                density, step_sums, step_counts, max_arity):
    """One pass over rows ``order``: at every node of the label's path an AdaGrad ascent step
    on log g[target] (``density``) or g[target] (classification), and SumProbas / Counts
    accumulated per path step (``step_sums`` (n_steps, M) by slot, ``step_counts``).
    Returns the summed -log p(y | x) before the steps."""
    buf = np.empty(max_arity)
    nll = 0.0
    for t in range(order.shape[0]):
        i = order[t]
        c = y[i]
        for s in range(path_ptr[c], path_ptr[c + 1]):
            node = path_node[s]
            m = child_logprobs(node, child_ptr, child_row, table, bias, n_features, mask, Xd,
                               indptr, indices, data, i, dense, buf)
            target = path_pos[s]
            p_target = math.exp(buf[target])
            nll -= buf[target]
            step_counts[s] += 1.0
            start = child_ptr[node]
            for q in range(m):
                p = math.exp(buf[q])
                step_sums[s, child_slot[start + q]] += p
                grad = (1.0 if q == target else 0.0) - p  # d log g[target] / d score_q
                if not density:
                    grad *= p_target  # d g[target] / d score_q
                if grad != 0.0:
                    row_adagrad_step(table, acc, bias, bias_acc, child_row[start + q],
                                     n_features, mask, Xd, indptr, indices, data, i, dense,
                                     -grad, lr)
    return nll


@_jit
def _heap_push(keys, vals, size, key, val):
    """Max-heap on keys (arrays grown by the caller)."""
    keys[size], vals[size] = key, val
    j = size
    while j > 0:
        parent = (j - 1) // 2
        if keys[parent] >= keys[j]:
            break
        keys[parent], keys[j] = keys[j], keys[parent]
        vals[parent], vals[j] = vals[j], vals[parent]
        j = parent
    return size + 1


@_jit
def _heap_pop(keys, vals, size):
    key, val = keys[0], vals[0]
    size -= 1
    keys[0], vals[0] = keys[size], vals[size]
    j = 0
    while True:
        left, right, best = 2 * j + 1, 2 * j + 2, j
        if left < size and keys[left] > keys[best]:
            best = left
        if right < size and keys[right] > keys[best]:
            best = right
        if best == j:
            break
        keys[best], keys[j] = keys[j], keys[best]
        vals[best], vals[j] = vals[j], vals[best]
        j = best
    return key, val, size


@_jit
def decode_topk(k, n_classes, child_ptr, children, child_row, table, bias, n_features,
                mask, Xd, indptr, indices, data, dense, n_rows, max_arity, greedy, cost):
    """Top-k labels and log-probabilities per row. Exact (``greedy`` False): best-first
    branch and bound over partial paths: a path's log-probability only falls as it grows, so
    the first k leaves popped are the k most probable labels (dummies skipped). Greedy: follow
    the most probable child (k = 1 answer; the rest padded). ``cost[i]`` gets the children
    scored for row i."""
    labels = np.full((n_rows, k), -1, dtype=np.int64)
    scores = np.full((n_rows, k), -np.inf)
    buf = np.empty(max_arity)
    cap = 64
    for i in range(n_rows):
        scored = 0
        if greedy:
            node, logp = 0, 0.0
            while node >= 0:
                m = child_logprobs(node, child_ptr, child_row, table, bias, n_features, mask,
                                   Xd, indptr, indices, data, i, dense, buf)
                scored += m
                best = -1
                for q in range(m):  # dummy leaves (labels >= K) are never the answer
                    child = children[child_ptr[node] + q]
                    if child < 0 and -child - 1 >= n_classes:
                        continue
                    if best < 0 or buf[q] > buf[best]:
                        best = q
                logp += buf[best]
                node = children[child_ptr[node] + best]
            labels[i, 0], scores[i, 0] = -node - 1, logp
            cost[i] = scored
            continue
        keys = np.empty(cap)
        vals = np.empty(cap, dtype=np.int64)
        size = _heap_push(keys, vals, 0, 0.0, 0)
        found = 0
        while size > 0 and found < k:
            logp, node, size = _heap_pop(keys, vals, size)
            if node < 0:
                if -node - 1 < n_classes:
                    labels[i, found], scores[i, found] = -node - 1, logp
                    found += 1
                continue
            m = child_logprobs(node, child_ptr, child_row, table, bias, n_features, mask, Xd,
                               indptr, indices, data, i, dense, buf)
            scored += m
            if size + m > keys.shape[0]:
                grown_k = np.empty(2 * (size + m))
                grown_v = np.empty(2 * (size + m), dtype=np.int64)
                grown_k[:size], grown_v[:size] = keys[:size], vals[:size]
                keys, vals = grown_k, grown_v
            for q in range(m):
                size = _heap_push(keys, vals, size, logp + buf[q], children[child_ptr[node] + q])
        cost[i] = scored
    return labels, scores
