"""Defaults by rule of the flat baselines (plugins/xcbench_linear/defaults.py)."""
import numpy as np
import scipy.sparse as sp

from xcbench_linear import OneVsAll, Softmax
from xcbench_linear.defaults import DataShape, resolve_flat

AUTO = {"max_iter": "auto", "solver": "auto"}
AUTO_C = {**AUTO, "C": "auto"}


def test_iterations_are_cut_to_20_only_on_the_largest_problems():
    letter = DataShape(16_000, 16_000 * 16, 26)
    ptb = DataShape(572_902, 572_902 * 150, 6_719)  # 5.8e11 values x classes per iteration
    assert resolve_flat(AUTO, letter, 100) == {"max_iter": 100, "solver": "lbfgs"}
    assert resolve_flat(AUTO, letter, 200)["max_iter"] == 200
    assert resolve_flat(AUTO, ptb, 100) == {"max_iter": 20, "solver": "chunked-lbfgs"}
    assert resolve_flat({"max_iter": 7, "solver": "lbfgs"}, ptb, 100) == {}


def test_C_is_weak_only_when_there_are_more_rows_than_weights():
    """aloi27d-438: 43,642 rows, 27 x 438 weights: C = 1000; synthetic-sparse-1k: 10,000
    rows, 8,880 x 1,000 weights: C = 1; letter 16,000 rows, 16 x 26 weights: 1000."""
    assert resolve_flat(AUTO_C, DataShape(43_642, 43_642 * 27, 438, 27), 100)["C"] == 1000.0
    assert resolve_flat(AUTO_C, DataShape(10_000, 160_000, 1_000, 8_880), 100)["C"] == 1.0
    assert resolve_flat(AUTO_C, DataShape(16_000, 256_000, 26, 16), 100)["C"] == 1000.0
    assert resolve_flat({**AUTO, "C": 2.5}, DataShape(16_000, 256_000, 26, 16), 100) == \
        {"max_iter": 100, "solver": "lbfgs"}


def test_softmax_solver_switches_on_the_n_by_k_matrix_size():
    fits = DataShape(100_000, 10**6, 2_000)  # 1.6 GB of doubles
    too_big = DataShape(200_000, 10**6, 2_000)  # 3.2 GB
    assert resolve_flat(AUTO, fits, 100)["solver"] == "lbfgs"
    assert resolve_flat(AUTO, too_big, 100)["solver"] == "chunked-lbfgs"


def test_fitted_models_expose_every_resolved_auto_parameter():
    rng = np.random.default_rng(0)
    y = np.arange(120) % 4
    X = rng.normal(size=(120, 5)) + np.eye(4, 5)[y] * 3
    soft = Softmax().fit(X, y)  # 120 rows, 5 x 4 weights
    assert soft.resolved_params_ == {"C": 1000.0, "max_iter": 100, "solver": "lbfgs"}
    ova = OneVsAll().fit(sp.csr_matrix(X), y)
    assert ova.resolved_params_ == {"C": 1000.0, "max_iter": 200}
    assert OneVsAll().fit(X[:10], y[:10]).resolved_params_["C"] == 1.0  # 10 rows, 20 weights
    assert Softmax(C=1.0, max_iter=3, solver="lbfgs").fit(X, y).resolved_params_ == {}
