"""Defaults by rule: the label trees' ``"auto"`` parameters resolved from what the data says.

``data_shape(X, y, n_classes)`` measures the data (N, D, nonzeros per row, K, sparse or
dense, label skew); ``resolve(shape, params, embedding)`` is a pure function of that shape
and the user's parameters that returns the value of every parameter left at ``"auto"``.
The rules and the measurements behind them are in docs/methods/label-trees.md ("Defaults
by rule").
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from numbers import Integral

import numpy as np

from xcbench.contract.data_shape import (label_entropy, mostly_zeros, narrow_dense, nonzeros,
                                         skewed_labels)

AUTO = "auto"
WIDE = 100  # Bonsai's node width: children per node of the unbalanced k-means tree
SGD_LOSSES = ("tree",)  # losses that couple every depth: no node-by-node solver
OVR_LOSSES = ("hinge", "logistic")  # one binary classifier per child (Bonsai / Parabel)
OVR_PRUNE = 0.1  # Omikuji's weight threshold (on unit-normalised rows)
CS_PRUNE = 0.01  # the Crammer-Singer nodes' measured threshold (reports/scaling)
ENSEMBLE_MIN_CLASSES = 10_000  # from here on the defaults average trees
# LIBLINEAR's C per node model (measured, docs/methods/label-trees.md): the one-vs-rest
# squared hinge on unit rows gains from weak regularisation, Crammer-Singer nodes on raw
# binary rows from strong
NODE_C = {"hinge": 8.0, "independent": 0.1}
AUTO_TREES = 3  # the most trees the defaults average
# the ensemble's fit budget on one core (the product's target for a default fit), and one
# LIBLINEAR tree's fit seconds per stored training value and tree level, measured: 771 s
# CPU for one tree on synthetic-sparse-100k (1.6e7 values, depth 4), beside other jobs
FIT_BUDGET_SECONDS = 1800.0
TREE_SECONDS_PER_VALUE_LEVEL = 771.0 / (1.6e7 * 4)
AUTO_BEAM = 2  # the beam of a tree with one-vs-rest or softmax nodes
# Parabel's shape (Prabhu et al. 2018, Omikuji's defaults), the sparse trees' default on
# skewed labels: balanced binary 2-means splits down to nodes of at most PARABEL_LEAF
# classes, decoded with Parabel's beam (its binary levels need a wider beam than 2)
PARABEL_BRANCHING, PARABEL_LEAF, PARABEL_BEAM = 2, 100, 10
# the SGD step size: the paper's 0.1, and 0.02 for the embedding tree on sparse data, where
# 0.1 let the V_s of wide nodes drift to one direction (docs/methods/label-trees.md)
SGD_LR, EMBEDDING_SPARSE_LR = 0.1, 0.02
# the rates the embedding tree's probe may try on dense rows, starting at SGD_LR (model.py,
# ``_choose_lr``)
LR_LADDER = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
# the embedding tree's width d_e: the paper's 100 on sparse rows and skewed labels; on other
# dense rows at least the number of features D, so z = W x need not narrow x, up to
# EMBEDDING_DIM_MAX (measured on dense synthetic, D = 128, leaves100, D = 192, and ptb, D =
# 150: docs/methods/label-trees.md, "The embedding's width")
EMBEDDING_DIM, EMBEDDING_DIM_MAX = 100, 256


@dataclass(frozen=True)
class DataShape:
    """What the rules read: rows N, features D, mean nonzeros per row, classes K, whether
    the data is sparse (at most 10% nonzeros, whatever its container), the label skew
    (the most frequent class's rows over the mean rows per class; 1 when balanced) and the
    label entropy over log K (``xcbench.contract.data_shape.label_entropy``; None when
    unknown, e.g. from sizes alone)."""

    n_samples: int
    n_features: int
    nnz_per_row: float
    n_classes: int
    sparse: bool
    skew: float
    label_entropy: float | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def data_shape(X, y, n_classes: int) -> DataShape:
    """The DataShape of training data X (dense or CSR) with labels y in [0, n_classes)."""
    n, d = X.shape
    nnz = nonzeros(X)
    counts = np.bincount(np.asarray(y, dtype=np.int64), minlength=n_classes)
    skew = float(counts.max() / max(counts.mean(), 1e-12)) if n else 1.0
    return DataShape(int(n), int(d), float(nnz / max(n, 1)), int(n_classes),
                     mostly_zeros(nnz, n, d), skew, label_entropy(y, n_classes))


def tree_fit_seconds(shape: DataShape, depth) -> float:
    """Estimated CPU seconds of one LIBLINEAR tree's fit: every stored value of X is read
    by the node problems of each level it passes (``depth`` levels; 3 when not limited)."""
    levels = depth if isinstance(depth, int) else 3
    return TREE_SECONDS_PER_VALUE_LEVEL * shape.n_samples * shape.nnz_per_row * levels


def _trees_in_budget(shape: DataShape, depth) -> int:
    """As many trees as fit in ``FIT_BUDGET_SECONDS``, at least 1, at most ``AUTO_TREES``."""
    fit = max(tree_fit_seconds(shape, depth), 1e-9)
    return int(min(AUTO_TREES, max(1, FIT_BUDGET_SECONDS // fit)))


def embedding_width(shape: DataShape) -> int:
    """The embedding tree's d_e for data of ``shape``: ``EMBEDDING_DIM`` on sparse rows and
    on skewed labels (next-word data, where no rate probe re-tunes the step for a wider W:
    ptb lost 1.2 points at 150); on other dense rows max(``EMBEDDING_DIM``, D) capped at
    ``EMBEDDING_DIM_MAX``."""
    if shape.sparse or skewed_labels(shape.label_entropy):
        return EMBEDDING_DIM
    return int(min(EMBEDDING_DIM_MAX, max(EMBEDDING_DIM, shape.n_features)))


def unbalanced_depth(n_classes: int, width: int) -> int:
    """Levels of the unbalanced k-means tree of ``width`` children per node: the levels a
    balanced tree of that width needs for ``n_classes``, at least 2."""
    return max(2, math.ceil(math.log(max(n_classes, 2)) / math.log(width)))


def _liblinear_depth(shape: DataShape, params: dict):
    """The levels a LIBLINEAR tree of these parameters would get (for its fit estimate):
    ``max_depth`` when given, the unbalanced tree's on sparse data, else None (unlimited)."""
    if isinstance(params.get("max_depth"), int):
        return params["max_depth"]
    if parabel_shaped(params):
        return binary_depth(shape.n_classes, params["leaf_size"])
    return unbalanced_depth(shape.n_classes, WIDE) if shape.sparse else None


def parabel_shaped(params: dict) -> bool:
    """Whether these (resolved or given) parameters make Parabel's tree: binary splits
    down to nodes of at most ``leaf_size`` classes."""
    return (params.get("branching") == PARABEL_BRANCHING
            and isinstance(params.get("leaf_size"), Integral))


def bonsai_shape(n_classes: int) -> dict:
    """The shape of the Bonsai trees a mixed ensemble adds (``bonsai_trees``): unbalanced
    spherical k-means into ``WIDE`` clusters per node, the levels ``unbalanced_depth`` gives."""
    return {"structure": "kmeans_unbalanced", "branching": WIDE,
            "max_depth": unbalanced_depth(n_classes, WIDE), "leaf_size": None}


def binary_depth(n_classes: int, leaf_size: int) -> int:
    """Levels of a balanced binary tree whose last nodes hold at most ``leaf_size``
    classes (Parabel's shape): the binary splits, and the leaves' level."""
    return max(0, math.ceil(math.log2(max(n_classes, 1) / leaf_size))) + 1


def resolve(shape: DataShape, params: dict, embedding: bool = False) -> dict:
    """Every ``"auto"`` entry of ``params`` (the method's parameters) resolved for data of
    this ``shape``; the other entries are returned unchanged. ``embedding``: the label
    embedding tree (SGD only, no node solver; its ``embedding_dim`` is resolved only then)."""
    p = dict(params)
    K = shape.n_classes
    if p.get("solver") == AUTO:
        # node-by-node linear nodes need features to separate on: sparse or wide data; on
        # narrow dense data (letter, ALOI's 27 bins) the paper's SGD tree loss does better.
        # Nor where one LIBLINEAR tree would not fit the budget (dense ptb: ~80 min by the
        # estimate; SGD with the softmax loss took 10 minutes), unless the loss needs it
        narrow = narrow_dense(shape.sparse, shape.n_features)
        too_slow = (tree_fit_seconds(shape, _liblinear_depth(shape, p)) > FIT_BUDGET_SECONDS
                    and p.get("loss") not in OVR_LOSSES)
        p["solver"] = ("sgd" if embedding or p.get("loss") in SGD_LOSSES or narrow
                       or too_slow else "liblinear")
    if p.get("loss") == AUTO:
        # SGD trees: the paper's tree hinge, or the sibling softmax on skewed labels
        # (next-word data: no label has p(y | x) > 1/2, and the multiclass hinge, not
        # consistent there, collapses towards the most frequent word; the embedding tree
        # on ptb: 95.1% top-1 error with the hinge, docs/methods/label-trees.md)
        p["loss"] = ("hinge" if p.get("solver") == "liblinear" else
                     "softmax" if skewed_labels(shape.label_entropy) else "tree")
    parabel = False
    if p.get("structure") == AUTO:
        # wide unbalanced trees (Bonsai) where the node solver can fit wide nodes, or on
        # skewed labels (next-word data) Parabel's balanced binary trees; the SGD trees and
        # dense data keep the balanced k-means tree (docs/methods/label-trees.md, "The
        # shape on skewed labels")
        node_by_node = p.get("solver") == "liblinear" and shape.sparse
        parabel = node_by_node and skewed_labels(shape.label_entropy)
        p["structure"] = ("kmeans" if parabel or not node_by_node else "kmeans_unbalanced")
    if p.get("leaf_size") == AUTO:
        p["leaf_size"] = PARABEL_LEAF if parabel else None
    if parabel and p.get("branching") == AUTO:
        p["branching"] = PARABEL_BRANCHING
    if p.get("branching") == AUTO:
        p["branching"] = WIDE if p["structure"] == "kmeans_unbalanced" else "sqrt"
    if p.get("max_depth") == AUTO:
        # unbalanced trees: the levels a balanced tree of this width needs (at least 2);
        # uneven clusters need no extra level: a last-level node with more than
        # LAST_LEVEL_CAP x branching classes is split once more anyway (structure.py), and
        # a level of slack made the trees deeper, slower to fit and less accurate
        # (docs/methods/label-trees.md); balanced trees need no limit
        p["max_depth"] = None
        if p["structure"] == "kmeans_unbalanced":
            width = WIDE if p["branching"] == "sqrt" else int(p["branching"])
            p["max_depth"] = unbalanced_depth(K, width)
    if p.get("bits") == AUTO and not embedding:
        p["bits"] = "csr" if p.get("solver") == "liblinear" else AUTO
    nodes = p.get("loss") if p.get("solver") == "liblinear" else None  # node-by-node model
    if p.get("normalize") == AUTO:
        p["normalize"] = nodes in OVR_LOSSES
    if p.get("prune") == AUTO:
        p["prune"] = (OVR_PRUNE if nodes in OVR_LOSSES else
                      CS_PRUNE if nodes == "independent" else 0.0)
    if p.get("lr") == AUTO:
        p["lr"] = EMBEDDING_SPARSE_LR if embedding and shape.sparse else SGD_LR
    if p.get("C") == AUTO:
        p["C"] = NODE_C.get(p.get("loss"), 1.0)
    if embedding and p.get("embedding_dim") == AUTO:
        p["embedding_dim"] = embedding_width(shape)
    if p.get("n_trees") == AUTO:
        # Parabel's trees (max_depth None) are estimated at 3 levels, as balanced trees are:
        # their binary levels are one cheap node problem each (ptb-sparse: 3 such trees in
        # 128-196 s of CPU, 3 Bonsai-shaped ones in 972 s)
        p["n_trees"] = (_trees_in_budget(shape, p.get("max_depth"))
                        if K >= ENSEMBLE_MIN_CLASSES and p.get("solver") == "liblinear"
                        else 1)
    if p.get("bonsai_trees") == AUTO:
        # beside Parabel's trees, as many trees of Bonsai's shape: the two shapes err on
        # different rows, so their average beats either (ptb-sparse: docs/methods/
        # label-trees.md, "A mixed ensemble"); one shape everywhere else
        p["bonsai_trees"] = int(p["n_trees"]) if parabel else 0
    if p.get("beam") == AUTO:
        # path scores of one-vs-rest or softmax nodes add up as log-scores; margins of the
        # hinge losses do not, so those trees decode greedily. A beam of 2 in every tree,
        # one or an ensemble: the greedy descent lost 0.3-4 points to it on
        # synthetic-sparse-1k / 10k / 100k, wider beams gained at most 0.4 more at up to
        # twice the cost (docs/methods/label-trees.md)
        # a Parabel-shaped tree (binary levels down to leaf_size-wide nodes): Parabel's 10
        scored = p.get("loss") in OVR_LOSSES + ("softmax",)
        p["beam"] = (PARABEL_BEAM if parabel_shaped(p) else AUTO_BEAM) if scored else 1
    return p
