"""Defaults by rule of the flat baselines (plugins/xcbench_linear/defaults.py)."""
import numpy as np
import pytest
import scipy.sparse as sp

from xcbench_linear import OneVsAll, Softmax
from xcbench_linear.defaults import (C_MAX, C_MIN, CHUNKED_MAX_ITER, DEFAULT_C, TARGET,
                                     DataShape, resolve_C, resolve_flat, row_spread)

AUTO = {"max_iter": "auto", "solver": "auto"}
AUTO_C = {**AUTO, "C": "auto"}


def test_max_iter_is_a_safety_cap_of_the_resolved_solver():
    letter = DataShape(16_000, 16_000 * 16, 26)
    ptb = DataShape(572_902, 572_902 * 150, 6_719)  # 5.8e11 values x classes per iteration
    assert resolve_flat(AUTO, letter, 100) == {"max_iter": 100, "solver": "lbfgs"}
    assert resolve_flat({"max_iter": "auto", "solver": "lbfgs"}, letter, 200) == {
        "max_iter": 200}
    assert resolve_flat(AUTO, ptb, 100) == {"max_iter": CHUNKED_MAX_ITER,
                                            "solver": "chunked-lbfgs"}
    assert resolve_flat({"max_iter": "auto", "solver": "joint-lbfgs"}, letter, 200) == {
        "max_iter": CHUNKED_MAX_ITER}
    assert resolve_flat({"max_iter": 7, "solver": "lbfgs"}, ptb, 100) == {}


# The measured shapes of docs/methods/flat.md: (N, K seen, D, spread = E ||x - mean row||^2)
LETTER = DataShape(16_000, 16_000 * 16, 26, 16, 85.62)
LEAVES100 = DataShape(1_200, 1_200 * 192, 100, 192, 0.08398)
ALOI27D_438 = DataShape(43_642, 43_642 * 27, 438, 27, 0.01067)
SPARSE_1K = DataShape(10_000, 160_000, 1_000, 8_880, 15.84)
SYNTHETIC = DataShape(30_000, 30_000 * 128, 1_000, 128, 138.0)


def test_C_follows_rows_per_class_times_spread_on_the_measured_datasets():
    """C ~ 40 D K / (N spread), to the nearest power of ten, at least 0.1: within the
    measured grid's tolerance on each (docs/methods/flat.md)."""
    got = {name: resolve_flat(AUTO_C, shape, 100)["C"] for name, shape in [
        ("letter", LETTER), ("leaves100", LEAVES100), ("aloi27d-438", ALOI27D_438),
        ("synthetic-sparse-1k", SPARSE_1K), ("synthetic", SYNTHETIC)]}
    assert got == {"letter": 0.1, "leaves100": 10000.0, "aloi27d-438": 1000.0,
                   "synthetic-sparse-1k": 1000.0, "synthetic": 1.0}


def test_C_rule_reads_scale_not_units_offset_or_duplicates():
    """x -> 10 x needs weights / 10: C / 100; x -> x + 5 is absorbed by the intercepts; every
    row twice is the same objective at C / 2 (before rounding to a power of ten)."""
    rng = np.random.default_rng(0)
    y = np.arange(300) % 6
    X = rng.normal(size=(300, 8)) * 0.3 + np.eye(6, 8)[y]
    C = resolve_C("auto", DataShape.of(X, 6))
    assert resolve_C("auto", DataShape.of(10 * X, 6)) == pytest.approx(C / 100)
    assert resolve_C("auto", DataShape.of(X + 5, 6)) == C
    assert resolve_C("auto", DataShape.of(sp.csr_matrix(X), 6)) == C
    raw = TARGET * 8 * 6 / (300 * row_spread(X))
    assert C == pytest.approx(10.0 ** round(np.log10(raw)))
    doubled = np.vstack([X, X])
    assert row_spread(doubled) == pytest.approx(row_spread(X))


def test_row_spread_is_the_trace_of_the_covariance_for_dense_and_sparse_rows():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 5)) * [1, 2, 3, 0.1, 0] + 7
    assert row_spread(X) == pytest.approx(X.var(axis=0).sum(), rel=1e-9)
    assert row_spread(X.astype(np.float32)) == pytest.approx(X.var(axis=0).sum(), rel=1e-5)
    S = sp.random(300, 40, density=0.05, format="csr", random_state=2)
    assert row_spread(S) == pytest.approx(S.toarray().var(axis=0).sum(), rel=1e-9)


def test_C_is_clipped_and_falls_back_without_a_spread():
    assert resolve_C("auto", DataShape(100, 100, 2, 1, 0.0)) == C_MAX  # rows all equal
    assert resolve_C("auto", DataShape(10, 10, 500, 1, 1e-9)) == C_MAX
    assert resolve_C("auto", DataShape(10**6, 10**6, 2, 1, 1e6)) == C_MIN
    assert resolve_C("auto", DataShape(16_000, 256_000, 26, 16)) == DEFAULT_C  # sizes only
    assert resolve_flat({**AUTO, "C": 2.5}, LETTER, 100) == {"max_iter": 100, "solver": "lbfgs"}


def test_softmax_solver_switches_on_the_n_by_k_matrix_size():
    fits = DataShape(100_000, 10**6, 2_000)  # 1.6 GB of doubles
    too_big = DataShape(200_000, 10**6, 2_000)  # 3.2 GB
    assert resolve_flat(AUTO, fits, 100)["solver"] == "lbfgs"
    assert resolve_flat(AUTO, too_big, 100)["solver"] == "chunked-lbfgs"


def test_fitted_models_expose_every_resolved_auto_parameter():
    rng = np.random.default_rng(0)
    y = np.arange(120) % 4
    X = rng.normal(size=(120, 5)) + np.eye(4, 5)[y] * 3
    C = resolve_C("auto", DataShape.of(X, 4))  # 40 * 5 * 4 / (120 * 11.8): 1
    soft = Softmax().fit(X, y)  # 120 rows, 5 x 4 weights
    assert soft.resolved_params_ == {"C": C, "max_iter": 100, "solver": "lbfgs",
                                     "temperature": 1.0} and C == 1.0  # too few rows to hold out
    ova = OneVsAll().fit(sp.csr_matrix(X), y)
    assert ova.resolved_params_ == {"C": C, "max_iter": CHUNKED_MAX_ITER}
    assert OneVsAll().fit(0.01 * X, y).resolved_params_["C"] == C_MAX  # C x 10^4, clipped
    assert Softmax(C=1.0, max_iter=3, solver="lbfgs", temperature=1.0).fit(
        X, y).resolved_params_ == {}


def test_default_models_do_not_depend_on_the_units_of_x():
    """x / 10 resolves C x 100, the same objective in other units: the same predictions
    (the old rule kept C and regularised the shrunk rows 100 times harder)."""
    rng = np.random.default_rng(3)
    y = np.arange(400) % 8
    X = rng.normal(size=(400, 6)) + np.eye(8, 6)[y] * 1.5
    for make in (Softmax, OneVsAll):
        big, small = make().fit(X, y), make().fit(X / 10, y)
        assert small.resolved_params_["C"] == 100 * big.resolved_params_["C"]
        same = big.predict_topk(X)[0][:, 0] == small.predict_topk(X / 10)[0][:, 0]
        assert same.mean() > 0.99
        fixed = make(C=big.resolved_params_["C"]).fit(X / 10, y).predict_topk(X / 10)[0]
        assert (fixed[:, 0] == y).mean() < (small.predict_topk(X / 10)[0][:, 0] == y).mean()
