"""Tree Alternating Optimization of a softmax tree (ALGORITHMS.md section 1).

One TAO pass visits depths from the deepest to the root. Nodes of one depth do not interact,
so their problems are solved in parallel (joblib threads: the solvers spend their time in
BLAS and numpy, which release the GIL). The reduced set R_i of node i (training points that
reach it) depends only on i's ancestors, which a pass updates after i, so one routing of the
training set at the start of a pass gives every R_i of that pass.

Losses (``loss``): ``"01"`` (paper default: a point's loss is 0 if its leaf's arg-max is its
class, else 1), ``"ce-beta"`` (cross-entropy with an out-of-leaf class costing ``beta``: the
paper's ST+), ``"ce-drop"`` (cross-entropy; points with an infinite loss on either side are
dropped from decision problems: the paper's failing option (a), kept for comparison).
Leaves always fit the l1 softmax (cross-entropy surrogate); decision nodes fit l1 logistic
regression on pseudolabels weighted by |loss_left - loss_right|.

The monitored objective E is sum_n loss(y_n, tree(x_n)), plus alpha * |weights|_1 for the
cross-entropy losses (where it is what the node solvers minimise). For the 0/1 loss E is the
training error count alone: the l1 term is the surrogate solvers' regulariser, and a check
mixing an error count with alpha * |weights|_1 preferred sparse nodes to accurate ones
(aloi27d, st k=50 depth 5, 10 passes: 70.1% test error with it vs 57.4% without a check).
``monotone=True`` keeps a node's old parameters when the new fit raises the node's share of
E (its reduced objective, which is exactly the change in E), so E never increases; the
surrogate fits alone do not guarantee that.
"""
from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from joblib import Parallel, delayed

from .columns import active_columns, place, select_columns
from .solvers import fit_l1_logistic, fit_l1_softmax
from .tree import EMPTY_ROW, Leaf, Tree, constant_leaf

LOSSES = ("01", "ce-beta", "ce-drop")


@dataclass
class TAOProblem:
    """Training data and settings shared by every node problem."""
    X: object  # (N, D) dense (float32/64) or CSR, for BLAS slicing
    Xk: tuple  # the same rows as kernel input (xcbench.kernels.kernel_input)
    y: np.ndarray
    n_classes: int
    k: int
    alpha: float = 1.0
    loss: str = "01"
    beta: float = 100.0
    leaf_max_iter: int = 20
    node_max_iter: int = 50
    decision_solver: str = "lbfgs-b"
    leaf_solver: str = "lbfgs-b"
    monotone: bool = True
    n_jobs: int = 1
    seconds: dict = field(default_factory=lambda: defaultdict(float))  # where fit time goes

    def __post_init__(self):
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")

    def penalty(self, weights) -> float:
        """The l1 part of E for these weights (none for the 0/1 loss: see module doc)."""
        return 0.0 if self.loss == "01" else self.alpha * float(np.abs(weights).sum())

    def parallel(self, tasks):
        tasks = list(tasks)
        if self.n_jobs == 1 or len(tasks) <= 1:
            return [fn(*args) for fn, args, _ in tasks]
        return Parallel(n_jobs=self.n_jobs, backend="threading")(tasks)


# ----- losses
def leaf_scores(leaf: Leaf, X, rows):
    """(len(rows), m) scores of the leaf's classes, over the leaf's own features."""
    out = select_columns(X[rows], leaf.features) @ leaf.W.T.astype(X.dtype, copy=False)
    return np.asarray(out.toarray() if hasattr(out, "toarray") else out) + leaf.b


def class_positions(classes: np.ndarray, n_classes: int) -> np.ndarray:
    """(n_classes,) index of each class in ``classes``, -1 for classes not in it."""
    position = np.full(n_classes, -1, dtype=np.int64)
    position[classes] = np.arange(len(classes))
    return position


def leaf_loss(leaf: Leaf, prob: TAOProblem, rows: np.ndarray) -> np.ndarray:
    """Loss of each training point ``rows`` if it were predicted by ``leaf``."""
    local = class_positions(leaf.classes, prob.n_classes)[prob.y[rows]]
    inside = local >= 0
    out = np.full(len(rows), 1.0 if prob.loss == "01" else
                  (prob.beta if prob.loss == "ce-beta" else np.inf))
    if not inside.any():
        return out
    if len(leaf.classes) == 1:  # a constant leaf: p = 1 for its class
        out[inside] = 0.0
        return out
    S = leaf_scores(leaf, prob.X, rows[inside])
    if prob.loss == "01":
        out[inside] = (S.argmax(axis=1) != local[inside]).astype(np.float64)
    else:
        top = S.max(axis=1)
        lse = top + np.log(np.exp(S - top[:, None]).sum(axis=1))
        out[inside] = lse - S[np.arange(len(S)), local[inside]]
    return out


def losses_at_leaves(tree: Tree, prob: TAOProblem, rows, leaves) -> np.ndarray:
    """Loss of each point rows[p] at leaf node leaves[p], one BLAS product per leaf."""
    out = np.empty(len(rows))
    for leaf, group in rows_by_node(leaves).items():
        out[group] = leaf_loss(tree.leaf[leaf], prob, rows[group])
    return out


def objective(tree: Tree, prob: TAOProblem) -> float:
    """E (module doc): sum of losses (+ alpha * |weights|_1 for cross-entropy); infinite
    losses skipped for ``ce-drop``."""
    leaves = tree.flatten().route_leaves(prob.Xk)
    losses = losses_at_leaves(tree, prob, np.arange(len(prob.y)), leaves)
    return float(losses[np.isfinite(losses)].sum()) + (0.0 if prob.loss == "01"
                                                        else prob.alpha * tree.l1())


# ----- node steps
def fit_leaf(leaf: Leaf, prob: TAOProblem, rows: np.ndarray, k: int) -> Leaf:
    """Leaf step: S = the k most frequent classes of the reduced set, then the l1 softmax on
    the points of those classes (warm-started from the classes the leaf already had)."""
    counts = np.bincount(prob.y[rows], minlength=prob.n_classes)
    n_present = int(np.count_nonzero(counts))
    classes = np.sort(np.argsort(-counts, kind="stable")[:min(k, n_present)])
    if len(classes) == 1:
        new = constant_leaf(int(classes[0]))
    else:
        local = class_positions(classes, prob.n_classes)[prob.y[rows]]
        keep = rows[local >= 0]
        Xr = prob.X[keep]
        features = active_columns(Xr)  # column compression (columns.py)
        carried = class_positions(leaf.classes, prob.n_classes)[classes]
        W0 = np.zeros((len(classes), len(features)))
        cols, found = place(features, leaf.features)
        has = np.flatnonzero(carried >= 0)
        W0[np.ix_(has, cols)] = leaf.W[np.ix_(carried[has], np.flatnonzero(found))]
        b0 = np.where(carried >= 0, leaf.b[np.maximum(carried, 0)], 0.0)
        W, b, _ = fit_l1_softmax(select_columns(Xr, features), local[local >= 0],
                                 len(classes), prob.alpha, W0=W0, b0=b0,
                                 max_iter=prob.leaf_max_iter, solver=prob.leaf_solver)
        new = Leaf(classes.astype(np.int64), features, W, b).compact()
    if prob.monotone and prob.loss != "ce-drop":
        old_obj = leaf_loss(leaf, prob, rows).sum() + prob.penalty(leaf.W)
        new_obj = leaf_loss(new, prob, rows).sum() + prob.penalty(new.W)
        if new_obj > old_obj:
            return leaf
    return new


def _goes_right(X, rows, w, b):
    """Side of each point for the sparse weights w = (feature ids, values)."""
    out = select_columns(X[rows], w[0]) @ w[1].astype(X.dtype, copy=False)
    return np.asarray(out).ravel() + b >= 0


def fit_decision(w_old, b_old, prob: TAOProblem, rows, loss_left, loss_right):
    """Decision step: pseudolabel = the child with the lower loss, weight = the difference;
    points with equal losses are don't-care. Weights are sparse (feature ids, values), fitted
    over the care points' active columns. Returns the new (w, b)."""
    if prob.loss == "ce-drop":
        finite = np.isfinite(loss_left) & np.isfinite(loss_right)
        rows, loss_left, loss_right = rows[finite], loss_left[finite], loss_right[finite]
    diff = loss_left - loss_right
    care = diff != 0
    if not care.any():
        return w_old, b_old
    right = diff[care] > 0
    if right.all() or not right.any():  # every care point prefers one side: route all there
        w, b = EMPTY_ROW, (1.0 if right.all() else -1.0)
    else:
        Xr = prob.X[rows[care]]
        features = active_columns(Xr)
        w0 = np.zeros(len(features))
        cols, found = place(features, w_old[0])
        w0[cols] = w_old[1][found]
        w, b, _ = fit_l1_logistic(select_columns(Xr, features), right, np.abs(diff[care]),
                                  prob.alpha, w0=w0, b0=b_old, max_iter=prob.node_max_iter,
                                  solver=prob.decision_solver)
        nonzero = w != 0
        w = (features[nonzero], w[nonzero])
    if prob.monotone and prob.loss != "ce-drop":
        def reduced(w_, b_):
            side = _goes_right(prob.X, rows, w_, b_)
            return np.where(side, loss_right, loss_left).sum() + prob.penalty(w_[1])
        if reduced(w, b) > reduced(w_old, b_old):
            return w_old, b_old
    return w, b


# ----- one pass
def rows_by_node(column: np.ndarray) -> dict[int, np.ndarray]:
    """{node: positions} of each node id in ``column`` (ignoring -1)."""
    order = np.argsort(column, kind="stable")
    bounds = np.flatnonzero(np.diff(column[order])) + 1
    groups = (g for g in np.split(order, bounds) if len(g))
    return {int(column[g[0]]): g.astype(np.int64) for g in groups if column[g[0]] >= 0}


def tao_pass(tree: Tree, prob: TAOProblem, paths: np.ndarray | None = None) -> None:
    """One TAO iteration over every depth, deepest first. ``paths`` (n, depth+1) of Tree node
    ids gives the reduced sets (default: route the training set through the tree)."""
    max_depth = tree.max_depth()
    clock = time.perf_counter()
    if paths is None:
        paths = tree.flatten().route_paths(prob.Xk, max_depth)
    prob.seconds["routing"] += time.perf_counter() - clock
    by_depth: dict[int, list[int]] = {}
    for node in tree.alive():
        by_depth.setdefault(tree.depth[node], []).append(node)
    for d in range(max_depth, -1, -1):
        reduced = rows_by_node(paths[:, d]) if d < paths.shape[1] else {}
        nodes = [i for i in by_depth.get(d, []) if i in reduced]  # dead nodes keep params
        leaves = [i for i in nodes if tree.is_leaf(i)]
        clock = time.perf_counter()
        fitted = prob.parallel(delayed(fit_leaf)(tree.leaf[i], prob, reduced[i],
                                                 tree.leaf_k.get(i, prob.k))
                               for i in leaves)
        for i, leaf in zip(leaves, fitted):
            tree.leaf[i] = leaf
        prob.seconds["leaves"] += time.perf_counter() - clock
        decisions = [i for i in nodes if not tree.is_leaf(i)]
        if not decisions:
            continue
        clock = time.perf_counter()
        flat = tree.flatten()
        rows = np.concatenate([reduced[i] for i in decisions])
        starts_l = np.concatenate([np.full(len(reduced[i]), tree.left[i]) for i in decisions])
        starts_r = np.concatenate([np.full(len(reduced[i]), tree.right[i]) for i in decisions])
        loss_l = losses_at_leaves(tree, prob, rows, flat.route_leaves(prob.Xk, rows, starts_l))
        loss_r = losses_at_leaves(tree, prob, rows, flat.route_leaves(prob.Xk, rows, starts_r))
        bounds = np.cumsum([len(reduced[i]) for i in decisions])[:-1]
        prob.seconds["pseudolabels"] += time.perf_counter() - clock
        clock = time.perf_counter()
        tasks = (delayed(fit_decision)(tree.w[i], tree.b[i], prob, r, ll, lr)
                 for i, r, ll, lr in zip(decisions, np.split(rows, bounds),
                                         np.split(loss_l, bounds), np.split(loss_r, bounds)))
        for i, (w, b) in zip(decisions, prob.parallel(tasks)):
            tree.w[i], tree.b[i] = w, float(b)
        prob.seconds["decisions"] += time.perf_counter() - clock
