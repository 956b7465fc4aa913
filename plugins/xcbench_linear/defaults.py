"""Defaults by rule for the flat baselines ``ova`` and ``softmax`` (pure functions;
docs/methods/flat.md has the rules and the measurements behind them).

- ``solver="auto"`` (softmax): scikit-learn's lbfgs while an N x K matrix of doubles fits in
  ``AUTO_MEMORY_BYTES``, the row-chunked L-BFGS beyond (memory, not accuracy: same
  objective).
- ``max_iter="auto"``: a safety cap, not the stopping rule: scikit-learn's lbfgs keeps its
  100 iterations (it stops on its gradient tolerance before that); the chunked and joint
  L-BFGS, which stop on the rule of ``stopping.py``, get ``CHUNKED_MAX_ITER``. Reaching the
  cap is recorded as not converged (``stats()["solver_converged"]``).
- ``C="auto"`` (inverse L2 strength, sum-of-losses scale: ``0.5 ||W||^2 + C sum_i loss_i``,
  intercepts unpenalised): ``C = TARGET * D * K / (N * spread)`` to the nearest power of ten,
  kept in [``C_MIN``, ``C_MAX``], where ``spread`` = E ||x - mean row||^2. ``C N spread /
  (D K)`` is the data term's curvature per weight (N rows, each adding spread / D per
  feature) over the penalty's (1): the rule holds it near ``TARGET`` whatever the units of
  x (C scales as 1 / scale^2, as the weights a fixed boundary needs do) or the mean row
  (absorbed by the unpenalised intercepts). ``C_MIN`` binds on letter (D = 16, 615 rows per
  class), where the ratio alone asks for C = 0.01. Measured grid in docs/methods/flat.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from xcbench.contract.data_shape import stored_values

AUTO_MEMORY_BYTES = 2 * 1024**3
CHUNKED_MAX_ITER = 1000  # safety cap of the chunked / joint L-BFGS (PTB converges in < 100)
TARGET = 40.0  # C N spread / (D K) (docs/methods/flat.md: measured grid)
C_MIN, C_MAX = 0.1, 1e4  # letter loses 1.8 points at C = 0.01; 1e4: the largest C measured
DEFAULT_C = 1.0  # when the spread is unknown (sizes only, e.g. estimate_memory)
_SPREAD_CHUNK = 1 << 22  # values squared per step of row_spread


@dataclass(frozen=True)
class DataShape:
    """Rows, stored values (N x D for a dense X), classes seen in training, features."""
    n_samples: int
    nnz: int
    n_classes: int
    n_features: int = 0
    spread: float | None = None  # E ||x - mean row||^2 over the training rows

    @classmethod
    def of(cls, X, n_classes: int) -> "DataShape":
        """The shape of training rows X (dense or CSR) with ``n_classes`` classes seen."""
        return cls(X.shape[0], stored_values(X), int(n_classes), X.shape[1], row_spread(X))


def row_spread(X) -> float:
    """E ||x - mean row||^2 (the trace of the rows' covariance) in O(nnz), no copy of X:
    the mean squared row norm minus the squared norm of the mean row."""
    n = X.shape[0]
    values = X.data if sp.issparse(X) else np.asarray(X).reshape(-1)
    sum_sq = 0.0
    for start in range(0, values.size, _SPREAD_CHUNK):  # float64 sums, bounded copies
        chunk = values[start:start + _SPREAD_CHUNK].astype(np.float64, copy=False)
        sum_sq += float(np.dot(chunk, chunk))
    mean = np.asarray(X.sum(axis=0, dtype=np.float64)).reshape(-1) / n
    return max(sum_sq / n - float(mean @ mean), 0.0)


def resolve_C(C, shape: DataShape) -> float:
    """C itself, or for ``"auto"`` the power of ten nearest TARGET D K / (N spread) in log
    scale, clipped to [C_MIN, C_MAX] (C_MAX for rows that do not vary)."""
    if C != "auto":
        return float(C)
    if shape.spread is None:
        return DEFAULT_C
    if shape.spread <= 0:
        return C_MAX
    weights = max(shape.n_features, 1) * shape.n_classes
    raw = TARGET * weights / (shape.n_samples * shape.spread)
    return float(min(max(10.0 ** round(math.log10(raw)), C_MIN), C_MAX))


CHUNKED_SOLVERS = ("chunked-lbfgs", "joint-lbfgs")


def resolve_softmax_solver(solver: str, shape: DataShape) -> str:
    if solver != "auto":
        return solver
    too_big = shape.n_samples * shape.n_classes * 8 > AUTO_MEMORY_BYTES
    return "chunked-lbfgs" if too_big else "lbfgs"


def resolve_max_iter(max_iter, full: int, solver: str) -> int:
    """``max_iter`` itself, or for ``"auto"`` the cap of the resolved ``solver``: ``full``
    for scikit-learn's solvers, ``CHUNKED_MAX_ITER`` for the chunked / joint L-BFGS."""
    if max_iter != "auto":
        return int(max_iter)
    return CHUNKED_MAX_ITER if solver in CHUNKED_SOLVERS else full


def resolve_flat(params: dict, shape: DataShape, full_iter: int) -> dict:
    """{name: value} for each ``"auto"`` parameter of a flat method whose scikit-learn
    solver runs at most ``full_iter`` iterations by default."""
    out = {}
    if params.get("C") == "auto":
        out["C"] = resolve_C("auto", shape)
    solver = resolve_softmax_solver(params.get("solver", ""), shape)
    if params.get("max_iter") == "auto":
        out["max_iter"] = resolve_max_iter("auto", full_iter, solver)
    if params.get("solver") == "auto":
        out["solver"] = solver
    return out
