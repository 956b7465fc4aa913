"""Label-tree nodes trained one at a time with scikit-learn (``solver="liblinear"`` of
``hsm`` and ``label_tree``).

Each internal node is fitted once, to convergence, on the training rows whose class lies in
its subtree, with the child holding that class as the target. The node's model is the
caller's choice (``fit_node``):
- ``logistic_node``: an L2-regularised logistic regression (LIBLINEAR at a binary node,
  multinomial L-BFGS at a wider one). This is how napkinXC and Parabel train their nodes, in
  place of SGD on the whole path objective; both minimise the same per-node log-loss (the
  path NLL is the sum of the node losses), here with C-weighted L2 regularisation.
- ``multiclass_hinge_node``: LIBLINEAR's Crammer-Singer multiclass SVM, the per-node
  multiclass hinge of a label tree trained node by node (Bengio et al. 2010, Relaxation 1).

Rows reach their nodes without a per-row path walk: classes are numbered in depth-first
leaf order, so every node's subtree is a contiguous range of that order, and once the rows
are sorted by it, a node's rows are one slice and each child's rows a sub-slice.

A node is fitted on its active features only (the columns nonzero in its rows, renumbered),
so its problem is (rows reaching it) x (features they use), never a D-wide dense array; the
coefficients then go to the model's weight store: added into the toolkit's flat table at
their (row, feature) slots (``table_writer``), or kept exactly, grouped by node (``ExactRows``).
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

from xcbench.tree import node_major, node_pool
from xcbench.tree.weights import slot

_jit = numba.njit(cache=True, nogil=True)


def leaf_order(child_ptr, children, n_classes):
    """(rank of each class in depth-first leaf order, [lo, hi) rank range of each node)."""
    n_nodes = len(child_ptr) - 1
    rank = np.empty(n_classes, dtype=np.int64)
    lo = np.zeros(n_nodes, dtype=np.int64)
    hi = np.zeros(n_nodes, dtype=np.int64)
    nxt = 0
    stack = [(0, int(child_ptr[0]))]  # (node, its next edge to visit)
    while stack:
        node, edge = stack[-1]
        if edge == child_ptr[node + 1]:
            hi[node] = nxt
            stack.pop()
            continue
        stack[-1] = (node, edge + 1)
        child = int(children[edge])
        if child >= 0:
            lo[child] = nxt
            stack.append((child, int(child_ptr[child])))
        else:
            rank[-child - 1] = nxt
            nxt += 1
    return rank, lo, hi


def _child_ranges(node, child_ptr, children, rank, lo, hi):
    """[lo, hi) class-rank range of each child of ``node``, in child order."""
    out = []
    for child in children[child_ptr[node]:child_ptr[node + 1]]:
        if child >= 0:
            out.append((lo[child], hi[child]))
        else:
            r = rank[-child - 1]
            out.append((r, r + 1))
    return out


@_jit
def _add_row(table, row, cols, coef, n_features, mask):
    """Weight row ``row`` += coef on features ``cols`` (hashed slots add, as collisions do)."""
    for j in range(cols.shape[0]):
        if coef[j] != 0.0:
            table[slot(row, cols[j], n_features, mask)] += coef[j]


def table_writer(table, n_features, mask):
    """``write(row, cols, coef)`` adding a node's weights into a flat toolkit table."""
    return lambda row, cols, coef: _add_row(table, row, cols, coef, n_features, mask)


class ExactRows:
    """Collects each row's nonzero weights exactly, then ``node_major(child_ptr, edge_row)``
    groups them by tree node into the store ``children_dot`` reads
    (``xcbench.tree.node_major``): no collisions, and bytes grow with the weights kept, not
    with a table size."""

    def __init__(self):
        self.parts = {}

    def write(self, row, cols, coef):
        keep = coef != 0.0
        self.parts[int(row)] = (cols[keep].astype(np.int32), coef[keep].astype(np.float64))

    def node_major(self, child_ptr, edge_row):
        """The node-major store; each node's rows are released as they are packed."""
        def rows_of_node(node):
            start = child_ptr[node]
            for q in range(child_ptr[node + 1] - start):
                row = int(edge_row[start + q])
                if row in self.parts:
                    yield (q, *self.parts.pop(row))
        return node_major.build(len(child_ptr) - 1, rows_of_node)


def check_exact_store(bits, solver):
    """Refuse ``bits="csr"`` (the exact store ``ExactRows`` fills) without node-by-node
    training: SGD updates weights in place, so it needs a table."""
    if bits == "csr" and solver != "liblinear":
        raise ValueError("bits='csr' keeps weights that are known once training ends: it "
                         "needs solver='liblinear' (SGD updates a table); use bits='auto'")


def _node_problem(Xs, start, stop):
    """The rows [start, stop) of the sorted X on their active columns: (X_node, columns)."""
    block = Xs[start:stop]
    cols, local = np.unique(block.indices, return_inverse=True)
    Xn = sp.csr_matrix((block.data, local.astype(np.int32).reshape(-1), block.indptr),
                       shape=(stop - start, cols.size))
    return Xn, cols.astype(np.int64)


def logistic_node(Xn, target, n_children, C, max_iter, seed):
    """(coef (m, d), intercept (m,)) of child scores s_q = coef[q] . x + intercept[q] for
    q = 0..m-1 with the last child's score 0 (the tree's reference), or None when fewer than
    two children have rows (the caller then uses frequency biases only)."""
    present = np.unique(target)
    if present.size < 2:
        return None
    binary = present.size == 2
    model = LogisticRegression(C=C, solver="liblinear" if binary else "lbfgs",
                               max_iter=max_iter, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(Xn, target)
    coef, intercept = _children_scores(model, present, n_children, Xn.shape[1])
    _below_present(intercept, present, n_children, np.log(Xn.shape[0] + 1.0))
    return coef - coef[-1], intercept - intercept[-1]


def multiclass_hinge_node(Xn, target, n_children, C, max_iter, seed):
    """(coef (m, d), intercept (m,)) of the Crammer-Singer multiclass SVM (LIBLINEAR, through
    scikit-learn's ``LinearSVC``): it minimises C sum_i max(0, 1 + max_{s != y_i} f_s(x_i) -
    f_{y_i}(x_i)) + |[W, b]|^2 / 2 over the children's scores f_s = w_s . x + b_s (a larger
    C regularises less; LIBLINEAR penalises the intercepts too, as a constant feature);
    None when fewer than two children have rows."""
    present = np.unique(target)
    if present.size < 2:
        return None
    model = LinearSVC(multi_class="crammer_singer", dual=True, C=C, max_iter=max_iter,
                      random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(Xn, target)
    coef, intercept = _children_scores(model, present, n_children, Xn.shape[1])
    if present.size == 2:  # LIBLINEAR's two scores sum to 0, as a wider node's do: +-d / 2
        a, b = present
        coef[b] /= 2.0
        intercept[b] /= 2.0
        coef[a], intercept[a] = -coef[b], -intercept[b]
    _below_present(intercept, present, n_children, 1.0)
    return coef, intercept


def _children_scores(model, present, n_children, d):
    """(coef (m, d), intercept (m,)) of a fitted scikit-learn linear classifier over the
    present children. With two classes scikit-learn keeps one row, the score of the second
    minus the first (log p(b) / p(a) for the logistic regression): it goes to child b and
    child a scores 0."""
    if present.size == n_children > 2:  # every child seen: scikit-learn's arrays, no copy
        return model.coef_, model.intercept_.copy()
    coef = np.zeros((n_children, d))
    intercept = np.zeros(n_children)
    if present.size == 2:
        coef[present[1]], intercept[present[1]] = model.coef_[0], model.intercept_[0]
    else:
        coef[present], intercept[present] = model.coef_, model.intercept_
    return coef, intercept


def _below_present(intercept, present, n_children, gap):
    """A child never seen at this node gets w = 0 and a bias ``gap`` below every present
    child's."""
    absent = np.setdiff1d(np.arange(n_children), present)
    if absent.size:
        intercept[absent] = intercept[present].min() - gap


def fit_nodes(tree, X, y, write, bias, C=1.0, max_iter=100, seed=0, threshold=0.0,
              fit_node=logistic_node, n_jobs=1):
    """Fit every internal node of ``tree`` on the rows reaching it with ``fit_node``
    (``logistic_node`` or ``multiclass_hinge_node``); its weights go to ``write(row, cols,
    coef)`` (``table_writer`` or ``ExactRows.write``), its intercepts into ``bias`` (zeros on
    entry). X: CSR (float64), y: int. ``tree`` has ``child_ptr``, ``children`` (a leaf child
    is -(class) - 1), ``edge_row`` (each child's weight row, -1 for none), ``n_nodes`` and
    ``n_classes`` (the tree of ``hsm``; ``as_fit_tree`` adapts a tree whose children are node
    ids). A node may have one child without a row (its score fixed at 0: the other
    children's scores are made relative to it).
    Weights of magnitude below ``threshold`` are dropped (napkinXC's weight pruning): they
    take no slot of a hashed table, so fewer pairs collide.
    ``n_jobs`` > 1 solves that many nodes at a time in worker processes
    (``xcbench.tree.node_pool``); the results are written in node order, so the model is
    the same whatever ``n_jobs``."""
    child_ptr, children, edge_row = tree.child_ptr, tree.children, tree.edge_row
    rank, lo, hi = leaf_order(child_ptr, children, tree.n_classes)
    row_rank = rank[y]
    order = np.argsort(row_rank, kind="stable")
    Xs = sp.csr_matrix(X)[order]
    # start[r] = first sorted row whose class has rank >= r
    start = np.searchsorted(row_rank[order], np.arange(tree.n_classes + 1))
    solver = NodeSolver(fit_node, C, max_iter, seed, threshold)

    def problems():
        for node in range(tree.n_nodes):
            ranges = _child_ranges(node, child_ptr, children, rank, lo, hi)
            sizes = np.array([start[b] - start[a] for a, b in ranges], dtype=np.int64)
            first = start[lo[node]]
            rows = edge_row[child_ptr[node]:child_ptr[node + 1]]
            problem = None
            if sizes.sum() and np.count_nonzero(sizes) >= 2:
                problem = _node_problem(Xs, first, first + int(sizes.sum()))
            yield rows, sizes, problem

    for rows, (intercept, cols, coef) in zip(_edge_rows(tree), node_pool.solve_all(
            solver, problems(), n_jobs)):
        for q in range(len(rows)):
            if rows[q] >= 0:
                bias[rows[q]] += intercept[q]
                if coef is not None:
                    write(rows[q], cols[q], coef[q])


def _edge_rows(tree):
    """Each node's children's weight rows, in node order."""
    for node in range(tree.n_nodes):
        yield tree.edge_row[tree.child_ptr[node]:tree.child_ptr[node + 1]]


class NodeSolver(NamedTuple):
    """One node's problem solved: ``fit_node`` at (C, max_iter, seed), scores made relative
    to a child without a weight row, weights below ``threshold`` dropped. A picklable
    callable, so worker processes can run it (``node_pool``)."""

    fit_node: object
    C: float
    max_iter: int
    seed: int
    threshold: float

    def __call__(self, task):
        """``task``: (each child's weight row, each child's rows at the node, (X_node,
        columns) or None). Returns (intercepts (m,), per child its kept columns, per child
        its kept weights); weights None when the node is not fitted (fewer than two
        children seen: smoothed log-frequency biases)."""
        rows, sizes, problem = task
        m = len(rows)
        if m == 0:  # a leaf
            return np.zeros(0), None, None
        fixed = np.flatnonzero(rows < 0)  # the child whose score is 0, if any
        ref = int(fixed[0]) if fixed.size else m - 1
        fitted = None
        if problem is not None:
            Xn, cols = problem
            target = np.repeat(np.arange(m), sizes)
            fitted = self.fit_node(Xn, target, m, self.C, self.max_iter, self.seed)
        if fitted is None:
            prior = np.log(sizes + 1.0)
            return prior - prior[ref], None, None
        coef, intercept = fitted
        if fixed.size and (intercept[ref] != 0.0 or coef[ref].any()):
            # scores relative to the fixed child (a fitter whose scores are absolute)
            coef, intercept = coef - coef[ref], intercept - intercept[ref]
        return np.asarray(intercept, dtype=np.float64), *_kept_rows(coef, cols, self.threshold)


def _kept_rows(coef, cols, threshold):
    """(per child its columns, per child its weights) of the weights of a node's dense
    (m, d) ``coef`` at least ``threshold`` in magnitude (nonzero when 0): one pass over
    the array, each child's part a slice of the result."""
    child, j = np.nonzero(np.abs(coef) >= threshold if threshold > 0 else coef)
    ptr = np.searchsorted(child, np.arange(coef.shape[0] + 1))
    kept_cols, kept = cols[j], coef[child, j]
    return ([kept_cols[ptr[q]:ptr[q + 1]] for q in range(coef.shape[0])],
            [kept[ptr[q]:ptr[q + 1]] for q in range(coef.shape[0])])


class FitTree(NamedTuple):
    """The tree arrays ``fit_nodes`` reads (see its docstring)."""

    child_ptr: np.ndarray
    children: np.ndarray
    edge_row: np.ndarray
    n_nodes: int
    n_classes: int


def as_fit_tree(child_ptr, children, node_label, n_classes):
    """A tree whose children are node ids and whose leaves carry ``node_label`` (>= 0; -1
    at internal nodes), one weight row per node (its id), as ``fit_nodes`` reads it."""
    label = node_label[children]
    encoded = np.where(label >= 0, -label - 1, children).astype(np.int64)
    return FitTree(child_ptr, encoded, children.astype(np.int64), len(child_ptr) - 1,
                   int(n_classes))
