"""Softmax tree (``st``): a complete oblique tree with k-class softmax leaves, trained by TAO."""
from __future__ import annotations

import sys
import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions
from threadpoolctl import threadpool_limits

from xcbench.contract.method import Method, check_k, check_labels, check_X
from xcbench.tree.csr_weights import sorted_kernel_input as kernel_input

from . import kernels
from .init import INITS, init_memory, initial_tree
from .memory import fit_memory
from .alpha_search import choose_alpha, search_memory
from .defaults import DataShape, resolve_solver, resolve_st
from .prune import prune
from .smoothing import build, choice_rows, choose, choose_in_sample, smoothing_memory
from .tao import LOSSES, TAOProblem, objective, tao_pass

# parameters st and ast share (scikit-learn's constraint machinery checks them up front)
SHARED_CONSTRAINTS = {
    "alpha": [Interval(Real, 0, None, closed="neither")],
    "loss": [StrOptions(set(LOSSES))],
    "beta": [Interval(Real, 0, None, closed="neither")],
    "leaf_max_iter": [Interval(Integral, 1, None, closed="left")],
    "node_max_iter": [Interval(Integral, 1, None, closed="left")],
    "decision_solver": [StrOptions({"auto", "lbfgs-b", "liblinear", "prox"})],
    "leaf_solver": [StrOptions({"auto", "lbfgs-b", "saga", "prox"})],
    "monotone": ["boolean"],
    "prune": ["boolean"],
    "n_jobs": [Interval(Integral, 1, None, closed="left")],
    "smoothing": [Interval(Real, 0, 1, closed="left"), StrOptions({"auto"})],
    "smoothing_floor": [Interval(Real, 0, 1, closed="left"), StrOptions({"auto"})],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
}


class TreeInference:
    """Training scaffolding, inference, probabilities and statistics shared by ``st`` and
    ``ast``; inference needs ``flat_`` (tree.FlatTree), ``n_classes_`` and
    ``n_features_in_``."""

    def predict_topk(self, X, k=1):
        k = check_k(k)
        X = check_X(X, self.n_features_in_)
        n = X.shape[0]
        labels = np.full((n, k), -1, dtype=np.int64)
        scores = np.full((n, k), -np.inf)
        f, smoother = self.flat_, self.smoother_
        if smoother is None:  # the paper's model: the leaf softmax alone
            kernels.predict_topk(int(k), *f.routing, *f.leaf_arrays, *kernel_input(X), n,
                                 labels, scores)  # pure: nothing is written to the model
        else:
            kernels.predict_topk_smoothed(int(k), *f.routing, *f.leaf_arrays, *kernel_input(X),
                                          n, *smoother.topk_arrays, labels, scores)
        return labels, scores

    def path_cost(self, X):
        """Vectors one prediction evaluates per row: decision nodes on the path + classes
        scored at the leaf reached (float64, (n,))."""
        X = check_X(X, self.n_features_in_)
        steps, sizes = kernels.path_costs(*self.flat_.routing, self.flat_.leaf_ptr,
                                          *kernel_input(X), X.shape[0])
        return (steps + sizes).astype(np.float64)

    def log_proba(self, X, y):
        X = check_X(X, self.n_features_in_)
        y, _ = check_labels(y, X.shape[0], self.n_classes_)
        f = self.flat_
        if self.smoother_ is not None:
            return self.smoother_.log_proba(f, kernel_input(X), y)
        return kernels.log_proba(y, *f.routing, *f.leaf_arrays, *kernel_input(X))

    def support_size(self, X):
        """Classes with a positive probability for each row: its leaf's, or all K when
        smoothed."""
        X = check_X(X, self.n_features_in_)
        if self.smoother_ is not None:
            return np.full(X.shape[0], self.n_classes_, dtype=np.int64)
        f = self.flat_
        return kernels.path_costs(*f.routing, f.leaf_ptr, *kernel_input(X), X.shape[0])[1]

    def stats(self):
        f = self.flat_
        is_leaf = f.left < 0
        depth = f.depths()
        sizes = np.diff(f.leaf_ptr)
        n_params = f.dec_w.nnz + f.dec_b.size + f.leaf_w.nnz + f.leaf_b.size
        return {
            "n_params": int(n_params),  # stored numbers: CSR nonzeros + intercepts
            "nonzero_params": int(f.dec_w.nnz + np.count_nonzero(f.dec_b)
                                  + f.leaf_w.nnz + np.count_nonzero(f.leaf_b)),
            "bytes": int(f.nbytes),
            "depth": int(depth[is_leaf].max()),
            "depth_mean_train": float(self.train_path_length_),
            "leaves": int(is_leaf.sum()),
            "decision_nodes": int((~is_leaf).sum()),
            "classes_per_leaf_mean": float(sizes.mean()),
            "classes_per_leaf_max": int(sizes.max()),
            "nodes_per_prediction_train": float(self.train_path_length_),
            "classes_scored_per_prediction_train": float(self.train_classes_scored_),
            "tao_objective": [float(v) for v in self.objective_curve_],
            "fit_seconds": {k: round(v, 3) for k, v in self.fit_seconds_.items()},
            "smoothing": float(self.smoothing_),  # back-off weight (smoothing.py)
            "smoothing_floor": float(self.smoothing_floor_),  # share spread over all K
            # held-out mean log-likelihood of each (weight/floor) tried by "auto"
            "smoothing_scores": dict(self.smoothing_scores_),
            "smoothing_bytes": 0 if self.smoother_ is None else self.smoother_.nbytes,
        }

    def _fit_memory(self, n_samples, n_features, nnz, n_classes, k, depth, inits=()):
        """``fit_memory`` (memory.py) plus the largest initialisation of ``inits`` and the
        smoothing's (``smoothing_memory``) unless it is off."""
        dense = nnz >= n_samples * n_features
        smoothed = self.smoothing != 0 or self.smoothing_floor != 0
        return (smoothing_memory(n_samples, n_features, nnz, depth, dense, self.smoothing,
                                 self.smoothing_floor)
                if smoothed else 0) + fit_memory(n_samples, n_features, nnz, n_classes, k=k, depth=depth,
                          leaf_solver=resolve_solver(self.leaf_solver, not dense),
                          decision_solver=resolve_solver(self.decision_solver, not dense),
                          n_jobs=self.n_jobs, dense=dense) + max(
            [init_memory(init, n_features, not dense) for init in inits], default=0)

    def _fit_smoothed(self, X, y, fit_tree):
        """Fit the tree (``fit_tree(X, y)`` fits ``flat_`` and returns its TAOProblem) and its
        back-off (smoothing.py). ``"auto"`` weights are chosen on every tenth row: below
        500,000 rows those are kept out of a first fit and the tree is fitted again on every
        row (same random state); above, the tree is fitted once on every row and the rows
        are scored with their own counts deleted."""
        rows, kept_out = choice_rows(len(y), self.smoothing, self.smoothing_floor)
        stats = None
        if kept_out:
            clock = time.perf_counter()
            keep = np.setdiff1d(np.arange(len(y)), rows)
            prob = fit_tree(X[keep], y[keep])
            weight, floor, self.smoothing_scores_ = choose(
                self.flat_, prob.Xk, prob.y, kernel_input(X[rows]), y[rows], self.n_classes_,
                self.smoothing, self.smoothing_floor)
            chosen_on = time.perf_counter() - clock
            prob = fit_tree(X, y)
            prob.seconds["smoothing_choice_fit"] = chosen_on
        else:
            prob = fit_tree(X, y)
            sample = None if rows is None else kernel_input(X[rows])
            weight, floor, self.smoothing_scores_, stats = choose_in_sample(
                self.flat_, prob.Xk, prob.y, sample, None if rows is None else y[rows],
                self.n_classes_, self.smoothing, self.smoothing_floor)
        clock = time.perf_counter()
        self.smoother_ = build(self.flat_, prob.Xk, prob.y, self.n_classes_, weight, floor,
                               stats)
        self.smoothing_, self.smoothing_floor_ = float(weight), float(floor)
        for name, value in (("smoothing", weight), ("smoothing_floor", floor)):
            if getattr(self, name) == "auto":
                self.resolved_params_[name] = float(value)
        prob.seconds["smoothing"] += time.perf_counter() - clock
        self.fit_seconds_ = dict(prob.seconds)
        return self

    def _finish(self, tree, prob, y):
        """Prune (if asked), flatten, record training-set path costs and fit time by phase."""
        clock = time.perf_counter()
        flat = tree.flatten()
        predicted, evaluated, scored = self._train_top1(flat, prob)
        if self.prune:
            removed = self.pruned_ = prune(tree, prob.Xk, y, predicted)
            if any(removed.values()):  # the path statistics changed with the tree
                flat = tree.flatten()
                _, evaluated, scored = self._train_top1(flat, prob)
        self.tree_, self.flat_ = tree, flat
        n = len(y)
        self.train_path_length_ = evaluated / max(n, 1)
        self.train_classes_scored_ = scored / max(n, 1)
        prob.seconds["prune"] += time.perf_counter() - clock
        self.fit_seconds_ = dict(prob.seconds)

    @staticmethod
    def _train_top1(flat, prob):
        """(top-1 label, decisions evaluated, classes scored) over the training set."""
        n = len(prob.y)
        labels = np.full((n, 1), -1, dtype=np.int64)
        evaluated, scored = kernels.predict_topk(1, *flat.routing, *flat.leaf_arrays, *prob.Xk,
                                                 n, labels, np.full((n, 1), -np.inf))
        return labels[:, 0], evaluated, scored

    def _tao_problem(self, X, Xk, y, k, alpha=None):
        """The TAO settings shared by st and ast, from this estimator's parameters
        (``alpha``, if given, replaces the ``alpha`` parameter)."""
        return TAOProblem(X, Xk, y, self.n_classes_, k,
                          alpha=float(self.alpha if alpha is None else alpha),
                          loss=self.loss, beta=float(self.beta),
                          leaf_max_iter=int(self.leaf_max_iter),
                          node_max_iter=int(self.node_max_iter),
                          decision_solver=resolve_solver(self.decision_solver, sp.issparse(X)),
                          leaf_solver=resolve_solver(self.leaf_solver, sp.issparse(X)),
                          monotone=bool(self.monotone), n_jobs=int(self.n_jobs))

    def _tao_passes(self, tree, prob, n_passes, paths=None, start=None):
        """Run TAO passes (the first on ``paths`` if given), recording the objective."""
        for it in range(int(n_passes)):
            tao_pass(tree, prob, paths if it == 0 else None)
            self.objective_curve_.append(objective(tree, prob))
            self.report_progress(it + 1, int(n_passes), "TAO pass")
            if start is not None:
                self._log(f"TAO pass {it + 1}/{n_passes}: objective "
                          f"{self.objective_curve_[-1]:.6g} "
                          f"({time.perf_counter() - start:.1f} s)")

    def _log(self, message):
        if self.verbose:
            print(f"[{type(self).__name__}] {message}", file=sys.stderr, flush=True)


class SoftmaxTree(TreeInference, Method):
    """Softmax tree trained by TAO (Zharmagambetov, Gabidolla & Carreira-Perpinan 2021).

    Build parameters: ``k`` classes per leaf, ``depth`` (Delta) of the initial complete tree,
    ``alpha`` (l1 strength, sum-of-losses scale as in the paper's eq. 1; ``"search"``: picked
    from ``AUTO_ALPHAS`` on a 10% validation split, as the paper did, see
    ``alpha_search.py``), ``n_iter`` TAO
    passes, ``loss`` (``"01"`` default, ``"ce-beta"`` = ST+ with ``beta``, ``"ce-drop"``),
    ``init`` (``"random"`` or ``"cluster"``: the paper's Algorithm 2, ST dagger).
    ``depth``, ``alpha``, ``n_iter`` and ``init`` default to ``"auto"``: a rule on the
    data's shape (``defaults.resolve_st``; docs/methods/softmax-tree.md), resolved at fit
    into ``resolved_params_`` (and ``depth_``, ``alpha_``). Further:
    ``leaf_max_iter`` / ``node_max_iter`` (solver iterations per node problem and pass,
    warm-started), ``leaf_solver`` (``"lbfgs-b"`` or scikit-learn ``"saga"``, the paper's),
    ``decision_solver`` (``"lbfgs-b"`` or ``"liblinear"``, the paper's; see solvers.py for
    the measurements behind the defaults), ``monotone``
    (reject a node update that raises its reduced objective), ``prune``, ``smoothing`` and
    ``smoothing_floor`` (the classes a leaf leaves out backed off along the path, chosen on
    kept-out rows by ``"auto"``; both 0: the paper's model, smoothing.py), ``n_jobs`` (threads
    solving the nodes of one depth in parallel), ``random_state``, ``verbose``.
    Solvers ``"auto"`` (default): ``"prox"`` (compiled FISTA, prox.py) on CSR input, where
    scipy L-BFGS-B's per-variable Python bound handling dominated (st did not finish one TAO
    pass on synthetic-sparse-1k in 600 s), and ``"lbfgs-b"`` on dense input.

    Storage: decision weights and leaf softmaxes are l1-sparse and stored as CSR rows
    (O(nonzero weights), never O(nodes x D)); each node problem is solved over the features
    its training points use (column compression), and sparse X is never densified.
    Fit memory (bytes, beyond X; ``estimate_memory``, memory.py): 16 nnz + 8 N (sorted CSR
    copy) + 8 N (depth + 16) (paths, reduced sets, losses) + n_jobs x the largest node
    problem (root: 24 nnz + 16 N + min(D, nnz) x solver bytes; leaf: k min(D, 2 nnz / 2^depth)
    x solver bytes) + 24 (k + depth + 1) min(N, nnz) (model, at most one nonzero per point and
    output of each l1 problem) + 4 MB fixed
    (+ 64 D with the cluster init on CSR input: its count sketch, ``init.init_memory``).
    """

    _parameter_constraints = {
        **SHARED_CONSTRAINTS,
        "alpha": [*SHARED_CONSTRAINTS["alpha"], StrOptions({"auto", "search"})],
        "k": [Interval(Integral, 1, None, closed="left")],
        "depth": [Interval(Integral, 0, 30, closed="both"), StrOptions({"auto"})],
        "n_iter": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
        "init": [StrOptions({*INITS, "auto"})],
    }

    def __init__(self, k=50, depth="auto", alpha="auto", n_iter="auto", loss="01",
                 beta=100.0, init="auto", leaf_max_iter=20, node_max_iter=50,
                 decision_solver="auto", leaf_solver="auto",
                 monotone=True, prune=True, smoothing="auto", smoothing_floor="auto", n_jobs=1,
                 random_state=None, verbose=False):
        self.k = k
        self.depth = depth
        self.alpha = alpha
        self.n_iter = n_iter
        self.loss = loss
        self.beta = beta
        self.init = init
        self.leaf_max_iter = leaf_max_iter
        self.node_max_iter = node_max_iter
        self.decision_solver = decision_solver
        self.leaf_solver = leaf_solver
        self.monotone = monotone
        self.prune = prune
        self.smoothing = smoothing
        self.smoothing_floor = smoothing_floor
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _resolve(self, shape: DataShape) -> dict:
        """Every parameter's value for data of ``shape``: ``"auto"`` ones by the rule."""
        return {**self.get_params(), **resolve_st(self.get_params(), shape)}

    def estimate_memory(self, n_samples, n_features, nnz, n_classes):
        p = self._resolve(DataShape.from_sizes(n_samples, n_features, nnz, n_classes))
        fit = self._fit_memory(n_samples, n_features, nnz, n_classes, int(p["k"]),
                               int(p["depth"]), inits=(p["init"],))
        search = self.alpha == "search"
        return fit + (search_memory(n_samples, n_features, nnz) if search else 0)

    def fit(self, X, y, n_classes=None):
        self._validate_params()
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        self.n_features_in_ = X.shape[1]
        self.resolved_params_ = resolve_st(self.get_params(), DataShape.of(X, self.n_classes_))
        p = {**self.get_params(), **self.resolved_params_}
        return self._fit_smoothed(X, y, lambda X, y: self._fit_tree(X, y, p))

    def _fit_tree(self, X, y, p):
        """Fit the tree on (X, y) with the resolved parameters ``p``; return its problem."""
        clock = time.perf_counter()
        self.alpha_, self.alpha_validation_error_ = (
            choose_alpha(self, X, y) if self.alpha == "search" else (float(p["alpha"]), {}))
        if self.alpha == "search":
            self.resolved_params_["alpha"] = self.alpha_
        search_seconds = time.perf_counter() - clock
        rng = np.random.default_rng(self.random_state)
        # float32 X stays float32
        prob = self._tao_problem(X, kernel_input(X), y, int(p["k"]), self.alpha_)
        prob.seconds["alpha_search"] = search_seconds
        start = time.perf_counter()
        with threadpool_limits(1):  # parallelism is across nodes (n_jobs), not inside BLAS
            self.depth_ = int(p["depth"])
            tree, paths = initial_tree(p["init"], X, y, self.depth_, self.n_classes_, rng)
            prob.seconds["init"] += time.perf_counter() - start
            self.objective_curve_ = []
            self._tao_passes(tree, prob, int(p["n_iter"]), paths, start=start)
            self._finish(tree, prob, y)
        return prob

    def stats(self):
        """TreeInference's statistics plus the alpha used (and, for ``"auto"``, the
        validation top-1 error of each candidate)."""
        return {**super().stats(), "alpha_used": self.alpha_,
                "alpha_validation_error": dict(self.alpha_validation_error_)}
