"""Linear flat classifiers: a shared scorer and two ways to train and normalise it."""
from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from joblib import effective_n_jobs
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.exceptions import ConvergenceWarning, NotFittedError

from . import chunked_lbfgs
from .chunked_lbfgs import fit_chunked_lbfgs, make_objective
from .stopping import MAX_SECONDS, FitReport
from . import held_out
from .defaults import AUTO_MEMORY_BYTES, DataShape, resolve_flat
from .scoring import linear_scores, log_normalise_rows
from xcbench.contract.method import Method, check_k, check_labels, check_X, topk_from_scores

_CHUNK_CELLS = 1 << 22  # rows x classes scored at once: bounds memory to ~32 MB

_COMMON_CONSTRAINTS = {
    "C": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
    "max_iter": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    "tol": [Interval(Real, 0, None, closed="left")],
    "max_seconds": [Interval(Real, 0, None, closed="neither"), None],
    "random_state": ["random_state"],
}


class _LinearClassifier(Method):
    """Scores s = X W^T + b over the classes seen in training; absent classes get p = 0.

    The weights are stored once, as ``weights_`` = W^T (D, K_seen) C-ordered: a CSR row
    adds one contiguous K-vector per stored feature (O(nnz K)), a dense block is one BLAS
    product. ``coef_`` is the (K_seen, D) view of it, as in scikit-learn.
    """

    _sigmoid = False  # normalise sigmoid(s) (one-vs-all) rather than softmax(s)
    _FULL_ITER = 100  # max_iter="auto" of the scikit-learn solvers (defaults.py)

    def fit(self, X, y, n_classes=None):
        self._validate_params()
        X = check_X(X)
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise ValueError(f"X has shape {X.shape}; fit needs at least one row and one "
                             "feature")
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        self.n_features_in_ = X.shape[1]
        self.classes_ = np.unique(y)
        self._index_of = np.full(self.n_classes_, -1, dtype=np.int64)  # label -> seen index
        self._index_of[self.classes_] = np.arange(len(self.classes_))
        shape = DataShape.of(X, len(self.classes_))
        self.resolved_params_ = resolve_flat(self.get_params(), shape, self._FULL_ITER)
        self._resolve_on_held_out_rows(X, y, shape)
        if len(self.classes_) == 1:  # nothing to learn: the one class gets probability 1
            weights, intercept = np.zeros((X.shape[1], 1)), np.zeros(1)
            self.fit_report_ = FitReport(0, True, "single_class", 0.0, 0.0, float("nan"),
                                         float(self.tol))
        else:
            weights, intercept, self.fit_report_ = self._train(X, y)
        self.weights_ = np.ascontiguousarray(weights, dtype=np.float64)
        self.intercept_ = np.ascontiguousarray(intercept, dtype=np.float64)
        return self

    def _check_fitted(self):
        """NotFittedError before fit (scikit-learn's check_is_fitted costs ~10 us, a tenth of
        one sparse prediction)."""
        if "weights_" not in self.__dict__:
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")

    @property
    def coef_(self):
        """The weights as (K_seen, D), a view of ``weights_``."""
        return self.weights_.T

    def _param(self, name):
        """A parameter's value in this fit (``"auto"`` resolved)."""
        return self.resolved_params_.get(name, getattr(self, name))

    def _resolve_on_held_out_rows(self, X, y, shape: DataShape) -> None:
        """Settle parameters that need fits on held-out rows (none here; see Softmax)."""

    @property
    def _temperature(self) -> float:
        """T dividing the scores before normalisation (1: the scores as trained)."""
        return float(self.resolved_params_.get("temperature",
                                                getattr(self, "temperature", 1.0)))

    def _train(self, X, y):  # pragma: no cover - abstract
        """Return (W^T (D, K_seen), intercept (K_seen,), ``stopping.FitReport``) for the
        classes in ``classes_``."""
        raise NotImplementedError

    def _chunked(self, X, y, loss: str):
        """``_train`` by the chunked / joint L-BFGS (``chunked_lbfgs``)."""
        max_iter = int(self._param("max_iter"))

        def progress(rule):
            self.report_progress(rule.iterations, max_iter, "L-BFGS iteration")

        return fit_chunked_lbfgs(X, self._index_of[y], len(self.classes_), loss,
                                 C=float(self._param("C")), max_iter=max_iter, tol=self.tol,
                                 max_seconds=self.max_seconds, on_iteration=progress)

    def _sklearn_report(self, X, y, weights, intercept, n_iter) -> FitReport:
        """How a scikit-learn solve ended: its iterations (the most of its problems), the
        objective and gradient of the fitted weights in ``chunked_lbfgs``'s scale (one
        pass over X); converged when it stopped before ``max_iter``."""
        max_iter = int(self._param("max_iter"))
        loss = "ova" if self._sigmoid else "softmax"
        objective = make_objective(X, np.ascontiguousarray(self._index_of[y]),
                                   len(self.classes_), loss, float(self._param("C")))
        value, grad = objective(np.concatenate([np.ravel(weights), intercept]))
        iterations = int(np.max(n_iter))
        converged = iterations < max_iter
        return FitReport(iterations, converged, "gradient" if converged else "max_iter",
                         float(value), float(np.max(np.abs(grad))), float("nan"),
                         float(self.tol))

    def _log_probs_chunks(self, X):
        """Yield (first row, log-probabilities over seen classes) for chunks of valid X."""
        step = max(1, _CHUNK_CELLS // len(self.classes_))
        temperature = self._temperature
        for start in range(0, X.shape[0], step):
            scores = linear_scores(X, start, min(start + step, X.shape[0]), self.weights_,
                                   self.intercept_)
            if temperature != 1.0:
                scores /= temperature
            log_normalise_rows(scores, self._sigmoid)
            yield start, scores

    def predict_topk(self, X, k=1):
        k = check_k(k)
        self._check_fitted()
        X = check_X(X, self.n_features_in_)
        n = X.shape[0]
        labels = np.empty((n, k), dtype=np.int64)
        scores = np.empty((n, k), dtype=np.float64)
        for start, log_p in self._log_probs_chunks(X):
            idx, top = topk_from_scores(log_p, k)
            stop = start + log_p.shape[0]
            labels[start:stop] = np.where(idx >= 0, self.classes_[np.maximum(idx, 0)], -1)
            scores[start:stop] = top
        return labels, scores

    def log_proba(self, X, y):
        self._check_fitted()
        X = check_X(X, self.n_features_in_)
        y, _ = check_labels(y, X.shape[0], self.n_classes_)
        col = self._index_of[y]
        out = np.full(len(y), -np.inf)
        for start, log_p in self._log_probs_chunks(X):
            stop = start + log_p.shape[0]
            c = col[start:stop]
            seen = c >= 0
            rows = np.nonzero(seen)[0]
            out[start + rows] = log_p[rows, c[seen]]
        return out

    def support_size(self, X):
        self._check_fitted()
        return np.full(X.shape[0], len(self.classes_), dtype=np.int64)

    def path_cost(self, X):
        """Every seen class is scored: K_seen vectors per row."""
        self._check_fitted()
        return np.full(X.shape[0], float(len(self.classes_)))

    def stats(self):
        n_params = self.weights_.size + self.intercept_.size
        return {
            "n_params": int(n_params),
            "nonzero_params": int(np.count_nonzero(self.weights_)
                                  + np.count_nonzero(self.intercept_)),
            "bytes": int(self.weights_.nbytes + self.intercept_.nbytes + self.classes_.nbytes),
            "depth": 0,
            "leaves": 1,
            "classes_per_leaf_mean": float(len(self.classes_)),
            "classes_per_leaf_max": int(len(self.classes_)),
            "nodes_per_prediction": float(len(self.classes_)),
            **self.fit_report_.as_stats(),
        }


def _bytes_of_labels(n_samples: int) -> int:
    """The per-row vectors ``fit`` itself makes (labels as int64, seen index, unique)."""
    return 32 * n_samples


class Softmax(_LinearClassifier):
    """Multinomial logistic regression, L2-regularised.

    Parameters: ``C`` inverse regularisation strength (``"auto"``: from the weights per
    training row and the rows' spread, see ``defaults.py``, then where cheap the best of
    that C x 0.01, 0.1, 1 on held-out training rows, see ``held_out.py``),
    ``temperature`` T, log p = log softmax(s / T) (``"auto"``: fitted to held-out training
    rows where cheap, else 1; it never changes the ranking), ``max_iter`` (a safety cap;
    ``"auto"``: 100 for scikit-learn's lbfgs, 1,000 for chunked-lbfgs, see
    ``defaults.py``), ``tol`` (chunked-lbfgs: the stopping rule of ``stopping.py``;
    scikit-learn: its own tolerance), ``max_seconds`` (chunked-lbfgs: a cap of CPU seconds,
    1.5 h by default, recorded as not converged), ``solver``:
    ``"lbfgs"``, ``"newton-cg"``, ``"sag"`` or ``"saga"`` (scikit-learn's
    ``LogisticRegression``), ``"chunked-lbfgs"`` (the same objective with the loss computed
    over row chunks, memory bounded; see ``chunked_lbfgs``), or ``"auto"`` (default):
    scikit-learn's lbfgs while an n x K matrix of doubles fits in ``AUTO_MEMORY_BYTES``,
    chunked beyond; ``random_state``.

    Memory of ``fit`` beyond X (``estimate_memory``), with P = K (D + 1) parameters, in
    bytes: chunked-lbfgs ``8 P (2 * 20 + 38) + 16 min(nK, 2^22) + 12 nnz_chunk + 56 n``
    plus the preconditioner's ``48 D^2`` (L-BFGS history of 20 pairs, see
    ``chunked_lbfgs.memory_bytes``); scikit-learn
    (measured with tracemalloc on scikit-learn 1.9, then rounded up; lbfgs checked on 1.3 too) lbfgs
    ``8 (3 nK + 52 P) + 64 n``, newton-cg ``8 (5 nK + 14 P) + 64 n``, sag / saga
    ``8 (1.5 nK + 7 P) + 64 n``. Prediction scores ``2^22 / K`` rows at a time.
    """

    AUTO_MEMORY_BYTES = AUTO_MEMORY_BYTES
    _SKLEARN_COST = {"lbfgs": (3.0, 52.0), "newton-cg": (5.0, 14.0), "sag": (1.5, 7.0),
                     "saga": (1.5, 7.0)}  # doubles per (n K, P), see the class docstring

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "solver": [StrOptions({"auto", "chunked-lbfgs", *_SKLEARN_COST})],
        "temperature": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
    }

    def __init__(self, C="auto", max_iter="auto", tol=1e-4, solver="auto", temperature="auto",
                 max_seconds=MAX_SECONDS, random_state=None):
        self.C = C
        self.max_seconds = max_seconds
        self.temperature = temperature
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.random_state = random_state

    def _resolved_solver(self, n_samples: int, n_classes: int) -> str:
        shape = DataShape(n_samples, 0, n_classes)
        return resolve_flat({"solver": self.solver}, shape, self._FULL_ITER).get(
            "solver", self.solver)

    def estimate_memory(self, n_samples, n_features, nnz, n_classes):
        """Upper estimate of fit's peak bytes beyond X (formulas in the class docstring)."""
        solver = self._resolved_solver(n_samples, n_classes)
        base = _bytes_of_labels(n_samples) + self._held_out_bytes(n_samples, nnz, n_classes,
                                                                   solver)
        if solver == "chunked-lbfgs":
            return base + chunked_lbfgs.memory_bytes(n_samples, n_features, nnz, n_classes)
        per_nk, per_param = self._SKLEARN_COST[solver]
        n_params = n_classes * (n_features + 1)
        return int(base + 8 * (per_nk * n_samples * n_classes + per_param * n_params)
                   + 32 * n_samples)

    def _held_out_runs(self, n_samples, nnz, n_classes, solver) -> bool:
        """Whether fit chooses on held-out rows: C or temperature ``"auto"``, on data where
        ``held_out.search_is_cheap`` (the one test ``fit`` and ``estimate_memory`` share)."""
        return (self.C == "auto" or self.temperature == "auto") and held_out.search_is_cheap(
            n_samples, nnz, n_classes, solver)

    def _held_out_bytes(self, n_samples, nnz, n_classes, solver) -> int:
        """What the held-out choices add to fit's peak: the held-out fits' copy of the rows
        (at most 12 bytes per stored value, as CSR, plus row pointers); their solver runs
        on fewer rows than the final fit, and the held-out scores, 0.2 n K doubles, are
        below the in-memory solver's own 3 n K."""
        if not self._held_out_runs(n_samples, nnz, n_classes, solver):
            return 0
        return 12 * nnz + 8 * n_samples

    def _resolve_on_held_out_rows(self, X, y, shape: DataShape) -> None:
        """C (when ``"auto"``) and temperature (when ``"auto"``) from fits on held-out
        training rows where ``held_out.search_is_cheap``; otherwise the rule's C and T = 1."""
        want_C, want_T = self.C == "auto", self.temperature == "auto"
        if len(self.classes_) < 2 or not self._held_out_runs(
                shape.n_samples, shape.nnz, len(self.classes_), self._param("solver")):
            if want_T:
                self.resolved_params_["temperature"] = 1.0
            return
        candidates = held_out.candidate_Cs(self._param("C")) if want_C else [self._param("C")]
        if len(candidates) == 1 and not want_T:  # nothing to choose
            self.resolved_params_["C"] = candidates[0]
            return
        fit_rows, held_rows = held_out.split_rows(X.shape[0], self.random_state)
        given_T = None if want_T else float(self.temperature)
        results = {}
        for i, C in enumerate(candidates):
            self.report_progress(i, len(candidates), f"held-out fit, C = {C:g}")
            scores, columns = self._held_out_scores(X, y, fit_rows, held_rows, C)
            results[C] = held_out.score_held_out(scores, columns, given_T)
        chosen = held_out.best_candidate(results, len(held_rows))
        self.held_out_ = results
        if want_C:
            self.resolved_params_["C"] = chosen
        if want_T:
            self.resolved_params_["temperature"] = results[chosen].temperature

    def _held_out_scores(self, X, y, fit_rows, held_rows, C):
        """Scores of the held-out rows (n_held, K_fit) by a model of C fitted on the other
        rows, and each held-out row's column in them (-1: a class that fit never saw)."""
        model = Softmax(C=C, max_iter=int(self._param("max_iter")), tol=self.tol,
                        max_seconds=self.max_seconds,
                        solver=self._param("solver"), temperature=1.0,
                        random_state=self.random_state).fit(X[fit_rows], y[fit_rows],
                                                            self.n_classes_)
        held_X = X[held_rows]
        scores = linear_scores(held_X, 0, held_X.shape[0], model.weights_, model.intercept_)
        return scores, model._index_of[y[held_rows]]

    def _train(self, X, y):
        solver, max_iter = self._param("solver"), int(self._param("max_iter"))
        if solver == "chunked-lbfgs":
            return self._chunked(X, y, "softmax")
        model = LogisticRegression(C=float(self._param("C")), max_iter=max_iter, tol=self.tol,
                                   solver=solver, random_state=self.random_state)
        with warnings.catch_warnings():  # the report says whether it converged
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, y)
        if len(self.classes_) == 2:  # sklearn stores one row for two classes
            weights = np.vstack([-model.coef_ / 2, model.coef_ / 2]).T
            intercept = np.array([-model.intercept_[0] / 2, model.intercept_[0] / 2])
        else:
            weights, intercept = model.coef_.T, model.intercept_
        return weights, intercept, self._sklearn_report(X, y, weights, intercept,
                                                        model.n_iter_)


class OneVsAll(_LinearClassifier):
    """One binary logistic regression per class.

    p(y|x) is each class's sigmoid normalised over the classes (as scikit-learn's
    ``OneVsRestClassifier.predict_proba`` does). Parameters: ``C`` (as ``Softmax``),
    ``max_iter``, ``tol`` and ``max_seconds`` (as ``Softmax``; ``"auto"`` ``max_iter``:
    1,000 for joint-lbfgs, 200 for a scikit-learn solver),
    ``solver``: ``"joint-lbfgs"`` (default: all K problems as one L-BFGS problem, see
    ``chunked_lbfgs``) or a scikit-learn LogisticRegression solver (``"liblinear"``,
    ``"lbfgs"``, ``"newton-cg"``, ``"sag"``, ``"saga"``) run once per class through
    ``OneVsRestClassifier``; ``n_jobs`` (binary problems trained in parallel, scikit-learn
    solvers only), ``random_state``.

    Memory of ``fit`` beyond X (``estimate_memory``), with P = K (D + 1) parameters, in
    bytes: joint-lbfgs ``8 P (2 * 20 + 38) + 16 min(nK, 2^22) + 12 nnz_chunk + 56 n``
    plus ``48 D^2`` (see ``chunked_lbfgs.memory_bytes``); a scikit-learn solver
    ``24 P + 56 n + jobs * (8 * 52 (D + 1) + 64 n)``, plus for liblinear its copy of X,
    ``jobs * 16 (nnz + 2n)`` (the K fitted rows are kept, stacked and transposed: 3 P; each
    of ``jobs`` parallel binary problems runs an L-BFGS-sized solver over D + 1 weights).
    """

    _sigmoid = True
    _FULL_ITER = 200
    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "solver": [StrOptions({"joint-lbfgs", "lbfgs", "liblinear", "newton-cg", "sag",
                               "saga"})],
        "n_jobs": [None, Integral],
    }

    def __init__(self, C="auto", max_iter="auto", tol=1e-4, solver="joint-lbfgs", n_jobs=1,
                 max_seconds=MAX_SECONDS, random_state=None):
        self.C = C
        self.max_seconds = max_seconds
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.n_jobs = n_jobs
        self.random_state = random_state

    def estimate_memory(self, n_samples, n_features, nnz, n_classes):
        """Upper estimate of fit's peak bytes beyond X (formulas in the class docstring)."""
        base = _bytes_of_labels(n_samples)
        if self.solver == "joint-lbfgs":
            return base + chunked_lbfgs.memory_bytes(n_samples, n_features, nnz, n_classes)
        jobs = min(effective_n_jobs(self.n_jobs), max(n_classes, 1))
        per_problem = 8 * 52 * (n_features + 1) + 64 * n_samples
        if self.solver == "liblinear":
            per_problem += 16 * (nnz + 2 * n_samples)
        return int(base + 24 * n_classes * (n_features + 1) + 24 * n_samples
                   + jobs * per_problem)

    def _train(self, X, y):
        max_iter, C = int(self._param("max_iter")), float(self._param("C"))
        if self.solver == "joint-lbfgs":
            return self._chunked(X, y, "ova")
        binary = LogisticRegression(C=C, max_iter=max_iter, tol=self.tol,
                                    solver=self.solver, random_state=self.random_state)
        with warnings.catch_warnings():  # the report says whether it converged
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = OneVsRestClassifier(binary, n_jobs=self.n_jobs).fit(X, y)
        coef = np.vstack([est.coef_ for est in model.estimators_])
        intercept = np.concatenate([np.atleast_1d(est.intercept_) for est in model.estimators_])
        n_iter = [np.max(est.n_iter_) for est in model.estimators_]
        if len(self.classes_) == 2:  # sklearn fits one problem for two classes
            coef = np.vstack([-coef, coef])
            intercept = np.concatenate([-intercept, intercept])
        weights = np.ascontiguousarray(coef.T)
        return weights, intercept, self._sklearn_report(X, y, weights, intercept, n_iter)
