"""Defaults by rule for the flat baselines ``ova`` and ``softmax`` (pure functions;
docs/methods/flat.md has the rules and the measurements behind them).

- ``solver="auto"`` (softmax): scikit-learn's lbfgs while an N x K matrix of doubles fits in
  ``AUTO_MEMORY_BYTES``, the row-chunked L-BFGS beyond (memory, not accuracy: same
  objective).
- ``max_iter="auto"``: the solver's full budget (100 L-BFGS iterations for softmax, 200 for
  one-vs-all) unless one iteration's work, stored values x classes, is above
  ``LARGE_WORK``; then 20, the budget every PTB report used (one iteration over PTB's
  572,902 x 150 dense rows and 6,719 classes took ~100 s here).
- ``C="auto"`` (inverse L2 strength, sum-of-losses scale): 1.0 while the model has more
  weights than there are training rows (D K > N: regularisation matters), else ``WEAK_C``.
  Measured with ``softmax`` (probe, docs/methods/flat.md): aloi27d-438 (N = 43,642, D K =
  11,826) 92.5% top-1 error at C = 1 vs 51.3% at C = 1000 (its histogram features, median
  nonzero 0.0006, need large weights); letter (N = 16,000, D K = 416) 24.1% vs 24.3%.
"""
from __future__ import annotations

from dataclasses import dataclass

AUTO_MEMORY_BYTES = 2 * 1024**3
LARGE_WORK = 1e11  # stored values x classes per iteration (PTB: 5.8e11; aloi27d: 1.2e9)
LARGE_MAX_ITER = 20
DEFAULT_C, WEAK_C = 1.0, 1000.0


@dataclass(frozen=True)
class DataShape:
    """Rows, stored values (N x D for a dense X), classes seen in training, features."""
    n_samples: int
    nnz: int
    n_classes: int
    n_features: int = 0


def resolve_C(C, shape: DataShape) -> float:
    if C != "auto":
        return float(C)
    overparameterised = shape.n_features * shape.n_classes > shape.n_samples
    return DEFAULT_C if overparameterised else WEAK_C


def resolve_softmax_solver(solver: str, shape: DataShape) -> str:
    if solver != "auto":
        return solver
    too_big = shape.n_samples * shape.n_classes * 8 > AUTO_MEMORY_BYTES
    return "chunked-lbfgs" if too_big else "lbfgs"


def resolve_max_iter(max_iter, full: int, shape: DataShape) -> int:
    if max_iter != "auto":
        return int(max_iter)
    return LARGE_MAX_ITER if shape.nnz * shape.n_classes > LARGE_WORK else full


def resolve_flat(params: dict, shape: DataShape, full_iter: int) -> dict:
    """{name: value} for each ``"auto"`` parameter of a flat method whose solver runs at
    most ``full_iter`` iterations by default."""
    out = {}
    if params.get("C") == "auto":
        out["C"] = resolve_C("auto", shape)
    if params.get("max_iter") == "auto":
        out["max_iter"] = resolve_max_iter("auto", full_iter, shape)
    if params.get("solver") == "auto":
        out["solver"] = resolve_softmax_solver("auto", shape)
    return out
