"""Defaults by rule for ``st`` and ``ast``: every ``"auto"`` parameter resolved from the data.

``resolve_st`` and ``resolve_ast`` are pure: they take the parameters and a ``DataShape``
(what the data says: rows N, features D, stored values, classes K, sparse or dense, the
median row norm) and return the value of every parameter given as ``"auto"``. The rules and
the measurements behind them are in docs/methods/softmax-tree.md ("Defaults by rule"):

- sparse input (CSR, high-dimensional): clustered initial tree (the paper's Algorithm 2),
  one TAO pass, depth ceil(log2(K / k)) + 1 (about 2 leaf slots of k classes per class,
  the reports/scaling setting);
- dense input: random initial tree when narrow (under 100 features), clustered when wide
  (``rule_init``), 20 TAO passes, and the deepest tree, at most 8, whose
  leaves keep enough training rows per class slot: 16 per class when K <= k (every leaf may
  hold every class, so depth only partitions the inputs), 1 per slot of k when K > k; but
  at least ceil(log2(K / k)), so k 2^depth >= K (``dense_depth``);
- alpha (l1 strength, sum-of-losses scale): 1.0 on sparse input; on dense input 0.01 when
  the median row norm is below SMALL_ROW_NORM (histogram-like features, whose weights must be
  large), else 0.1. It is the validation search's choice, or within 0.7 points of it, on
  every dataset the search was run on, at none of its 2-5x fit cost; ``alpha="search"``
  still runs the search (``alpha_search.py``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from xcbench.contract.data_shape import DataSizes, narrow_dense

SMALL_ROW_NORM = 2.0  # dense rows below: alpha 0.01 (aloi27d 0.92, leaves100 0.32)
SMALL_ALPHA, DENSE_ALPHA, SPARSE_ALPHA = 0.01, 0.1, 1.0
AST_LEAF_CLASSES = 100  # ast's k0 on sparse input (and on dense input with many classes)
# ast's dense shape (depth0 = 2, k0 = K / 4, 8 stages) up to this many classes; above it the
# sparse column's, whose leaves stay small: at K = 6,719 (ptb) the dense shape's 1,680-class
# leaves were estimated at ~25 GB and refused (8.1 GB by today's tighter estimate; the
# rule stays for the fit time, docs/methods/softmax-tree.md)
AST_DENSE_MAX_CLASSES = 1_000
#: growth stages of the large-K shape: one on sparse input (the K = 1e5 fit budget), two on
#: dense input (ptb: 82.56% top-1 against one stage's 83.33%, at about 1.8x the fit)
AST_LARGE_K_STAGES_SPARSE, AST_LARGE_K_STAGES_DENSE = 1, 2
MAX_DENSE_DEPTH = 8  # the paper's PTB depth for k = 50
#: dense: training rows a leaf should keep per class slot, N / (2^depth min(k, K)): when
#: K <= k (depth only partitions the inputs) and when K > k (depth also makes class room)
ROWS_PER_SLOT_FEW_CLASSES, ROWS_PER_SLOT_MANY_CLASSES = 16, 1
DENSE_PASSES, SPARSE_PASSES = 20, 1


@dataclass(frozen=True)
class DataShape(DataSizes):
    """What the rules read from the training data. ``row_norm`` (median Euclidean norm of a
    row) is None when only the shape is known (``estimate_memory``, sizes: dense when
    every value is stored)."""
    row_norm: float | None = None

    @classmethod
    def of(cls, X, n_classes):
        """The shape of training matrix X (dense array or CSR) with its median row norm."""
        if sp.issparse(X):
            norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
            nnz = X.nnz
        else:
            norms = np.sqrt(np.einsum("ij,ij->i", X, X))
            nnz = X.size
        norm = float(np.median(norms)) if len(norms) else 0.0
        return cls(X.shape[0], X.shape[1], int(nnz), int(n_classes), sp.issparse(X), norm)


def log2_ceil(x: float) -> int:
    return math.ceil(math.log2(max(x, 1.0)))


def rule_alpha(shape: DataShape) -> float:
    """Sparse input: 1.0. Dense: 0.01 for rows of small norm (their weights must be large),
    else 0.1; 0.1 when the norm is unknown (``estimate_memory``: alpha does not change it)."""
    if shape.sparse:
        return SPARSE_ALPHA
    if shape.row_norm is not None and shape.row_norm < SMALL_ROW_NORM:
        return SMALL_ALPHA
    return DENSE_ALPHA


def rule_depth(shape: DataShape, k: int) -> int:
    """Sparse: ceil(log2(K / k)) + 1, at least 1. Dense: ``dense_depth``. At most 30."""
    need = log2_ceil(shape.n_classes / k)
    depth = max(1, need + 1) if shape.sparse else max(need, dense_depth(shape, k))
    return int(min(30, depth))


def dense_depth(shape: DataShape, k: int) -> int:
    """The deepest tree, at most MAX_DENSE_DEPTH, whose 2^depth leaves of min(k, K) class
    slots keep R training rows per slot: the largest 2^depth <= N / (R min(k, K)), 0 when
    that is below 1. R = 16 when K <= k: every leaf may hold every class, depth only splits
    the inputs, and a leaf's softmax holds just the classes its training rows bring, so
    thin leaves give test rows probability zero (letter: 5, not 8). R = 1 when K > k: depth
    also gives the classes room, but a tree with more leaf slots than training rows cannot
    fill them (leaves100: 4, not 8)."""
    few = shape.n_classes <= k
    rows = ROWS_PER_SLOT_FEW_CLASSES if few else ROWS_PER_SLOT_MANY_CLASSES
    leaves = shape.n_samples // (rows * max(1, min(k, shape.n_classes)))  # leaves rows fill
    return min(MAX_DENSE_DEPTH, max(0, leaves.bit_length() - 1))  # largest 2^depth <= it


def resolve_solver(solver: str, sparse: bool) -> str:
    """``"auto"``: the compiled FISTA (``"prox"``) on CSR input, whose node problems have many
    columns, and L-BFGS-B on dense input (the earlier default, kept for dense results)."""
    if solver != "auto":
        return solver
    return "prox" if sparse else "lbfgs-b"


def _solvers(params: dict, shape: DataShape) -> dict:
    return {name: resolve_solver("auto", shape.sparse)
            for name in ("decision_solver", "leaf_solver") if params.get(name) == "auto"}


def rule_init(shape: DataShape) -> str:
    """st's initial tree: clustered (the paper's Algorithm 2) unless the input is dense and
    narrow (``data_shape.narrow_dense``: fewer than 100 features), where the random tree did as well or
    better (letter: 10.3% against 10.7%, aloi27d-438: 41.1% against 42.1%, seeds 0-2);
    clustered on wide dense input (leaves100: 14.2% against 23.0%; synthetic: 52.5%
    against 84.0%) and on sparse input (synthetic-sparse-1k: 26.9% against 84.5%)."""
    return "random" if narrow_dense(shape.sparse, shape.n_features) else "cluster"


def resolve_st(params: dict, shape: DataShape) -> dict:
    """{name: value} for each of st's ``"auto"`` parameters (init, n_iter, depth, alpha, the
    solvers); ``k`` is a number (default 50, the paper's PTB value)."""
    out = _solvers(params, shape)
    if params.get("init") == "auto":
        out["init"] = rule_init(shape)
    if params.get("n_iter") == "auto":
        out["n_iter"] = SPARSE_PASSES if shape.sparse else DENSE_PASSES
    if params.get("depth") == "auto":
        out["depth"] = rule_depth(shape, int(params["k"]))
    if params.get("alpha") == "auto":
        out["alpha"] = rule_alpha(shape)
    return out


def resolve_ast(params: dict, shape: DataShape) -> dict:
    """{name: value} for each of ast's ``"auto"`` parameters. Sparse, and dense with more
    than ``AST_DENSE_MAX_CLASSES`` classes: the reports/scaling setting (cluster init, k0 =
    100, depth0 = ceil(log2(K / 100)) + 1, one initial TAO pass, stages of one global pass:
    one stage on sparse input, two on dense input); other dense data: depth0 = 2, k0 =
    ceil(K / 4), random init (which ``AdaptiveSoftmaxTree.fit`` replaces by the clustered
    one unless the random start is clearly better on held-out rows; kept on skewed labels
    and data too small to probe), 10 initial passes, up to 8 stages of 5 global passes.
    alpha as ``rule_alpha``."""
    sparse = shape.sparse or shape.n_classes > AST_DENSE_MAX_CLASSES  # the large-K shape
    large_k_stages = AST_LARGE_K_STAGES_SPARSE if shape.sparse else AST_LARGE_K_STAGES_DENSE
    rules = {
        "init": "cluster" if sparse else "random",
        "depth0": (max(1, log2_ceil(shape.n_classes / AST_LEAF_CLASSES) + 1)
                   if sparse else 2),
        "initial_iter": 1 if sparse else 10,
        "global_iter": 1 if sparse else 5,
        "max_stages": large_k_stages if sparse else 8,
        "alpha": rule_alpha(shape),
    }
    out = {name: value for name, value in rules.items() if params.get(name) == "auto"}
    out.update(_solvers(params, shape))
    if params.get("k0") == "auto":
        depth0 = out.get("depth0", params.get("depth0"))
        out["k0"] = (AST_LEAF_CLASSES if sparse
                     else math.ceil(shape.n_classes / 2 ** int(depth0)))
    return out
