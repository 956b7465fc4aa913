"""Any scikit-learn classifier as an xcbench method: top-k from its scores, ``log_proba``
from ``predict_proba`` when it has one.

:func:`adapter_class` makes, per estimator class, a subclass of :class:`SklearnClassifier`
whose constructor takes exactly the estimator's parameters (so ``get_params``, ``clone``,
``set_params``, parameter validation and the records' effective values work as for any
method) and pickles by the estimator's import path.
"""
from __future__ import annotations

import inspect
import pickle

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from xcbench.contract.method import Method, check_labels, check_X, topk_from_scores


class SklearnClassifier(Method):
    """Base of the adapters; ``estimator_path`` names the wrapped class. The fitted
    estimator is ``estimator_`` (None when training saw one class: it gets probability 1)."""

    estimator_path = ""
    estimator_class = None

    def __reduce__(self):
        return _rebuild, (self.estimator_path, self.__dict__.copy())

    def _estimator_params(self) -> dict:
        return self.get_params(deep=False)

    def fit(self, X, y, n_classes=None):
        if getattr(self, "_parameter_constraints", None):
            self._validate_params()
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        self.n_features_in_ = X.shape[1]
        self.classes_ = np.unique(y)
        if len(self.classes_) == 1:  # scikit-learn classifiers refuse one class
            self.estimator_ = None
        else:
            self.estimator_ = self.estimator_class(**self._estimator_params()).fit(X, y)
        return self

    def _check(self, X):
        if "classes_" not in self.__dict__:
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit "
                                 "before predicting")
        return check_X(X, self.n_features_in_)

    @property
    def has_probabilities(self) -> bool:
        """Whether the estimator (with these parameters) has ``predict_proba``."""
        return hasattr(self.estimator_class(**self._estimator_params()), "predict_proba")

    def _scores(self, X) -> np.ndarray:
        """(n, classes seen) scores: ``decision_function`` when the estimator has one (as
        its ``predict`` uses), else ``predict_proba``."""
        est = self.estimator_
        if est is None:
            return np.ones((X.shape[0], 1))
        if hasattr(est, "decision_function"):
            scores = np.asarray(est.decision_function(X), dtype=np.float64)
            if scores.ndim == 1:  # two classes: the score of the second
                scores = np.column_stack([-scores, scores])
            return scores
        return np.asarray(est.predict_proba(X), dtype=np.float64)

    def _proba(self, X) -> np.ndarray:
        """(n, classes seen) probabilities; NotImplementedError without predict_proba."""
        if not self.has_probabilities:
            raise NotImplementedError(f"{self.estimator_path} with these parameters has no "
                                      "predict_proba, so no probability model")
        if self.estimator_ is None:
            return np.ones((X.shape[0], 1))
        return np.asarray(self.estimator_.predict_proba(X), dtype=np.float64)

    def predict_topk(self, X, k: int = 1):
        X = self._check(X)
        columns, scores = topk_from_scores(self._scores(X), k)
        labels = np.where(columns >= 0, self.classes_[np.maximum(columns, 0)], -1)
        return labels.astype(np.int64), scores

    def log_proba(self, X, y):
        X = self._check(X)
        y = np.asarray(y, dtype=np.int64)
        proba = self._proba(X)
        column = np.searchsorted(self.classes_, y)
        seen = (column < len(self.classes_)) & (self.classes_[np.minimum(
            column, len(self.classes_) - 1)] == y)
        p = np.zeros(len(y))
        rows = np.flatnonzero(seen)
        p[rows] = proba[rows, column[rows]]
        with np.errstate(divide="ignore"):
            return np.log(p)

    def support_size(self, X):
        X = self._check(X)
        return (self._proba(X) > 0).sum(axis=1).astype(np.int64)

    def stats(self) -> dict:
        """``n_params``: numbers stored in the fitted estimator's arrays (its attributes,
        one level deep); ``bytes``: the size of its pickle; ``depth`` 0 (flat)."""
        est = self.estimator_
        if est is None:
            return {"n_params": 0, "bytes": 0, "depth": 0}
        n_params = 0
        for value in vars(est).values():
            if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
                n_params += value.size
            elif sp.issparse(value):
                n_params += value.nnz
        return {"n_params": int(n_params),
                "bytes": len(pickle.dumps(est, protocol=pickle.HIGHEST_PROTOCOL)), "depth": 0}


_classes: dict[str, type] = {}


def adapter_class(path: str, estimator_class: type) -> type:
    """The SklearnClassifier subclass wrapping ``estimator_class`` (importable as
    ``path``): its constructor takes the estimator's parameters, with its defaults."""
    if path in _classes:
        return _classes[path]
    signature = inspect.signature(estimator_class)
    params = [p for p in signature.parameters.values()
              if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    names = [p.name for p in params]
    defaults = {p.name: p.default for p in params}

    def __init__(self, **kwargs):
        unknown = sorted(set(kwargs) - set(names))
        if unknown:
            raise TypeError(f"{path} got unexpected parameter(s) {', '.join(unknown)}")
        for name in names:
            setattr(self, name, kwargs.get(name, defaults[name]))

    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    __init__.__signature__ = inspect.Signature(
        [self_param] + [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params])
    name = "Sklearn" + estimator_class.__name__
    attrs = {"__init__": __init__, "__module__": __name__, "__qualname__": name,
             "__doc__": f"{path} as an xcbench method (see SklearnClassifier).",
             "estimator_path": path, "estimator_class": estimator_class}
    constraints = getattr(estimator_class, "_parameter_constraints", None)
    if constraints:
        attrs["_parameter_constraints"] = dict(constraints)
    _classes[path] = type(name, (SklearnClassifier,), attrs)
    return _classes[path]


def _rebuild(path: str, state: dict):
    """Unpickle an adapter: import ``path`` again and restore ``state``."""
    from . import import_classifier

    obj = object.__new__(adapter_class(path, import_classifier(path)))
    obj.__dict__.update(state)
    return obj
