"""Probabilities for the classes a softmax tree's leaf leaves out: back-off along the path.

A leaf of ``st`` or ``ast`` holds a softmax over its own few classes; every other class has
probability exactly zero there, so on the test rows whose label is outside their leaf's
classes (half of them on PTB) the model's perplexity is the metric's epsilon, not the
model. This module mixes the leaf softmax with the label frequencies of the training rows
that reached the leaf and its ancestors (``xcbench.tree.backoff``: each node's frequencies
interpolated with its parent's, uniform above the root), then a uniform share:

    p(y | x) = (1 - floor) [(1 - w) p_softmax(y | x) + w p_leaf(y)] + floor / K

with ``w`` the smoothing weight (the same weight backs off each node to its parent) and
``floor`` the uniform share. Both 0 is the paper's model. ``"auto"`` chooses both from
``backoff.WEIGHT_GRID`` x ``backoff.FLOOR_GRID`` by the log-likelihood of rows kept out of
training for it (every tenth row, at most ``backoff.SMOOTHING_ROWS``: ``kept_out_rows``).

Top-k ranks by the same probabilities. Candidates: the leaf's classes and the
``TABLE_WIDTH`` labels of highest back-off probability at the leaf (a table per leaf,
computed once at fit); a label outside both can only be ranked below them, so ``predict``
with k <= ``TABLE_WIDTH`` is exact. Memory: the counts hold only the (node, label) pairs
seen (``xcbench.tree.label_stats``), plus one float per leaf class slot and
``TABLE_WIDTH`` entries per leaf; nothing of size K x D or K^2.
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


def held_out_split(X, y, smoothing, smoothing_floor):
    """(X_fit, y_fit, X_held, y_held): the rows to choose an ``"auto"`` smoothing on kept
    out of training (``X_held`` None when neither is ``"auto"`` or the data is too small)."""
    held = (kept_out_rows(X.shape[0], backoff.SMOOTHING_ROWS)
            if "auto" in (smoothing, smoothing_floor) else None)
    if held is None:
        return X, y, None, None
    keep = np.setdiff1d(np.arange(X.shape[0]), held)
    return X[keep], y[keep], X[held], y[held]


def refit_after_choice(n_held: int, n_rows: int) -> bool:
    """Whether the tree is fitted again on every row once the smoothing is chosen: when the
    rows kept out are more than ``REFIT_SHARE`` of the data (below 500,000 rows), whose
    loss cost top-1 accuracy (letter, 10% kept out: 1.3 points on each of seeds 0-2)."""
    return n_held > REFIT_SHARE * n_rows


def smoothing_memory(n_samples: int, n_features: int, nnz: int, depth: int,
                     dense: bool) -> int:
    """Bytes the smoothing adds to a fit: the kept-in rows' copy of X (at most the whole
    of it) and the path counts (``pairs_allowance`` pairs, twice while the table grows)."""
    copy = 8 * int(n_samples) * int(n_features) if dense else 12 * int(nnz) + 8 * n_samples
    counts = 2 * pairs_allowance(n_samples, int(depth) + 1) * entry_bytes(0)
    return int(copy + counts)


@dataclass
class LeafSmoothing:
    """The fitted back-off of a flat softmax tree (node ids: the flat tree's)."""
    stats: LabelStats  # label counts of the training rows at every node of their paths
    parent: np.ndarray  # (n_nodes,) flat parent id, -1 at the root
    weight: float
    floor: float
    n_classes: int
    path_cap: int  # most nodes on a path (kernels' buffer size)
    slot_backoff: np.ndarray  # (leaf class slots,) p_leaf(class) of each leaf's classes
    table_labels: np.ndarray  # (n_leaves, TABLE_WIDTH) top back-off labels, -1 padded
    table_backoff: np.ndarray  # (n_leaves, TABLE_WIDTH) their p_leaf
    table_in_leaf: np.ndarray  # (n_leaves, TABLE_WIDTH) whether the leaf softmax has it

    @property
    def topk_arrays(self):
        return (self.weight, self.floor, self.n_classes, self.slot_backoff,
                self.table_labels, self.table_backoff, self.table_in_leaf)

    def log_proba(self, flat, Xk, y):
        """log p(y_i | x_i) of the mixture for kernel input ``Xk``."""
        log_soft = kernels.log_proba(y, *flat.routing, *flat.leaf_arrays, *Xk)
        out = np.empty(len(y))
        backoff.mixed_log_probs(self.stats.parts, self.parent, leaf_nodes(flat, Xk), y,
                                np.exp(log_soft), self.weight, self.floor, self.n_classes,
                                self.path_cap, out)
        return out

    @property
    def nbytes(self) -> int:
        return int(self.stats.nbytes + sum(a.nbytes for a in (
            self.parent, self.slot_backoff, self.table_labels, self.table_backoff,
            self.table_in_leaf)))


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
    log_soft = kernels.log_proba(y_held, *flat.routing, *flat.leaf_arrays, *Xk_held)
    return backoff.choose_weights(stats.parts, parent, leaf_nodes(flat, Xk_held), y_held,
                                  n_classes, backoff.max_path_length(parent), weights, floors,
                                  first_prob=np.exp(log_soft))


def build(flat, Xk, y, n_classes: int, weight: float, floor: float) -> LeafSmoothing | None:
    """The back-off of ``flat`` with the rows of ``Xk`` (labels ``y``) counted along their
    paths, or None for the paper's model (both 0)."""
    if weight == 0 and floor == 0:
        return None
    parent = flat_parents(flat)
    return _tables(flat, count_paths(flat, Xk, y, len(parent)), parent, weight, floor,
                   n_classes)


def _tables(flat, stats, parent, weight, floor, n_classes) -> LeafSmoothing:
    """The per-slot and per-leaf back-off tables of a chosen (weight, floor)."""
    cap = int(backoff.max_path_length(parent))
    leaves = np.flatnonzero(flat.left < 0)
    leaves = leaves[np.argsort(flat.row[leaves])]  # leaf table row j -> its flat node
    sizes = np.diff(flat.leaf_ptr)
    slot_nodes = np.repeat(leaves, sizes)
    slot = np.empty(len(slot_nodes))
    backoff.log_probs(stats.parts, parent, slot_nodes, flat.leaf_classes, weight, 0.0,
                      n_classes, cap, slot)
    width = min(TABLE_WIDTH, n_classes)
    labels = np.full((len(leaves), width), -1, dtype=np.int64)
    logp = np.full((len(leaves), width), -np.inf)
    candidates = backoff.node_top_labels(stats.parts, len(parent), width)
    backoff.top_tables(stats.parts, parent, leaves, candidates, weight, 0.0, n_classes, cap,
                       labels, logp)
    in_leaf = np.zeros(labels.shape, dtype=np.bool_)
    for j in range(len(leaves)):
        own = flat.leaf_classes[flat.leaf_ptr[j]:flat.leaf_ptr[j + 1]]
        in_leaf[j] = np.isin(labels[j], own)
    return LeafSmoothing(stats, parent, float(weight), float(floor), int(n_classes), cap,
                         np.exp(slot), labels, np.exp(logp), in_leaf)

