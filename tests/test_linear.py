"""The flat baselines (plugin xcbench_linear) beyond the conformance checks."""
import numpy as np
from scipy.special import log_expit
from sklearn.linear_model import LogisticRegression

import xcbench
from xcbench.data.synthetic import make_hierarchical
from xcbench_linear.chunked_lbfgs import fit_chunked_lbfgs


def _objective(X, y, c, w, b, C):
    s = np.where(y == c, 1.0, -1.0)
    return 0.5 * w @ w - C * log_expit(s * (X @ w + b)).sum()


def test_joint_ova_reaches_the_per_class_optimum():
    ds = make_hierarchical(n_classes=8, n_features=6, n_train=600, n_test=10, levels=2,
                           bayes_samples=100)
    X, y = ds.X_train, ds.y_train
    W, b, _ = fit_chunked_lbfgs(X, y, 8, "ova", C=1.0, tol=1e-9, max_iter=3000)
    for c in range(8):
        ref = LogisticRegression(C=1.0, tol=1e-10, max_iter=5000).fit(X, (y == c).astype(int))
        ours = _objective(X, y, c, W[:, c], b[c], 1.0)
        theirs = _objective(X, y, c, ref.coef_[0], ref.intercept_[0], 1.0)
        assert ours <= theirs * (1 + 1e-5) + 1e-6


def test_ova_sklearn_solver_matches_joint_predictions():
    ds = make_hierarchical(n_classes=6, n_features=5, n_train=400, n_test=200, levels=2,
                           bayes_samples=100)
    joint = xcbench.make_method("ova", tol=1e-8, max_iter=2000).fit(ds.X_train, ds.y_train)
    per_class = xcbench.make_method("ova", solver="lbfgs", tol=1e-10, max_iter=5000).fit(
        ds.X_train, ds.y_train)
    assert (joint.predict(ds.X_test) == per_class.predict(ds.X_test)).mean() > 0.99
    np.testing.assert_allclose(joint.log_proba(ds.X_test, ds.y_test),
                               per_class.log_proba(ds.X_test, ds.y_test), atol=1e-3)


def test_flat_methods_learn_the_synthetic_problem():
    ds = xcbench.load_dataset("synthetic-small")
    for name in ("ova", "softmax"):
        m = xcbench.make_method(name).fit(ds.X_train, ds.y_train, n_classes=ds.n_classes)
        error = float((m.predict(ds.X_test) != ds.y_test).mean())
        assert error < ds.info["bayes_error"] + 0.08, (name, error)


def test_chunked_softmax_matches_scikit_learn():
    from scipy.special import logsumexp

    ds = make_hierarchical(n_classes=7, n_features=5, n_train=500, n_test=100, levels=2,
                           bayes_samples=100)
    X, y = ds.X_train, ds.y_train

    def objective(W, b, C=0.5):
        Z = X @ W.T + b
        return 0.5 * (W ** 2).sum() + C * (logsumexp(Z, axis=1) - Z[np.arange(len(y)), y]).sum()

    W, b, _ = fit_chunked_lbfgs(X, y, 7, "softmax", C=0.5, tol=1e-10, max_iter=5000)
    ref = LogisticRegression(C=0.5, tol=1e-10, max_iter=5000).fit(X, y)
    assert objective(W.T, b) <= objective(ref.coef_, ref.intercept_) * (1 + 1e-6) + 1e-6
    chunked = xcbench.make_method("softmax", solver="chunked-lbfgs", tol=1e-10, max_iter=5000,
                                  C=0.5).fit(X, y)
    np.testing.assert_allclose(chunked.log_proba(ds.X_test, ds.y_test),
                               ref.predict_log_proba(ds.X_test)[np.arange(100), ds.y_test],
                               atol=1e-3)
