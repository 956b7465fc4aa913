"""``"auto"`` defaults of hierarchical softmax, resolved from what the training data say.

``DataShape`` is what a rule may look at (sizes, sparsity, label skew, row norms);
``resolve`` is a pure function from (the estimator's parameters, a DataShape) to the value of
every parameter left at ``"auto"``. ``docs/methods/hsm.md`` ("Defaults by rule") gives the
measurements each rule comes from.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from xcbench.contract.data_shape import DataSizes, label_entropy, skewed_labels, stored_values

from .c_probe import LADDER
from .memory import DIRECT_LIMIT_BYTES, fit_peak_bytes

AUTO = "auto"
WIDE_LEAF = 100  # classes under one last node of the k-means tree (napkinXC's max_leaves)
DENSE_LEAF = 10  # ... on dense rows with K > WIDE_LEAF (aloi27d: 61.0% vs 63.4% at 100)
C_FLAT_LABELS = 30.0  # LIBLINEAR strength for about equally frequent labels (see below)
# skewed labels: C * mean ||x||^2 (the scale-free strength) held at 3, ptb-sparse's best
# (C = 1 at ||x||^2 = 3); 3 itself when the norm is unknown; clipped to the probe's ladder
C_SKEWED_STRENGTH = 3.0
C_SKEWED_UNKNOWN_NORM = 3.0  # skewed labels, sizes only (estimate_memory): the first rule's C
C_RANGE = (LADDER[0], LADDER[-1])
PRUNE_STEPS = (0.0, 0.01, 0.03, 0.1)  # candidate weight thresholds of the exact store
# the pruning rule keeps the fit estimate under this; the estimate of the exact store has a
# 2x margin (``memory.pruned_share``), so 8 GiB estimated is about 4 GiB measured
FIT_BUDGET_BYTES = 8 << 30
LR_SPARSE, LR_STEP = 0.2, 0.16  # SGD: sparse rows / dense rows, lr = LR_STEP / mean ||x||^2


@dataclass(frozen=True)
class DataShape(DataSizes):
    """The training data as the rules see them. ``label_entropy`` is the entropy of the
    training label frequencies divided by log K (1 = every class equally frequent; None
    when unknown, e.g. in ``estimate_memory``, whose sizes count as sparse when under half
    the cells are stored); ``mean_sq_norm`` the mean ||x||^2."""

    label_entropy: float | None = None
    mean_sq_norm: float | None = None
    SPARSE_SHARE = 0.5

    @classmethod
    def of(cls, X, y, n_classes: int) -> "DataShape":
        """The shape of training data X (dense or sparse) with labels y in [0, n_classes)."""
        n, d = X.shape
        sparse = sp.issparse(X)
        nnz = stored_values(X)
        sq = float(X.multiply(X).sum()) if sparse else float(np.einsum("ij,ij->", X, X))
        return cls(n, d, nnz, int(n_classes), sparse, label_entropy(y, n_classes),
                   sq / max(n, 1))


def resolve(params: dict, shape: DataShape) -> dict:
    """The value of each ``"auto"`` parameter among ``params`` (the estimator's
    ``get_params()``) for data of this shape. Rules, in order (each may use the ones above):

    - ``solver``: ``"liblinear"`` (nodes fitted to convergence beat SGD on every dataset
      measured; SGD stays available).
    - ``tree``: ``"kmeans_balanced"`` with LIBLINEAR nodes (napkinXC's and Parabel's tree),
      ``"huffman"`` with SGD (the softmax-tree paper's). When C is probed (below) on dense
      rows with K > ``max_leaf``, ``fit`` may replace it by ``"kmeans"`` (``c_probe``).
    - ``max_leaf`` (k-means trees; 1 otherwise): 100 classes under a last node on sparse
      rows, or on dense rows when K <= 100 (one softmax over all classes); 10 on dense rows
      with K > 100, where one linear node cannot tell 100 classes apart in a few dense
      dimensions and more levels make the model piecewise linear.
    - ``bits``: the direct (K - 1) x D table when it takes at most 256 MB; past that the
      exact store ``"csr"`` with LIBLINEAR nodes, a hashed table (``"auto"`` layout) with SGD.
    - ``prune``: 0 unless ``bits="csr"``; then the smallest of 0 / 0.01 / 0.03 / 0.1 whose
      fit estimate stays under 8 GiB (about 4 GiB measured: the estimate
      has a 2x margin).
    - ``C``: 30 when the labels are about equally frequent (entropy / log K >= 0.8). When
      they are skewed (next-word data: no class is separable, a less confident model is
      better calibrated), 3 / mean ||x||^2: features scaled by s need C scaled by 1 / s^2
      for the same model, and C * ||x||^2 = 3 was the best perplexity on ptb-sparse (C = 1
      at ||x||^2 = 3) and within the flat best of ptb's dense context vectors (||x||^2 =
      79: C = 0.038); 3 when the norm is unknown. With LIBLINEAR nodes and equally
      frequent labels, ``fit`` then replaces 30 by the candidate that is clearly best on
      held-out training rows (``c_probe``); this function, a pure rule of the shape, gives
      the constant.
    - ``lr`` (SGD only): 0.2 on sparse rows, 0.16 / mean ||x||^2 (at most 0.2) on dense ones.
    """
    out = {}

    def pick(name, value):
        if params.get(name) == AUTO:
            out[name] = value
        return params[name] if params.get(name) != AUTO else value

    solver = pick("solver", "liblinear")
    tree = pick("tree", "kmeans_balanced" if solver == "liblinear" else "huffman")
    max_leaf = pick("max_leaf", _leaf_rule(shape) if tree in ("kmeans", "kmeans_balanced")
                    else 1)
    direct_fits = max(shape.n_classes - 1, 1) * shape.n_features * 8 <= DIRECT_LIMIT_BYTES
    if params.get("bits") == AUTO:
        out["bits"] = None if direct_fits else ("csr" if solver == "liblinear" else AUTO)
    bits = out.get("bits", params.get("bits"))
    if params.get("prune") == AUTO:
        out["prune"] = _prune_rule(params, shape, tree, solver, max_leaf, bits)
    if params.get("C") == AUTO:
        out["C"] = _skewed_C(shape) if skewed_labels(shape.label_entropy) else C_FLAT_LABELS
    if params.get("lr") == AUTO:
        if shape.sparse or not shape.mean_sq_norm:
            out["lr"] = LR_SPARSE
        else:
            out["lr"] = min(LR_SPARSE, LR_STEP / shape.mean_sq_norm)
    return out


def _skewed_C(shape: DataShape) -> float:
    """C for skewed labels: the strength C * mean ||x||^2 held at ``C_SKEWED_STRENGTH``."""
    if not shape.mean_sq_norm:
        return C_SKEWED_UNKNOWN_NORM
    low, high = C_RANGE
    return float(min(high, max(low, C_SKEWED_STRENGTH / shape.mean_sq_norm)))


def _leaf_rule(shape: DataShape) -> int:
    if shape.sparse or shape.n_classes <= WIDE_LEAF:
        return WIDE_LEAF
    return DENSE_LEAF


def _prune_rule(params, shape, tree, solver, max_leaf, bits) -> float:
    if bits != "csr":
        return 0.0
    for prune in PRUNE_STEPS:
        peak = fit_peak_bytes(shape.n_samples, shape.n_features, shape.nnz, shape.n_classes,
                              arity=int(params["arity"]), bits="csr",
                              momentum=float(params["momentum"]), tree=tree, solver=solver,
                              max_leaf=int(max_leaf), prune=prune)
        if peak <= FIT_BUDGET_BYTES:
            return prune
    return PRUNE_STEPS[-1]
