"""Linear models over K classes trained by L-BFGS with the loss computed over row chunks,
so memory stays bounded however large n x K is (scikit-learn's multinomial solvers hold an
n x K matrix: on PTB next-word, 572,902 x 6,719 doubles = 31 GB, which this 24 GB machine
cannot hold; measured: the run was killed with SIGKILL).

One-vs-all: all K binary logistic regressions solved as one L-BFGS problem. The objective is a sum of K independent convex problems,
``sum_c 0.5 ||w_c||^2 + C sum_i log(1 + exp(-s_ic (w_c . x_i + b_c)))`` with s_ic = +1 if
y_i = c else -1 (scikit-learn's objective; intercepts unpenalised). Because the problems
are separable, minimising their sum jointly reaches the same optimum, and every gradient
is a matrix product over all classes at once instead of K passes over the data. Measured
on the 1000-class synthetic set (30,000 x 128): scikit-learn's per-class lbfgs takes about
0.33 s per class, liblinear 1.4 s per class (single thread); the joint solve is far faster.
scipy's L-BFGS-B does the optimisation.
"""
from __future__ import annotations

import math

import numba
import numpy as np
from scipy.optimize import minimize

_CHUNK_CELLS = 1 << 22


@numba.njit(parallel=True, fastmath=False, cache=True)
def logistic_loss_and_grad(Z, y, scale):
    """One-vs-all logistic loss of scores Z (n, K) with true columns y; Z becomes the gradient.

    Returns sum_i [sum_{c != y_i} log(1 + e^{z_ic}) + log(1 + e^{-z_iy_i})] * scale and
    overwrites Z with (sigmoid(Z) - onehot(y)) * scale. One exp and one log1p per entry.
    """
    n, k = Z.shape
    row_loss = np.zeros(n)
    for i in numba.prange(n):
        total = 0.0
        for c in range(k):
            z = Z[i, c]
            e = math.exp(-abs(z))
            softplus = max(z, 0.0) + math.log1p(e)  # log(1 + e^z)
            sig = 1.0 / (1.0 + e) if z >= 0 else e / (1.0 + e)
            if c == y[i]:
                total += softplus - z  # log(1 + e^{-z})
                Z[i, c] = (sig - 1.0) * scale
            else:
                total += softplus
                Z[i, c] = sig * scale
        row_loss[i] = total
    return row_loss.sum() * scale


@numba.njit(parallel=True, fastmath=False, cache=True)
def softmax_loss_and_grad(Z, y, scale):
    """Multinomial logistic loss of scores Z (n, K) with true columns y; Z becomes the
    gradient. Returns sum_i [logsumexp(z_i) - z_i,y_i] * scale and overwrites Z with
    (softmax(Z) - onehot(y)) * scale."""
    n, k = Z.shape
    row_loss = np.zeros(n)
    for i in numba.prange(n):
        top = Z[i, 0]
        for c in range(1, k):
            if Z[i, c] > top:
                top = Z[i, c]
        total = 0.0
        for c in range(k):
            Z[i, c] = math.exp(Z[i, c] - top)
            total += Z[i, c]
        row_loss[i] = math.log(total) + top
        true_score = 0.0
        for c in range(k):
            p = Z[i, c] / total
            if c == y[i]:
                true_score = math.log(Z[i, c]) + top
                p -= 1.0
            Z[i, c] = p * scale
        row_loss[i] -= true_score
    return row_loss.sum() * scale


LOSSES = {"ova": logistic_loss_and_grad, "softmax": softmax_loss_and_grad}


def fit_chunked_lbfgs(X, y, n_out: int, loss: str = "ova", C: float = 1.0,
                      max_iter: int = 200, tol: float = 1e-4):
    """Fit a linear model over K=n_out classes: ``loss`` "ova" (K binary logistic
    regressions, class c vs rest) or "softmax" (multinomial logistic regression).

    ``y`` holds labels in 0..n_out-1. The objective, 0.5 ||W||^2 + C * sum of losses
    (scikit-learn's; intercepts unpenalised), is divided by C * n so that ``tol`` (the
    L-BFGS bound on the largest gradient entry) does not depend on C or n.
    Returns (coef (K, D), intercept (K,), scipy OptimizeResult).
    """
    loss_and_grad = LOSSES[loss]
    n, d = X.shape
    step = max(1, _CHUNK_CELLS // n_out)
    scale = 1.0 / (C * n)

    def objective(theta):
        W = theta[: n_out * d].reshape(n_out, d)
        b = theta[n_out * d:]
        value = 0.5 * scale * float(np.dot(theta[: n_out * d], theta[: n_out * d]))
        grad_W = scale * W
        grad_b = np.zeros(n_out)
        for start in range(0, n, step):
            Xc = X[start:start + step]
            yc = y[start:start + step]
            G = np.ascontiguousarray(np.asarray(Xc @ W.T) + b, dtype=np.float64)
            value += loss_and_grad(G, yc, 1.0 / n)
            grad_W += np.asarray(Xc.T @ G).T
            grad_b += G.sum(axis=0)
        return value, np.concatenate([grad_W.ravel(), grad_b])

    theta0 = np.zeros(n_out * (d + 1))
    result = minimize(objective, theta0, jac=True, method="L-BFGS-B",
                      options={"maxiter": max_iter, "gtol": tol, "maxcor": 20})
    theta = result.x
    return theta[: n_out * d].reshape(n_out, d), theta[n_out * d:], result
