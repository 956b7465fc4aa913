"""What both online trees (lomtree, recall_tree) owe the extreme-scale rules: the same model
from CSR and dense input, a pure predict, refused bad hyperparameters, a memory estimate
that bounds the measured peak (the K = 1e4 memory cap is tests/test_tree_memory_cap.py)."""
import pickle
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

import xcbench
from xcbench.tree.passes import AUTO_MAX_PASSES, PATIENCE

METHODS = {"lomtree": {"passes": 2}, "recall_tree": {"passes": 2}}
CASES = [("lomtree", {"passes": 2}), ("lomtree", {"passes": 2, "update": "vw"}),
         ("recall_tree", {"passes": 2}), ("recall_tree", {"passes": 2, "update": "adagrad"})]


@pytest.mark.parametrize("name", ["lomtree", "recall_tree"])
def test_auto_passes_stop_on_the_holdout_error(name):
    X, y = _sparse_problem(600, 20, 300)
    m = xcbench.make_method(name, random_state=0, passes="auto").fit(X, y, n_classes=20)
    # the holdout regime ran (it needs PATIENCE + 1 passes before it can stop) and stopped on
    # the held-out error, before the pass cap
    assert PATIENCE + 1 <= m.passes_done_ < AUTO_MAX_PASSES
    assert float((m.predict(X) != y).mean()) < 0.5


def _sparse_problem(n, n_classes, n_features, seed=0):
    """Labels with a few class-specific features plus random noise features (16 per row)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    cols = np.column_stack([(y * 7 + j) % n_features for j in range(4)]
                           + [rng.integers(0, n_features, n) for _ in range(12)])
    X = sp.csr_matrix((np.ones(cols.size), cols.ravel(), np.arange(0, cols.size + 1, 16)),
                      shape=(n, n_features))
    X.sum_duplicates()
    X.data[:] = 1.0
    return X, y


@pytest.mark.parametrize("name, params", CASES)
def test_csr_and_dense_inputs_fit_the_same_model(name, params):
    X, y = _sparse_problem(600, 20, 300)
    fits = [xcbench.make_method(name, random_state=3, **params).fit(A, y, n_classes=20)
            for A in (X, X.toarray())]
    for A in (X[:200], X[:200].toarray()):
        a, b = (m.predict_topk(A, 3) for m in fits)
        assert np.array_equal(a[0], b[0]) and np.allclose(a[1], b[1])


@pytest.mark.parametrize("name", METHODS)
def test_predict_and_path_cost_are_pure(name):
    ds = xcbench.load_dataset("synthetic-small")
    m = xcbench.make_method(name, random_state=0, passes=1).fit(ds.X_train, ds.y_train)
    before = pickle.dumps(m)
    m.predict_topk(ds.X_test, 3)
    cost = m.path_cost(ds.X_test)
    assert pickle.dumps(m) == before  # nothing about the last prediction is stored
    assert cost.shape == (len(ds.y_test),) and cost.dtype == np.float64 and cost.min() >= 1
    assert "nodes_per_prediction" not in m.stats()


@pytest.mark.parametrize("name, bad", [("lomtree", {"passes": 0}),
                                       ("lomtree", {"bits": 12}),
                                       ("lomtree", {"loss": "hinge"}),
                                       ("recall_tree", {"max_candidates": -3}),
                                       ("recall_tree", {"bits": "big"})])
def test_bad_hyperparameters_are_refused_before_fitting(name, bad):
    m = xcbench.make_method(name, **bad)
    with pytest.raises(ValueError, match=next(iter(bad))):
        m._validate_params()
    with pytest.raises(ValueError):
        m.estimate_memory(100, 10, 500, 5)


@pytest.mark.parametrize("name, params", CASES)
@pytest.mark.parametrize("shape", [(3000, 200, 5000, "sparse"), (2000, 26, 16, "dense"),
                                   (4000, 2000, 60000, "sparse")])
def test_memory_estimate_bounds_the_measured_peak(name, params, shape):
    n, k, d, kind = shape
    X, y = _sparse_problem(n, k, d)
    if kind == "dense":
        X = X.toarray()
    nnz = X.nnz if kind == "sparse" else X.size
    m = xcbench.make_method(name, random_state=0, **params)
    m.fit(X, y, n_classes=k)  # every compiled path loaded before measuring
    tracemalloc.start()
    m.fit(X, y, n_classes=k)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    estimate = m.estimate_memory(n, d, nnz, k)
    assert peak <= estimate <= 6 * peak + (8 << 20), (peak, estimate)
