"""Label distributions smoothed along a tree's paths (interpolated back-off).

A tree that predicts with the label counts of the leaf a row reaches gives every label the
leaf never saw probability zero. Back-off smoothing mixes each node's label frequencies
with its parent's smoothed distribution, from a uniform prior at the root down to the
leaf (Jelinek-Mercer interpolation, as in n-gram language models):

    p_root(y) = (1 - lam) c_root(y) / n_root + lam / K
    p_j(y)    = (1 - lam) c_j(y) / n_j + lam p_parent(j)(y)

with c_j(y) the count of y at node j and n_j its total. A node with no data (n_j = 0) keeps
its parent's distribution. ``lam = 0`` is the unsmoothed leaf frequency c/n of the deepest
node on the path that has data; any ``lam > 0`` gives every one of the K labels a positive
probability. The weight is a share, not a count, so it does not depend on how many passes
an online learner made (its counts add up over the passes), and a leaf's own ranking of
the labels it saw moves only where the parent's distribution disagrees strongly.

Counts come from ``xcbench.tree.label_stats`` (only the (node, label) pairs seen), so the
cost per (row, label) is one count lookup per node on the path, and nothing of size K x D
or K^2 is ever built. ``choose_weight`` picks the weight by held-out log-likelihood.
"""
from __future__ import annotations

import numba
import numpy as np

from . import label_stats as ls
from .topk import heap_push, heap_sorted

_jit = numba.njit(cache=True, nogil=True)

#: Parent weights ``choose_weight`` tries.
WEIGHT_GRID = (0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


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
def log_probs(parts, parent, nodes, labels, lam, n_classes, depth_cap, out):
    """out[i] = log p_{nodes[i]}(labels[i]) (-inf when zero, only possible at lam = 0)."""
    buf = np.empty(depth_cap, dtype=np.int64)
    for i in range(nodes.shape[0]):
        m = _path(parent, nodes[i], buf)
        p = _prob_on_path(parts, buf, m, labels[i], lam, n_classes)
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
def top_tables(parts, parent, nodes, node_top, lam, n_classes, depth_cap, out_labels,
               out_logp):
    """Row r of the outputs: the k labels of highest smoothed probability at ``nodes[r]``
    and their log probabilities, padded with -1 / -inf. Candidates: ``node_top``'s labels
    (``node_top_labels``) of every node on the path (a label outside all those lists can
    outrank one inside only when the parent weight ``lam`` is large); zero-probability
    labels are left out."""
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
            out_logp[r, t] = np.log(best_p[t]) if t < size else -np.inf


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


def mean_log_prob(parts, parent, nodes, labels, lam: float, n_classes: int,
                  depth_cap: int) -> float:
    """Mean log p_{nodes[i]}(labels[i]) over the rows (-inf if any is zero)."""
    out = np.empty(len(nodes))
    log_probs(parts, parent, np.asarray(nodes, dtype=np.int64),
              np.asarray(labels, dtype=np.int64), float(lam), int(n_classes), depth_cap, out)
    return float(out.mean()) if len(out) else float("nan")


def choose_weight(parts, parent, nodes, labels, n_classes: int, depth_cap: int,
                  grid=WEIGHT_GRID) -> tuple[float, dict]:
    """The parent weight of ``grid`` with the highest mean held-out log-likelihood of
    ``labels`` at the leaves ``nodes`` the held-out rows reach (the smaller on a tie), and
    every tried weight's score."""
    scores = {float(w): mean_log_prob(parts, parent, nodes, labels, w, n_classes, depth_cap)
              for w in grid}
    best = max(scores, key=lambda w: (scores[w], -w))
    return best, scores
