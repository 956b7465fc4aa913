"""Compiled (numba) training and decoding of label trees.

Node scorers live in one flat weight table of the tree toolkit (``xcbench.tree.weights``):
node s's score is f_s(x) = w_s . x + b_s (label tree) or z . V_s with z = W x cached once per
example (label embedding tree; W's d_e rows in the table). Rows of X are read dense or CSR.
The decoders also read a label tree's exact node-major store (``solver="liblinear"``,
``bits="csr"``) through the toolkit's ``children_dot``. Decoding is beam search
(``xcbench.tree.beam``) over per-edge scores from ``transform_scores``; ``forest_topk``
decodes an ensemble whose trees share one set of arrays in one call.

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
from xcbench.tree.beam import beam_start, candidate_capacity, keep_best, push
from xcbench.tree.weights import (children_dot, row_adagrad_step, rows_adagrad_step,
                                   rows_dot)

INDEPENDENT, TREE, SOFTMAX = 0, 1, 2  # the loss codes of train_epoch
RAW, LOG_SOFTMAX, SQ_HINGE, LOG_SIGMOID = 0, 1, 2, 3  # the score codes of transform_scores

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
def transform_scores(scores, m, code):
    """Node scores -> the per-edge scores a path sums (``SCORE_CODES``): RAW keeps the
    margins, LOG_SOFTMAX normalises over the m children, SQ_HINGE maps each child's binary
    margin s to -max(0, 1 - s)^2 and LOG_SIGMOID to log sigmoid(s) (one-vs-rest children,
    as Bonsai / Parabel score them)."""
    if code == LOG_SOFTMAX:
        log_softmax_inplace(scores, m)
    elif code == SQ_HINGE:
        for q in range(m):
            gap = max(0.0, 1.0 - scores[q])
            scores[q] = -gap * gap
    elif code == LOG_SIGMOID:
        for q in range(m):
            s = scores[q]
            scores[q] = -math.log1p(math.exp(-s)) if s > 0 else s - math.log1p(math.exp(s))


@_jit
def _beam(k, child_ptr, children, node_label, weights, bias, n_features, mask, Xd, indptr,
          indices, data, dense, i, z, V, embed, code, scores, cand_node, cand_score,
          beam_node, beam_score, root=0):
    """Beam search of width k from the root for row i (``xcbench.tree.beam``; a path's score
    is the sum of its transformed node scores, ``transform_scores``); leaves it reaches stay
    in the beam. Fills beam_node/beam_score best first; returns (the beam's width, the
    children scored). ``root``: the tree's root node (a forest's trees share the arrays)."""
    width = beam_start(beam_node, beam_score, root)
    scored = 0
    while True:
        m, expanded = 0, False
        for b in range(width):
            v = beam_node[b]
            if node_label[v] >= 0:  # a leaf stays in the beam
                m = push(cand_node, cand_score, m, v, beam_score[b])
                continue
            expanded = True
            s0, s1 = child_ptr[v], child_ptr[v + 1]
            _node_scores(v, child_ptr, children, weights, bias, n_features, mask, Xd, indptr,
                         indices, data, i, dense, z, V, embed, scores)
            transform_scores(scores, s1 - s0, code)
            scored += s1 - s0
            for q in range(s1 - s0):
                m = push(cand_node, cand_score, m, children[s0 + q], beam_score[b] + scores[q])
        width = keep_best(cand_node, cand_score, m, k, beam_node, beam_score)
        if not expanded:
            return width, scored


@_jit
def beam_topk(k, beam, child_ptr, children, node_label, weights, W, bias, n_features, mask,
              Xd, indptr, indices, data, dense, n_rows, V, embed, max_arity, code):
    """Top-k labels per row by beam search. The first label is the best leaf of a beam of
    width ``beam`` (1: the greedy descent), so top-1 does not depend on k. For k <= beam the
    rest of the list is that beam's next leaves; for k > beam it is filled from a beam of
    width k (scores capped at the first one's, so each row stays sorted). Returns (labels,
    path scores) (n, k), padded with -1 / -inf when fewer than k leaves are reached."""
    labels = np.full((n_rows, k), -1, dtype=np.int64)
    out = np.full((n_rows, k), -np.inf)
    wide = max(k, beam)
    cand_node = np.empty(candidate_capacity(wide, max_arity), dtype=np.int64)
    cand_score = np.empty(cand_node.shape[0])
    beam_node = np.empty(wide, dtype=np.int64)
    beam_score = np.empty(wide)
    scores = np.empty(max(max_arity, 1))
    d_e = d_e_of(V, embed)
    z = np.zeros(d_e)
    zero_bias = np.zeros(max(d_e, 1))
    for i in range(n_rows):
        if embed:
            _embed(W, zero_bias, n_features, mask, Xd, indptr, indices, data, i, dense, z)
        width, _ = _beam(beam, child_ptr, children, node_label, weights, bias, n_features, mask,
                      Xd, indptr, indices, data, dense, i, z, V, embed, code, scores,
                      cand_node, cand_score, beam_node, beam_score)
        if k <= beam:
            for b in range(min(k, width)):
                labels[i, b], out[i, b] = node_label[beam_node[b]], beam_score[b]
            continue
        first, first_score = node_label[beam_node[0]], beam_score[0]
        labels[i, 0], out[i, 0] = first, first_score
        width, _ = _beam(k, child_ptr, children, node_label, weights, bias, n_features, mask,
                      Xd, indptr, indices, data, dense, i, z, V, embed, code, scores,
                      cand_node, cand_score, beam_node, beam_score)
        filled = 1
        for b in range(width):
            if filled < k and node_label[beam_node[b]] != first:
                labels[i, filled] = node_label[beam_node[b]]
                out[i, filled] = min(beam_score[b], first_score)
                filled += 1
    return labels, out


@_jit
def beam_cost(beam, child_ptr, children, node_label, weights, W, bias, n_features, mask, Xd,
              indptr, indices, data, dense, n_rows, V, embed, max_arity, code):
    """Children scored per row by a beam search of width ``beam`` (plus d_e rows of W for
    the embedding tree): the vectors one prediction evaluates."""
    out = np.zeros(n_rows)
    cand_node = np.empty(candidate_capacity(beam, max_arity), dtype=np.int64)
    cand_score = np.empty(cand_node.shape[0])
    beam_node = np.empty(beam, dtype=np.int64)
    beam_score = np.empty(beam)
    scores = np.empty(max(max_arity, 1))
    d_e = d_e_of(V, embed)
    z = np.zeros(d_e)
    zero_bias = np.zeros(max(d_e, 1))
    for i in range(n_rows):
        if embed:
            _embed(W, zero_bias, n_features, mask, Xd, indptr, indices, data, i, dense, z)
        _, scored = _beam(beam, child_ptr, children, node_label, weights, bias, n_features,
                          mask, Xd, indptr, indices, data, dense, i, z, V, embed, code, scores,
                          cand_node, cand_score, beam_node, beam_score)
        out[i] = scored + d_e
    return out


@_jit
def unit_rows(Xd, indptr, data, dense):
    """Copies of the input parts with every nonzero row scaled to unit L2 length."""
    if dense:
        out = Xd.copy()
        for i in range(out.shape[0]):
            norm = 0.0
            for f in range(out.shape[1]):
                norm += out[i, f] * out[i, f]
            if norm > 0.0:
                scale = 1.0 / math.sqrt(norm)
                for f in range(out.shape[1]):
                    out[i, f] *= scale
        return out, data
    out = data.copy()
    for i in range(indptr.shape[0] - 1):
        norm = 0.0
        for t in range(indptr[i], indptr[i + 1]):
            norm += out[t] * out[t]
        if norm > 0.0:
            scale = 1.0 / math.sqrt(norm)
            for t in range(indptr[i], indptr[i + 1]):
                out[t] *= scale
    return Xd, out


@_jit
def forest_topk(k, roots, child_ptr, children, node_label, weights, bias, n_features, mask,
                Xd, indptr, indices, data, dense, n_rows, max_arity, code):
    """Top-k of an ensemble whose trees share one set of arrays (a forest: tree t starts at
    node ``roots[t]``, plain label trees only), in one call: per row, a beam of width k in
    every tree, then ``average_members``' rule (log of the mean of exp(path score), 0 for a
    tree whose beam missed the label). Returns (labels, scores) (n, k), padded."""
    T = roots.shape[0]
    labels = np.full((n_rows, k), -1, dtype=np.int64)
    out = np.full((n_rows, k), -np.inf)
    cand_node = np.empty(candidate_capacity(k, max_arity), dtype=np.int64)
    cand_score = np.empty(cand_node.shape[0])
    beam_node = np.empty(k, dtype=np.int64)
    beam_score = np.empty(k)
    scores = np.empty(max(max_arity, 1))
    seen = np.empty(T * k, dtype=np.int64)
    total = np.empty(T * k)
    z, V = np.zeros(0), np.zeros((1, 1))
    for i in range(n_rows):
        u = 0
        for t in range(T):
            width, _ = _beam(k, child_ptr, children, node_label, weights, bias, n_features,
                             mask, Xd, indptr, indices, data, dense, i, z, V, False, code,
                             scores, cand_node, cand_score, beam_node, beam_score, roots[t])
            for b in range(width):
                c = node_label[beam_node[b]]
                j = 0
                while j < u and seen[j] != c:
                    j += 1
                if j == u:
                    seen[u], total[u] = c, 0.0
                    u += 1
                total[j] += math.exp(beam_score[b])
        for j in range(u):
            total[j] = math.log(total[j] / T) if total[j] > 0 else -np.inf
        keep_best(seen, total, u, k, labels[i], out[i])
    return labels, out


@_jit
def average_members(labels, scores, k):
    """Top-k of an ensemble: ``labels`` / ``scores`` (T, n, w) are each member's leaves and
    path scores (log scale); a label's ensemble score is log(mean over the T members of
    exp(score)), a member that did not reach the label adding 0 (as Omikuji averages its
    trees). Returns (labels, scores) (n, k), best first (ties: first reached), padded."""
    T, n, w = labels.shape
    out_labels = np.full((n, k), -1, dtype=np.int64)
    out_scores = np.full((n, k), -np.inf)
    seen = np.empty(T * w, dtype=np.int64)
    total = np.empty(T * w)
    for i in range(n):
        u = 0
        for t in range(T):
            for b in range(w):
                c = labels[t, i, b]
                if c < 0:
                    continue
                p = math.exp(scores[t, i, b])
                j = 0
                while j < u and seen[j] != c:
                    j += 1
                if j == u:
                    seen[u], total[u] = c, 0.0
                    u += 1
                total[j] += p
        for j in range(u):
            total[j] = math.log(total[j] / T) if total[j] > 0 else -np.inf
        width = keep_best(seen, total, u, k, out_labels[i], out_scores[i])
        for b in range(width, k):
            out_labels[i, b], out_scores[i, b] = -1, -np.inf
    return out_labels, out_scores


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
