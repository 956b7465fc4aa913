"""Hierarchical softmax (plugin xcbench_hsm): trees, decoders, probabilities."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xcbench
from xcbench.testing import check_method
from xcbench_hsm import HierarchicalSoftmax
from xcbench_hsm.tree import balanced_tree, huffman_tree, kmeans_tree


@pytest.mark.parametrize("decoder", ["exact", "greedy", "topk"])
def test_hsm_conforms(decoder):
    check_method("hsm", params={"decoder": decoder, "lr": 0.05, "epochs": 20})


def test_hsm_ternary_and_other_trees_conform():
    check_method("hsm", params={"arity": 3, "decoder": "topk", "lr": 0.05, "epochs": 20})
    check_method("hsm", params={"tree": "kmeans", "lr": 0.05, "epochs": 20},
                 skip=("check_fit_predict_sparse",))  # k-means centres differ for the sparse copy


def _expected_length(tree, weights):
    return float(np.asarray(weights) @ tree.depths())


def _brute_force_optimum(weights):
    """Minimum expected code length over all binary merge orders (= all full binary trees)."""
    best = math.inf

    def search(items, cost):
        nonlocal best
        if len(items) == 1:
            best = min(best, cost)
            return
        for i, j in itertools.combinations(range(len(items)), 2):
            merged = items[i] + items[j]
            rest = [w for t, w in enumerate(items) if t not in (i, j)]
            search(rest + [merged], cost + merged)

    search(list(weights), 0.0)
    return best


@given(st.lists(st.integers(0, 50), min_size=2, max_size=6))
@settings(max_examples=40, deadline=None)
def test_huffman_matches_brute_force_optimum(counts):
    weights = np.asarray(counts, dtype=float) + 1  # the +1 smoothing huffman_tree applies
    tree = huffman_tree(counts)
    assert _expected_length(tree, weights) == pytest.approx(_brute_force_optimum(weights))


@pytest.mark.parametrize("arity", [2, 3, 4])
def test_huffman_expected_depth_within_one_of_entropy(arity):
    rng = np.random.default_rng(arity)
    counts = rng.zipf(1.3, size=3000).clip(max=10**6)
    tree = huffman_tree(counts, arity)
    p = (counts + 1) / (counts + 1).sum()
    entropy = -(p * np.log(p)).sum() / np.log(arity)
    depth = float(p @ tree.depths())
    assert entropy - 1e-9 <= depth < entropy + 1
    assert sorted(-tree.children[tree.children < 0] - 1) == list(range(3000))


def test_other_trees_cover_every_class_once():
    for tree in (balanced_tree(37, 3), kmeans_tree(np.random.default_rng(0).normal(size=(37, 4)))):
        leaves = sorted(-tree.children[tree.children < 0] - 1)
        assert leaves == list(range(37))


def _random_model(seed, n_classes, arity, n_features=5, tree="huffman"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3 * n_classes, n_features))
    y = rng.integers(0, n_classes, size=len(X))
    m = HierarchicalSoftmax(tree=tree, arity=arity, epochs=0, random_state=seed)
    m.fit(X, y, n_classes=n_classes)
    m.weights_ = rng.normal(scale=2.0, size=m.weights_.shape)
    m.intercept_ = rng.normal(size=m.intercept_.shape)
    return m, rng.normal(size=(20, n_features))


@given(seed=st.integers(0, 10**6), n_classes=st.integers(2, 60), arity=st.integers(2, 4),
       k=st.integers(1, 8))
@settings(max_examples=40, deadline=None)
def test_topk_decoder_equals_exact(seed, n_classes, arity, k):
    m, X = _random_model(seed, n_classes, arity)
    exact = m.set_params(decoder="exact").predict_topk(X, k)
    best_first = m.set_params(decoder="topk").predict_topk(X, k)
    np.testing.assert_array_equal(best_first[0], exact[0])
    np.testing.assert_allclose(best_first[1], exact[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("arity,tree", [(2, "huffman"), (3, "huffman"), (2, "balanced")])
def test_probabilities_sum_to_one(arity, tree):
    m, X = _random_model(1, 23, arity, tree=tree)
    total = sum(np.exp(m.log_proba(X, np.full(len(X), c))) for c in range(23))
    np.testing.assert_allclose(total, 1.0, rtol=1e-10)
    labels, scores = m.set_params(decoder="exact").predict_topk(X, 3)
    np.testing.assert_allclose(scores[:, 0], m.log_proba(X, labels[:, 0]), rtol=1e-10)


def test_greedy_top1_is_the_greedy_descent():
    m, X = _random_model(3, 40, 2)
    labels, _ = m.set_params(decoder="greedy").predict_topk(X, 1)
    t = m.tree_
    coef = m.weights_.reshape(t.n_rows, -1)  # the direct layout
    for i, x in enumerate(X):
        node = 0
        while True:
            start = t.child_ptr[node]
            row = t.edge_row[start]
            p_first = 1 / (1 + math.exp(-(coef[row] @ x + m.intercept_[row])))
            child = t.children[start] if p_first >= 0.5 else t.children[start + 1]
            if child < 0:
                assert labels[i, 0] == -child - 1
                break
            node = child


def test_topk_evaluates_far_fewer_nodes_than_exact_when_peaked():
    ds = xcbench.load_dataset("synthetic-small")
    # Huffman trees group classes by frequency, so on Gaussian classes their node problems
    # are far from linearly separable; a k-means tree groups similar classes and learns well.
    errors = {}
    for tree in ("huffman", "kmeans"):
        m = xcbench.make_method("hsm", tree=tree, lr=0.01, momentum=0.0, epochs=20,
                                random_state=0)
        m.fit(ds.X_train, ds.y_train, n_classes=ds.n_classes)
        cost = m.set_params(decoder="topk").path_cost(ds.X_test)
        assert cost.mean() < 0.5 * m.tree_.n_nodes
        assert m.loss_curve_[-1] < m.loss_curve_[0]
        errors[tree] = float((m.predict(ds.X_test) != ds.y_test).mean())
    assert errors["kmeans"] < 0.1 < errors["huffman"]  # Bayes error is ~1%
