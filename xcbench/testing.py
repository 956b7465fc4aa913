"""Conformance checks for method plugins, like scikit-learn's ``check_estimator``.

Third-party authors run ``check_method("my-method")`` (a registered name), or pass a
``MethodSpec`` or a factory, in their own tests. Each check raises AssertionError naming
the check and what was wrong.
"""
from __future__ import annotations

import pickle
from typing import Callable

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


def _factory(method, params) -> Callable:
    from .api import get_method_spec

    if isinstance(method, str):
        method = get_method_spec(method)
    if isinstance(method, MethodSpec):
        spec = method
        return lambda **extra: spec.make(**{**params, **extra})
    return lambda **extra: method(**{**params, **extra})


def _seeded(factory, seed):
    try:
        return factory(random_state=seed)
    except (TypeError, ValueError):  # the method takes no random_state
        return factory()


def _log_proba(m, X, y):
    """log_proba, or None for a method that declares no probability model."""
    try:
        return m.log_proba(X, y)
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


def check_fit_predict_dense(factory, data):
    X, y, Xt, yt = data
    for dtype in (np.float64, np.float32):
        m = _seeded(factory, 0).fit(X.astype(dtype), y, n_classes=N_CLASSES)
        labels, scores = m.predict_topk(Xt.astype(dtype), 3)
        _check_topk_output(labels, scores, len(yt), 3, N_CLASSES, f"dense {dtype.__name__}")
        acc = float((labels[:, 0] == yt).mean())
        assert acc > 2.0 / N_CLASSES, \
            f"dense {dtype.__name__}: top-1 accuracy {acc:.2f} on an easy problem is near chance"


def check_fit_predict_sparse(factory, data):
    X, y, Xt, yt = data
    Xs, Xts = sp.csr_matrix(np.where(np.abs(X) < 0.3, 0, X)), sp.csr_matrix(Xt)
    m = _seeded(factory, 0).fit(Xs, y, n_classes=N_CLASSES)
    labels, scores = m.predict_topk(Xts, 3)
    _check_topk_output(labels, scores, len(yt), 3, N_CLASSES, "sparse CSR")
    dense = m.predict_topk(Xts.toarray(), 3)
    assert np.array_equal(labels, dense[0]), "sparse and dense copies of X predict differently"


def check_k_larger_than_classes(factory, data):
    X, y, Xt, _ = data
    m = _seeded(factory, 0).fit(X, y, n_classes=N_CLASSES)
    k = N_CLASSES + 5
    labels, scores = m.predict_topk(Xt[:7], k)
    _check_topk_output(labels, scores, 7, k, N_CLASSES, f"k={k} > K={N_CLASSES}")
    assert np.all(labels[:, N_CLASSES:] == -1), "more real labels than classes"


def check_absent_classes(factory, data):
    X, y, Xt, yt = data
    keep = y < N_CLASSES - 3  # the last three classes never appear in training
    m = _seeded(factory, 0).fit(X[keep], y[keep], n_classes=N_CLASSES)
    labels, scores = m.predict_topk(Xt, N_CLASSES)
    _check_topk_output(labels, scores, len(yt), N_CLASSES, N_CLASSES, "classes absent from training")
    log_p = _log_proba(m, Xt, yt)
    if log_p is not None:
        _check_log_proba_output(log_p, len(yt), "classes absent from training")


def check_log_proba(factory, data):
    X, y, Xt, yt = data
    m = _seeded(factory, 0).fit(X, y, n_classes=N_CLASSES)
    log_p = _log_proba(m, Xt, yt)
    if log_p is None:  # no probability model: nothing more to check
        return
    _check_log_proba_output(log_p, len(yt), "log_proba")
    assert np.isfinite(log_p).mean() > 0.5, "log_proba is -inf for most rows of an easy problem"
    support = m.support_size(Xt)
    assert support.shape == (len(yt),) and np.all((support >= 1) & (support <= N_CLASSES)), \
        "support_size must be in 1..K for each row"


def check_deterministic(factory, data):
    X, y, Xt, _ = data
    a = _seeded(factory, 7).fit(X, y, n_classes=N_CLASSES).predict_topk(Xt, 3)
    b = _seeded(factory, 7).fit(X, y, n_classes=N_CLASSES).predict_topk(Xt, 3)
    assert np.array_equal(a[0], b[0]) and np.allclose(a[1], b[1], equal_nan=True), \
        "two fits with the same seed predict differently"


def check_pickle(factory, data):
    X, y, Xt, yt = data
    m = _seeded(factory, 0).fit(X, y, n_classes=N_CLASSES)
    m2 = pickle.loads(pickle.dumps(m))
    a, b = m.predict_topk(Xt, 3), m2.predict_topk(Xt, 3)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]), \
        "predictions differ after a pickle round trip"
    a, b = _log_proba(m, Xt, yt), _log_proba(m2, Xt, yt)
    assert (a is None and b is None) or np.array_equal(a, b), \
        "log_proba differs after a pickle round trip"


def check_stats(factory, data):
    X, y, _, _ = data
    stats = _seeded(factory, 0).fit(X, y, n_classes=N_CLASSES).stats()
    for key in ("n_params", "bytes"):
        assert key in stats and int(stats[key]) >= 0, f"stats() must report {key!r}"


def check_bad_input(factory, data):
    X, y, Xt, yt = data
    m = _seeded(factory, 0).fit(X, y, n_classes=N_CLASSES)
    for bad, what in ((Xt[:, :-1], "too few features"), (Xt[0], "a 1-d row")):
        try:
            m.predict_topk(bad, 1)
        except ValueError:
            continue
        raise AssertionError(f"predict_topk accepted {what} instead of raising ValueError")
    try:
        _seeded(factory, 0).fit(X, y, n_classes=int(y.max()))
    except ValueError:
        pass
    else:
        raise AssertionError("fit accepted labels >= n_classes instead of raising ValueError")


ALL_CHECKS = [check_fit_predict_dense, check_fit_predict_sparse, check_k_larger_than_classes,
              check_absent_classes, check_log_proba, check_deterministic, check_pickle,
              check_stats, check_bad_input]


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


def check_method(method, params: dict | None = None, skip: tuple[str, ...] = (),
                 problem: Callable = gaussian_problem) -> None:
    """Run every conformance check on a method (registered name, MethodSpec or factory).

    ``params`` are hyperparameters passed to the factory; ``skip`` names checks to leave out
    (say why in your tests); ``problem()`` returns the (X_train, y_train, X_test, y_test)
    the checks use, with labels in 0..11 (``word_id_problem`` for text methods). Raises
    AssertionError naming the first failing check.
    """
    factory = _factory(method, params or {})
    data = problem()
    for check in ALL_CHECKS:
        if check.__name__ in skip:
            continue
        try:
            check(factory, data)
        except AssertionError as exc:
            raise AssertionError(f"{check.__name__} failed for {method!r}: {exc}") from exc
