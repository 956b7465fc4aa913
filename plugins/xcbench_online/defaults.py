"""Defaults by rule for ``lomtree`` and ``recall_tree``: each ``"auto"`` parameter resolved
from the data's shape (pure functions; docs/methods/online-trees.md has the rules and the
measurements behind them).

What is not here because it is resolved while training: ``passes="auto"`` (VW's holdout
regime, ``xcbench.tree.passes``: the passes made are ``passes_done_``) and ``bits="auto"``
(direct or hashed weight tables, ``xcbench.tree.linear.choose_layout``). Both are reported
in ``resolved_params_`` with the values below.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import scipy.sparse as sp

from xcbench.contract.data_shape import DataSizes, narrow_dense, stored_values
from xcbench.tree import backoff

ADAGRAD_LR, VW_LR, ADAGRAD_ROUTER_LR = 0.5, 1.0, 2.0
# lomtree on wide dense input (not ``narrow_dense``): VW's update at rate 1 overshoots
# (docs/methods/online-trees.md: leaves100 25.2% -> 17.1%, synthetic 69.6% -> 58.2%)
WIDE_DENSE_LR = 0.2
LOMTREE_LR = 1.0  # lomtree's rate otherwise (VW's update and AdaGrad alike, as before)
# lomtree's back-off: the rows kept out of training to choose it on when the pass regime
# holds none out (1% of a million rows), and the weight on the parent and uniform floor on
# data too small to hold any out (shared with the softmax trees: xcbench.tree.backoff)
SMOOTHING_ROWS = backoff.SMOOTHING_ROWS
SMOOTHING_FALLBACK, FLOOR_FALLBACK = backoff.FALLBACK_WEIGHT, backoff.FALLBACK_FLOOR


@dataclass(frozen=True)
class DataShape(DataSizes):
    """Rows, features, stored values, classes, and whether the input is sparse (CSR)."""

    @classmethod
    def of(cls, X, n_classes):
        return cls(X.shape[0], X.shape[1], stored_values(X), int(n_classes), sp.issparse(X))


def _is_auto(value) -> bool:
    return value is None or value == "auto"  # None: the earlier spelling of "auto"


def log2_classes(n_classes: int) -> int:
    return max(1, math.ceil(math.log2(max(n_classes, 2))))


def resolve_lomtree(params: dict, shape: DataShape) -> dict:
    """``max_internal``: K - 1 internal nodes (VW's fixed value: every class can own a
    leaf). ``lr``: 0.2 with VW's update on dense input of at least 100 features, else 1."""
    out = {}
    if _is_auto(params.get("max_internal", "auto")):
        out["max_internal"] = max(shape.n_classes - 1, 1)
    if params.get("lr", "auto") == "auto":
        wide_dense = not shape.sparse and not narrow_dense(shape.sparse, shape.n_features)
        out["lr"] = (WIDE_DENSE_LR if wide_dense and params.get("update", "vw") == "vw"
                     else LOMTREE_LR)
    return out


def resolve_recall_tree(params: dict, shape: DataShape) -> dict:
    """VW's shape rules (``max_candidates`` min(K, 4 ceil(log2 K)), ``max_depth``
    ceil(log2 K)); step sizes (``lr`` 1 with VW's update, else 0.5; the routers' base
    ``router_lr`` 2 with AdaGrad, else ``lr``); ``node_only``: True on sparse input, where
    the path crossing bought nothing (synthetic-sparse-1k/10k/100k: 46.6 / 60.3 / 93.9% with
    it vs 46.8 / 60.3 / 94.3% without) and makes each candidate read d + 1 weight rows
    (p50 ratio K = 1e5 / 1e3: 1.80 vs 2.7-3.5); False on dense input, where the crossing is
    7-8 points more accurate on the ALOI sets."""
    log2k = log2_classes(shape.n_classes)
    vw = params.get("update") == "vw"
    lr = VW_LR if vw else ADAGRAD_LR
    rules = {
        "max_candidates": min(shape.n_classes, 4 * log2k),
        "max_depth": log2k,
        "lr": lr,
        "node_only": shape.sparse,
    }
    out = {name: value for name, value in rules.items() if _is_auto(params.get(name, "auto"))}
    if _is_auto(params.get("router_lr", "auto")):
        out["router_lr"] = (out.get("lr", params.get("lr")) if vw else ADAGRAD_ROUTER_LR)
    return out
