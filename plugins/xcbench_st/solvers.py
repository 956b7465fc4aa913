"""Convex node problems of TAO: l1-regularised multinomial logistic regression (leaves) and
l1-regularised weighted binary logistic regression (decision nodes).

Both minimise  sum_n s_n * loss_n(W x_n + b) + alpha * ||W||_1  (intercepts unpenalised) with
scipy's L-BFGS-B on the standard split W = P - M, P, M >= 0, which turns the l1 term into a
linear one under bound constraints: the solution has exact zeros (active bounds). The data
term's value and gradient are two BLAS products per evaluation, so a k-class leaf costs
O(n k D) per evaluation in float32 BLAS. Why not scikit-learn's SAGA (the paper's choice):
measured on PTB leaves (150 features, 1 thread), SAGA with 20 epochs took 0.63 s for 1,000
points / 50 classes and 395 s for 20,000 points / 800 classes; see ``fit_l1_softmax``.
``solver="prox"`` (prox.py) is a compiled FISTA for sparse, high-dimensional node problems,
where L-BFGS-B's per-variable Python overhead dominates.
"""
from __future__ import annotations

import numpy as np
import scipy.optimize as so
import scipy.sparse as sp
from scipy.special import expit

from .prox import prox_logistic, prox_softmax


def _split(W):
    return np.concatenate([np.maximum(W, 0).ravel(), np.maximum(-W, 0).ravel()])


def _bounds(n_coef: int, n_free: int):
    return [(0.0, None)] * (2 * n_coef) + [(None, None)] * n_free


def _matmul(X, M):
    out = X @ M
    return np.asarray(out.toarray() if sp.issparse(out) else out)


def fit_l1_softmax(X, y, n_out, alpha, W0=None, b0=None, sample_weight=None, max_iter=20,
                   tol=1e-4, solver="lbfgs-b"):
    """Minimise sum_n s_n * CE(y_n, softmax(W x_n + b)) + alpha * ||W||_1.

    X (n, D) float32/64 dense or CSR; y in 0..n_out-1 (every value present when
    ``solver="saga"``). Warm start from (W0, b0) if given. ``solver="saga"`` is
    scikit-learn's SAGA (the paper's choice; ``max_iter`` epochs, warm-started).
    Returns (W (n_out, D) float64, b (n_out,), final objective or nan).
    """
    if solver == "saga":
        return _saga_softmax(X, y, alpha, W0, b0, sample_weight, max_iter, tol)
    if solver == "prox":
        n_f = X.shape[1]
        return prox_softmax(X, y, n_out, alpha, np.zeros((n_out, n_f)) if W0 is None else W0,
                            np.zeros(n_out) if b0 is None else b0, sample_weight, max_iter, tol)
    if solver != "lbfgs-b":
        raise ValueError(f"leaf solver must be 'lbfgs-b', 'prox' or 'saga', got {solver!r}")
    n, D = X.shape
    dtype = np.float32 if getattr(X, "dtype", np.float64) == np.float32 else np.float64
    W0 = np.zeros((n_out, D)) if W0 is None else np.asarray(W0, dtype=np.float64)
    b0 = np.zeros(n_out) if b0 is None else np.asarray(b0, dtype=np.float64)
    s = np.ones(n, dtype=dtype) if sample_weight is None else np.asarray(sample_weight, dtype)
    rows = np.arange(n)
    n_coef = n_out * D
    XT = X.T.tocsr() if sp.issparse(X) else X.T

    def objective(theta):
        W = (theta[:n_coef] - theta[n_coef:2 * n_coef]).reshape(n_out, D)
        b = theta[2 * n_coef:]
        Z = _matmul(X, W.T.astype(dtype)) + b.astype(dtype)
        Z -= Z.max(axis=1, keepdims=True)
        np.exp(Z, out=Z)
        norm = Z.sum(axis=1)
        Z /= norm[:, None]
        p_true = Z[rows, y]
        loss = -float(s @ np.log(np.maximum(p_true, 1e-30)))
        Z[rows, y] -= 1.0
        Z *= s[:, None]
        G = np.asarray(_matmul(XT, Z), dtype=np.float64).T  # (n_out, D)
        gb = Z.sum(axis=0, dtype=np.float64)
        l1 = float(theta[:2 * n_coef].sum())
        grad = np.concatenate([G.ravel() + alpha, -G.ravel() + alpha, gb])
        return loss + alpha * l1, grad

    theta0 = np.concatenate([_split(W0), b0])
    res = so.minimize(objective, theta0, jac=True, method="L-BFGS-B",
                      bounds=_bounds(n_coef, n_out),
                      options={"maxiter": int(max_iter), "gtol": tol, "ftol": 1e-10})
    th = res.x
    W = (th[:n_coef] - th[n_coef:2 * n_coef]).reshape(n_out, D)
    return W, th[2 * n_coef:].copy(), float(res.fun)


def fit_l1_logistic(X, z, sample_weight, alpha, w0=None, b0=0.0, max_iter=50, tol=1e-4,
                    solver="liblinear"):
    """Minimise sum_n s_n * log(1 + exp(-t_n (w.x_n + b))) + alpha * ||w||_1, t_n = +-1 from
    the boolean z_n (True = right child).

    ``solver="liblinear"``: scikit-learn's LIBLINEAR (newGLMNET coordinate descent; the
    paper's choice; its intercept is a penalised feature, as LIBLINEAR does it).
    ``solver="lbfgs-b"``: the split-variable L-BFGS-B above, warm-started from (w0, b0).
    Returns (w (D,), b, objective or nan).
    """
    z = np.asarray(z, dtype=bool)
    s = np.asarray(sample_weight, dtype=np.float64)
    if solver == "liblinear":
        model = _sklearn_l1("liblinear", C=1.0 / alpha, max_iter=int(max_iter), tol=tol)
        model.fit(X, z, sample_weight=s)
        return model.coef_[0].astype(np.float64), float(model.intercept_[0]), float("nan")
    if solver == "prox":
        return prox_logistic(X, z, s, alpha, np.zeros(X.shape[1]) if w0 is None else w0, b0,
                             max_iter, tol)
    if solver != "lbfgs-b":
        raise ValueError(f"decision solver must be 'liblinear', 'lbfgs-b' or 'prox', "
                         f"got {solver!r}")
    n, D = X.shape
    dtype = np.float32 if getattr(X, "dtype", np.float64) == np.float32 else np.float64
    t = np.where(z, 1.0, -1.0).astype(dtype)
    s = s.astype(dtype)
    w0 = np.zeros(D) if w0 is None else np.asarray(w0, dtype=np.float64)
    XT = X.T.tocsr() if sp.issparse(X) else X.T

    def objective(theta):
        w = theta[:D] - theta[D:2 * D]
        m = t * (_matmul(X, w.astype(dtype)).ravel() + dtype(theta[-1]))
        loss = float(s @ np.logaddexp(0.0, -m))
        g = -s * t * expit(-m)  # d loss / d score
        gw = np.asarray(_matmul(XT, g), dtype=np.float64).ravel()
        grad = np.concatenate([gw + alpha, -gw + alpha, [float(g.sum(dtype=np.float64))]])
        return loss + alpha * float(theta[:2 * D].sum()), grad

    res = so.minimize(objective, np.concatenate([_split(w0), [b0]]), jac=True,
                      method="L-BFGS-B", bounds=_bounds(D, 1),
                      options={"maxiter": int(max_iter), "gtol": tol, "ftol": 1e-10})
    return res.x[:D] - res.x[D:2 * D], float(res.x[-1]), float(res.fun)


def _sklearn_l1(solver, **kwargs):
    """scikit-learn's l1 logistic regression (``penalty`` is deprecated from 1.8)."""
    import sklearn
    from sklearn.linear_model import LogisticRegression

    major, minor = (int(p) for p in sklearn.__version__.split(".")[:2])
    l1 = {"l1_ratio": 1.0} if (major, minor) >= (1, 8) else {"penalty": "l1"}
    return LogisticRegression(solver=solver, **l1, **kwargs)


def _saga_softmax(X, y, alpha, W0, b0, sample_weight, max_iter, tol):
    """scikit-learn SAGA; two classes come back as one logistic row w, stored as [0, w]."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    model = _sklearn_l1("saga", C=1.0 / alpha, max_iter=int(max_iter), tol=tol,
                        warm_start=W0 is not None)
    if W0 is not None:
        W0, b0 = np.asarray(W0, dtype=np.float64), np.asarray(b0, dtype=np.float64)
        if len(W0) == 2:
            W0, b0 = W0[1:] - W0[:1], b0[1:] - b0[:1]
        model.coef_, model.intercept_ = W0, b0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y, sample_weight=sample_weight)
    W, b = model.coef_.astype(np.float64), model.intercept_.astype(np.float64)
    if len(W) == 1:
        W, b = np.vstack([np.zeros_like(W), W]), np.concatenate([[0.0], b])
    return W, b, float("nan")
