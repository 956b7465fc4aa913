"""Linear flat classifiers: a shared scorer and two ways to train and normalise it."""
from __future__ import annotations

import numpy as np
from scipy.special import log_expit
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier

from .chunked_lbfgs import fit_chunked_lbfgs
from xcbench.method import Method, check_labels, check_X, log_normalize, topk_from_scores

_CHUNK_CELLS = 1 << 22  # rows x classes scored at once: bounds memory to ~32 MB


class _LinearClassifier(Method):
    """Scores s = X W^T + b over the classes seen in training; absent classes get p = 0."""

    def fit(self, X, y, n_classes=None):
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        self.n_features_in_ = X.shape[1]
        self.classes_ = np.unique(y)
        self._index_of = np.full(self.n_classes_, -1, dtype=np.int64)  # label -> seen index
        self._index_of[self.classes_] = np.arange(len(self.classes_))
        if len(self.classes_) == 1:  # nothing to learn: the one class gets probability 1
            self.coef_ = np.zeros((1, X.shape[1]))
            self.intercept_ = np.zeros(1)
        else:
            self.coef_, self.intercept_ = self._train(X, y)
        self.coef_ = np.ascontiguousarray(self.coef_, dtype=np.float64)
        self.intercept_ = np.asarray(self.intercept_, dtype=np.float64)
        return self

    def _train(self, X, y):  # pragma: no cover - abstract
        """Return (coef (K_seen, D), intercept (K_seen,)) for the classes in ``classes_``."""
        raise NotImplementedError

    def _log_normalise(self, scores):  # pragma: no cover - abstract
        """Turn raw scores (n, K_seen) into log-probabilities over the seen classes."""
        raise NotImplementedError

    def _log_probs_chunks(self, X):
        """Yield (first row, log-probabilities over seen classes) for chunks of valid X."""
        step = max(1, _CHUNK_CELLS // len(self.classes_))
        for start in range(0, X.shape[0], step):
            chunk = X[start:start + step]
            scores = np.asarray(chunk @ self.coef_.T) + self.intercept_
            yield start, self._log_normalise(scores)

    def predict_topk(self, X, k=1):
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
        return np.full(X.shape[0], len(self.classes_), dtype=np.int64)

    def stats(self):
        n_params = self.coef_.size + self.intercept_.size
        return {
            "n_params": int(n_params),
            "nonzero_params": int(np.count_nonzero(self.coef_) + np.count_nonzero(self.intercept_)),
            "bytes": int(self.coef_.nbytes + self.intercept_.nbytes + self.classes_.nbytes),
            "depth": 0,
            "leaves": 1,
            "classes_per_leaf_mean": float(len(self.classes_)),
            "classes_per_leaf_max": int(len(self.classes_)),
            "nodes_per_prediction": float(len(self.classes_)),
        }


class Softmax(_LinearClassifier):
    """Multinomial logistic regression, L2-regularised, trained by scikit-learn.

    Parameters: ``C`` inverse regularisation strength, ``max_iter``, ``tol``, ``solver``:
    any multinomial solver of ``sklearn.linear_model.LogisticRegression``, or
    ``"chunked-lbfgs"`` (the same objective with the loss computed over row chunks, memory
    bounded; see ``chunked_lbfgs``), or ``"auto"`` (default): scikit-learn's lbfgs while an
    n x K matrix of doubles fits in ``AUTO_MEMORY_BYTES``, chunked beyond; ``random_state``.
    """

    AUTO_MEMORY_BYTES = 2 * 1024**3

    def __init__(self, C=1.0, max_iter=100, tol=1e-4, solver="auto", random_state=None):
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.random_state = random_state

    def _train(self, X, y):
        solver = self.solver
        if solver == "auto":
            too_big = X.shape[0] * len(self.classes_) * 8 > self.AUTO_MEMORY_BYTES
            solver = "chunked-lbfgs" if too_big else "lbfgs"
        if solver == "chunked-lbfgs":
            coef, intercept, _ = fit_chunked_lbfgs(X, self._index_of[y], len(self.classes_),
                                                   "softmax", C=self.C, max_iter=self.max_iter,
                                                   tol=self.tol)
            return coef, intercept
        model = LogisticRegression(C=self.C, max_iter=self.max_iter, tol=self.tol,
                                   solver=solver, random_state=self.random_state)
        model.fit(X, y)
        if len(self.classes_) == 2:  # sklearn stores one row for two classes
            return np.vstack([-model.coef_ / 2, model.coef_ / 2]), \
                np.array([-model.intercept_[0] / 2, model.intercept_[0] / 2])
        return model.coef_, model.intercept_

    def _log_normalise(self, scores):
        return log_normalize(scores)


class OneVsAll(_LinearClassifier):
    """One binary logistic regression per class, trained by scikit-learn.

    p(y|x) is each class's sigmoid normalised over the classes (as scikit-learn's
    ``OneVsRestClassifier.predict_proba`` does). Parameters: ``C``, ``max_iter``, ``tol``,
    ``solver``: ``"joint-lbfgs"`` (default: all K problems as one L-BFGS problem, see
    ``chunked_lbfgs``) or any scikit-learn LogisticRegression solver (``"liblinear"``,
    ``"lbfgs"``, ...) run once per class through ``OneVsRestClassifier``; ``n_jobs``
    (binary problems trained in parallel, scikit-learn solvers only), ``random_state``.
    """

    def __init__(self, C=1.0, max_iter=200, tol=1e-4, solver="joint-lbfgs", n_jobs=1,
                 random_state=None):
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _train(self, X, y):
        if self.solver == "joint-lbfgs":
            coef, intercept, _ = fit_chunked_lbfgs(X, self._index_of[y], len(self.classes_),
                                                   "ova", C=self.C, max_iter=self.max_iter,
                                                   tol=self.tol)
            return coef, intercept
        binary = LogisticRegression(C=self.C, max_iter=self.max_iter, tol=self.tol,
                                    solver=self.solver, random_state=self.random_state)
        model = OneVsRestClassifier(binary, n_jobs=self.n_jobs).fit(X, y)
        coef = np.vstack([est.coef_ for est in model.estimators_])
        intercept = np.concatenate([np.atleast_1d(est.intercept_) for est in model.estimators_])
        if len(self.classes_) == 2:  # sklearn fits one problem for two classes
            coef = np.vstack([-coef, coef])
            intercept = np.concatenate([-intercept, intercept])
        return coef, intercept

    def _log_normalise(self, scores):
        log_sig = log_expit(scores)
        return log_normalize(log_sig)
