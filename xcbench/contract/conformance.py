"""The conformance checks of the method contract, one function per rule.

Each check takes a subject (``xcbench.testing.Subject``: the problem data, an unfitted
method, new fits, and the fit shared by the read-only checks) and raises AssertionError
naming what was wrong; its docstring says what it checks. A check that had nothing to
check (e.g. log_proba rules for a method without a probability model) returns a note
saying so; otherwise it returns None. ``xcbench.testing`` runs them (``check_method``,
``parametrize_with_checks``).
"""
from __future__ import annotations

import pickle

import numpy as np
import scipy.sparse as sp

from .state_diff import snapshot, state_differences
from .validate import (PROBABILITY_SUM_TOLERANCE, check_log_proba_output, check_topk_log_p,
                       check_topk_output)

N_CLASSES = 12
#: what a check returns when it had nothing to check (it returns None when it checked all)
NO_PROBABILITY_MODEL = "not checked: the method has no probability model (log_proba raises " \
    "NotImplementedError)"


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


def check_fit_predict_dense(s):
    """fit and predict_topk on dense float64 and float32 data give well-formed top-k
    output, better than chance on an easy problem."""
    X, y, Xt, yt = s.data
    for dtype in (np.float64, np.float32):
        m = s.fitted() if dtype is np.float64 else s.fit(X.astype(dtype))
        labels, scores = m.predict_topk(Xt.astype(dtype), 3)
        _check_topk_output(labels, scores, len(yt), 3, N_CLASSES, f"dense {dtype.__name__}")
        acc = float((labels[:, 0] == yt).mean())
        assert acc > 2.0 / N_CLASSES, \
            f"dense {dtype.__name__}: top-1 accuracy {acc:.2f} on an easy problem is near chance"


def check_fit_predict_sparse(s):
    """fit and predict_topk accept CSR input, and sparse and dense copies of X predict
    the same labels."""
    X, y, Xt, yt = s.data
    Xs, Xts = sp.csr_matrix(np.where(np.abs(X) < 0.3, 0, X)), sp.csr_matrix(Xt)
    m = s.fit(Xs)
    labels, scores = m.predict_topk(Xts, 3)
    _check_topk_output(labels, scores, len(yt), 3, N_CLASSES, "sparse CSR")
    dense = m.predict_topk(Xts.toarray(), 3)
    assert np.array_equal(labels, dense[0]), "sparse and dense copies of X predict differently"


def check_absent_classes(s):
    """classes that never occur in training still give well-formed top-k and log_proba
    output."""
    X, y, Xt, yt = s.data
    keep = y < N_CLASSES - 3  # the last three classes never appear in training
    m = s.fit(X[keep], y[keep])
    labels, scores = m.predict_topk(Xt, N_CLASSES)
    _check_topk_output(labels, scores, len(yt), N_CLASSES, N_CLASSES,
                       "classes absent from training")
    log_p = _log_proba(m, Xt, yt)
    if log_p is not None:
        _check_log_proba_output(log_p, len(yt), "classes absent from training")


def check_deterministic(s):
    """two fits with the same seed predict the same labels and scores."""
    Xt = s.data[2]
    a = s.fitted().predict_topk(Xt, 3)
    b = s.fit(seed=0).predict_topk(Xt, 3)
    assert np.array_equal(a[0], b[0]) and np.allclose(a[1], b[1], equal_nan=True), \
        "two fits with the same seed predict differently"


def check_not_fitted(s):
    """predict_topk and log_proba before fit raise NotFittedError."""
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


def check_clone(s):
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
        changed = state_differences(a, b)
        assert not changed, f"clone changed the parameters: {changed}"
        learned = [k for k in vars(twin) if k.endswith("_") and not k.startswith("_")]
        assert not learned, f"a clone must be unfitted, it carries {learned}"


def check_bad_input(s):
    """wrong feature counts, 1-d rows, k < 1, out-of-range or string labels and empty
    training data raise ValueError."""
    X, y, Xt, _ = s.data
    m = s.fitted()
    for bad, k, what in ((Xt[:, :-1], 1, "too few features"), (Xt[0], 1, "a 1-d row"),
                         (Xt[:3], 0, "k=0"), (Xt[:3], -1, "k=-1")):
        try:
            m.predict_topk(bad, k)
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


def _copy_input(a):
    """A private copy of a dense or sparse input, to compare with it after a call."""
    return a.copy() if sp.issparse(a) else np.array(a, copy=True)


def _same_input(before, after) -> bool:
    """Whether an input holds what its copy ``before`` held: same type, shape, dtype and
    values (for a sparse matrix, its data, indices and index pointers)."""
    if sp.issparse(before) != sp.issparse(after) or before.shape != after.shape:
        return False
    if sp.issparse(before):
        parts = [(before.data, after.data)] + [
            (getattr(before, n), getattr(after, n)) for n in ("indices", "indptr")
            if hasattr(before, n)]
        return all(a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
                   for a, b in parts)
    return before.dtype == np.asarray(after).dtype and \
        np.array_equal(before, after, equal_nan=before.dtype.kind in "fc")


def _assert_inputs_unchanged(call, run, kind, **inputs):
    """Run ``run()`` and fail naming each of ``inputs`` it wrote into."""
    copies = {name: _copy_input(a) for name, a in inputs.items()}
    run()
    written = [name for name, a in inputs.items() if not _same_input(copies[name], a)]
    assert not written, (f"{call} wrote into its argument{'s' if len(written) > 1 else ''} "
                         f"{', '.join(written)} ({kind} X); a method must leave its inputs "
                         "unchanged (copy what it needs to change)")


def check_inputs_unchanged(s):
    """fit, predict_topk and log_proba leave their inputs (X and y, dense and CSR) unchanged:
    each is compared with a copy taken before the call."""
    X, y, Xt, yt = s.fresh_data()
    Xs = sp.csr_matrix(np.where(np.abs(X) < 0.3, 0, X))
    for kind, X_train, X_test in (("dense", X, Xt), ("sparse CSR", Xs, sp.csr_matrix(Xt))):
        m = s.make()
        _assert_inputs_unchanged("fit", lambda: m.fit(X_train, y, n_classes=N_CLASSES), kind,
                                 X=X_train, y=y)
        _assert_inputs_unchanged("predict_topk", lambda: m.predict_topk(X_test, 3), kind,
                                 X=X_test)
        _assert_inputs_unchanged("log_proba", lambda: _log_proba(m, X_test, yt), kind,
                                 X=X_test, y=yt)


# ---- checks that only read the shared fit ----------------------------------------------


def check_k_larger_than_classes(s):
    """k larger than the number of classes pads the top-k rows with -1 / -inf."""
    Xt = s.data[2]
    k = N_CLASSES + 5
    labels, scores = s.fitted().predict_topk(Xt[:7], k)
    _check_topk_output(labels, scores, 7, k, N_CLASSES, f"k={k} > K={N_CLASSES}")
    assert np.all(labels[:, N_CLASSES:] == -1), "more real labels than classes"


def check_log_proba(s):
    """log_proba gives one log-probability (or -inf) per row, finite for most rows, and
    support_size is in 1..K (when the method has a probability model)."""
    Xt, yt = s.data[2:]
    m = s.fitted()
    log_p = _log_proba(m, Xt, yt)
    if log_p is None:
        return NO_PROBABILITY_MODEL
    _check_log_proba_output(log_p, len(yt), "log_proba")
    assert np.isfinite(log_p).mean() > 0.5, "log_proba is -inf for most rows of an easy problem"
    support = m.support_size(Xt)
    assert support.shape == (len(yt),) and np.all((support >= 1) & (support <= N_CLASSES)), \
        "support_size must be in 1..K for each row"


def check_pickle(s):
    """a pickle round trip of the fitted model predicts the same top-k and log_proba."""
    Xt, yt = s.data[2:]
    m = s.fitted()
    m2 = pickle.loads(pickle.dumps(m))
    a, b = m.predict_topk(Xt, 3), m2.predict_topk(Xt, 3)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]), \
        "predictions differ after a pickle round trip"
    a, b = _log_proba(m, Xt, yt), _log_proba(m2, Xt, yt)
    assert (a is None and b is None) or np.array_equal(a, b), \
        "log_proba differs after a pickle round trip"


def check_stats(s):
    """stats() reports n_params and bytes as non-negative numbers."""
    stats = s.fitted().stats()
    for key in ("n_params", "bytes"):
        assert key in stats and int(stats[key]) >= 0, f"stats() must report {key!r}"


def check_predict_is_pure(s):
    """predict_topk, predict and path_cost write nothing to the model (scikit-learn's
    check_dict_unchanged): its attributes are equal before and after."""
    Xt = s.data[2]
    m = s.pristine()  # never used to predict
    for call, run in (("predict_topk", lambda: m.predict_topk(Xt, 3)),
                      ("predict_topk on one row", lambda: m.predict_topk(Xt[:1], 1)),
                      ("predict", lambda: m.predict(Xt)),
                      ("path_cost", lambda: _path_cost(m, Xt))):
        before = snapshot(m)
        unstable = state_differences(before, snapshot(m))  # opaque objects: differ per copy
        run()
        changed = {p: d for p, d in state_differences(before, snapshot(m)).items()
                   if p not in unstable}
        assert not changed, f"{call} changed the model: " + "; ".join(
            f"attribute {p} {d}" for p, d in sorted(changed.items()))


def check_single_row_matches_batch(s):
    """Each of 8 rows predicted alone gives the labels and scores it gets in a batch."""
    Xt = s.data[2]
    m = s.fitted()
    labels, scores = m.predict_topk(Xt[:8], 3)
    for i in range(8):
        one = m.predict_topk(Xt[i:i + 1], 3)
        assert np.array_equal(one[0][0], labels[i]) and np.allclose(
            one[1][0], scores[i], rtol=1e-5, atol=1e-7), \
            f"row {i} alone predicts {one[0][0]} {one[1][0]}, in a batch {labels[i]} {scores[i]}"


def check_top1_matches_log_proba(s):
    """Among the top-k labels, the first has the highest log p (when log_proba exists)."""
    Xt = s.data[2]
    m = s.fitted()
    labels, _ = m.predict_topk(Xt, 3)
    if _log_proba(m, Xt, labels[:, 0]) is None:
        return NO_PROBABILITY_MODEL
    log_p = np.column_stack([np.where(labels[:, j] >= 0, m.log_proba(
        Xt, np.maximum(labels[:, j], 0)), -np.inf) for j in range(3)])
    bad = np.flatnonzero(log_p[:, 0] < log_p.max(axis=1) - 1e-6)
    assert not len(bad), (f"{len(bad)} rows rank a label first that has a lower log_proba "
                          f"than another of their top 3, e.g. row {bad[0]}: labels "
                          f"{labels[bad[0]]}, log p {log_p[bad[0]]}")


def check_support_size_counts_log_proba(s):
    """support_size equals the number of classes with finite log_proba, on a few rows."""
    Xt = s.data[2][:5]
    m = s.fitted()
    if _log_proba(m, Xt, np.zeros(len(Xt), dtype=np.int64)) is None:
        return NO_PROBABILITY_MODEL
    finite = sum(np.isfinite(m.log_proba(Xt, np.full(len(Xt), c))).astype(int)
                 for c in range(N_CLASSES))
    support = np.asarray(m.support_size(Xt))
    assert np.array_equal(support, finite), \
        f"support_size {support.tolist()} != classes with finite log_proba {finite.tolist()}"


def check_log_proba_sums_to_one(s):
    """log_proba is a distribution: on 20 rows, the probabilities of all K classes sum to 1
    (within 1e-3), and the runner's cheap check on the top-k labels passes (when the method
    has a probability model)."""
    Xt = s.data[2][:20]
    m = s.fitted()
    if _log_proba(m, Xt, np.zeros(len(Xt), dtype=np.int64)) is None:
        return NO_PROBABILITY_MODEL
    total = sum(np.exp(m.log_proba(Xt, np.full(len(Xt), c))) for c in range(N_CLASSES))
    worst = int(np.argmax(np.abs(total - 1)))
    assert abs(total[worst] - 1) <= PROBABILITY_SUM_TOLERANCE, \
        f"the probabilities of the {N_CLASSES} classes sum to {total[worst]:.6g} on row {worst}"
    labels, _ = m.predict_topk(Xt, 3)
    topk = np.column_stack([np.where(labels[:, j] >= 0, m.log_proba(
        Xt, np.maximum(labels[:, j], 0)), -np.inf) for j in range(3)])
    try:
        check_topk_log_p(topk)
    except ValueError as exc:
        raise AssertionError(str(exc)) from None


def check_path_cost(s):
    """path_cost, when implemented, gives a finite non-negative float per row."""
    Xt = s.data[2]
    cost = _path_cost(s.fitted(), Xt)
    if cost is None:
        return "not checked: the method does not measure its path cost"
    cost = np.asarray(cost)
    assert cost.shape == (len(Xt),) and np.issubdtype(cost.dtype, np.floating), \
        f"path_cost must return ({len(Xt)},) floats, got {cost.shape} {cost.dtype}"
    assert np.all(np.isfinite(cost)) and np.all(cost >= 0), \
        "path_cost must be finite and non-negative"


ALL_CHECKS = [check_fit_predict_dense, check_fit_predict_sparse, check_k_larger_than_classes,
              check_absent_classes, check_log_proba, check_deterministic, check_pickle,
              check_stats, check_bad_input, check_not_fitted, check_clone,
              check_inputs_unchanged,
              check_predict_is_pure, check_single_row_matches_batch,
              check_top1_matches_log_proba, check_support_size_counts_log_proba,
              check_log_proba_sums_to_one, check_path_cost]
CHECK_NAMES = [c.__name__ for c in ALL_CHECKS]

__all__ = ["ALL_CHECKS", "CHECK_NAMES", "N_CLASSES", "NO_PROBABILITY_MODEL", *CHECK_NAMES]
