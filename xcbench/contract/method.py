"""The method contract every classifier plugin follows, and the spec that registers it.

A method is a scikit-learn-style estimator: the constructor stores hyperparameters only,
``fit(X, y)`` learns and returns ``self``, learned attributes end with ``_``. On top of that:

- ``predict_topk(X, k) -> (labels, scores)``: int64 and float64 arrays of shape (n, k), each
  row sorted by decreasing score. Where a method has fewer than ``k`` candidates for a row
  (``k`` larger than the number of classes, or a tree leaf holding few classes), the row is
  padded with label ``-1`` and score ``-inf``.
- ``log_proba(X, y) -> (n,) float64``: log p(y_i | x_i) for the given labels, ``-inf`` where
  the model gives label ``y_i`` probability zero. A method with no probability model raises
  NotImplementedError (and reports no perplexity) rather than inventing one.
- ``support_size(X) -> (n,) int64``: how many classes get non-zero probability for each row
  (used by smoothed perplexity); defaults to all classes.
- ``stats() -> dict``: ``n_params`` (stored numbers), ``bytes``, and where they apply
  ``depth``, ``leaves``, ``classes_per_leaf_mean`` / ``_max``. Statistics of the fitted model
  only: nothing that depends on the last prediction.
- ``path_cost(X) -> (n,) float64``: the work one prediction of each row does, in vectors
  (decision nodes + scored classes) evaluated; a separate call, because ``predict_topk`` is
  pure (it never writes to the model). Optional: the default raises NotImplementedError.
- ``report_progress(step, total, what)`` (provided, optional to call): a long ``fit`` may
  report its passes, epochs or levels, e.g. ``self.report_progress(p + 1, passes, "pass")``;
  the runner's progress line shows them (see ``xcbench.fit_progress``). Nothing is
  passed to ``fit`` and nothing stored on the model; a method that never calls it works
  unchanged.
- ``estimate_memory(n_samples, n_features, nnz, n_classes) -> int``: an upper estimate of the
  peak bytes ``fit`` needs beyond the data itself, from the problem's shape and the method's
  hyperparameters (callable before ``fit``). The runner refuses a cell whose estimate exceeds
  its memory limit. Optional: the default returns None (unknown).
- ``resolved_params_``: optional, set by ``fit``: for each ``"auto"`` parameter, the value
  chosen from the data; the runner stores it and shows it in ``effective_params``.
"""
from __future__ import annotations

import inspect
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ..fit_progress import report_progress
from ..kernels import max_abs

FAMILIES = ("flat", "tree", "embedding")


class Method(BaseEstimator):
    """Base class for xcbench methods (see the module docstring for the contract).

    A fitted method pickles and predicts the same once unpickled (``check_pickle``); load
    only pickles you wrote yourself, as loading one runs code (docs/pickling.md)."""

    def __getattr__(self, name):
        """Reading a learned attribute (public, ending in ``_``) before ``fit`` raises
        NotFittedError (an AttributeError, so ``hasattr`` still answers False)."""
        if name.endswith("_") and not name.startswith("_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"this {type(self).__name__} is not fitted yet (no {name}): "
                                 "call fit before predicting")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def fit(self, X, y, n_classes: int | None = None):  # pragma: no cover - abstract
        """Learn from X (n, D) and labels y in 0..K-1; ``n_classes`` defaults to max(y)+1."""
        raise NotImplementedError

    def predict_topk(self, X, k: int = 1):  # pragma: no cover - abstract
        """Return (labels, scores) of shape (n, k), best first, padded with -1 / -inf."""
        raise NotImplementedError

    def log_proba(self, X, y):  # pragma: no cover - abstract
        """Return log p(y_i | x_i) for each row, -inf where that probability is zero."""
        raise NotImplementedError

    def support_size(self, X):
        """Return, for each row, how many classes have non-zero probability (default: K)."""
        return np.full(_n_rows(X), self.n_classes_, dtype=np.int64)

    def stats(self) -> dict:  # pragma: no cover - abstract
        """Return model statistics: at least ``n_params`` and ``bytes``."""
        raise NotImplementedError

    def path_cost(self, X):
        """Return, for each row, the vectors (decision nodes + scored classes) one prediction
        evaluates, as float64 (n,). Pure: the model is not changed."""
        raise NotImplementedError(f"{type(self).__name__} does not measure its path cost")

    def estimate_memory(self, n_samples: int, n_features: int, nnz: int,
                        n_classes: int) -> int | None:
        """Upper estimate of the peak bytes ``fit`` allocates for a problem of this shape
        (``nnz``: stored feature values of X_train), or None when unknown."""
        return None

    @staticmethod
    def report_progress(step: float, total: float, what: str = "") -> None:
        """Tell whoever runs this fit that ``step`` of ``total`` ``what`` are done (a no-op
        when nobody listens; see :mod:`xcbench.fit_progress`)."""
        report_progress(step, total, what)

    def predict(self, X):
        """Return the top-1 label of each row, shape (n,)."""
        return self.predict_topk(X, 1)[0][:, 0]


def _n_rows(X) -> int:
    return X.shape[0]


#: Largest feature magnitude accepted: the float32 range. Larger values are a scaling
#: mistake, become inf in float32 methods (VW, fastText, napkinXC) and overflow scores.
MAX_ABS_FEATURE = float(np.finfo(np.float32).max)


def check_X(X, n_features: int | None = None, name: str = "X"):
    """Validate a feature matrix; return it as float64 C-ordered ndarray or CSR matrix.

    Raises ValueError naming the problem and the fix: not 2-d, wrong feature count, no rows
    when fitting (``n_features`` None), NaN/inf, non-numeric values, or a value with
    ``|x| > MAX_ABS_FEATURE`` (3.4e38, the float32 range: rescale such features).
    """
    if sp.issparse(X):
        if not isinstance(X, sp.csr_matrix):  # (a CSR matrix as is: rebuilding one costs
            X = sp.csr_matrix(X)              # microseconds per single-example call)
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)
        data = X.data
    else:
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(
                f"{name} must be 2-dimensional (n_samples, n_features), got shape {X.shape}; "
                "reshape a single example with x.reshape(1, -1)"
            )
        if X.dtype not in (np.float32, np.float64):
            X = _as_float(X, name)
        X = np.ascontiguousarray(X)
        data = X
    if n_features is None and X.shape[0] == 0:
        raise ValueError(f"{name} has 0 rows; fit needs at least one example")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(
            f"{name} has {X.shape[1]} features but the model was fitted with {n_features}"
        )
    if data.size:
        top = float(max_abs(data.reshape(-1)))  # inf for NaN; compiled, no copy of X
        if not math.isfinite(top):
            raise ValueError(f"{name} contains NaN or infinite values; clean or impute them "
                             "first")
        if top > MAX_ABS_FEATURE:
            raise ValueError(
                f"{name} has a value of magnitude {top:.3g}, beyond the float32 range "
                f"({MAX_ABS_FEATURE:.3g}) where scores overflow; rescale the features"
            )
    return X


def _as_float(X: np.ndarray, name: str) -> np.ndarray:
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold numbers, got dtype {X.dtype}; encode "
                         "non-numeric features as numbers first")
    return X.astype(np.float64)


def check_k(k) -> int:
    """``k`` of ``predict_topk`` as an int >= 1 (numpy integers accepted); ValueError
    otherwise (0 would give empty rows, a negative k numpy's own error)."""
    if type(k) is int and k >= 1:  # the common case, first: this runs on every prediction
        return k
    if isinstance(k, numbers.Integral) and not isinstance(k, bool) and k >= 1:
        return int(k)
    raise ValueError(f"k must be a whole number >= 1 (how many labels to return per row), "
                     f"got {k!r}")


def check_labels(y, n_samples: int, n_classes: int | None = None):
    """Validate labels: 1-d integers in 0..K-1, one per row. Return (y as int64, K).

    Floats are accepted when they hold whole numbers; strings and other non-numeric labels
    are refused (encode them first, e.g. with sklearn.preprocessing.LabelEncoder).
    """
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"y must have shape ({n_samples},), got {y.shape}")
    positive_int = (isinstance(n_classes, numbers.Integral)
                    and not isinstance(n_classes, bool) and n_classes >= 1)
    if n_classes is not None and not positive_int:
        raise ValueError(f"n_classes must be a positive integer (the number of classes K), "
                         f"got {n_classes!r}")
    if y.dtype.kind not in "biuf":
        raise ValueError(f"y must hold integer class labels 0..K-1, got dtype {y.dtype}; "
                         "encode labels first, e.g. with sklearn.preprocessing.LabelEncoder")
    if y.size and y.dtype.kind == "f" and not np.all(np.mod(y, 1) == 0):
        bad = float(y[np.mod(y, 1) != 0][0])
        raise ValueError(f"y must hold integer class labels 0..K-1, found {bad!r}; "
                         "encode labels first, e.g. with sklearn.preprocessing.LabelEncoder")
    y = y.astype(np.int64)
    if not y.size and n_classes is None:
        raise ValueError("y is empty; fit needs at least one labelled example")
    if y.size and y.min() < 0:
        raise ValueError(f"labels must be in 0..K-1; found {y.min()}")
    k = int(y.max()) + 1 if n_classes is None else int(n_classes)
    if y.size and y.max() >= k:
        raise ValueError(
            f"label {int(y.max())} is out of range for n_classes={k}; labels must be 0..K-1"
        )
    return y, k


def log_normalize(scores: np.ndarray) -> np.ndarray:
    """Rows of ``scores`` minus their log-sum-exp: log-probabilities summing to 1 per row.

    A plain-numpy version: scipy's ``logsumexp`` costs ~100 us per call in overhead, which
    dominates single-example latency.
    """
    top = scores.max(axis=1, keepdims=True)
    shifted = scores - top
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def topk_from_scores(scores: np.ndarray, k: int):
    """Top-k of a dense (n, K) score block: (labels int64, scores float64), padded if k > K;
    ``k`` is checked (``check_k``)."""
    k = check_k(k)
    n, n_classes = scores.shape
    kk = min(k, n_classes)
    if kk < n_classes:
        part = np.argpartition(-scores, kk - 1, axis=1)[:, :kk]
    else:
        part = np.broadcast_to(np.arange(n_classes), (n, n_classes))
    part_scores = np.take_along_axis(scores, part, axis=1)
    order = np.argsort(-part_scores, axis=1, kind="stable")
    labels = np.full((n, k), -1, dtype=np.int64)
    top = np.full((n, k), -np.inf, dtype=np.float64)
    labels[:, :kk] = np.take_along_axis(part, order, axis=1)
    top[:, :kk] = np.take_along_axis(part_scores, order, axis=1)
    return labels, top


@dataclass
class MethodSpec:
    """How a method is registered: its name, family, factory and parameters.

    ``factory`` is called with keyword hyperparameters and returns an unfitted Method.
    ``param_grid`` maps parameter names to lists of values the runner sweeps by default.
    ``query_params`` maps query-time parameter names (changed with ``set_params`` after
    fitting, e.g. a decoder) to the values the runner measures on one fitted model.
    ``search_space`` maps parameter names to what ``xcbench tune`` searches: a range
    ``{"low": 1e-3, "high": 1e2, "log": True}`` (``"int": True`` for integers) or
    ``{"choices": [...]}``, optionally ``"when": {"solver": "sgd"}``
    (``xcbench.contract.search_space``; docs/tuning.md).
    ``requires`` names the modules the method imports that xcbench does not install by
    default, and ``install`` the command that installs them (``pip install 'xcbench[vw]'``):
    a plan naming the method is refused, with that command, when one is missing
    (``xcbench.contract.availability``).
    """

    name: str
    family: str
    description: str
    factory: Callable[..., Method]
    default_params: dict[str, Any] = field(default_factory=dict)
    param_grid: dict[str, list] = field(default_factory=dict)
    query_params: dict[str, list] = field(default_factory=dict)
    plugin: str = ""
    search_space: dict[str, dict] = field(default_factory=dict)
    requires: tuple[str, ...] = ()
    install: str = ""

    def __post_init__(self):
        from .search_space import check_search_space

        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {self.family!r}")
        self.validate_params({**self.default_params, **self.param_grid, **self.query_params})
        check_search_space(self.search_space, self, values=False)

    def valid_params(self) -> list[str]:
        """Names of the hyperparameters the factory accepts."""
        params = inspect.signature(self.factory).parameters
        return [n for n, p in params.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]

    def validate_params(self, params: dict) -> None:
        """Raise ValueError naming any unknown parameter and listing the valid ones."""
        valid = self.valid_params()
        unknown = sorted(set(params) - set(valid))
        if unknown:
            raise ValueError(
                f"unknown parameter(s) {', '.join(unknown)} for method {self.name!r}; "
                f"valid parameters: {', '.join(valid)}"
            )

    def make(self, **params) -> Method:
        """An unfitted method with the defaults overridden by ``params``."""
        self.validate_params(params)
        return self.factory(**{**self.default_params, **params})
