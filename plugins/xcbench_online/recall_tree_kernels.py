"""Compiled Recall Tree (Daume III et al. 2017, as Vowpal Wabbit's recall_tree.cc does it;
ALGORITHMS.md section 3). A complete binary tree in heap order (node n's children are 2n+1
and 2n+2; leaves are the nodes at depth ``max_depth``). Internal nodes hold a router (row n
of the router table); every node holds sparse label counts (``xcbench.tree.label_stats``),
its label entropy (via S = sum c ln c), and its candidate set: the ``M`` most frequent
labels with their counts, kept sorted by count. One-against-some scorers are row y of the
scorer table plus, per (class y, node m on the path below the root), one row of the path
table (the path crossed with x, bias included; VW uses the path nodes as indicator features
only, see recall_tree.py). In a direct path table that row is the label-stats entry id of
(m, y): a class is a candidate at a node only after its rows were counted there and at every
ancestor, so the entry exists, and Recall Tree never clears a node, so entry ids never
change; the table thus needs one row per (node, label) pair seen, not K x n_nodes, with each
row contiguous. A hashed path table keys the row by y * n_nodes + m (no lookup needed).

Tables are ``(size, 2)`` training tables of ``xcbench.tree.linear`` (weights, AdaGrad
sums); ``models`` packs (router table, scorer table, path table) and ``layout`` their
(n_cols, router mask, scorer mask, path mask).
"""
import math

import numba
import numpy as np

from xcbench.kernels import row_score
from xcbench.tree import label_stats as ls
from xcbench.tree.linear import adagrad_step, dot
from xcbench.tree.topk import topk_of
from xcbench.tree.vw_update import (LOGISTIC, MIN_GRADIENT, SQUARED, loss_grad, row_move,
                                    row_rates, step_of, vw_step)
from xcbench.tree.weights import DIRECT, slot

_jit = numba.njit(cache=True, nogil=True)


@_jit
def _loss_grad(s, target, loss):
    """d loss / d s for target +-1: 0 squared, 1 logistic."""
    if loss == 0:
        return s - target
    z = -target * s
    return -target * (1.0 / (1.0 + math.exp(-z)) if z > -30 else 0.0)


@numba.njit(cache=True, nogil=True, inline="always")
def _up_path(m, node_only):
    """The next node of a scorer's path above node m: its parent, or 0 (the end: the root has
    no path parameters) when only the stop node's own parameters are used."""
    return 0 if node_only else (m - 1) // 2


@_jit
def path_rows(stats, y, node, node_only, hashed, out):
    """Path-table rows of class y's scorer at ``node``, for m = node and its ancestors below
    the root, into ``out``; returns how many. A direct table's row is the label-count entry
    of (m, y) (see the module docstring); a hashed table needs no compact ids, so its row
    key is y * n_nodes + m, which spares the entry lookups."""
    n_nodes = stats[3].shape[0]
    n = 0
    m = node
    while m > 0:
        if hashed:
            out[n] = y * n_nodes + m
            n += 1
        else:
            e = ls.find(stats, m, y)
            if e >= 0:
                out[n] = e
                n += 1
        m = _up_path(m, node_only)
    return n


@_jit
def score(w_s, w_p, y, rows, n_rows, layout, xscale, Xd, indptr, indices, data, i, dense):
    """s(x, y, node) = w_y . x + b_y + sum over path m (below root) of b_{y,m} + u_{y,m} . x,
    the path rows given by ``path_rows``."""
    n_cols, mask_s, mask_p = layout[0], layout[2], layout[3]
    s = dot(w_s, y, n_cols, mask_s, xscale, Xd, indptr, indices, data, i, dense)
    for k in range(n_rows):
        s += dot(w_p, rows[k], n_cols, mask_p, xscale, Xd, indptr, indices, data, i, dense)
    return s


@_jit
def active_features(xscale, Xd, indptr, indices, data, i, dense, n_cols, feats, vals):
    """Row i as the learners see it: the bias (feature D, value 1) first, then its nonzero
    features in order, scaled; into ``feats``/``vals``, returns how many. Gathered once per
    example for the scorer updates, which read it 2 (1 + path length) times per candidate."""
    D = n_cols - 1
    feats[0] = D
    vals[0] = 1.0
    n = 1
    if dense:
        for f in range(D):
            v = Xd[i, f]
            if v != 0.0:
                feats[n] = f
                vals[n] = v * xscale[f]
                n += 1
    else:
        for p in range(indptr[i], indptr[i + 1]):
            f = indices[p]
            feats[n] = f
            vals[n] = data[p] * xscale[f]
            n += 1
    return n


@_jit
def _row_output(w, row, n_cols, mask, feats, vals, n_act):
    """w_row . x for x given by ``active_features`` (the same sum, in the same order, as
    ``xcbench.tree.linear.dot``)."""
    s = 0.0
    for k in range(n_act):
        s += w[slot(row, feats[k], n_cols, mask)] * vals[k]
    return s


@_jit
def _row_adagrad(wa, row, n_cols, mask, feats, vals, n_act, g, lr):
    """AdaGrad step of one row for the loss gradient g * x (the update of
    ``xcbench.tree.linear.adagrad_step``, one square root per weight)."""
    for k in range(n_act):
        gf = g * vals[k]
        if gf != 0.0:
            s = slot(row, feats[k], n_cols, mask)
            wa[s, 1] += gf * gf
            wa[s, 0] -= lr * gf / math.sqrt(wa[s, 1])


@_jit
def _score_step(tables, y, rows, n_rows, target, layout, feats, vals, n_act, lr, loss):
    """AdaGrad step of the scorer of class y at a node (its path rows given) toward
    ``target``, for the example in ``feats``/``vals``."""
    wa_s, wa_p = tables[1], tables[2]
    n_cols, mask_s, mask_p = layout[0], layout[2], layout[3]
    s = _row_output(wa_s[:, 0], y, n_cols, mask_s, feats, vals, n_act)
    for k in range(n_rows):
        s += _row_output(wa_p[:, 0], rows[k], n_cols, mask_p, feats, vals, n_act)
    g = _loss_grad(s, target, loss)
    if g == 0.0:
        return
    _row_adagrad(wa_s, y, n_cols, mask_s, feats, vals, n_act, g, lr)
    for k in range(n_rows):
        _row_adagrad(wa_p, rows[k], n_cols, mask_p, feats, vals, n_act, g, lr)


@_jit
def _score_step_vw(tables, gd, y, rows, n_rows, target, layout, xscale, Xd, indptr, indices,
                   data, i, dense, lr, loss):
    """VW's update (``xcbench.tree.vw_update``) of the scorer of class y at a node (its path
    rows given): its class row and path rows move together as one linear model (one learner
    on x and x crossed with the path)."""
    wt_s, wt_p = tables[1], tables[2]
    n_cols, mask_s, mask_p = layout[0], layout[2], layout[3]
    s = score(wt_s[:, 0], wt_p[:, 0], y, rows, n_rows, layout, xscale, Xd, indptr, indices,
              data, i, dense)
    vw_loss = SQUARED if loss == 0 else LOGISTIC
    g = loss_grad(vw_loss, s, target)
    if abs(g) < MIN_GRADIENT:
        return
    gsq = g * g
    norm_x, q = row_rates(wt_s, y, n_cols, mask_s, Xd, indptr, indices, data, i, dense, gsq)
    for k in range(n_rows):
        a, b = row_rates(wt_p, rows[k], n_cols, mask_p, Xd, indptr, indices, data, i, dense,
                         gsq)
        norm_x += a
        q += b
    u, mult, _ = step_of(gd, norm_x, q, vw_loss, s, target, lr)
    if u == 0.0:
        return
    step = mult * u
    row_move(wt_s, y, n_cols, mask_s, Xd, indptr, indices, data, i, dense, step)
    for k in range(n_rows):
        row_move(wt_p, rows[k], n_cols, mask_p, Xd, indptr, indices, data, i, dense, step)


@_jit
def _xlogx(c):
    return c * math.log(c) if c > 0 else 0.0


@_jit
def _entropy(S, n):
    return math.log(n) - S / n if n > 0 else 0.0


@_jit
def _insert(node, y, stats, S, cand, cand_cnt, cand_n, topsum):
    """Count one example of label y at node; keep the top-M candidate list sorted."""
    e = ls.add(stats, node, y, 1.0)
    c = stats[2][e, 0]
    S[node] += _xlogx(c) - _xlogx(c - 1.0)
    M = cand.shape[1]
    pos = -1
    for q in range(cand_n[node]):
        if cand[node, q] == y:
            pos = q
            break
    if pos >= 0:
        topsum[node] += 1.0
    elif cand_n[node] < M:
        pos = cand_n[node]
        cand[node, pos] = y
        cand_n[node] += 1
        topsum[node] += c
    elif c > cand_cnt[node, M - 1]:
        topsum[node] += c - cand_cnt[node, M - 1]
        pos = M - 1
        cand[node, pos] = y
    if pos < 0:
        return
    cand_cnt[node, pos] = c
    while pos > 0 and cand_cnt[node, pos] > cand_cnt[node, pos - 1]:
        cand[node, pos], cand[node, pos - 1] = cand[node, pos - 1], cand[node, pos]
        cand_cnt[node, pos], cand_cnt[node, pos - 1] = cand_cnt[node, pos - 1], \
            cand_cnt[node, pos]
        pos -= 1


@_jit
def recall_lbest(node, total, topsum, bern):
    """Empirical-Bernstein lower bound on the recall of node's candidate set."""
    n = total[node, 0]
    if n == 0:
        return 0.0
    f = topsum[node] / n
    v = f - math.sqrt(bern) * math.sqrt(max(f * (1.0 - f), 0.0) / n) \
        - bern * 15.0 / (math.sqrt(18.0) * n)
    return max(0.0, v)


@_jit
def _entropy_change(node, y, stats, S):
    """(n + 1) H' - n H of node when one example of y is added."""
    n = stats[4][node, 0]
    c = ls.count(stats, node, y)
    S2 = S[node] + _xlogx(c + 1.0) - _xlogx(c)
    return (n + 1.0) * _entropy(S2, n + 1.0) - n * _entropy(S[node], n)


@_jit
def train_pass(order, start, y, n_internal, stats, S, cand, cand_cnt, cand_n, topsum,
               tables, path_cap, layout, xscale, Xd, indptr, indices, data, dense, bern,
               randomized, node_only, lr, loss, max_depth, seed, gd_r, gd_s, lr_r):
    """One online pass over rows ``order[start:]`` (VW's learn, without progressive
    validation); ``lr`` is the scorers' learning rate, ``lr_r`` the routers'. Returns the
    position reached: ``len(order)``, or earlier when the label statistics, or the path
    table (rows for entry ids below ``path_cap``), need to grow first; the call resuming
    the pass (``start`` > 0) continues the random stream rather than reseeding."""
    if start == 0:
        np.random.seed(seed)
    wa_r = tables[0]
    vw = wa_r.shape[1] == 3  # (size, 3) tables: VW's update; (size, 2): AdaGrad
    total = stats[4]
    need = max_depth + 3
    rows = np.empty(max_depth + 1, dtype=np.int64)
    width = layout[0]
    if not dense:
        width = 1
        for t in range(start, order.shape[0]):
            width = max(width, indptr[order[t] + 1] - indptr[order[t]] + 1)
    feats = np.empty(width, dtype=np.int64)
    vals = np.empty(width)
    for t in range(start, order.shape[0]):
        if not ls.has_room(stats, need) or stats[5][0] + need > path_cap:
            return t
        i = order[t]
        label = y[i]
        c = 0
        while c < n_internal:
            L, R = 2 * c + 1, 2 * c + 2
            target = -1.0 if _entropy_change(L, label, stats, S) < \
                _entropy_change(R, label, stats, S) else 1.0
            s = dot(wa_r[:, 0], c, layout[0], layout[1], xscale, Xd, indptr, indices, data, i,
                    dense)
            if vw:
                s = vw_step(wa_r, gd_r, c, layout[0], layout[1], Xd, indptr, indices, data, i,
                            dense, SQUARED if loss == 0 else LOGISTIC, s, target, lr_r)
            else:
                g = _loss_grad(s, target, loss)
                s = adagrad_step(wa_r, c, layout[0], layout[1], xscale, Xd, indptr, indices,
                                 data, i, dense, g, lr_r, s, target, False)
            if randomized:
                go_right = np.random.random() < min(max(0.5 * (1.0 + 2.0 * s), 0.0), 1.0)
            else:
                go_right = s >= 0
            child = R if go_right else L
            stop = bern > 0 and recall_lbest(c, total, topsum, bern) >= \
                recall_lbest(child, total, topsum, bern)
            _insert(c, label, stats, S, cand, cand_cnt, cand_n, topsum)
            if stop:
                _insert(child, label, stats, S, cand, cand_cnt, cand_n, topsum)
                break
            c = child
        if c >= n_internal:
            _insert(c, label, stats, S, cand, cand_cnt, cand_n, topsum)
        in_cand = False
        for q in range(cand_n[c]):
            if cand[c, q] == label:
                in_cand = True
                break
        if in_cand:
            n_act = 0 if vw else active_features(xscale, Xd, indptr, indices, data, i, dense,
                                                 layout[0], feats, vals)
            for q in range(cand_n[c]):
                other = cand[c, q]
                target = 1.0 if other == label else -1.0
                n_rows = path_rows(stats, other, c, node_only, layout[3] != DIRECT, rows)
                if vw:
                    _score_step_vw(tables, gd_s, other, rows, n_rows, target, layout, xscale,
                                   Xd, indptr, indices, data, i, dense, lr, loss)
                else:
                    _score_step(tables, other, rows, n_rows, target, layout, feats, vals,
                                n_act, lr, loss)
    return order.shape[0]


@_jit
def stop_node(n_internal, total, topsum, cand_n, w_r, layout, xscale, Xd, indptr, indices,
              data, i, dense, bern):
    """(node where row i's descent stops, routers evaluated): routers with the recall stop
    rule, then up to the nearest node with a non-empty candidate set."""
    c = 0
    routers = 0
    while c < n_internal:
        s = dot(w_r, c, layout[0], layout[1], xscale, Xd, indptr, indices, data, i, dense)
        routers += 1
        child = 2 * c + 2 if s >= 0 else 2 * c + 1
        if bern > 0 and recall_lbest(c, total, topsum, bern) >= \
                recall_lbest(child, total, topsum, bern):
            break
        c = child
    while cand_n[c] == 0 and c > 0:  # an empty candidate set: fall back to the parent
        c = (c - 1) // 2
    return c, routers


@_jit
def predict(k, n_internal, stats, total, topsum, cand, cand_n, w_r, w_s, w_p, start, W, b,
            layout, xscale, Xd, indptr, indices, data, dense, bern, node_only, labels, scores,
            cost):
    """Top-k labels of each row among the candidates of the node where descent stops, and
    the vectors evaluated (routers + candidates scored) in ``cost``. Candidates are scored
    from the compact store ``start``/``W``/``b`` (``build_candidate_store``: one contiguous
    dot product each) when it is given (``W`` has rows), else from the scorer and path tables
    (one row per path node)."""
    M = cand.shape[1]
    compact = W.shape[0] > 0
    buf_s = np.empty(M)
    buf_l = np.empty(M, dtype=np.int64)
    rows = np.empty(64, dtype=np.int64)  # path rows of one scorer (depth <= 30)
    for i in range(labels.shape[0]):
        c, routers = stop_node(n_internal, total, topsum, cand_n, w_r, layout, xscale, Xd,
                               indptr, indices, data, i, dense, bern)
        m = cand_n[c]
        for q in range(m):
            buf_l[q] = cand[c, q]
            if compact:
                buf_s[q] = row_score(W, b, start[c] + q, Xd, indptr, indices, data, i, dense)
            else:
                n_rows = path_rows(stats, cand[c, q], c, node_only, layout[3] != DIRECT, rows)
                buf_s[q] = score(w_s, w_p, cand[c, q], rows, n_rows, layout, xscale, Xd,
                                 indptr, indices, data, i, dense)
        topk_of(buf_s, buf_l, m, k, labels[i], scores[i])
        cost[i] = routers + m


@_jit
def build_candidate_store(cand, cand_n, start, stats, w_s, w_p, layout, xscale, node_only,
                          W, b):
    """The compact candidate store: row start[c] + q of W (rows, D) and b holds the whole
    scorer of candidate q at node c, i.e. the class row plus its path rows summed, with the
    feature scaling folded in, so that W[r] . x + b[r] == score(..., cand[c, q], c, ...) up
    to rounding (``start`` is the running sum of ``cand_n``)."""
    n_cols, mask_s, mask_p = layout[0], layout[2], layout[3]
    D = n_cols - 1
    rows = np.empty(64, dtype=np.int64)
    for c in range(cand_n.shape[0]):
        for q in range(cand_n[c]):
            y = cand[c, q]
            r = start[c] + q
            n_rows = path_rows(stats, y, c, node_only, mask_p != DIRECT, rows)
            for f in range(n_cols):
                v = np.float64(w_s[slot(y, f, n_cols, mask_s)])  # sum in float64
                for j in range(n_rows):
                    v += w_p[slot(rows[j], f, n_cols, mask_p)]
                if f < D:
                    W[r, f] = v * xscale[f]
                else:
                    b[r] = v


@_jit
def stop_nodes(n_internal, total, topsum, cand_n, w_r, layout, xscale, Xd, indptr, indices,
               data, dense, bern, out):
    """Node where each row's descent stops."""
    for i in range(out.shape[0]):
        out[i] = stop_node(n_internal, total, topsum, cand_n, w_r, layout, xscale, Xd, indptr,
                           indices, data, i, dense, bern)[0]
