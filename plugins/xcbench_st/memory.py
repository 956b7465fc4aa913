"""Fit-memory estimate of ``st`` / ``ast`` from the problem's shape (the formula in their
docstrings), for the runner's memory guard."""
from __future__ import annotations

import math

# workspace bytes per variable of one node problem: L-BFGS-B holds 2 split copies of each
# coefficient, its 10-pair history, bounds and gradients (~2 x 32 doubles); FISTA ~8 arrays
SOLVER_BYTES = {"lbfgs-b": 2 * 8 * 32, "saga": 8 * 8, "liblinear": 8 * 8, "prox": 8 * 8}


def fit_memory(n_samples: int, n_features: int, nnz: int, n_classes: int, *, k: int,
               depth: int, leaf_solver: str, decision_solver: str, n_jobs: int,
               dense: bool) -> int:
    """Upper estimate (bytes) of a TAO fit's peak beyond X itself:

    input copy 16 nnz + 8 N (sorted int64 CSR; 0 for dense float64 X)
    + per-point arrays 8 N (depth + 16) (paths, reduced sets, pseudolabels, losses)
    + n_jobs x the largest node problem: the root's decision over A0 = min(D, nnz) columns
      (its row slice 2 x (12 nnz + 8 N) + solver workspace A0 x SOLVER_BYTES) or a leaf over
      A = min(D, 2 nnz / L) columns with k classes (k A SOLVER_BYTES + 32 k n_leaf)
    + the model twice (tree + flat CSR, 24 bytes per weight): l1 solutions with at most one
      nonzero per (point, output) (basic solutions), so <= k min(N, nnz) leaf weights and
      <= depth min(N, nnz) decision weights; and no more than the L leaves' k x (D + 1) and
      the L - 1 decision nodes' D + 1 weights (the cap that binds for large leaves on dense
      rows: ast on ptb, k0 = 840, was estimated at 15.9 GB by the first bound alone).
    """
    n, D, K = int(n_samples), int(n_features), int(n_classes)
    nnz = n * D if dense else int(nnz)
    L = 2 ** int(depth)
    k = max(1, min(int(k), K))
    inputs = 0 if dense else 16 * nnz + 8 * n
    per_point = 8 * n * (int(depth) + 16)
    a_root = min(D, nnz)
    root = 2 * (12 * nnz + 8 * n) + a_root * SOLVER_BYTES.get(decision_solver, 512)
    n_leaf = min(n, math.ceil(2 * n / L))
    a_leaf = min(D, math.ceil(2 * nnz / L))
    leaf = k * a_leaf * SOLVER_BYTES.get(leaf_solver, 512) + 32 * k * n_leaf
    leaf += 2 * (12 * nnz * n_leaf // max(n, 1) + 8 * n_leaf)
    work = max(1, int(n_jobs)) * max(root, leaf)
    basic = min(n, nnz)  # nonzeros per output of a basic l1 solution
    leaf_weights = k * min(basic, L * (D + 1))
    decision_weights = min(int(depth) * basic, (L - 1) * (D + 1))
    model = 24 * (leaf_weights + decision_weights + basic) + 64 * L * 2
    fixed = 4 << 20  # Python objects and small arrays of the tree and its flat copies
    return int(fixed + inputs + per_point + work + model)
