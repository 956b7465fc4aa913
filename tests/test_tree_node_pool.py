"""xcbench.tree.node_pool: node problems solved in worker processes give the same model as
one after another, and ``n_jobs="auto"`` follows the fit's thread limit."""
import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from xcbench import make_method
from xcbench.tree import node_pool


def _sparse_problem():
    """Sparse binary rows of 40 classes, each class a few fixed features plus noise."""
    rng = np.random.default_rng(0)
    centers = sp.random(40, 400, density=0.03, random_state=1, format="csr")
    y = rng.integers(0, 40, 2500)
    X = (centers[y] + sp.random(2500, 400, density=0.01, random_state=2)).tocsr()
    X.data[:] = 1.0
    return X[:2000], y[:2000], X[2000:]


def _store(method):
    """The fitted weights and biases as arrays, whatever the method's layout."""
    if hasattr(method, "weights_"):  # hsm
        weights = method.weights_
        return [*(weights if isinstance(weights, tuple) else (weights,)), method.intercept_]
    return [*[a for m in method.trees_ for a in m.table], *[m.bias for m in method.trees_]]


@pytest.mark.parametrize("name, params", [
    ("label_tree", {"branching": 8, "n_trees": 2}),  # one-vs-rest hinge nodes, an ensemble
    ("hsm", {"solver": "liblinear", "bits": "csr", "arity": 4}),
])
def test_workers_give_the_same_model_as_one_process(name, params):
    """The weights, biases and predictions are the same bits with 1 and 2 workers (a
    fixed seed): LIBLINEAR's random coordinate order is drawn per node fit, in the worker."""
    X, y, Xt = _sparse_problem()
    fits = [make_method(name, random_state=3, n_jobs=jobs, **params).fit(X, y, n_classes=40)
            for jobs in (1, 2)]
    for a, b in zip(_store(fits[0]), _store(fits[1])):
        assert np.array_equal(a, b)
    la, sa = fits[0].predict_topk(Xt, 3)
    lb, sb = fits[1].predict_topk(Xt, 3)
    assert np.array_equal(la, lb) and np.array_equal(sa, sb)


def test_auto_jobs_follow_the_thread_limit_and_stay_home_on_small_data():
    big = node_pool.PARALLEL_MIN_VALUES
    with threadpool_limits(limits=1):
        assert node_pool.thread_budget() == 1
        assert node_pool.resolve_jobs("auto", big) == 1
    with threadpool_limits(limits=2):
        assert node_pool.resolve_jobs("auto", big) == min(2, node_pool.thread_budget())
        assert node_pool.resolve_jobs("auto", big - 1) == 1
    assert node_pool.resolve_jobs(3, 10) == 3


def test_solve_all_keeps_task_order():
    tasks = list(range(12))
    assert list(node_pool.solve_all(abs, iter(tasks), 2)) == tasks
    assert list(node_pool.solve_all(abs, iter(tasks), 1)) == tasks
