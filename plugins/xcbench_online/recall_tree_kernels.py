"""Compiled Recall Tree (Daume III et al. 2017, as Vowpal Wabbit's recall_tree.cc does it;
ALGORITHMS.md section 3). A complete binary tree in heap order (node n's children are 2n+1
and 2n+2; leaves are the nodes at depth ``max_depth``). Internal nodes hold a router;
every node holds label counts, its label entropy (via S = sum c ln c), and its candidate
set: the ``M`` most frequent labels, kept sorted by count. One-against-some scorers are one
linear model per class plus, per (class, node on the path below the root), a bias and a
weight vector hashed into a table of 2^bits entries (VW's path features crossed with x).
"""
import math

import numba
import numpy as np

from xcbench.kernels import adagrad_row_step as _step_dense_row
from xcbench.kernels import row_score as _dot

_jit = numba.njit(cache=True, nogil=True)
_PATH_SALT = 868771


@_jit
def _loss_grad(s, target, loss):
    """d loss / d s for target +-1: 0 squared, 1 logistic."""
    if loss == 0:
        return s - target
    z = -target * s
    return -target * (1.0 / (1.0 + math.exp(-z)) if z > -30 else 0.0)


@_jit
def _hash(y, m, f, mask):
    h = (y * 1000003 + (m + 1) * _PATH_SALT) * 2654435761 + f * 40503
    return (h ^ (h >> 15)) & mask


@_jit
def score(y, node, node_only, SW, Sb, HU, HB, mask, Xd, indptr, indices, data, i, dense):
    """s(x, y, node) = w_y . x + b_y + sum over path m (below root) of b_{y,m} + u_{y,m} . x."""
    s = _dot(SW, Sb, y, Xd, indptr, indices, data, i, dense)
    m = node
    while m > 0:
        s += HB[_hash(y, m, -1, mask)]
        if dense:
            for f in range(Xd.shape[1]):
                s += HU[_hash(y, m, f, mask)] * Xd[i, f]
        else:
            for p in range(indptr[i], indptr[i + 1]):
                s += HU[_hash(y, m, indices[p], mask)] * data[p]
        if node_only:
            break
        m = (m - 1) // 2
    return s


@_jit
def _score_step(y, node, node_only, target, SW, Sb, SG, SGb, HU, HB, HG, HGb, mask, Xd, indptr,
                indices, data, i, dense, lr, loss):
    s = score(y, node, node_only, SW, Sb, HU, HB, mask, Xd, indptr, indices, data, i, dense)
    g = _loss_grad(s, target, loss)
    if g == 0.0:
        return
    _step_dense_row(SW, Sb, SG, SGb, y, Xd, indptr, indices, data, i, dense, g, lr)
    m = node
    while m > 0:
        hb = _hash(y, m, -1, mask)
        HGb[hb] += g * g
        HB[hb] -= lr * g / math.sqrt(HGb[hb])
        if dense:
            for f in range(Xd.shape[1]):
                gf = g * Xd[i, f]
                if gf != 0.0:
                    h = _hash(y, m, f, mask)
                    HG[h] += gf * gf
                    HU[h] -= lr * gf / math.sqrt(HG[h])
        else:
            for p in range(indptr[i], indptr[i + 1]):
                gf = g * data[p]
                if gf != 0.0:
                    h = _hash(y, m, indices[p], mask)
                    HG[h] += gf * gf
                    HU[h] -= lr * gf / math.sqrt(HG[h])
        if node_only:
            break
        m = (m - 1) // 2


@_jit
def _xlogx(c):
    return c * math.log(c) if c > 0 else 0.0


@_jit
def _entropy(S, n):
    return math.log(n) - S / n if n > 0 else 0.0


@_jit
def _insert(node, y, counts, total, S, cand, cand_n, topsum):
    """Count one example of label y at node; keep the top-M candidate list sorted."""
    c = counts[node, y]
    S[node] += _xlogx(c + 1) - _xlogx(c)
    counts[node, y] = c + 1
    total[node] += 1
    M = cand.shape[1]
    pos = -1
    for q in range(cand_n[node]):
        if cand[node, q] == y:
            pos = q
            break
    if pos >= 0:
        topsum[node] += 1
    elif cand_n[node] < M:
        pos = cand_n[node]
        cand[node, pos] = y
        cand_n[node] += 1
        topsum[node] += c + 1
    elif c + 1 > counts[node, cand[node, M - 1]]:
        topsum[node] += c + 1 - counts[node, cand[node, M - 1]]
        pos = M - 1
        cand[node, pos] = y
    while pos > 0 and counts[node, cand[node, pos]] > counts[node, cand[node, pos - 1]]:
        cand[node, pos], cand[node, pos - 1] = cand[node, pos - 1], cand[node, pos]
        pos -= 1


@_jit
def recall_lbest(node, total, topsum, bern):
    """Empirical-Bernstein lower bound on the recall of node's candidate set."""
    n = total[node]
    if n == 0:
        return 0.0
    f = topsum[node] / n
    v = f - math.sqrt(bern) * math.sqrt(max(f * (1.0 - f), 0.0) / n) \
        - bern * 15.0 / (math.sqrt(18.0) * n)
    return max(0.0, v)


@_jit
def _entropy_if_added(node, y, counts, total, S):
    c = counts[node, y]
    S2 = S[node] + _xlogx(c + 1) - _xlogx(c)
    return _entropy(S2, total[node] + 1)


@_jit
def train_pass(order, y, n_internal, counts, total, S, cand, cand_n, topsum, RW, Rb, RG, RGb,
               SW, Sb, SG, SGb, HU, HB, HG, HGb, mask, Xd, indptr, indices, data, dense,
               bern, randomized, node_only, lr, loss, seed):
    """One online pass over rows ``order`` (VW's learn, without progressive validation)."""
    np.random.seed(seed)
    for t in range(order.shape[0]):
        i = order[t]
        label = y[i]
        c = 0
        while c < n_internal:
            L, R = 2 * c + 1, 2 * c + 2
            dL = (total[L] + 1) * _entropy_if_added(L, label, counts, total, S) \
                - total[L] * _entropy(S[L], total[L])
            dR = (total[R] + 1) * _entropy_if_added(R, label, counts, total, S) \
                - total[R] * _entropy(S[R], total[R])
            target = -1.0 if dL < dR else 1.0
            s = _dot(RW, Rb, c, Xd, indptr, indices, data, i, dense)
            g = _loss_grad(s, target, loss)
            _step_dense_row(RW, Rb, RG, RGb, c, Xd, indptr, indices, data, i, dense, g, lr)
            s = _dot(RW, Rb, c, Xd, indptr, indices, data, i, dense)
            if randomized:
                go_right = np.random.random() < min(max(0.5 * (1.0 + 2.0 * s), 0.0), 1.0)
            else:
                go_right = s >= 0
            child = R if go_right else L
            stop = bern > 0 and recall_lbest(c, total, topsum, bern) >= \
                recall_lbest(child, total, topsum, bern)
            _insert(c, label, counts, total, S, cand, cand_n, topsum)
            if stop:
                _insert(child, label, counts, total, S, cand, cand_n, topsum)
                break
            c = child
        if c >= n_internal:
            _insert(c, label, counts, total, S, cand, cand_n, topsum)
        in_cand = False
        for q in range(cand_n[c]):
            if cand[c, q] == label:
                in_cand = True
                break
        if in_cand:
            for q in range(cand_n[c]):
                other = cand[c, q]
                _score_step(other, c, node_only, 1.0 if other == label else -1.0, SW, Sb, SG,
                            SGb, HU, HB, HG, HGb, mask, Xd, indptr, indices, data, i, dense,
                            lr, loss)


@_jit
def predict(k, n_internal, total, topsum, cand, cand_n, RW, Rb, SW, Sb, HU, HB, mask, Xd,
            indptr, indices, data, dense, bern, node_only, labels, scores, stop_nodes):
    """Top-k labels of each row among the candidates of the node where descent stops."""
    n_rows = labels.shape[0]
    M = cand.shape[1]
    buf_s = np.empty(M)
    buf_l = np.empty(M, dtype=np.int64)
    for i in range(n_rows):
        c = 0
        while c < n_internal:
            s = _dot(RW, Rb, c, Xd, indptr, indices, data, i, dense)
            child = 2 * c + 2 if s >= 0 else 2 * c + 1
            if bern > 0 and recall_lbest(c, total, topsum, bern) >= \
                    recall_lbest(child, total, topsum, bern):
                break
            c = child
        while cand_n[c] == 0 and c > 0:  # an empty candidate set: fall back to the parent
            c = (c - 1) // 2
        stop_nodes[i] = c
        m = cand_n[c]
        for q in range(m):
            buf_l[q] = cand[c, q]
            buf_s[q] = score(cand[c, q], c, node_only, SW, Sb, HU, HB, mask, Xd, indptr,
                             indices, data, i, dense)
        order = np.argsort(-buf_s[:m], kind="mergesort")
        for q in range(min(k, m)):
            labels[i, q] = buf_l[order[q]]
            scores[i, q] = buf_s[order[q]]
