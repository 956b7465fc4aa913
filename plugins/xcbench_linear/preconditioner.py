"""A change of variables that makes the flat baselines' objective well conditioned.

The objective of ``ova`` and ``softmax`` (``chunked_lbfgs.make_objective``) is minimised
over W (D, K) and b (K,). Its curvature along class c's weights is roughly
``q_c Cov(x)``, with q_c = f_c (1 - f_c) and f_c the class's share of the training rows
(at the optimum, class c's predicted probabilities sum to its count): it spans the
features' variances times the classes' frequencies, several orders of magnitude on
real data (PTB: word frequencies from 1e-5 to 5e-2), and L-BFGS crawls along the flat
directions. Solving for V and c instead, with

    W = A V diag(s),    b = c - mu W,

A = (Cov(x) + delta I)^(-1/2) (the rows whitened; per feature 1 / std beyond
``MAX_WHITEN_FEATURES``), s_c = 1 / sqrt(q_c + 1 / K) and mu the mean row, makes that
curvature about 1 in every direction. The floor 1 / K is the curvature every class has
at the start (all probabilities 1 / K); without it the rare classes' first steps are too
long (measured on 50,000 PTB rows: objective 6.27 after 5 iterations against 5.33). It is a linear reparametrisation: the objective,
its penalty on W and its minimum are unchanged, only the path to it is shorter. Nothing
of size n x D or n x K is made: X is never transformed, only the (D, K) parameters.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

MAX_WHITEN_FEATURES = 1024  # full D x D whitening up to here (8 D^2 bytes), diagonal beyond
EIGEN_FLOOR = 1e-4  # delta, relative to the mean feature variance


def memory_bytes(n_features: int, n_classes: int, nnz: int, n_samples: int) -> int:
    """Upper estimate of the peak bytes of ``Preconditioner.of``: with full whitening, the
    D x D covariance, its eigenvectors, their scaled copy and the result, plus for sparse X
    the sparse product X^T X (at most min(D^2, nnz^2 / n) entries of 12 bytes), so
    ``8 * 6 D^2``; diagonal, a few D-vectors; and the class shares (``16 K``)."""
    d = n_features
    if d <= MAX_WHITEN_FEATURES:
        return 8 * 6 * d * d + 16 * n_classes
    return 8 * 4 * d + 16 * n_classes + 8 * n_samples


@dataclass(frozen=True)
class Preconditioner:
    """W = A V diag(s), b = c - mu W. ``A`` is (D, D) symmetric, or (D,) for a diagonal."""
    A: np.ndarray
    s: np.ndarray
    mu: np.ndarray

    @classmethod
    def identity(cls, n_features: int, n_out: int) -> "Preconditioner":
        return cls(np.ones(n_features), np.ones(n_out), np.zeros(n_features))

    @classmethod
    def of(cls, X, y, n_out: int) -> "Preconditioner":
        """From training rows X (dense or CSR) and their columns y in 0..n_out-1."""
        n, d = X.shape
        mu = np.asarray(X.mean(axis=0, dtype=np.float64)).reshape(-1)
        share = np.bincount(y, minlength=n_out) / n
        s = 1.0 / np.sqrt(share * (1.0 - share) + 1.0 / n_out)
        if d <= MAX_WHITEN_FEATURES:
            return cls(_inverse_sqrt(_covariance(X, mu)), s, mu)
        var = _variances(X, mu)
        return cls(1.0 / np.sqrt(var + EIGEN_FLOOR * max(var.mean(), 1e-300)), s, mu)

    def _apply_A(self, M):
        return self.A[:, None] * M if self.A.ndim == 1 else self.A @ M

    def weights(self, V: np.ndarray, c: np.ndarray, out: np.ndarray) -> np.ndarray:
        """W into ``out`` (D, K) from V (D, K); returns b (K,)."""
        out[...] = self._apply_A(V)
        out *= self.s
        return c - self.mu @ out

    def pull_back(self, grad_W: np.ndarray, grad_b: np.ndarray, out_V: np.ndarray) -> None:
        """The gradient in V into ``out_V`` from the gradient in (W, b); c's gradient is
        b's. ``grad_W`` is overwritten."""
        grad_W -= np.outer(self.mu, grad_b)
        out_V[...] = self._apply_A(grad_W)  # A is symmetric
        out_V *= self.s

    def variables(self, W: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(V, c) of given (W, b): the inverse of ``weights``."""
        scaled = W / self.s
        V = scaled / self.A[:, None] if self.A.ndim == 1 else np.linalg.solve(self.A, scaled)
        return V, b + self.mu @ W


def _covariance(X, mu: np.ndarray) -> np.ndarray:
    """Cov(x) (D, D) in float64, in row blocks for dense X."""
    n, d = X.shape
    if sp.issparse(X):
        second = np.asarray((X.T @ X).todense(), dtype=np.float64) / n
    else:
        second = np.zeros((d, d))
        step = max(1, (1 << 22) // max(d, 1))
        for start in range(0, n, step):
            block = np.asarray(X[start:start + step], dtype=np.float64)
            second += block.T @ block
        second /= n
    return second - np.outer(mu, mu)


def _variances(X, mu: np.ndarray) -> np.ndarray:
    n = X.shape[0]
    if sp.issparse(X):
        squares = np.asarray(X.multiply(X).sum(axis=0, dtype=np.float64)).reshape(-1)
    else:
        squares = np.einsum("ij,ij->j", X, X, dtype=np.float64)
    return np.maximum(squares / n - mu * mu, 0.0)


def _inverse_sqrt(cov: np.ndarray) -> np.ndarray:
    """(cov + delta I)^(-1/2), delta = EIGEN_FLOOR x the mean variance (identity when the
    rows do not vary)."""
    d = cov.shape[0]
    mean_var = float(np.trace(cov)) / d
    if mean_var <= 0:
        return np.eye(d)
    values, vectors = np.linalg.eigh(cov)
    values = np.maximum(values, 0.0) + EIGEN_FLOOR * mean_var
    return (vectors / np.sqrt(values)) @ vectors.T
