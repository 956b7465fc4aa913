"""Conformance checks for method plugins, like scikit-learn's ``check_estimator``.

Third-party authors check a method (a registered name, a ``MethodSpec`` or a factory) in
their own tests, either all at once::

    check_method("my-method")            # raises on the first failing check

or one pytest test per check, with expected failures and their reasons::

    @parametrize_with_checks(["my-method"], expected_failures={"check_pickle": "why"})
    def test_conformance(check):
        check()

Each check raises AssertionError naming what was wrong. Checks that only read a fitted
model share one fit per method (``Subject.fitted``); the others fit their own.
"""
from __future__ import annotations

import copy
import pickle
from typing import Callable, Iterator

import numpy as np
import scipy.sparse as sp

from .data.synthetic import make_hierarchical
from .method import MethodSpec
from .validate import check_log_proba_output, check_topk_output

N_CLASSES = 12


def gaussian_problem(seed=0):
    """The default conformance problem: 12 hierarchical Gaussian classes in 8 dimensions,
    as (X_train, y_train, X_test, y_test)."""
    ds = make_hierarchical(n_classes=N_CLASSES, n_features=8, n_train=360, n_test=80,
                           levels=2, spread=6.0, shrink=0.5, noise=0.5, bayes_samples=200,
                           seed=seed)
    return ds.X_train, ds.y_train, ds.X_test, ds.y_test


def word_id_problem(seed=0):
    """A conformance problem for text methods: X holds 3 word ids per row (non-negative
    integers), the first of which usually names the class; 12 classes."""
    rng = np.random.default_rng(seed)

    def sample(n):
        y = rng.integers(0, N_CLASSES, size=n)
        first = np.where(rng.random(n) < 0.9, y, rng.integers(0, 40, size=n))
        X = np.column_stack([first, 12 + y // 3, rng.integers(0, 40, size=n)])
        return X.astype(np.float64), y.astype(np.int64)

    return (*sample(360), *sample(80))


def _factory(method, params) -> Callable:
    from .api import get_method_spec

    if isinstance(method, str):
        method = get_method_spec(method)
    if isinstance(method, MethodSpec):
        spec = method
        return lambda **extra: spec.make(**{**params, **extra})
    return lambda **extra: method(**{**params, **extra})


def _label(method, params) -> str:
    name = method if isinstance(method, str) else getattr(method, "name", None) \
        or getattr(method, "__name__", type(method).__name__)
    return name + (f"({','.join(f'{k}={v}' for k, v in sorted(params.items()))})"
                   if params else "")


class Subject:
    """A method under test: its factory, the problem data, and one shared fit."""

    def __init__(self, method, params: dict | None = None,
                 problem: Callable = gaussian_problem):
        self.label = _label(method, params or {})
        self.factory = _factory(method, params or {})
        self._problem, self._data, self._fitted = problem, None, None

    @property
    def data(self):
        """(X_train, y_train, X_test, y_test), generated on first use."""
        if self._data is None:
            self._data = self._problem()
        return self._data

    def make(self, seed=0):
        """An unfitted method, seeded when it takes ``random_state``."""
        try:
            return self.factory(random_state=seed)
        except (TypeError, ValueError):  # the method takes no random_state
            return self.factory()

    def fit(self, X=None, y=None, seed=0):
        """A new fit (on the training data unless X, y are given)."""
        X_train, y_train = self.data[:2]
        return self.make(seed).fit(X_train if X is None else X, y_train if y is None else y,
                                   n_classes=N_CLASSES)

    def fitted(self):
        """The fit shared by the read-only checks (seed 0, dense float64 training data)."""
        if self._fitted is None:
            self._fitted = self.fit()
            try:
                self._pristine = pickle.dumps(self._fitted)
            except Exception:  # noqa: BLE001 - check_pickle reports it
                self._pristine = None
        return self._fitted

    def pristine(self):
        """A copy of the shared fit as it was before any prediction (a new fit when the
        model cannot be pickled)."""
        self.fitted()
        return self.fit() if self._pristine is None else pickle.loads(self._pristine)


def _log_proba(m, X, y):
    """log_proba, or None for a method that declares no probability model."""
    try:
        return m.log_proba(X, y)
    except NotImplementedError:
        return None


def _path_cost(m, X):
    """path_cost, or None for a method that does not measure it."""
    try:
        return m.path_cost(X)
    except NotImplementedError:
        return None


def _check_topk_output(labels, scores, n, k, n_classes, where):
    """check_topk_output as an AssertionError prefixed with ``where``."""
    try:
        check_topk_output(labels, scores, n, k, n_classes)
    except ValueError as exc:
        raise AssertionError(f"{where}: {exc}") from None


def _check_log_proba_output(log_p, n, where):
    """check_log_proba_output as an AssertionError prefixed with ``where``."""
    try:
        check_log_proba_output(log_p, n)
    except ValueError as exc:
        raise AssertionError(f"{where}: {exc}") from None


# ---- checks that fit their own model ---------------------------------------------------


def check_fit_predict_dense(s: Subject):
    X, y, Xt, yt = s.data
    for dtype in (np.float64, np.float32):
        m = s.fitted() if dtype is np.float64 else s.fit(X.astype(dtype))
        labels, scores = m.predict_topk(Xt.astype(dtype), 3)
        _check_topk_output(labels, scores, len(yt), 3, N_CLASSES, f"dense {dtype.__name__}")
        acc = float((labels[:, 0] == yt).mean())
        assert acc > 2.0 / N_CLASSES, \
            f"dense {dtype.__name__}: top-1 accuracy {acc:.2f} on an easy problem is near chance"


def check_fit_predict_sparse(s: Subject):
    X, y, Xt, yt = s.data
    Xs, Xts = sp.csr_matrix(np.where(np.abs(X) < 0.3, 0, X)), sp.csr_matrix(Xt)
    m = s.fit(Xs)
    labels, scores = m.predict_topk(Xts, 3)
    _check_topk_output(labels, scores, len(yt), 3, N_CLASSES, "sparse CSR")
    dense = m.predict_topk(Xts.toarray(), 3)
    assert np.array_equal(labels, dense[0]), "sparse and dense copies of X predict differently"


def check_absent_classes(s: Subject):
    X, y, Xt, yt = s.data
    keep = y < N_CLASSES - 3  # the last three classes never appear in training
    m = s.fit(X[keep], y[keep])
    labels, scores = m.predict_topk(Xt, N_CLASSES)
    _check_topk_output(labels, scores, len(yt), N_CLASSES, N_CLASSES,
                       "classes absent from training")
    log_p = _log_proba(m, Xt, yt)
    if log_p is not None:
        _check_log_proba_output(log_p, len(yt), "classes absent from training")


def check_deterministic(s: Subject):
    Xt = s.data[2]
    a = s.fitted().predict_topk(Xt, 3)
    b = s.fit(seed=0).predict_topk(Xt, 3)
    assert np.array_equal(a[0], b[0]) and np.allclose(a[1], b[1], equal_nan=True), \
        "two fits with the same seed predict differently"


def check_not_fitted(s: Subject):
    from sklearn.exceptions import NotFittedError

    Xt, yt = s.data[2:]
    m = s.make()
    for call, args in (("predict_topk", (Xt[:3], 2)), ("log_proba", (Xt[:3], yt[:3]))):
        try:
            getattr(m, call)(*args)
        except NotFittedError:
            continue
        except NotImplementedError:
            continue
        except Exception as exc:  # noqa: BLE001 - any other error is the failure reported
            raise AssertionError(f"{call} before fit raised {type(exc).__name__}: {exc}; raise "
                                 "sklearn.exceptions.NotFittedError instead") from None
        raise AssertionError(f"{call} before fit returned instead of raising NotFittedError")


def check_clone(s: Subject):
    """sklearn.base.clone gives an unfitted twin with the same constructor parameters."""
    import inspect

    from sklearn.base import clone

    for m in (s.make(), s.fitted()):
        twin = clone(m)
        assert type(twin) is type(m), "clone gave another class"
        init = inspect.signature(type(m).__init__).parameters.values()
        names = [p.name for p in init if p.name != "self" and p.kind not in
                 (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        a = {n: getattr(m, n, None) for n in names} | m.get_params(deep=False)
        b = {n: getattr(twin, n, None) for n in names} | twin.get_params(deep=False)
        changed = _differ(a, b)
        assert not changed, f"clone changed the parameters: {changed}"
        learned = [k for k in vars(twin) if k.endswith("_") and not k.startswith("_")]
        assert not learned, f"a clone must be unfitted, it carries {learned}"


def check_bad_input(s: Subject):
    X, y, Xt, _ = s.data
    m = s.fitted()
    for bad, what in ((Xt[:, :-1], "too few features"), (Xt[0], "a 1-d row")):
        try:
            m.predict_topk(bad, 1)
        except ValueError:
            continue
        raise AssertionError(f"predict_topk accepted {what} instead of raising ValueError")
    for bad_X, bad_y, what in ((X, y, "labels >= n_classes"),
                               (X[:0], y[:0], "0 training rows"),
                               (X, np.array([f"c{v}" for v in y]), "string labels")):
        try:
            s.make().fit(bad_X, bad_y, n_classes=int(y.max()))
        except ValueError:
            continue
        raise AssertionError(f"fit accepted {what} instead of raising ValueError")


# ---- checks that only read the shared fit ----------------------------------------------


def check_k_larger_than_classes(s: Subject):
    Xt = s.data[2]
    k = N_CLASSES + 5
    labels, scores = s.fitted().predict_topk(Xt[:7], k)
    _check_topk_output(labels, scores, 7, k, N_CLASSES, f"k={k} > K={N_CLASSES}")
    assert np.all(labels[:, N_CLASSES:] == -1), "more real labels than classes"


def check_log_proba(s: Subject):
    Xt, yt = s.data[2:]
    m = s.fitted()
    log_p = _log_proba(m, Xt, yt)
    if log_p is None:  # no probability model: nothing more to check
        return
    _check_log_proba_output(log_p, len(yt), "log_proba")
    assert np.isfinite(log_p).mean() > 0.5, "log_proba is -inf for most rows of an easy problem"
    support = m.support_size(Xt)
    assert support.shape == (len(yt),) and np.all((support >= 1) & (support <= N_CLASSES)), \
        "support_size must be in 1..K for each row"


def check_pickle(s: Subject):
    Xt, yt = s.data[2:]
    m = s.fitted()
    m2 = pickle.loads(pickle.dumps(m))
    a, b = m.predict_topk(Xt, 3), m2.predict_topk(Xt, 3)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]), \
        "predictions differ after a pickle round trip"
    a, b = _log_proba(m, Xt, yt), _log_proba(m2, Xt, yt)
    assert (a is None and b is None) or np.array_equal(a, b), \
        "log_proba differs after a pickle round trip"


def check_stats(s: Subject):
    stats = s.fitted().stats()
    for key in ("n_params", "bytes"):
        assert key in stats and int(stats[key]) >= 0, f"stats() must report {key!r}"


def _differ(a, b, path="", depth=0) -> dict[str, str]:
    """Where two values (e.g. model attributes) differ: {path: what changed}, empty when
    equal. Objects are compared through their __dict__; others with ==."""
    if depth > 20:
        return {}
    if type(a) is not type(b):
        return {path: f"type {type(a).__name__} -> {type(b).__name__}"}
    if isinstance(a, np.ndarray):
        same = a.shape == b.shape and a.dtype == b.dtype and (
            np.array_equal(a, b, equal_nan=a.dtype.kind in "fc") if a.dtype != object
            else all(not _differ(x, y) for x, y in zip(a.ravel(), b.ravel())))
        return {} if same else {path: "array changed"}
    if sp.issparse(a):
        return {} if a.shape == b.shape and (a != b).nnz == 0 else {path: "matrix changed"}
    if isinstance(a, dict):
        out = {f"{path}[{k!r}]": "added" for k in b.keys() - a.keys()}
        out.update({f"{path}[{k!r}]": "removed" for k in a.keys() - b.keys()})
        for k in a.keys() & b.keys():
            out.update(_differ(a[k], b[k], f"{path}[{k!r}]", depth + 1))
        return out
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return {path: f"length {len(a)} -> {len(b)}"}
        out = {}
        for i, (x, y) in enumerate(zip(a, b)):
            out.update(_differ(x, y, f"{path}[{i}]", depth + 1))
        return out
    if isinstance(a, float) and np.isnan(a) and np.isnan(b):
        return {}
    if hasattr(a, "__dict__") and not isinstance(a, type):
        return _differ(vars(a), vars(b), path, depth + 1)
    try:
        return {} if bool(a == b) else {path: f"{a!r} -> {b!r}"}
    except Exception:  # noqa: BLE001 - not comparable
        return {path: "not comparable"}


def _snapshot(m):
    try:
        return copy.deepcopy(vars(m))
    except Exception:  # noqa: BLE001 - e.g. an extension object: fall back to pickle
        return vars(pickle.loads(pickle.dumps(m)))


def check_predict_is_pure(s: Subject):
    """predict_topk, predict and path_cost write nothing to the model (scikit-learn's
    check_dict_unchanged): its attributes are equal before and after."""
    Xt = s.data[2]
    m = s.pristine()  # never used to predict
    for call, run in (("predict_topk", lambda: m.predict_topk(Xt, 3)),
                      ("predict_topk on one row", lambda: m.predict_topk(Xt[:1], 1)),
                      ("predict", lambda: m.predict(Xt)),
                      ("path_cost", lambda: _path_cost(m, Xt))):
        before, again = _snapshot(m), _snapshot(m)
        unstable = _differ(before, again)  # differ between two copies (opaque objects)
        run()
        changed = {p: d for p, d in _differ(before, _snapshot(m)).items() if p not in unstable}
        assert not changed, f"{call} changed the model: " + "; ".join(
            f"attribute {p} {d}" for p, d in sorted(changed.items()))


def check_single_row_matches_batch(s: Subject):
    Xt = s.data[2]
    m = s.fitted()
    labels, scores = m.predict_topk(Xt[:8], 3)
    for i in range(8):
        one = m.predict_topk(Xt[i:i + 1], 3)
        assert np.array_equal(one[0][0], labels[i]) and np.allclose(
            one[1][0], scores[i], rtol=1e-5, atol=1e-7), \
            f"row {i} alone predicts {one[0][0]} {one[1][0]}, in a batch {labels[i]} {scores[i]}"


def check_top1_matches_log_proba(s: Subject):
    """Among the top-k labels, the first has the highest log p (when log_proba exists)."""
    Xt = s.data[2]
    m = s.fitted()
    labels, _ = m.predict_topk(Xt, 3)
    if _log_proba(m, Xt, labels[:, 0]) is None:
        return
    log_p = np.column_stack([np.where(labels[:, j] >= 0, m.log_proba(
        Xt, np.maximum(labels[:, j], 0)), -np.inf) for j in range(3)])
    bad = np.flatnonzero(log_p[:, 0] < log_p.max(axis=1) - 1e-6)
    assert not len(bad), (f"{len(bad)} rows rank a label first that has a lower log_proba "
                          f"than another of their top 3, e.g. row {bad[0]}: labels "
                          f"{labels[bad[0]]}, log p {log_p[bad[0]]}")


def check_support_size_counts_log_proba(s: Subject):
    """support_size equals the number of classes with finite log_proba, on a few rows."""
    Xt = s.data[2][:5]
    m = s.fitted()
    if _log_proba(m, Xt, np.zeros(len(Xt), dtype=np.int64)) is None:
        return
    finite = sum(np.isfinite(m.log_proba(Xt, np.full(len(Xt), c))).astype(int)
                 for c in range(N_CLASSES))
    support = np.asarray(m.support_size(Xt))
    assert np.array_equal(support, finite), \
        f"support_size {support.tolist()} != classes with finite log_proba {finite.tolist()}"


def check_path_cost(s: Subject):
    """path_cost, when implemented, gives a finite non-negative float per row."""
    Xt = s.data[2]
    cost = _path_cost(s.fitted(), Xt)
    if cost is None:
        return
    cost = np.asarray(cost)
    assert cost.shape == (len(Xt),) and np.issubdtype(cost.dtype, np.floating), \
        f"path_cost must return ({len(Xt)},) floats, got {cost.shape} {cost.dtype}"
    assert np.all(np.isfinite(cost)) and np.all(cost >= 0), \
        "path_cost must be finite and non-negative"


ALL_CHECKS = [check_fit_predict_dense, check_fit_predict_sparse, check_k_larger_than_classes,
              check_absent_classes, check_log_proba, check_deterministic, check_pickle,
              check_stats, check_bad_input, check_not_fitted, check_clone,
              check_predict_is_pure, check_single_row_matches_batch,
              check_top1_matches_log_proba, check_support_size_counts_log_proba,
              check_path_cost]
CHECK_NAMES = [c.__name__ for c in ALL_CHECKS]


def method_checks(method, params: dict | None = None, problem: Callable = gaussian_problem,
                  subject: Subject | None = None) -> Iterator[tuple[str, Callable[[], None]]]:
    """(check name, callable) for every conformance check of one method; the callables
    share one Subject, hence one fit for the read-only checks."""
    subject = subject or Subject(method, params, problem)
    for check in ALL_CHECKS:
        yield check.__name__, (lambda c=check: c(subject))


def _unknown(names, what):
    unknown = sorted(set(names) - set(CHECK_NAMES))
    if unknown:
        raise ValueError(f"unknown check(s) {', '.join(unknown)} in {what}; "
                         f"checks are: {', '.join(CHECK_NAMES)}")


def check_method(method, params: dict | None = None, skip: tuple[str, ...] = (),
                 problem: Callable = gaussian_problem) -> list[str]:
    """Run every conformance check on a method (registered name, MethodSpec or factory)
    and return the names of the checks run.

    ``params`` are hyperparameters passed to the factory; ``skip`` names checks to leave out
    (say why in your tests); ``problem()`` returns the (X_train, y_train, X_test, y_test)
    the checks use, with labels in 0..11 (``word_id_problem`` for text methods). Raises
    AssertionError naming the first failing check.
    """
    _unknown(skip, "skip")
    ran = []
    for name, check in method_checks(method, params, problem):
        if name in skip:
            continue
        try:
            check()
        except AssertionError as exc:
            raise AssertionError(f"{name} failed for {method!r}: {exc}") from exc
        ran.append(name)
    return ran


def parametrize_with_checks(methods, expected_failures=None,
                            problem: Callable = gaussian_problem):
    """A pytest parametrize decorator: one test per (method, check), the test taking
    ``check`` (call it with no argument), ids ``<method>-<check name>``.

    ``methods``: names, MethodSpecs or factories, or (method, params) pairs.
    ``expected_failures``: {check name: reason}, or a function method -> such a dict; those
    checks are marked xfail with the reason (non-strict: fixed ones show as XPASS).
    """
    import pytest

    params = []
    for entry in methods:
        method, kw = entry if isinstance(entry, tuple) else (entry, {})
        xfail = (expected_failures(method) if callable(expected_failures)
                 else expected_failures) or {}
        _unknown(xfail, "expected_failures")
        subject = Subject(method, kw, problem)
        for name, check in method_checks(method, subject=subject):
            marks = [pytest.mark.xfail(reason=xfail[name])] if name in xfail else []
            params.append(pytest.param(check, id=f"{subject.label}-{name}", marks=marks))
    return pytest.mark.parametrize("check", params)
