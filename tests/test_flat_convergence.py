"""The flat baselines stop on convergence, at scikit-learn's optimum, and say how they stopped
(plugins/xcbench_linear/stopping.py, preconditioner.py, chunked_lbfgs.py)."""
import json

import numpy as np
import pytest
from scipy.special import log_expit, logsumexp
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from xcbench.data.synthetic import make_hierarchical
from xcbench_linear import OneVsAll, Softmax
from xcbench_linear.chunked_lbfgs import fit_chunked_lbfgs, make_objective
from xcbench_linear.preconditioner import EIGEN_FLOOR, Preconditioner

C = 0.5
STAT_KEYS = {"solver_iterations", "solver_converged", "solver_stopped_by", "solver_objective",
             "solver_gradient_max", "solver_relative_change", "solver_tol"}


@pytest.fixture(autouse=True)
def _single_thread():
    with threadpool_limits(1):
        yield


@pytest.fixture(scope="module")
def problem():
    """Skewed classes and badly scaled features: the case preconditioning is for."""
    ds = make_hierarchical(n_classes=7, n_features=5, n_train=600, n_test=10, levels=2,
                           bayes_samples=100)
    keep = np.nonzero((ds.y_train != 6) | (np.arange(600) % 5 == 0))[0]  # class 6 rare
    X = ds.X_train[keep] * np.array([1.0, 10.0, 0.3, 1.0, 3.0]) + 3.0
    return X, ds.y_train[keep]


def _softmax_objective(X, y, W, b):
    Z = X @ W + b
    return 0.5 * (W ** 2).sum() + C * (logsumexp(Z, axis=1) - Z[np.arange(len(y)), y]).sum()


def _ova_objective(X, y, W, b):
    s = np.where(y[:, None] == np.arange(W.shape[1]), 1.0, -1.0)
    return 0.5 * (W ** 2).sum() - C * log_expit(s * (X @ W + b)).sum()


def test_softmax_stops_converged_at_scikit_learns_optimum(problem):
    X, y = problem
    model = Softmax(C=C, solver="chunked-lbfgs", tol=1e-9, temperature=1.0).fit(X, y)
    stats = model.stats()
    assert stats["solver_converged"] and stats["solver_stopped_by"] in ("gradient", "objective")
    assert stats["solver_iterations"] < model.resolved_params_["max_iter"]
    ref = LogisticRegression(C=C, tol=1e-12, max_iter=100_000).fit(X, y)
    ours = _softmax_objective(X, y, model.weights_, model.intercept_)
    theirs = _softmax_objective(X, y, ref.coef_.T, ref.intercept_)
    assert ours <= theirs * (1 + 1e-7)
    # the softmax weights are defined up to a shift shared by the classes: compare centred
    np.testing.assert_allclose(model.weights_ - model.weights_.mean(axis=1, keepdims=True),
                               ref.coef_.T - ref.coef_.T.mean(axis=1, keepdims=True),
                               atol=1e-3 * np.abs(ref.coef_).max())


def test_ova_stops_converged_at_scikit_learns_per_class_optimum(problem):
    X, y = problem
    model = OneVsAll(C=C, tol=1e-9).fit(X, y)
    stats = model.stats()
    assert stats["solver_converged"] and stats["solver_stopped_by"] in ("gradient", "objective")
    ref = [LogisticRegression(C=C, tol=1e-12, max_iter=100_000).fit(X, (y == c).astype(int))
           for c in range(7)]
    W_ref = np.stack([r.coef_[0] for r in ref], axis=1)
    b_ref = np.array([r.intercept_[0] for r in ref])
    assert _ova_objective(X, y, model.weights_, model.intercept_) <= \
        _ova_objective(X, y, W_ref, b_ref) * (1 + 1e-7)
    np.testing.assert_allclose(model.weights_, W_ref, atol=1e-3 * np.abs(W_ref).max())


def test_the_safety_caps_are_recorded_as_not_converged(problem):
    X, y = problem
    stats = Softmax(C=C, solver="chunked-lbfgs", max_iter=3, temperature=1.0).fit(X, y).stats()
    assert (stats["solver_iterations"], stats["solver_converged"],
            stats["solver_stopped_by"]) == (3, False, "max_iter")
    stats = OneVsAll(C=C, max_iter=3).fit(X, y).stats()
    assert (stats["solver_converged"], stats["solver_stopped_by"]) == (False, "max_iter")
    stats = OneVsAll(C=C, tol=0.0, max_seconds=1e-9).fit(X, y).stats()  # after 1 iteration
    assert (stats["solver_iterations"], stats["solver_converged"],
            stats["solver_stopped_by"]) == (1, False, "max_seconds")


@pytest.mark.parametrize("make", [
    lambda: Softmax(C=C, temperature=1.0), lambda: Softmax(C=C, solver="chunked-lbfgs"),
    lambda: OneVsAll(C=C), lambda: OneVsAll(C=C, solver="liblinear"),
    lambda: Softmax(C=C, solver="lbfgs", max_iter=2, temperature=1.0),
], ids=["softmax-lbfgs", "softmax-chunked", "ova-joint", "ova-liblinear", "lbfgs-capped"])
def test_every_solver_reports_how_it_stopped_in_stats(make):
    ds = make_hierarchical(n_classes=7, n_features=5, n_train=300, n_test=10, levels=2,
                           bayes_samples=100)
    X, y = ds.X_train, ds.y_train
    model = make().fit(X, y)
    stats = model.stats()
    assert STAT_KEYS <= set(stats)
    json.dumps(stats, allow_nan=False)  # a record field: plain numbers, strings, bools, no NaN
    capped = model.resolved_params_.get("max_iter", model.max_iter) == 2
    assert stats["solver_converged"] is (not capped)
    # the gradient reported is the objective's at the fitted weights, in chunked_lbfgs' scale
    objective = make_objective(X, model._index_of[y], 7, "ova" if model._sigmoid else "softmax",
                               model._param("C"))
    value, grad = objective(np.concatenate([model.weights_.ravel(), model.intercept_]))
    assert stats["solver_objective"] == pytest.approx(value, rel=1e-6)
    if not capped and make().__class__ is not OneVsAll or model.solver == "joint-lbfgs":
        assert stats["solver_gradient_max"] == pytest.approx(np.abs(grad).max(), rel=1e-3,
                                                             abs=1e-9)


def test_preconditioning_reaches_the_same_optimum_in_fewer_iterations(problem):
    X, y = problem
    fits = {pre: fit_chunked_lbfgs(X, y, 7, "softmax", C=C, tol=1e-9, precondition=pre)
            for pre in (True, False)}
    (W1, b1, r1), (W0, b0, r0) = fits[True], fits[False]
    assert r1.converged  # without: 1,000 iterations (the cap) and not converged, measured
    assert _softmax_objective(X, y, W1, b1) <= _softmax_objective(X, y, W0, b0) * (1 + 1e-7)
    assert r1.iterations < 0.5 * r0.iterations, (r1.iterations, r0.iterations)


@pytest.mark.parametrize("dense", [True, False])
def test_the_change_of_variables_round_trips(problem, dense):
    import scipy.sparse as sp
    X, y = problem
    Xs = X if dense else sp.csr_matrix(X)
    pre = Preconditioner.of(Xs, y, 7)
    rng = np.random.default_rng(0)
    W, b = rng.normal(size=(5, 7)), rng.normal(size=7)
    V, c = pre.variables(W, b)
    out = np.empty((5, 7))
    np.testing.assert_allclose(pre.weights(V, c, out), b, atol=1e-10)
    np.testing.assert_allclose(out, W, atol=1e-10)
    cov = np.cov(X, rowvar=False, bias=True)  # A = (Cov + delta I)^(-1/2): A^-2 is that
    delta = EIGEN_FLOOR * np.trace(cov) / 5
    np.testing.assert_allclose(np.linalg.inv(pre.A @ pre.A), cov + delta * np.eye(5),
                               rtol=1e-8, atol=1e-8 * np.abs(cov).max())


def test_each_iteration_is_reported_as_progress(problem):
    from xcbench.fit_progress import progress_listener
    X, y = problem
    seen = []
    with progress_listener(lambda step, total, what: seen.append((step, total, what))):
        model = OneVsAll(C=C, max_iter=40).fit(X, y)
    n = model.stats()["solver_iterations"]
    assert seen == [(i, 40, "L-BFGS iteration") for i in range(1, n + 1)]
