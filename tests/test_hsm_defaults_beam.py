"""hsm: defaults resolved from the data (``xcbench_hsm.defaults``), the query-time beam
decoder, and one-class problems."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import xcbench
from xcbench_hsm import HierarchicalSoftmax
from xcbench.contract.data_shape import label_entropy
from xcbench_hsm.defaults import DataShape, resolve
from xcbench_hsm.model import DECODERS

AUTO_PARAMS = {"tree", "max_leaf", "solver", "C", "prune", "bits", "lr"}


def _rules(n, d, nnz, k, sparse=True, entropy=1.0, sq_norm=16.0, **given):
    params = {**HierarchicalSoftmax().get_params(), **given}
    return resolve(params, DataShape(n, d, nnz, k, sparse, entropy, sq_norm))


def test_sparse_100k_shape_gets_the_recorded_best_configuration():
    """synthetic-sparse-100k's shape: napkinXC's recipe with exact, pruned weights (24.1%
    top-1 error in reports/scaling, against 58.7% for the SGD defaults)."""
    got = _rules(10**6, 848632, 16 * 10**6, 10**5)
    assert got == {"solver": "liblinear", "tree": "kmeans_balanced", "max_leaf": 100,
                   "bits": "csr", "prune": 0.03, "C": 30.0, "lr": 0.2}


def test_small_dense_shape_keeps_the_direct_table_unpruned():
    got = _rules(16000, 16, 16000 * 16, 26, sparse=False, sq_norm=80.0)
    assert got["bits"] is None and got["prune"] == 0.0 and got["solver"] == "liblinear"
    assert got["lr"] == pytest.approx(0.16 / 80.0)  # dense rows: lr * ||x||^2 well below 2


def test_dense_rows_of_many_classes_get_smaller_last_nodes():
    """aloi27d (dense, D = 27, K = 1,000): max_leaf 10 / 100 gave 61.0% / 63.4% top-1
    error; letter (K = 26): one softmax node (max_leaf 100) 24.6%, max_leaf 10 32.0%."""
    assert _rules(10**5, 27, 27 * 10**5, 1000, sparse=False)["max_leaf"] == 10
    assert _rules(16000, 16, 16 * 16000, 26, sparse=False)["max_leaf"] == 100
    assert _rules(10**4, 8880, 16 * 10**4, 1000)["max_leaf"] == 100  # sparse


def test_pruning_grows_only_as_far_as_memory_needs():
    one_k = _rules(10**4, 8880, 16 * 10**4, 10**3)
    ten_k = _rules(10**5, 89232, 16 * 10**5, 10**4)
    assert (one_k["bits"], one_k["prune"]) == (None, 0.0)  # direct table: 71 MB
    assert (ten_k["bits"], ten_k["prune"]) == ("csr", 0.0)


def test_skewed_labels_get_a_smaller_C():
    # ptb-sparse's labels: 0.705, ||x||^2 = 3; aloi27d's 0.901 (C = 1 there: 86.5% vs
    # 63.4% at 30)
    ptb_sparse = _rules(10**5, 3 * 10**4, 3 * 10**5, 10**4, entropy=0.705, sq_norm=3.0)
    assert ptb_sparse["C"] == 1.0
    assert _rules(45000, 27, 27 * 45000, 1000, entropy=0.901)["C"] == 30.0
    zipf = np.random.default_rng(0).zipf(1.5, size=20000).clip(max=1000) - 1
    assert label_entropy(zipf, 1000) < 0.8 < label_entropy(np.arange(20000) % 1000, 1000)


def test_skewed_C_follows_the_feature_scale():
    """Features scaled by s need C scaled by 1 / s^2: C * mean ||x||^2 stays 3 (ptb's dense
    context vectors, ||x||^2 = 79.4: C = 0.038), within the probe's ladder; 3 when the
    norm is unknown (sizes only)."""
    def skewed_C(sq_norm):
        return _rules(572902, 150, 150 * 572902, 10**4, sparse=False, entropy=0.7,
                      sq_norm=sq_norm)["C"]
    assert skewed_C(79.4) == pytest.approx(3 / 79.4)
    assert skewed_C(4 * 79.4) == pytest.approx(skewed_C(79.4) / 4)
    assert skewed_C(1e-9) == 300000.0 and skewed_C(1e9) == 0.003
    assert skewed_C(None) == 3.0


def test_sgd_gets_the_huffman_tree_and_a_hashed_table_when_big():
    got = _rules(10**6, 848632, 16 * 10**6, 10**5, solver="sgd")
    assert "solver" not in got and got["tree"] == "huffman" and got["max_leaf"] == 1
    assert got["bits"] == "auto" and got["prune"] == 0.0


def test_given_values_are_kept():
    got = _rules(10**6, 848632, 16 * 10**6, 10**5, tree="huffman", C=1.0, bits=None)
    assert not {"tree", "C", "bits"} & set(got)
    assert got["max_leaf"] == 1  # follows the given tree


def test_fit_records_every_resolved_value_and_estimate_uses_the_same_rule():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 5)), rng.integers(0, 7, size=300)
    m = HierarchicalSoftmax(random_state=0).fit(X, y)
    assert set(m.resolved_params_) == AUTO_PARAMS
    assert m.resolved_params_["tree"] == "kmeans_balanced"
    assert m.stats()["weight_layout"] == "direct"
    assert m.stats()["resolved_params"] == m.resolved_params_  # into the run record
    given = HierarchicalSoftmax(tree="huffman", solver="sgd", random_state=0).fit(X, y)
    assert not {"tree", "solver"} & set(given.resolved_params_)
    big = HierarchicalSoftmax().estimate_memory(10**6, 848632, 16 * 10**6, 10**5)
    csr = HierarchicalSoftmax(solver="liblinear", tree="kmeans_balanced", max_leaf=100,
                              bits="csr", prune=0.03).estimate_memory(
        10**6, 848632, 16 * 10**6, 10**5)
    assert big == csr


@pytest.mark.parametrize("params", [{}, {"solver": "sgd"}, {"solver": "liblinear",
                                                            "bits": "csr"}])
def test_one_class_fits_and_every_decoder_predicts_it(params):
    """Issue 34: K = 1 raised "cannot reshape array of size 0" in the exact decoder."""
    X = np.random.default_rng(0).random((20, 4))
    m = HierarchicalSoftmax(random_state=0, **params).fit(X, np.zeros(20, dtype=int))
    for decoder in DECODERS:
        labels, scores = m.set_params(decoder=decoder).predict_topk(X[:3], 2)
        np.testing.assert_array_equal(labels, [[0, -1]] * 3)
        np.testing.assert_array_equal(scores[:, 0], 0.0)
    np.testing.assert_array_equal(m.log_proba(X[:3], [0, 0, 0]), 0.0)


def _random_model(seed, n_classes, arity, tree, n_features=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3 * n_classes, n_features))
    y = rng.integers(0, n_classes, size=len(X))
    m = HierarchicalSoftmax(tree=tree, arity=arity, solver="sgd", epochs=0, max_leaf=1,
                            random_state=seed).fit(X, y, n_classes=n_classes)
    m.weights_ = rng.normal(scale=2.0, size=m.weights_.shape)
    m.intercept_ = rng.normal(size=m.intercept_.shape)
    return m, rng.normal(size=(15, n_features))


@given(seed=st.integers(0, 10**6), n_classes=st.integers(2, 40), arity=st.integers(2, 4),
       k=st.integers(1, 6), tree=st.sampled_from(["huffman", "balanced"]))
@settings(max_examples=30, deadline=None)
def test_a_beam_as_wide_as_the_tree_is_exhaustive_search(seed, n_classes, arity, k, tree):
    m, X = _random_model(seed, n_classes, arity, tree)
    exact = m.set_params(decoder="exact").predict_topk(X, k)
    beam = m.set_params(decoder="beam", beam=n_classes).predict_topk(X, k)
    np.testing.assert_array_equal(beam[0], exact[0])
    np.testing.assert_allclose(beam[1], exact[1], rtol=1e-12, atol=1e-12)


def test_beam_of_one_is_greedy_and_wider_beams_find_likelier_top1():
    m, X = _random_model(5, 40, 2, "balanced")
    X = np.random.default_rng(1).normal(size=(300, 5))
    greedy = m.set_params(decoder="greedy").predict_topk(X, 1)
    np.testing.assert_array_equal(m.set_params(decoder="beam", beam=1).predict_topk(X, 1)[0],
                                  greedy[0])
    exact = m.set_params(decoder="exact").predict_topk(X, 1)[1][:, 0]
    wide = m.set_params(decoder="beam", beam=8).predict_topk(X, 1)[1][:, 0]
    # top-1 is the beam's most probable leaf: never less likely than the greedy leaf here
    assert np.all(wide >= greedy[1][:, 0] - 1e-12) and np.all(wide <= exact + 1e-12)
    assert (wide > greedy[1][:, 0] + 1e-9).any()  # and better on some rows
    cost = {b: m.set_params(decoder="beam", beam=b).path_cost(X).mean() for b in (1, 4)}
    assert cost[4] > cost[1]


def test_beam_is_a_query_parameter_measured_without_refitting():
    spec = xcbench.get_method_spec("hsm")
    assert "beam" in spec.query_params["decoder"] and "beam" in spec.query_params
    X = sp.random(200, 300, density=0.03, format="csr", random_state=0)
    y = np.random.default_rng(0).integers(0, 12, size=200)
    m = HierarchicalSoftmax(random_state=0).fit(X, y)
    weights = [np.copy(a) for a in m.weights_] if isinstance(m.weights_, tuple) \
        else np.copy(m.weights_)
    for width in (1, 3, 12):
        m.set_params(decoder="beam", beam=width).predict_topk(X, 2)
    np.testing.assert_array_equal(m.weights_, weights)
