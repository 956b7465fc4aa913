"""Defaults by rule for the flat baselines ``ova`` and ``softmax`` (pure functions;
docs/methods/flat.md has the rules and the measurements behind them).

- ``solver="auto"`` (softmax): scikit-learn's lbfgs while an N x K matrix of doubles fits in
  ``AUTO_MEMORY_BYTES``, the row-chunked L-BFGS beyond (memory, not accuracy: same
  objective).
- ``max_iter="auto"``: the solver's full budget (100 L-BFGS iterations for softmax, 200 for
  one-vs-all) unless one iteration's work, stored values x classes, is above
  ``LARGE_WORK``; then 20, the budget every PTB report used (one iteration over PTB's
  572,902 x 150 dense rows and 6,719 classes took ~100 s here).
"""
from __future__ import annotations

from dataclasses import dataclass

AUTO_MEMORY_BYTES = 2 * 1024**3
LARGE_WORK = 1e11  # stored values x classes per iteration (PTB: 5.8e11; aloi27d: 1.2e9)
LARGE_MAX_ITER = 20


@dataclass(frozen=True)
class DataShape:
    """Rows, stored values (N x D for a dense X) and classes seen in training."""
    n_samples: int
    nnz: int
    n_classes: int


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
    if params.get("max_iter") == "auto":
        out["max_iter"] = resolve_max_iter("auto", full_iter, shape)
    if params.get("solver") == "auto":
        out["solver"] = resolve_softmax_solver("auto", shape)
    return out
