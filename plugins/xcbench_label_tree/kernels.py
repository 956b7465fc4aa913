"""Compiled (numba) training and decoding of label trees.

Node scorers live in one flat weight table of the tree toolkit (``xcbench.tree.weights``):
node s's score is f_s(x) = w_s . x + b_s (label tree) or z . V_s with z = W x cached once per
example (label embedding tree; W's d_e rows in the table). Rows of X are read dense or CSR.

Training is SGD on hinge losses over sibling competitions:
- tree loss (Relaxation 2, the paper's proposal): one slack per example shared by every depth,
  xi_i = max over pairs (r, s), r on the true path and s a sibling of r, of 1 - f_r + f_s;
  each step follows the subgradient of that max: the most violated pair only.
- independent (Relaxation 1): at every node r of the true path, each child s of r's parent
  gets its own binary hinge "y in l_s or not" (+1 for r, -1 for its siblings).
"""
import math

import numba
import numpy as np

from xcbench.tree.weights import row_adagrad_step, row_axpy, row_dot

_jit = numba.njit(cache=True, nogil=True)
# reassociation lets LLVM vectorise the z . V_s sums (SIMD); nothing else is relaxed
_jit_sum = numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})


@_jit_sum
def _node_scores(s0, s1, children, table, bias, n_features, mask, Xd, indptr, indices, data,
                 i, dense, z, V, embed, out):
    """Scores of children[s0:s1] into out[:s1-s0]."""
    for q in range(s1 - s0):
        node = children[s0 + q]
        if embed:
            acc = 0.0
            for e in range(z.shape[0]):
                acc += z[e] * V[node, e]
            out[q] = acc
        else:
            out[q] = row_dot(table, bias, node, n_features, mask, Xd, indptr, indices, data,
                             i, dense)


@_jit
def _embed(table, zero_bias, n_features, mask, Xd, indptr, indices, data, i, dense, z):
    for e in range(z.shape[0]):
        z[e] = row_dot(table, zero_bias, e, n_features, mask, Xd, indptr, indices, data, i,
                       dense)


@_jit
def train_epoch(order, y, child_ptr, children, parent, path_ptr, path_node, table, acc, bias,
                bias_acc, n_features, mask, Xd, indptr, indices, data, dense, lr, tree_loss,
                V, V_acc, embed, max_arity):
    """One SGD pass over rows in ``order``; returns the mean hinge loss measured before
    each step (tree loss: the shared slack; independent: the sum of node hinges)."""
    scores = np.empty(max_arity)
    d_e = V.shape[1] if embed else 0
    z = np.zeros(d_e)
    zero_bias = np.zeros(max(d_e, 1))
    scratch_bias, scratch_acc = np.zeros(max(d_e, 1)), np.ones(max(d_e, 1))
    total = 0.0
    for t in range(order.shape[0]):
        i = order[t]
        c = y[i]
        if embed:
            _embed(table, zero_bias, n_features, mask, Xd, indptr, indices, data, i, dense, z)
        best, best_r, best_s = 0.0, -1, -1
        for p in range(path_ptr[c], path_ptr[c + 1]):
            r = path_node[p]
            s0, s1 = child_ptr[parent[r]], child_ptr[parent[r] + 1]
            _node_scores(s0, s1, children, table, bias, n_features, mask, Xd, indptr,
                         indices, data, i, dense, z, V, embed, scores)
            f_r = 0.0
            for q in range(s1 - s0):
                if children[s0 + q] == r:
                    f_r = scores[q]
            for q in range(s1 - s0):
                s = children[s0 + q]
                if tree_loss:
                    if s != r and 1.0 - f_r + scores[q] > best:
                        best, best_r, best_s = 1.0 - f_r + scores[q], r, s
                else:
                    sign = 1.0 if s == r else -1.0
                    if sign * scores[q] < 1.0:
                        total += 1.0 - sign * scores[q]
                        row_adagrad_step(table, acc, bias, bias_acc, s, n_features, mask, Xd,
                                         indptr, indices, data, i, dense, -sign, lr)
        if tree_loss and best_r >= 0:
            total += best
            if embed:
                _embedding_step(best_r, best_s, z, V, V_acc, table, acc, n_features, mask,
                                Xd, indptr, indices, data, i, dense, lr, scratch_bias,
                                scratch_acc)
            else:
                for node, g in ((best_r, -1.0), (best_s, 1.0)):
                    row_adagrad_step(table, acc, bias, bias_acc, node, n_features, mask, Xd,
                                     indptr, indices, data, i, dense, g, lr)
    return total / max(order.shape[0], 1)


@_jit
def _embedding_step(r, s, z, V, V_acc, table, acc, n_features, mask, Xd, indptr, indices,
                    data, i, dense, lr, scratch_bias, scratch_acc):
    """AdaGrad step on 1 - z.V_r + z.V_s for V_r, V_s (one step size per node, rows kept in
    the unit ball) and for W's rows (per weight: dL/dW_e = (V_s[e] - V_r[e]) x). z = W x has
    no bias: the step's bias update lands in the discarded ``scratch_*`` arrays."""
    d_e = z.shape[0]
    diff = np.empty(d_e)
    for e in range(d_e):
        diff[e] = V[s, e] - V[r, e]
    gz = 0.0
    for e in range(d_e):
        gz += z[e] * z[e]
    for node, sign in ((r, -1.0), (s, 1.0)):
        V_acc[node] += gz
        step = lr / math.sqrt(V_acc[node])
        norm = 0.0
        for e in range(d_e):
            V[node, e] -= step * sign * z[e]
            norm += V[node, e] * V[node, e]
        if norm > 1.0:
            scale = 1.0 / math.sqrt(norm)
            for e in range(d_e):
                V[node, e] *= scale
    for e in range(d_e):
        if diff[e] != 0.0:
            row_adagrad_step(table, acc, scratch_bias, scratch_acc, e, n_features, mask, Xd,
                             indptr, indices, data, i, dense, diff[e], lr)
@_jit
def _beam(k, child_ptr, children, node_label, table, bias, n_features, mask, Xd, indptr,
          indices, data, dense, i, z, V, embed, scores, cand_node, cand_score, beam_node,
          beam_score):
    """Beam search of width k from the root for row i (a path's score: the sum of its node
    scores); leaves it reaches stay in the beam. Fills beam_node/beam_score best first and
    returns the beam's width."""
    beam_node[0], beam_score[0] = 0, 0.0
    width = 1
    while True:
        m, expanded = 0, False
        for b in range(width):
            v = beam_node[b]
            if node_label[v] >= 0:  # a leaf stays in the beam
                cand_node[m], cand_score[m] = v, beam_score[b]
                m += 1
                continue
            expanded = True
            s0, s1 = child_ptr[v], child_ptr[v + 1]
            _node_scores(s0, s1, children, table, bias, n_features, mask, Xd, indptr, indices,
                         data, i, dense, z, V, embed, scores)
            for q in range(s1 - s0):
                cand_node[m], cand_score[m] = children[s0 + q], beam_score[b] + scores[q]
                m += 1
        order = np.argsort(-cand_score[:m], kind="mergesort")
        width = min(k, m)
        for b in range(width):
            beam_node[b], beam_score[b] = cand_node[order[b]], cand_score[order[b]]
        if not expanded:
            return width


@_jit
def _greedy(child_ptr, children, node_label, table, bias, n_features, mask, Xd, indptr,
            indices, data, dense, i, z, V, embed, scores):
    """(leaf, summed score) of the greedy descent for row i: the best child at every node."""
    v, total = 0, 0.0
    while node_label[v] < 0:
        s0, s1 = child_ptr[v], child_ptr[v + 1]
        _node_scores(s0, s1, children, table, bias, n_features, mask, Xd, indptr, indices,
                     data, i, dense, z, V, embed, scores)
        best = 0
        for q in range(1, s1 - s0):
            if scores[q] > scores[best]:
                best = q
        total += scores[best]
        v = children[s0 + best]
    return v, total


@_jit
def beam_topk(k, child_ptr, children, node_label, table, bias, n_features, mask, Xd, indptr,
              indices, data, dense, n_rows, V, embed, max_arity):
    """Top-k labels per row: the greedy descent's leaf (the paper's prediction) first, then
    the best other leaves of a beam search of width k (k = 1: the greedy descent alone),
    scores capped at the greedy one so each row stays sorted. Returns (labels, scores)
    (n, k), padded with -1 / -inf when fewer than k leaves are reached."""
    labels = np.full((n_rows, k), -1, dtype=np.int64)
    out = np.full((n_rows, k), -np.inf)
    cap = k * max_arity + k
    cand_node = np.empty(cap, dtype=np.int64)
    cand_score = np.empty(cap)
    beam_node = np.empty(k, dtype=np.int64)
    beam_score = np.empty(k)
    scores = np.empty(max_arity)
    d_e = V.shape[1] if embed else 0
    z = np.zeros(d_e)
    zero_bias = np.zeros(max(d_e, 1))
    for i in range(n_rows):
        if embed:
            _embed(table, zero_bias, n_features, mask, Xd, indptr, indices, data, i, dense, z)
        width = 0
        if k > 1:
            width = _beam(k, child_ptr, children, node_label, table, bias, n_features, mask,
                          Xd, indptr, indices, data, dense, i, z, V, embed, scores, cand_node,
                          cand_score, beam_node, beam_score)
        # the greedy descent's label comes first, so top-1 of every list is the prediction
        # the paper defines (a wider beam can find a higher summed score elsewhere)
        v, greedy_score = _greedy(child_ptr, children, node_label, table, bias, n_features,
                                  mask, Xd, indptr, indices, data, dense, i, z, V, embed,
                                  scores)
        labels[i, 0], out[i, 0] = node_label[v], greedy_score
        filled = 1
        for b in range(width):
            if filled < k and node_label[beam_node[b]] != node_label[v]:
                labels[i, filled] = node_label[beam_node[b]]
                out[i, filled] = min(beam_score[b], greedy_score)
                filled += 1
    return labels, out
