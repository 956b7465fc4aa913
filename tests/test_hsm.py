"""Hierarchical softmax (plugin xcbench_hsm): trees, decoders, probabilities."""
import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import xcbench
from xcbench.testing import check_method
from xcbench_hsm import HierarchicalSoftmax
from xcbench_hsm.memory import weight_layout
from xcbench_hsm.model import DECODERS
from xcbench_hsm.tree import balanced_tree, huffman_tree, kmeans_tree


@pytest.mark.parametrize("decoder", ["exact", "greedy", "topk"])
def test_hsm_conforms(decoder):
    check_method("hsm", params={"decoder": decoder, "solver": "sgd", "lr": 0.05, "epochs": 20})


def test_hsm_ternary_and_other_trees_conform():
    check_method("hsm", params={"arity": 3, "decoder": "topk", "solver": "sgd", "lr": 0.05,
                                "epochs": 20})
    check_method("hsm", params={"tree": "kmeans", "solver": "sgd", "lr": 0.05, "epochs": 20},
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
    means = np.random.default_rng(0).normal(size=(37, 4))
    for tree in (balanced_tree(37, 3), kmeans_tree(means), kmeans_tree(sp.csr_matrix(means))):
        leaves = sorted(-tree.children[tree.children < 0] - 1)
        assert leaves == list(range(37))


def _random_model(seed, n_classes, arity, n_features=5, tree="huffman"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3 * n_classes, n_features))
    y = rng.integers(0, n_classes, size=len(X))
    m = HierarchicalSoftmax(tree=tree, arity=arity, solver="sgd", epochs=0,
                            random_state=seed)
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
        m = xcbench.make_method("hsm", tree=tree, solver="sgd", max_leaf=1, lr=0.01, epochs=20,
                                random_state=0)
        m.fit(ds.X_train, ds.y_train, n_classes=ds.n_classes)
        cost = m.set_params(decoder="topk").path_cost(ds.X_test)
        assert cost.mean() < 0.5 * m.tree_.n_nodes
        assert m.loss_curve_[-1] < m.loss_curve_[0]
        errors[tree] = float((m.predict(ds.X_test) != ds.y_test).mean())
    assert errors["kmeans"] < 0.1 < errors["huffman"]  # Bayes error is ~1%


# ----- scalable storage, pure predict, path cost, memory, bad input (issues 10 and 11)

def _sparse_problem(n=300, n_classes=20, n_features=500, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, size=n)
    X = sp.random(n, n_features, density=0.02, random_state=seed, format="csr")
    X = (X + sp.csr_matrix((np.ones(n), (np.arange(n), y)), shape=(n, n_features))).tocsr()
    return X, y


@pytest.mark.parametrize("bits", [None, 16])
def test_csr_and_dense_inputs_give_the_same_model_and_predictions(bits):
    X, y = _sparse_problem()
    a = HierarchicalSoftmax(bits=bits, solver="sgd", lr=0.1, epochs=2, random_state=0).fit(X, y)
    b = HierarchicalSoftmax(bits=bits, solver="sgd", lr=0.1, epochs=2, random_state=0).fit(
        X.toarray(), y)
    assert a.stats()["weight_layout"] == ("direct" if bits is None else "hashed")
    np.testing.assert_allclose(a.weights_, b.weights_, atol=1e-12)
    for decoder in DECODERS:
        for m in (a, b):
            m.set_params(decoder=decoder)
        sparse_out, dense_out = a.predict_topk(X[:50], 3), a.predict_topk(X[:50].toarray(), 3)
        np.testing.assert_array_equal(sparse_out[0], dense_out[0])
        np.testing.assert_allclose(sparse_out[1], dense_out[1], rtol=1e-10)
        np.testing.assert_array_equal(b.predict_topk(X[:50], 3)[0], sparse_out[0])
    np.testing.assert_allclose(a.log_proba(X, y), a.log_proba(X.toarray(), y), rtol=1e-10)


def test_hashed_exact_decoder_equals_best_first_search():
    X, y = _sparse_problem(seed=1)
    m = HierarchicalSoftmax(bits=16, solver="sgd", lr=0.1, epochs=2, random_state=0).fit(X, y)
    exact = m.set_params(decoder="exact").predict_topk(X[:40], 4)
    best_first = m.set_params(decoder="topk").predict_topk(X[:40], 4)
    np.testing.assert_array_equal(exact[0], best_first[0])
    np.testing.assert_allclose(exact[1], best_first[1], rtol=1e-10)


def _state(m):
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(m).items()}


def test_predict_and_path_cost_leave_the_model_unchanged():
    """Predict is pure: before, hsm stored the last call's node count (so stats() reported
    the last single-row prediction, not the mean)."""
    X, y = _sparse_problem()
    m = HierarchicalSoftmax(solver="sgd", lr=0.1, epochs=2, random_state=0).fit(X, y)
    before, stats = _state(m), m.stats()
    for decoder in DECODERS:
        m.set_params(decoder=decoder)
        m.predict_topk(X[:30], 3)
        m.predict_topk(X[:1], 1)
        m.path_cost(X[:30])
        m.log_proba(X[:30], y[:30])
    m.set_params(decoder=before["decoder"])
    after = _state(m)
    assert after.keys() == before.keys()
    for key, value in before.items():
        assert np.array_equal(after[key], value) if isinstance(value, np.ndarray) \
            else after[key] == value, key
    assert m.stats() == stats


def test_path_cost_per_decoder():
    X, y = _sparse_problem()
    m = HierarchicalSoftmax(solver="sgd", lr=0.1, epochs=3, random_state=0).fit(X, y)
    depths = np.diff(m.path_ptr_)
    exact = m.set_params(decoder="exact").path_cost(X[:40])
    np.testing.assert_array_equal(exact, np.full(40, m.n_classes_ - 1.0))
    greedy = m.set_params(decoder="greedy").path_cost(X[:40])
    top1 = m.predict(X[:40])
    np.testing.assert_array_equal(greedy, depths[top1])  # binary: one row per node passed
    topk = m.set_params(decoder="topk").path_cost(X[:40])
    assert topk.dtype == np.float64 and np.all(topk >= depths[m.predict(X[:40])])
    assert np.all(m.path_cost(X[:40], k=5) >= topk)


def test_invalid_hyperparameters_are_refused_before_fitting():
    from sklearn.utils._param_validation import InvalidParameterError

    for bad in ({"epochs": -1}, {"lr": 0.0}, {"bits": 8}, {"momentum": 1.0},
                {"decoder": "fast"}, {"tree": "random"}, {"arity": 1}):
        m = HierarchicalSoftmax(**bad)
        with pytest.raises(InvalidParameterError):
            m._validate_params()
        with pytest.raises(ValueError):
            m.fit(np.eye(3), [0, 1, 2])


def test_huge_features_are_refused_not_turned_into_nan():
    """Issue 11: features x 1e200 gave NaN scores (the SGD step and w.x overflow)."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 4)), rng.integers(0, 5, size=60)
    with pytest.raises(ValueError, match="rescale"):
        HierarchicalSoftmax().fit(X * 1e200, y)
    m = HierarchicalSoftmax(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="rescale"):
        m.predict_topk(X * 1e200, 2)
    big = HierarchicalSoftmax(random_state=0).fit(X * 1e30, y)  # within the bound: finite
    for decoder in DECODERS:
        _, scores = big.set_params(decoder=decoder).predict_topk(X * 1e30, 3)
        assert np.isfinite(scores).all()
    assert np.isfinite(big.log_proba(X * 1e30, y)).all()


def test_diverging_training_raises_a_clear_error():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 4)) * 1e30, rng.integers(0, 5, size=200)
    with pytest.raises(ValueError, match="diverged"):
        HierarchicalSoftmax(solver="sgd", lr=1e300, epochs=3, random_state=0).fit(X, y)


def test_auto_layout_hashes_only_when_the_direct_table_is_big():
    sgd = HierarchicalSoftmax(solver="sgd")
    small = sgd.estimate_memory(45000, 27, 45000 * 27, 1000)
    assert small < 64 << 20
    size, mask = weight_layout(10**6, 848632, 16 * 10**6, 10**5, 2, "auto")
    assert mask == size - 1 and size <= 1 << 26
    assert sgd.estimate_memory(10**6, 848632, 16 * 10**6, 10**5) < 2 << 30
    with_momentum = HierarchicalSoftmax(solver="sgd", momentum=0.5).estimate_memory(
        10**6, 848632, 16 * 10**6, 10**5)
    assert with_momentum > 8 * size * 2


_MEMORY_PROBE = """
import json, sys, tracemalloc
import numpy as np, scipy.sparse as sp
from xcbench_hsm import HierarchicalSoftmax
OLD_DEFAULTS = dict(solver="sgd", tree="huffman", max_leaf=1, C=1.0, prune=0.0, lr=0.002)
out = []
for kind, n, d, k, params in json.loads(sys.argv[1]):
    rng = np.random.default_rng(0)
    y = rng.integers(0, k, size=n)
    if kind == "sparse":  # 16 random features per row (sp.random is slow at this density)
        X = sp.csr_matrix((np.ones(16 * n), rng.integers(0, d, size=16 * n),
                           np.arange(0, 16 * n + 1, 16)), shape=(n, d))
    else:
        X = rng.normal(size=(n, d))
    nnz = X.nnz if kind == "sparse" else X.size
    m = HierarchicalSoftmax(epochs=1, random_state=0, **{**OLD_DEFAULTS, **params})
    m.fit(X[:50], y[:50], n_classes=k)  # compile and warm up outside the measurement
    tracemalloc.start()
    m.fit(X, y, n_classes=k)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    out.append([peak, m.estimate_memory(n, d, nnz, k)])
print(json.dumps(out))
"""


def test_memory_estimate_bounds_the_measured_peak():
    cases = [("dense", 3000, 64, 500, {}), ("dense", 2000, 40, 300, {"momentum": 0.5}),
             ("sparse", 4000, 50000, 2000, {}), ("sparse", 4000, 50000, 2000, {"bits": 20}),
             ("sparse", 3000, 20000, 1000, {"bits": 21, "momentum": 0.9}),
             # hashed tables of the sizes bits="auto" took before it meant the exact store
             # for LIBLINEAR nodes (whose estimate is a loose upper bound, not tested here)
             ("sparse", 4000, 50000, 2000, {"solver": "liblinear", "bits": 22}),
             ("sparse", 20000, 50000, 2000, {"solver": "liblinear", "tree": "kmeans_balanced",
                                             "max_leaf": 50, "bits": 24}),
             ("sparse", 8000, 20000, 1000, {"solver": "liblinear", "tree": "kmeans_balanced",
                                            "max_leaf": 100, "bits": 20})]
    result = subprocess.run([sys.executable, "-c", _MEMORY_PROBE, json.dumps(cases)],
                            capture_output=True, text=True, env=_child_env(), timeout=900)
    assert result.returncode == 0, result.stderr
    for (peak, estimate), case in zip(json.loads(result.stdout), cases):
        assert peak <= estimate <= 2 * peak + (8 << 20), (case, peak, estimate)


def _child_env():
    import os

    root = Path(__file__).resolve().parents[1]
    path = os.pathsep.join([str(root), str(root / "plugins"), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
