"""Probabilities for the classes a softmax tree's leaf leaves out: back-off along the path.

A leaf of ``st`` or ``ast`` holds a softmax over its own few classes; every other class has
probability exactly zero there, so on the test rows whose label is outside their leaf's
classes (half of them on PTB) the model's perplexity is the metric's epsilon, not the
model. This module gives
a share ``w`` of each leaf's mass to the classes it leaves out, in proportion to the label
frequencies of the training rows that reached the leaf and its ancestors
(``xcbench.tree.backoff``: each node's frequencies interpolated with its parent's at the
same weight ``w``, uniform above the root), then a uniform share ``floor``:

    p(y | x) = (1 - floor) p'(y | x) + floor / K,
    p'(y | x) = (1 - w) p_softmax(y | x)        for y among the leaf's classes S,
              = w p_leaf(y) / p_leaf(not S)      otherwise

(a Katz-style back-off: the leaf's own classes keep their softmax ranking, so the top-1
of the paper's model changes only where an outside class outranks them all). ``w`` is
``smoothing``, ``floor`` ``smoothing_floor``; both 0 is the paper's model. ``"auto"``
chooses both from ``backoff.WEIGHT_GRID`` x ``backoff.FLOOR_GRID`` by the log-likelihood of
every tenth training row, at most ``backoff.SMOOTHING_ROWS`` (``choice_rows``): below
500,000 rows they are kept out of a first fit and the tree is then fitted again on every
row; above, the tree is fitted once on every row and they are scored with their own counts
deleted from the back-off (``choose_in_sample``).

Top-k ranks by the same probabilities. Candidates: the leaf's classes and the
``TABLE_WIDTH`` outside classes of highest back-off probability at the leaf (a table per
leaf, made at fit), so ``predict_topk`` is exact for k <= ``TABLE_WIDTH``. Memory: the
counts hold only the (node, label) pairs seen (``xcbench.tree.label_stats``), plus one
float per leaf and ``TABLE_WIDTH`` entries per leaf; nothing of size K x D or K^2.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xcbench.tree import backoff
from xcbench.tree.label_stats import LabelStats, entry_bytes, pairs_allowance
from xcbench.tree.passes import kept_out_rows

from . import kernels

TABLE_WIDTH = 10  # labels per leaf ranked by their back-off probability alone
REFIT_SHARE = 0.02  # kept-out share of the rows above which the tree is fitted again


def choice_rows(n_rows: int, smoothing, smoothing_floor):
    """(rows, kept_out): every tenth row, at most ``backoff.SMOOTHING_ROWS``, to choose an
    ``"auto"`` smoothing on (None when neither is ``"auto"`` or the data is too small), and
    whether they are kept out of a first fit (``refit_after_choice``) or scored in-sample
    with their own counts deleted (``choose_in_sample``)."""
    if "auto" not in (smoothing, smoothing_floor):
        return None, False
    rows = kept_out_rows(n_rows, backoff.SMOOTHING_ROWS)
    return rows, rows is not None and refit_after_choice(len(rows), n_rows)


def refit_after_choice(n_held: int, n_rows: int) -> bool:
    """Whether the rows to choose on are kept out of a first fit, the tree then fitted
    again on every row: when they are more than ``REFIT_SHARE`` of the data (below 500,000
    rows). Fitting on 90% of letter cost 1.3 points of top-1 on each of seeds 0-2, so the
    tree must see every row; on larger data the second fit is what costs, and the rows are
    scored in-sample instead (``choose_in_sample``): keeping 1% out of st's one-pass fit at
    K = 1e5 had cost 2 points of top-1."""
    return n_held > REFIT_SHARE * n_rows


def smoothing_memory(n_samples: int, n_features: int, nnz: int, depth: int,
                     dense: bool, smoothing="auto", smoothing_floor="auto") -> int:
    """Bytes the smoothing adds to a fit: the kept-in rows' copy of X where rows are kept
    out for an ``"auto"`` choice (at most the whole of it) and the path counts
    (``pairs_allowance`` pairs, twice while the table grows)."""
    rows, kept_out = choice_rows(int(n_samples), smoothing, smoothing_floor)
    copy = 0 if not kept_out else (
        8 * int(n_samples) * int(n_features) if dense else 12 * int(nnz) + 8 * n_samples)
    counts = 2 * pairs_allowance(n_samples, int(depth) + 1) * entry_bytes(0)
    return int(copy + counts)


@dataclass
class LeafSmoothing:
    """The fitted back-off of a flat softmax tree (node ids: the flat tree's; leaves in
    the order of the flat tree's leaf table)."""
    stats: LabelStats  # label counts of the training rows at every node of their paths
    parent: np.ndarray  # (n_nodes,) flat parent id, -1 at the root
    weight: float
    floor: float
    n_classes: int
    path_cap: int  # most nodes on a path (kernels' buffer size)
    outside_mass: np.ndarray  # (n_leaves,) p_leaf(not S): back-off mass outside the leaf
    table_labels: np.ndarray  # (n_leaves, TABLE_WIDTH) top outside labels, -1 padded
    table_prob: np.ndarray  # (n_leaves, TABLE_WIDTH) their p' (before the floor)

    @property
    def topk_arrays(self):
        return (self.weight, self.floor, self.n_classes, self.table_labels, self.table_prob)

    def log_proba(self, flat, Xk, y):
        """log p(y_i | x_i) for kernel input ``Xk``."""
        p = outside_share(flat, self.stats, self.parent, self.outside_mass, Xk, y,
                          self.weight, self.n_classes, self.path_cap)
        with np.errstate(divide="ignore"):
            return np.log((1 - self.floor) * p + self.floor / self.n_classes)

    @property
    def nbytes(self) -> int:
        return int(self.stats.nbytes + sum(a.nbytes for a in (
            self.parent, self.outside_mass, self.table_labels, self.table_prob)))


def outside_share(flat, stats, parent, outside_mass, Xk, y, weight, n_classes, cap):
    """p'(y_i | x_i) (the module docstring's, before the floor) for kernel input ``Xk``."""
    log_soft = kernels.log_proba(y, *flat.routing, *flat.leaf_arrays, *Xk)
    nodes = leaf_nodes(flat, Xk)
    backed = np.empty(len(y))
    backoff.log_probs(stats.parts, parent, nodes, y, weight, 0.0, n_classes, cap, backed)
    mass = outside_mass[flat.row[nodes]]
    inside = np.isfinite(log_soft)
    outside = np.divide(weight * np.exp(backed), mass, out=np.zeros(len(y)), where=mass > 0)
    return np.where(inside, (1 - weight) * np.exp(log_soft), outside)


def leaf_order(flat) -> np.ndarray:
    """Flat node id of each row of the flat tree's leaf table."""
    leaves = np.flatnonzero(flat.left < 0)
    return leaves[np.argsort(flat.row[leaves])]


def outside_masses(flat, stats, parent, weight, n_classes, cap) -> np.ndarray:
    """p_leaf(not S) per leaf: 1 minus the back-off probability of its own classes."""
    leaves = leaf_order(flat)
    sizes = np.diff(flat.leaf_ptr)
    inside = np.empty(len(flat.leaf_classes))
    backoff.log_probs(stats.parts, parent, np.repeat(leaves, sizes), flat.leaf_classes,
                      weight, 0.0, n_classes, cap, inside)
    sums = np.bincount(np.repeat(np.arange(len(leaves)), sizes), weights=np.exp(inside),
                       minlength=len(leaves))
    return np.maximum(1.0 - sums, 0.0)


def leaf_nodes(flat, Xk) -> np.ndarray:
    """Flat id of the leaf each row of kernel input ``Xk`` reaches."""
    n = Xk[0].shape[0] if Xk[4] else len(Xk[1]) - 1
    return kernels.route(np.arange(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
                         *flat.routing, *Xk)


def flat_parents(flat) -> np.ndarray:
    parent = np.full(len(flat.left), -1, dtype=np.int64)
    inner = np.flatnonzero(flat.left >= 0)
    parent[flat.left[inner]] = inner
    parent[flat.right[inner]] = inner
    return parent


def count_paths(flat, Xk, y, n_nodes: int) -> LabelStats:
    """Label counts of the rows of ``Xk`` (labels ``y``) at every node of their paths."""
    stats = LabelStats(n_nodes, capacity=1 << 12)
    n, depth_cap = len(y), int(flat.depths().max()) + 1
    t = 0
    while t < n:
        t = kernels.count_paths(stats.parts, y, t, depth_cap, *flat.routing, *Xk)
        if t < n:
            stats.grow(depth_cap)
    stats.shrink()
    return stats


def grids(smoothing, smoothing_floor) -> tuple[tuple, tuple]:
    """The weights and floors to choose from: the grid for ``"auto"``, else the value."""
    return (backoff.WEIGHT_GRID if smoothing == "auto" else (float(smoothing),),
            backoff.FLOOR_GRID if smoothing_floor == "auto" else (float(smoothing_floor),))


def choose(flat, Xk_fit, y_fit, Xk_held, y_held, n_classes: int, smoothing,
           smoothing_floor) -> tuple[float, float, dict]:
    """(weight, floor, {"weight/floor": held-out mean log-likelihood}): for an ``"auto"``
    one, the best of the grids on the held-out rows (counts from the fitted rows' paths);
    the value itself when given; the fallbacks when there are no held-out rows."""
    weights, floors = grids(smoothing, smoothing_floor)
    if len(weights) * len(floors) == 1:
        return weights[0], floors[0], {}
    if Xk_held is None:
        return (backoff.FALLBACK_WEIGHT if len(weights) > 1 else weights[0],
                backoff.FALLBACK_FLOOR if len(floors) > 1 else floors[0], {})
    parent = flat_parents(flat)
    stats = count_paths(flat, Xk_fit, y_fit, len(parent))
    cap = int(backoff.max_path_length(parent))

    def probs_at(weight):
        mass = outside_masses(flat, stats, parent, weight, n_classes, cap)
        return outside_share(flat, stats, parent, mass, Xk_held, y_held, weight, n_classes,
                             cap)

    return backoff.choose_on_grid(probs_at, n_classes, weights, floors)


def choose_in_sample(flat, Xk, y, Xk_rows, y_rows, n_classes: int, smoothing,
                     smoothing_floor) -> tuple[float, float, dict, LabelStats | None]:
    """``choose`` for a tree fitted on every row: the rows to choose on (``Xk_rows``,
    labels ``y_rows``) are training rows, scored with their own counts deleted from the
    back-off at every node of their path (deleted interpolation; the leaf softmax is
    in-sample). Also returns the counts of all rows (None when nothing was chosen)."""
    weights, floors = grids(smoothing, smoothing_floor)
    if len(weights) * len(floors) == 1 or Xk_rows is None:
        return (*choose(flat, None, None, None, None, n_classes, smoothing, smoothing_floor),
                None)
    parent = flat_parents(flat)
    stats = count_paths(flat, Xk, y, len(parent))
    cap = int(backoff.max_path_length(parent))
    log_soft = kernels.log_proba(y_rows, *flat.routing, *flat.leaf_arrays, *Xk_rows)
    inside = np.isfinite(log_soft)
    nodes = leaf_nodes(flat, Xk_rows)
    own, outside = np.empty(len(y_rows)), np.empty(len(y_rows))

    def probs_at(weight):
        kernels.deleted_backoff(stats.parts, parent, nodes, y_rows, flat.leaf_ptr,
                                flat.leaf_classes, flat.row[nodes], weight, n_classes, cap,
                                own, outside)
        share = np.divide(weight * own, outside, out=np.zeros(len(y_rows)),
                          where=outside > 0)
        return np.where(inside, (1 - weight) * np.exp(log_soft), share)

    return (*backoff.choose_on_grid(probs_at, n_classes, weights, floors), stats)


def build(flat, Xk, y, n_classes: int, weight: float, floor: float,
          stats: LabelStats | None = None) -> LeafSmoothing | None:
    """The back-off of ``flat`` with the rows of ``Xk`` (labels ``y``) counted along their
    paths (``stats`` if already counted), or None for the paper's model (both 0)."""
    if weight == 0 and floor == 0:
        return None
    parent = flat_parents(flat)
    stats = count_paths(flat, Xk, y, len(parent)) if stats is None else stats
    return _tables(flat, stats, parent, weight, floor, n_classes)


def _tables(flat, stats, parent, weight, floor, n_classes) -> LeafSmoothing:
    """The per-leaf outside masses and top outside labels of a chosen (weight, floor)."""
    cap = int(backoff.max_path_length(parent))
    mass = outside_masses(flat, stats, parent, weight, n_classes, cap)
    leaves = leaf_order(flat)
    sizes = np.diff(flat.leaf_ptr)
    # enough candidates that TABLE_WIDTH remain once the leaf's own classes are dropped
    width = min(TABLE_WIDTH + int(sizes.max()), n_classes)
    labels = np.full((len(leaves), width), -1, dtype=np.int64)
    logp = np.full((len(leaves), width), -np.inf)
    candidates = backoff.node_top_labels(stats.parts, len(parent), width)
    backoff.top_tables(stats.parts, parent, leaves, candidates, weight, 0.0, n_classes, cap,
                       labels, logp)
    table = np.full((len(leaves), TABLE_WIDTH), -1, dtype=np.int64)
    prob = np.zeros((len(leaves), TABLE_WIDTH))
    for j in range(len(leaves)):
        own = flat.leaf_classes[flat.leaf_ptr[j]:flat.leaf_ptr[j + 1]]
        keep = (labels[j] >= 0) & ~np.isin(labels[j], own)
        got = labels[j][keep][:TABLE_WIDTH]
        table[j, :len(got)] = got
        if mass[j] > 0:
            prob[j, :len(got)] = weight * np.exp(logp[j][keep][:TABLE_WIDTH]) / mass[j]
    return LeafSmoothing(stats, parent, float(weight), float(floor), int(n_classes), cap,
                         mass, table, prob)
