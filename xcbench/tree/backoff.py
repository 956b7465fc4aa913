"""Label distributions smoothed along a tree's paths (interpolated back-off).

A tree that predicts with the label counts of the leaf a row reaches gives every label the
leaf never saw probability zero. Back-off smoothing mixes each node's label frequencies
with its parent's smoothed distribution, from a uniform prior at the root down to the
leaf (Jelinek-Mercer interpolation, as in n-gram language models), and then gives a share
``floor`` of the mass to all K classes alike:

    p_root(y) = (1 - lam) c_root(y) / n_root + lam / K
    p_j(y)    = (1 - lam) c_j(y) / n_j + lam p_parent(j)(y)
    p(y)      = (1 - floor) p_leaf(y) + floor / K

with c_j(y) the count of y at node j and n_j its total. A node with no data (n_j = 0) keeps
its parent's distribution. ``lam = floor = 0`` is the unsmoothed leaf frequency c/n of the
deepest node on the path that has data. The parent weight is a share, not a count, so it
does not depend on how many passes an online learner made (its counts add up over the
passes). The floor matters where the leaves already hold most rows' labels: the
interpolation alone gives a label unseen on the whole path about lam^depth / K, far less
than it deserves; with ``lam = 0`` and a small floor the leaf's ranking is unchanged.

A tree whose leaves hold a model of their own (the softmax tree's leaf softmax over a few
classes) uses the smoothed leaf distribution for the classes its model leaves out
(``xcbench_st.smoothing``); ``choose_on_grid`` picks the weights for any such use.

Counts come from ``xcbench.tree.label_stats`` (only the (node, label) pairs seen), so the
cost per (row, label) is one count lookup per node on the path, and nothing of size K x D
or K^2 is ever built.
``choose_weights`` picks both weights by held-out log-likelihood; a learner with no
held-out rows of its own keeps every ``HOLDOUT_PERIOD``-th training row, at most
``SMOOTHING_ROWS``, out of training to choose on (``xcbench.tree.passes.kept_out_rows``),
and on data too small for that takes ``FALLBACK_WEIGHT`` and ``FALLBACK_FLOOR``.
"""
from __future__ import annotations

import numba
import numpy as np

from . import label_stats as ls
from .topk import heap_push, heap_sorted

_jit = numba.njit(cache=True, nogil=True)

#: Parent weights and uniform floors ``choose_weights`` tries (every pair).
WEIGHT_GRID = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
FLOOR_GRID = (0.0, 0.001, 0.01, 0.1)
#: Rows at most kept out of training to choose the weights on, and the weights taken when
#: the data is too small to keep any out.
SMOOTHING_ROWS = 10_000
FALLBACK_WEIGHT, FALLBACK_FLOOR = 0.3, 0.01


@_jit
def _path(parent, node, buf):
    """Write ``node`` and its ancestors (node first, root last) into ``buf``; return how
    many."""
    m = 0
    j = node
    while j >= 0:
        buf[m] = j
        m += 1
        j = parent[j]
    return m


@_jit
def _prob_on_path(parts, buf, m, label, lam, n_classes):
    """Smoothed probability of ``label`` at ``buf[0]``, given its path ``buf[:m]``."""
    node_f = parts[4]
    p = 1.0 / n_classes
    for q in range(m - 1, -1, -1):
        j = buf[q]
        n = node_f[j, 0]
        if n > 0:
            p = (1.0 - lam) * ls.count(parts, j, label) / n + lam * p
    return p


@_jit
def log_probs(parts, parent, nodes, labels, lam, floor, n_classes, depth_cap, out):
    """out[i] = log p_{nodes[i]}(labels[i]) (-inf when zero: only with lam = floor = 0)."""
    buf = np.empty(depth_cap, dtype=np.int64)
    for i in range(nodes.shape[0]):
        m = _path(parent, nodes[i], buf)
        p = (1.0 - floor) * _prob_on_path(parts, buf, m, labels[i], lam, n_classes) \
            + floor / n_classes
        out[i] = np.log(p) if p > 0 else -np.inf


@_jit
def node_top_labels(parts, n_nodes, k):
    """(n_nodes, k): each node's k most frequent labels, padded with -1 (the candidates of
    ``top_tables``; one walk over every node's labels)."""
    out = np.full((n_nodes, k), -1, dtype=np.int64)
    lab = np.empty(k, dtype=np.int64)
    cnt = np.empty(k)
    for j in range(n_nodes):
        got = ls.top_labels(parts, j, k, lab, cnt)
        out[j, :got] = lab[:got]
    return out


@_jit
def top_tables(parts, parent, nodes, node_top, lam, floor, n_classes, depth_cap, out_labels,
               out_logp):
    """Row r of the outputs: the k labels of highest smoothed probability at ``nodes[r]``
    and their log probabilities, padded with -1 / -inf. Candidates: ``node_top``'s labels
    (``node_top_labels``) of every node on the path (a label outside all those lists can
    outrank one inside only when the parent weight ``lam`` is large); labels with only the
    floor's share are left out, as are zero-probability ones."""
    k = out_labels.shape[1]
    width = node_top.shape[1]
    buf = np.empty(depth_cap, dtype=np.int64)
    cand = np.empty(depth_cap * width, dtype=np.int64)
    best_p = np.empty(k)
    best_l = np.empty(k, dtype=np.int64)
    for r in range(nodes.shape[0]):
        m = _path(parent, nodes[r], buf)
        nc = 0
        for q in range(m):
            for t in range(width):
                if node_top[buf[q], t] >= 0:
                    cand[nc] = node_top[buf[q], t]
                    nc += 1
        labels = np.unique(cand[:nc])
        size = 0
        for t in range(labels.shape[0]):
            p = _prob_on_path(parts, buf, m, labels[t], lam, n_classes)
            if p > 0:
                size = heap_push(best_p, best_l, size, k, p, labels[t])
        heap_sorted(best_p, best_l, size)
        for t in range(k):
            out_labels[r, t] = best_l[t] if t < size else -1
            out_logp[r, t] = (np.log((1.0 - floor) * best_p[t] + floor / n_classes)
                              if t < size else -np.inf)


@_jit
def max_path_length(parent):
    """The most nodes on any node's path to the root, the node and the root included (the
    ``depth_cap`` the kernels' path buffers need)."""
    longest = 1
    for node in range(parent.shape[0]):
        m = 0
        j = node
        while j >= 0:
            m += 1
            j = parent[j]
        longest = max(longest, m)
    return longest


def choose_on_grid(probs_at, n_classes: int, weights=WEIGHT_GRID,
                   floors=FLOOR_GRID) -> tuple[float, float, dict]:
    """(weight, floor, {"weight/floor": mean log-likelihood}): the pair of the grids with
    the highest mean log-likelihood of held-out rows, ``probs_at(weight)`` giving their
    labels' probabilities before the floor (ties: the smaller weight, then the smaller
    floor)."""
    scores = {}
    for lam in weights:
        p = np.asarray(probs_at(float(lam)), dtype=np.float64)
        for floor in floors:
            with np.errstate(divide="ignore"):
                mean = float(np.mean(np.log((1 - floor) * p + floor / n_classes)))
            scores[(float(lam), float(floor))] = mean if len(p) else float("nan")
    lam, floor = max(scores, key=lambda wf: (scores[wf], -wf[0], -wf[1]))
    return lam, floor, {f"{w:g}/{f:g}": v for (w, f), v in scores.items()}


def choose_weights(parts, parent, nodes, labels, n_classes: int, depth_cap: int,
                   weights=WEIGHT_GRID, floors=FLOOR_GRID) -> tuple[float, float, dict]:
    """``choose_on_grid`` for the smoothed frequencies at the leaves ``nodes`` the held-out
    rows (labels ``labels``) reach."""
    nodes = np.asarray(nodes, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    out = np.empty(len(nodes))

    def probs_at(lam):
        log_probs(parts, parent, nodes, labels, lam, 0.0, int(n_classes), depth_cap, out)
        return np.exp(out)

    return choose_on_grid(probs_at, n_classes, weights, floors)
