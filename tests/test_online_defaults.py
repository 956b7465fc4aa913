"""Defaults by rule of the online trees (plugins/xcbench_online/defaults.py)."""
import numpy as np
import pytest
import scipy.sparse as sp

from xcbench_online import LOMTree, RecallTree
from xcbench_online.defaults import DataShape, resolve_lomtree, resolve_recall_tree

AUTO_RT = {"max_candidates": "auto", "max_depth": "auto", "lr": "auto", "router_lr": "auto",
           "node_only": "auto", "update": "adagrad"}


def _shape(K, sparse):
    return DataShape(10_000, 1_000, 16 * 10_000 if sparse else 10_000 * 1_000, K, sparse)


@pytest.mark.parametrize("K, M, d", [(2, 2, 1), (26, 20, 5), (1_000, 40, 10),
                                     (100_000, 68, 17)])
def test_recall_tree_shape_is_vws_rule(K, M, d):
    got = resolve_recall_tree(AUTO_RT, _shape(K, sparse=False))
    assert (got["max_candidates"], got["max_depth"]) == (M, d)


def test_recall_tree_crosses_the_path_on_dense_input_only():
    """node_only: True on sparse input (no accuracy from the crossing, d + 1 rows per
    candidate), False on dense input (7-8 points on the ALOI sets)."""
    assert resolve_recall_tree(AUTO_RT, _shape(1_000, sparse=True))["node_only"] is True
    assert resolve_recall_tree(AUTO_RT, _shape(1_000, sparse=False))["node_only"] is False
    assert resolve_recall_tree(AUTO_RT, DataShape.from_sizes(10, 5, 50, 3))["node_only"] is False
    assert resolve_recall_tree(AUTO_RT, DataShape.from_sizes(10, 5, 20, 3))["node_only"] is True


def test_recall_tree_step_sizes_follow_the_update():
    adagrad = resolve_recall_tree(AUTO_RT, _shape(100, False))
    assert (adagrad["lr"], adagrad["router_lr"]) == (0.5, 2.0)
    vw = resolve_recall_tree({**AUTO_RT, "update": "vw"}, _shape(100, False))
    assert (vw["lr"], vw["router_lr"]) == (1.0, 1.0)
    vw_lr = resolve_recall_tree({**AUTO_RT, "update": "vw", "lr": 0.3}, _shape(100, False))
    assert "lr" not in vw_lr and vw_lr["router_lr"] == 0.3


def test_explicit_values_and_none_are_kept_apart():
    explicit = {"max_candidates": 5, "max_depth": 3, "lr": 0.1, "router_lr": 1.0,
                "node_only": False}
    assert resolve_recall_tree(explicit, _shape(1_000, True)) == {}
    none = resolve_recall_tree({**explicit, "max_depth": None}, _shape(1_000, True))
    assert none == {"max_depth": 10}  # None is the earlier spelling of "auto"
    assert resolve_lomtree({"max_internal": "auto", "lr": 1.0},
                           _shape(438, False)) == {"max_internal": 437}
    assert resolve_lomtree({"max_internal": None, "lr": 1.0}, _shape(1, False)) == {"max_internal": 1}
    assert resolve_lomtree({"max_internal": 20, "lr": 1.0}, _shape(438, False)) == {}


@pytest.mark.parametrize("d, sparse, update, lr", [
    (27, False, "vw", 1.0), (99, False, "vw", 1.0),  # narrow dense (letter, aloi27d)
    (100, False, "vw", 0.2), (192, False, "vw", 0.2),  # wide dense (leaves100, synthetic)
    (10_000, True, "vw", 1.0),  # sparse
    (192, False, "adagrad", 1.0),  # the rule was measured with VW's update only
])
def test_lomtree_rate_is_smaller_on_wide_dense_input(d, sparse, update, lr):
    shape = DataShape(10_000, d, 16 * 10_000 if sparse else 10_000 * d, 1_000, sparse)
    assert resolve_lomtree({"lr": "auto", "update": update}, shape)["lr"] == lr


def _data(n=300, K=6, D=8, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    return np.abs(rng.normal(size=(n, D))) + 3.0 * np.eye(K, D)[y], y


def test_fitted_models_expose_every_resolved_auto_parameter():
    X, y = _data()
    lom = LOMTree(random_state=0).fit(X, y)
    assert lom.resolved_params_ == {"max_internal": 5, "lr": 1.0, "passes": lom.passes_done_,
                                    "bits": "direct", "smoothing": lom.smoothing_,
                                    "smoothing_floor": lom.smoothing_floor_}
    assert LOMTree(passes=2, bits=18, max_internal=3, lr=1.0, smoothing=0.1,
                   smoothing_floor=0).fit(X, y).resolved_params_ == {}
    rt = RecallTree(passes=2, random_state=0).fit(X, y)
    assert rt.resolved_params_ == {"max_candidates": 6, "max_depth": 3, "lr": 0.5,
                                   "router_lr": 2.0, "node_only": False,
                                   "bits": {"routers": "direct", "scorers": "direct",
                                            "path": "direct"}}
    assert rt.node_only_ is False
    sparse = RecallTree(passes=2, random_state=0).fit(sp.csr_matrix(X), y)
    assert sparse.resolved_params_["node_only"] is True and sparse.node_only_ is True
    assert RecallTree(random_state=0).fit(X, y).resolved_params_["passes"] >= 1
