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
from xcbench.tree.weights import row_adagrad_step, row_axpy, slot

from .represent import rep_step, represent_row

_jit = numba.njit(cache=True, nogil=True)


@_jit
def path_steps(i, c, path_ptr, path_node, path_pos, child_ptr, child_slot, child_row, table,
               acc, bias, bias_acc, n_features, mask, Xd, indptr, indices, data, row, dense, lr,
               adagrad, density, step_sums, step_counts, buf, grad_r, update):
    """Example i of label c, whose node input is row ``row`` of (Xd | CSR parts): at every
    node of c's path, an AdaGrad ascent step (``update``) on log g[target] (``density``) or
    g[target] (classification), and SumProbas / Counts accumulated per path step
    (``step_sums`` (n_steps, M) by slot, ``step_counts``). With a non-empty ``grad_r`` (dense
    input of that width) it also adds dJ/d(input) there, taken before the node's own step:
    path nodes are distinct, so the sum is the gradient of the whole path objective.
    ``adagrad`` False takes plain SGD steps (``lr`` times the gradient) instead.
    Returns -log p(c | x_i) before the steps."""
    nll = 0.0
    backprop = grad_r.shape[0] > 0
    for s in range(path_ptr[c], path_ptr[c + 1]):
        node = path_node[s]
        m = child_logprobs(node, child_ptr, child_row, table, bias, n_features, mask, Xd,
                           indptr, indices, data, row, dense, buf)
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
            if grad == 0.0:
                continue
            r = child_row[start + q]
            if backprop:
                for k in range(n_features):
                    grad_r[k] += grad * table[slot(r, k, n_features, mask)]
            if update and adagrad:
                row_adagrad_step(table, acc, bias, bias_acc, r, n_features, mask, Xd, indptr,
                                 indices, data, row, dense, -grad, lr)
            elif update:
                bias[r] += lr * grad
                row_axpy(table, r, n_features, mask, lr * grad, Xd, indptr, indices, data, row,
                         dense)
    return nll


@_jit
def train_chunk(order, y, child_ptr, child_slot, child_row, path_ptr, path_node, path_pos,
                table, acc, bias, bias_acc, n_features, mask, Xd, indptr, indices, data, dense, lr,
                lr_end, adagrad, density, step_sums, step_counts, max_arity):
    """One pass over rows ``order`` of the identity representation (nodes score x itself):
    ``path_steps`` for each, the step size going linearly from ``lr`` to ``lr_end`` over the
    pass. Returns the summed -log p(y | x) before the steps."""
    buf = np.empty(max_arity)
    no_grad = np.empty(0)
    nll = 0.0
    n = order.shape[0]
    for t in range(n):
        i = order[t]
        step = lr + (lr_end - lr) * t / n
        nll += path_steps(i, y[i], path_ptr, path_node, path_pos, child_ptr, child_slot,
                          child_row, table, acc, bias, bias_acc, n_features, mask, Xd, indptr,
                          indices, data, i, dense, step, adagrad, density, step_sums,
                          step_counts, buf, no_grad, True)
    return nll


@_jit
def train_chunk_rep(order, y, child_ptr, child_slot, child_row, path_ptr, path_node, path_pos,
                    table, acc, bias, bias_acc, d_r, mask, rep, rep_acc, rep_mask, n_inputs, Xd,
                    indptr, indices, data, dense, lr, lr_end, adagrad, density, step_sums,
                    step_counts, max_arity):
    """One pass over rows ``order`` with a learned representation r = A x (``represent``):
    r computed once per example and reused at every node of the path, node steps as in
    ``path_steps`` on r, then an AdaGrad step of A along dJ/dr x^T (the same learner; step
    size from ``lr`` to ``lr_end`` as in ``train_chunk``)."""
    buf = np.empty(max_arity)
    r = np.empty((1, d_r))
    grad_r = np.empty(d_r)
    no_bias = np.zeros(d_r)
    nll = 0.0
    n = order.shape[0]
    for t in range(n):
        i = order[t]
        step = lr + (lr_end - lr) * t / n
        represent_row(rep, no_bias, d_r, n_inputs, rep_mask, Xd, indptr, indices, data, i, dense,
                      r[0])
        grad_r[:] = 0.0
        nll += path_steps(i, y[i], path_ptr, path_node, path_pos, child_ptr, child_slot,
                          child_row, table, acc, bias, bias_acc, d_r, mask, r, indptr, indices,
                          data, 0, True, step, adagrad, density, step_sums, step_counts, buf,
                          grad_r, True)
        rep_step(rep, rep_acc, d_r, n_inputs, rep_mask, Xd, indptr, indices, data, i,
                 dense, grad_r, step, adagrad)
    return nll


@_jit
def rep_gradient(y, child_ptr, child_slot, child_row, path_ptr, path_node, path_pos, table,
                 bias, mask, R, density, arity, max_arity):
    """dJ/dr (n, d_r) of each row's path objective at representations R, no step taken
    (the backpropagated quantity of ``train_chunk_rep``, for tests and diagnostics)."""
    n, d_r = R.shape
    out = np.zeros((n, d_r))
    buf = np.empty(max_arity)
    sums = np.zeros((path_node.shape[0], arity))
    counts = np.zeros(path_node.shape[0])
    none_i = np.empty(0, dtype=np.int64)
    none_f = np.empty(0)
    for i in range(n):
        path_steps(i, y[i], path_ptr, path_node, path_pos, child_ptr, child_slot, child_row,
                   table, table, bias, bias, d_r, mask, R, none_i, none_i, none_f, i, True, 0.0,
                   True, density, sums, counts, buf, out[i], False)
    return out


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


@_jit
def _offer(keys, vals, size, width, key, val):
    """Keep the ``width`` largest keys in unsorted arrays: append while there is room, else
    replace the smallest kept key if ``key`` beats it. Returns the new size."""
    if size < width:
        keys[size], vals[size] = key, val
        return size + 1
    low = 0
    for t in range(1, size):
        if keys[t] < keys[low]:
            low = t
    if key > keys[low]:
        keys[low], vals[low] = key, val
    return size


@_jit
def decode_beam(k, width, n_classes, child_ptr, children, child_row, table, bias, n_features,
                mask, Xd, indptr, indices, data, dense, n_rows, max_arity, cost):
    """Top-k labels and log-probabilities per row by beam search: the beam holds the
    ``width`` (>= k) most probable partial paths; each round expands every internal node in
    it (leaves stay), and it stops when the beam holds leaves only; their best k are the
    answer. Dummy leaves (labels >= K) never enter the beam. A beam at least as wide as the
    number of leaves keeps every path: the exact top k. ``cost[i]`` gets the children
    scored for row i."""
    labels = np.full((n_rows, k), -1, dtype=np.int64)
    scores = np.full((n_rows, k), -np.inf)
    buf = np.empty(max_arity)
    beam_lp, beam_item = np.empty(width), np.empty(width, dtype=np.int64)
    next_lp, next_item = np.empty(width), np.empty(width, dtype=np.int64)
    for i in range(n_rows):
        beam_lp[0], beam_item[0] = 0.0, 0
        size, scored, expanded = 1, 0, True
        while expanded:
            expanded = False
            n_next = 0
            for t in range(size):
                node, logp = beam_item[t], beam_lp[t]
                if node < 0:
                    n_next = _offer(next_lp, next_item, n_next, width, logp, node)
                    continue
                expanded = True
                m = child_logprobs(node, child_ptr, child_row, table, bias, n_features, mask,
                                   Xd, indptr, indices, data, i, dense, buf)
                scored += m
                for q in range(m):
                    child = children[child_ptr[node] + q]
                    if child < 0 and -child - 1 >= n_classes:
                        continue  # a dummy leaf
                    n_next = _offer(next_lp, next_item, n_next, width, logp + buf[q], child)
            size = n_next
            beam_lp[:size], beam_item[:size] = next_lp[:size], next_item[:size]
        order = np.argsort(-beam_lp[:size], kind="stable")
        for j in range(min(k, size)):
            labels[i, j] = -beam_item[order[j]] - 1
            scores[i, j] = beam_lp[order[j]]
        cost[i] = scored
    return labels, scores
