"""Compiled (numba) training and decoding of label trees.

Node scorers live in one flat weight table of the tree toolkit (``xcbench.tree.weights``):
node s's score is f_s(x) = w_s . x + b_s (label tree) or z . V_s with z = W x cached once per
example (label embedding tree; W's d_e rows in the table). Rows of X are read dense or CSR.
The decoders also read a label tree's exact node-major store (``solver="liblinear"``,
``bits="csr"``) through the toolkit's ``children_dot``.

Training is SGD on hinge losses over sibling competitions:
- tree loss (Relaxation 2, the paper's proposal): one slack per example shared by every depth,
  xi_i = max over pairs (r, s), r on the true path and s a sibling of r, of 1 - f_r + f_s;
  each step follows the subgradient of that max: the most violated pair only.
- independent (Relaxation 1): at every node r of the true path, each child s of r's parent
  gets its own binary hinge "y in l_s or not" (+1 for r, -1 for its siblings).
- softmax (not in the paper): at every node r of the true path, the cross-entropy of a
  softmax over r and its siblings, -log p(r | parent); the path product of these softmaxes
  is a probability model over the labels (``path_log_proba``).
"""
import math

import numba
import numpy as np

from xcbench.kernels import log_softmax_inplace
from xcbench.tree.weights import (children_dot, row_adagrad_step, rows_adagrad_step,
                                   rows_dot)

INDEPENDENT, TREE, SOFTMAX = 0, 1, 2  # the loss codes of train_epoch

_jit = numba.njit(cache=True, nogil=True)
# reassociation lets LLVM vectorise the z . V_s sums (SIMD); nothing else is relaxed
_jit_sum = numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})


@_jit_sum
def _node_scores(v, child_ptr, children, weights, bias, n_features, mask, Xd, indptr, indices,
                 data, i, dense, z, V, embed, out):
    """Scores of node v's children (children[child_ptr[v]:child_ptr[v + 1]]) into out[:m].
    Plain tree: ``children_dot`` over their rows (a child's row is its node id) in the
    weight store ``weights`` (a toolkit table, or the exact node-major store of
    ``solver="liblinear"``); embedding tree: z . V_s."""
    if not embed:
        children_dot(weights, bias, v, child_ptr, children, n_features, mask, Xd, indptr,
                     indices, data, i, dense, out)
        return
    s0 = child_ptr[v]
    for q in range(child_ptr[v + 1] - s0):
        node = children[s0 + q]
        acc = 0.0
        for e in range(z.shape[0]):
            acc += z[e] * V[node, e]
        out[q] = acc


@_jit
def _embed(table, zero_bias, n_features, mask, Xd, indptr, indices, data, i, dense, z):
    """z = W x_i: W's d_e rows are the table's first rows (``zero_bias``: their zero biases)."""
    rows_dot(table, zero_bias, 0, n_features, mask, Xd, indptr, indices, data, i, dense, z)


@_jit
def train_epoch(order, y, child_ptr, children, parent, path_ptr, path_node, table, acc, bias,
                bias_acc, n_features, mask, Xd, indptr, indices, data, dense, lr, loss_code,
                V, V_acc, embed, max_arity):
    """One SGD pass over rows in ``order``; returns the mean loss measured before each step
    (TREE: the shared slack; INDEPENDENT: the sum of node hinges; SOFTMAX: -log p(y))."""
    tree_loss = loss_code == TREE
    scores = np.empty(max_arity)
    d_e = d_e_of(V, embed)
    z, gz = np.zeros(d_e), np.zeros(d_e)
    zero_bias = np.zeros(max(d_e, 1))
    zz = 0.0  # |z|^2
    total = 0.0
    for t in range(order.shape[0]):
        i = order[t]
        c = y[i]
        if embed:
            _embed(table, zero_bias, n_features, mask, Xd, indptr, indices, data, i, dense, z)
            zz = 0.0
            for e in range(d_e):
                zz += z[e] * z[e]
        best, best_r, best_s = 0.0, -1, -1
        for p in range(path_ptr[c], path_ptr[c + 1]):
            r = path_node[p]
            s0, s1 = child_ptr[parent[r]], child_ptr[parent[r] + 1]
            _node_scores(parent[r], child_ptr, children, table, bias, n_features, mask, Xd,
                         indptr, indices, data, i, dense, z, V, embed, scores)
            if loss_code == SOFTMAX:
                total += _softmax_step(s0, s1, r, children, scores, table, acc, bias,
                                       bias_acc, n_features, mask, Xd, indptr, indices, data,
                                       i, dense, lr, z, zz, V, V_acc, embed, gz)
                continue
            f_r = _score_of(r, s0, s1, children, scores)
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
        if loss_code == SOFTMAX and embed:  # W's step, once per example (z = W x)
            rows_adagrad_step(table, acc, n_features, mask, Xd, indptr, indices, data, i,
                              dense, gz, 1.0, lr)
            gz[:] = 0.0
        if tree_loss and best_r >= 0:
            total += best
            if embed:
                _embedding_step(best_r, best_s, z, zz, V, V_acc, table, acc, n_features,
                                mask, Xd, indptr, indices, data, i, dense, lr)
            else:
                for node, g in ((best_r, -1.0), (best_s, 1.0)):
                    row_adagrad_step(table, acc, bias, bias_acc, node, n_features, mask, Xd,
                                     indptr, indices, data, i, dense, g, lr)
    return total / max(order.shape[0], 1)


@_jit
def _score_of(r, s0, s1, children, scores):
    """The score of child r among children[s0:s1] (scores in the same order)."""
    for q in range(s1 - s0):
        if children[s0 + q] == r:
            return scores[q]
    return 0.0


@_jit
def d_e_of(V, embed):
    """The embedding dimension d_e (0 for a plain label tree)."""
    return V.shape[1] if embed else 0


@_jit
def _softmax_step(s0, s1, r, children, scores, table, acc, bias, bias_acc, n_features, mask,
                  Xd, indptr, indices, data, i, dense, lr, z, zz, V, V_acc, embed, gz):
    """AdaGrad step on -log softmax(scores)[r] over the children s0:s1 of r's parent; returns
    that loss. Plain tree: each child row moves by (p_s - [s = r]) x. Embedding tree: each V_s
    by (p_s - [s = r]) z (one step size per node, kept in the unit ball) and the gradient for
    z is added to gz (W's step is taken once per example, by train_epoch; zz = |z|^2)."""
    log_softmax_inplace(scores, s1 - s0)
    loss = 0.0
    for q in range(s1 - s0):
        s = children[s0 + q]
        g = math.exp(scores[q])
        if s == r:
            g -= 1.0
            loss = -scores[q]
        if embed:
            for e in range(z.shape[0]):
                gz[e] += g * V[s, e]
            _v_step(V, V_acc, s, g, z, zz, lr)
        else:
            row_adagrad_step(table, acc, bias, bias_acc, s, n_features, mask, Xd, indptr,
                             indices, data, i, dense, g, lr)
    return loss


@_jit
def _v_step(V, V_acc, node, g, z, zz, lr):
    """AdaGrad step on V_node for the gradient g z (one step size per node; zz = |z|^2),
    then projection back into the unit ball."""
    V_acc[node] += g * g * zz
    step = lr * g / math.sqrt(V_acc[node])
    norm = 0.0
    for e in range(z.shape[0]):
        V[node, e] -= step * z[e]
        norm += V[node, e] * V[node, e]
    if norm > 1.0:
        scale = 1.0 / math.sqrt(norm)
        for e in range(z.shape[0]):
            V[node, e] *= scale


@_jit
def _embedding_step(r, s, z, zz, V, V_acc, table, acc, n_features, mask, Xd, indptr, indices,
                    data, i, dense, lr):
    """AdaGrad step on 1 - z.V_r + z.V_s for V_r, V_s (one step size per node, rows kept in
    the unit ball; zz = |z|^2) and for W's rows (per weight: dL/dW_e = (V_s[e] - V_r[e]) x)."""
    diff = V[s] - V[r]
    _v_step(V, V_acc, r, -1.0, z, zz, lr)
    _v_step(V, V_acc, s, 1.0, z, zz, lr)
    rows_adagrad_step(table, acc, n_features, mask, Xd, indptr, indices, data, i, dense, diff,
                      1.0, lr)


@_jit
def _beam(k, child_ptr, children, node_label, weights, bias, n_features, mask, Xd, indptr,
          indices, data, dense, i, z, V, embed, normalized, scores, cand_node, cand_score,
          beam_node, beam_score):
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
            _node_scores(v, child_ptr, children, weights, bias, n_features, mask, Xd, indptr,
                         indices, data, i, dense, z, V, embed, scores)
            if normalized:
                log_softmax_inplace(scores, s1 - s0)
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
def _greedy(child_ptr, children, node_label, weights, bias, n_features, mask, Xd, indptr,
            indices, data, dense, i, z, V, embed, normalized, scores):
    """(leaf, summed score) of the greedy descent for row i: the best child at every node
    (normalized: scores are log-softmaxes over the children, the sum a log-probability)."""
    v, total = 0, 0.0
    while node_label[v] < 0:
        s0, s1 = child_ptr[v], child_ptr[v + 1]
        _node_scores(v, child_ptr, children, weights, bias, n_features, mask, Xd, indptr,
                     indices, data, i, dense, z, V, embed, scores)
        if normalized:
            log_softmax_inplace(scores, s1 - s0)
        best = 0
        for q in range(1, s1 - s0):
            if scores[q] > scores[best]:
                best = q
        total += scores[best]
        v = children[s0 + best]
    return v, total


@_jit
def beam_topk(k, child_ptr, children, node_label, weights, W, bias, n_features, mask, Xd,
              indptr, indices, data, dense, n_rows, V, embed, max_arity, normalized):
    """Top-k labels per row: the greedy descent's leaf (the paper's prediction) first, then
    the best other leaves of a beam search of width k (k = 1: the greedy descent alone),
    scores capped at the greedy one so each row stays sorted. normalized (the softmax
    loss's probability model): the beam's leaves by log-probability, k = 1 still greedy.
    Returns (labels, scores) (n, k), padded with -1 / -inf when fewer than k leaves are
    reached."""
    labels = np.full((n_rows, k), -1, dtype=np.int64)
    out = np.full((n_rows, k), -np.inf)
    cap = k * max_arity + k
    cand_node = np.empty(cap, dtype=np.int64)
    cand_score = np.empty(cap)
    beam_node = np.empty(k, dtype=np.int64)
    beam_score = np.empty(k)
    scores = np.empty(max_arity)
    d_e = d_e_of(V, embed)
    z = np.zeros(d_e)
    zero_bias = np.zeros(max(d_e, 1))
    for i in range(n_rows):
        if embed:
            _embed(W, zero_bias, n_features, mask, Xd, indptr, indices, data, i, dense, z)
        width = 0
        if k > 1:
            width = _beam(k, child_ptr, children, node_label, weights, bias, n_features, mask,
                          Xd, indptr, indices, data, dense, i, z, V, embed, normalized, scores,
                          cand_node, cand_score, beam_node, beam_score)
        if normalized and k > 1:  # a probability model: the beam's leaves, most probable first
            for b in range(width):
                labels[i, b], out[i, b] = node_label[beam_node[b]], beam_score[b]
            continue
        # the greedy descent's label comes first, so top-1 of every list is the prediction
        # the paper defines (a wider beam can find a higher summed score elsewhere)
        v, greedy_score = _greedy(child_ptr, children, node_label, weights, bias, n_features,
                                  mask, Xd, indptr, indices, data, dense, i, z, V, embed,
                                  normalized, scores)
        labels[i, 0], out[i, 0] = node_label[v], greedy_score
        filled = 1
        for b in range(width):
            if filled < k and node_label[beam_node[b]] != node_label[v]:
                labels[i, filled] = node_label[beam_node[b]]
                out[i, filled] = min(beam_score[b], greedy_score)
                filled += 1
    return labels, out


@_jit
def path_log_proba(y, path_ptr, path_node, parent, child_ptr, children, weights, W, bias,
                   n_features, mask, Xd, indptr, indices, data, dense, V, embed, max_arity):
    """log p(y_i | x_i) per row for the softmax loss's model: the sum over the nodes r of
    y_i's path of log softmax(children of r's parent)[r]."""
    out = np.zeros(y.shape[0])
    scores = np.empty(max_arity)
    d_e = d_e_of(V, embed)
    z = np.zeros(d_e)
    zero_bias = np.zeros(max(d_e, 1))
    for i in range(y.shape[0]):
        if embed:
            _embed(W, zero_bias, n_features, mask, Xd, indptr, indices, data, i, dense, z)
        c = y[i]
        for p in range(path_ptr[c], path_ptr[c + 1]):
            r = path_node[p]
            s0, s1 = child_ptr[parent[r]], child_ptr[parent[r] + 1]
            _node_scores(parent[r], child_ptr, children, weights, bias, n_features, mask, Xd,
                         indptr, indices, data, i, dense, z, V, embed, scores)
            log_softmax_inplace(scores, s1 - s0)
            out[i] += _score_of(r, s0, s1, children, scores)
    return out
