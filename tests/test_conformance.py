"""The output rules (xcbench.contract.validate) and the conformance checker (xcbench.testing)."""
import numpy as np
import pytest

from xcbench.contract.validate import check_log_proba_output, check_topk_output

GOOD_LABELS = np.array([[2, 0, -1], [1, 2, 0]])
GOOD_SCORES = np.array([[0.5, 0.1, -np.inf], [3.0, 2.0, 2.0]])


def test_valid_topk_output_passes():
    check_topk_output(GOOD_LABELS, GOOD_SCORES, 2, 3, 3)


@pytest.mark.parametrize("labels, scores, n, k, match", [
    (GOOD_LABELS[:, :1], GOOD_SCORES[:, :1], 2, 3, r"two \(2, 3\) arrays"),
    (GOOD_LABELS.astype(float), GOOD_SCORES, 2, 3, "labels must be integers"),
    (GOOD_LABELS, np.zeros((2, 3), dtype=int), 2, 3, "scores must be floats"),
    (np.array([[3, 0, -1], [1, 2, 0]]), GOOD_SCORES, 2, 3, "out of range"),
    (np.array([[2, 0, -2], [1, 2, 0]]), GOOD_SCORES, 2, 3, "negative label -2"),
    (GOOD_LABELS, np.array([[0.5, 0.1, 0.0], [3.0, 2.0, 2.0]]), 2, 3, "score -inf"),
    (GOOD_LABELS, np.array([[0.1, 0.5, -np.inf], [3.0, 2.0, 2.0]]), 2, 3, "not sorted"),
    (np.array([[2, 2, -1], [1, 2, 0]]), GOOD_SCORES, 2, 3, "repeated a label"),
    (np.array([[-1, 2, 0], [1, 2, 0]]), np.array([[-np.inf, 1, 0], [3.0, 2.0, 2.0]]), 2, 3,
     "no predicted label"),
    (np.array([[2, -1, 0], [1, 2, 0]]), np.array([[1, -np.inf, 0], [3.0, 2.0, 2.0]]), 2, 3,
     "padding .* after"),
    (GOOD_LABELS, np.array([[np.nan, 0.1, -np.inf], [3.0, 2.0, 2.0]]), 2, 3, "NaN score"),
])
def test_invalid_topk_output_is_named(labels, scores, n, k, match):
    with pytest.raises(ValueError, match=match):
        check_topk_output(labels, scores, n, k, 3)


def test_log_proba_rules():
    check_log_proba_output(np.array([-0.1, -np.inf, 0.0]), 3)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        check_log_proba_output(np.zeros((3, 1)), 3)
    with pytest.raises(ValueError, match="floats"):
        check_log_proba_output(np.zeros(3, dtype=int), 3)
    with pytest.raises(ValueError, match="NaN"):
        check_log_proba_output(np.array([-1.0, np.nan, 0.0]), 3)
    with pytest.raises(ValueError, match="<= 0"):
        check_log_proba_output(np.array([-1.0, 5.0, 0.0]), 3)


# ---- the conformance checker ------------------------------------------------------------

import scipy.sparse as sp  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402

from xcbench.contract.method import Method, check_labels, check_X, topk_from_scores  # noqa: E402
from xcbench.testing import (  # noqa: E402
    CHECK_NAMES, Subject, check_clone, check_method, check_not_fitted, check_path_cost,
    check_predict_is_pure, check_single_row_matches_batch, check_support_size_counts_log_proba,
    check_top1_matches_log_proba, method_checks, parametrize_with_checks)


class NearestMean(Method):
    """A tiny correct method: p(c | x) proportional to exp(-||x - mean_c||^2 / 2)."""

    def __init__(self, scale=1.0):
        self.scale = scale

    def fit(self, X, y, n_classes=None):
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        X = X.toarray() if sp.issparse(X) else X
        self.n_features_in_ = X.shape[1]
        self.means_ = np.array([X[y == c].mean(0) if np.any(y == c) else np.full(X.shape[1], 1e3)
                                for c in range(self.n_classes_)])
        return self

    def _log_p(self, X):
        X = check_X(X, self.n_features_in_)
        X = X.toarray() if sp.issparse(X) else X
        logits = -0.5 * self.scale * ((X[:, None, :] - self.means_[None]) ** 2).sum(-1)
        top = logits.max(1, keepdims=True)
        return logits - top - np.log(np.exp(logits - top).sum(1, keepdims=True))

    def predict_topk(self, X, k=1):
        return topk_from_scores(self._log_p(X), k)

    def log_proba(self, X, y):
        return self._log_p(X)[np.arange(len(y)), np.asarray(y)]

    def support_size(self, X):
        return np.full(X.shape[0], self.n_classes_, dtype=np.int64)

    def path_cost(self, X):
        return np.full(X.shape[0], float(self.n_classes_))

    def stats(self):
        return {"n_params": int(self.means_.size), "bytes": int(self.means_.nbytes)}


def test_a_correct_method_passes_every_check_and_the_list_is_returned():
    assert check_method(NearestMean) == CHECK_NAMES
    assert "check_pickle" not in check_method(NearestMean, skip=("check_pickle",))


def test_unknown_skip_names_the_checks():
    with pytest.raises(ValueError, match="unknown check.*check_typo.*checks are: check_fit"):
        check_method(NearestMean, skip=("check_typo",))


FITS = []


class Counted(NearestMean):
    def fit(self, X, y, n_classes=None):
        FITS.append(1)
        return super().fit(X, y, n_classes)


def test_read_only_checks_share_one_fit():
    FITS.clear()
    for name, check in method_checks(Counted):
        check()
    # the shared fit + own fits: float32, sparse, absent classes, deterministic, the
    # three refused by check_bad_input, and dense and sparse in check_inputs_unchanged
    assert len(FITS) == 10


class CountsCalls(NearestMean):
    def predict_topk(self, X, k=1):
        self.calls_ = getattr(self, "calls_", 0) + 1  # written state: not pure
        return super().predict_topk(X, k)


class RowDependent(NearestMean):
    def predict_topk(self, X, k=1):
        labels, scores = super().predict_topk(X, k)
        return labels, scores + (X.shape[0] == 1)  # one row scores differently


class PlainNotFitted:
    """Not a Method subclass: predicting before fit raises a bare AttributeError."""

    def __init__(self):
        pass

    def predict_topk(self, X, k=1):
        return self.means_

    def log_proba(self, X, y):
        return self.means_


class LosesParams(NearestMean):
    def get_params(self, deep=True):
        return {}


class WrongOrder(NearestMean):
    """Ranks by a score that disagrees with its log_proba."""

    def predict_topk(self, X, k=1):
        labels, scores = topk_from_scores(-self._log_p(X), k)
        return labels, scores


class OverstatesSupport(NearestMean):
    def log_proba(self, X, y):
        out = super().log_proba(X, y)
        return np.where(np.asarray(y) == 0, -np.inf, out)  # class 0 has probability zero


class NegativeCost(NearestMean):
    def path_cost(self, X):
        return -np.ones(X.shape[0])


@pytest.mark.parametrize("check, method, match", [
    (check_predict_is_pure, CountsCalls,
     r"predict_topk changed the model: attribute \['calls_'\] added"),
    (check_single_row_matches_batch, RowDependent, "alone predicts"),
    (check_not_fitted, PlainNotFitted, "raised AttributeError.*NotFittedError"),
    (check_clone, LosesParams, "clone"),
    (check_top1_matches_log_proba, WrongOrder, "lower log_proba"),
    (check_support_size_counts_log_proba, OverstatesSupport, "support_size .* != classes"),
    (check_path_cost, NegativeCost, "non-negative"),
])
def test_each_new_check_catches_its_defect(check, method, match):
    with pytest.raises(AssertionError, match=match):
        check(Subject(method, {"scale": 2.0} if method is LosesParams else None))
    if method is not PlainNotFitted:
        check(Subject(NearestMean))  # and passes a correct method


def test_method_before_fit_raises_not_fitted_error():
    with pytest.raises(NotFittedError):
        NearestMean().predict_topk(np.zeros((1, 2)), 1)


def test_parametrize_with_checks_ids_and_expected_failures():
    mark = parametrize_with_checks([NearestMean, (NearestMean, {"scale": 2.0})],
                                   expected_failures={"check_pickle": "a known reason"})
    params = mark.args[1]
    ids = [p.id for p in params]
    assert ids[0] == "NearestMean-check_fit_predict_dense"
    assert "NearestMean(scale=2.0)-check_path_cost" in ids and len(ids) == 2 * len(CHECK_NAMES)
    xfails = {p.id: p.marks[0].kwargs["reason"] for p in params if p.marks}
    assert xfails == {"NearestMean-check_pickle": "a known reason",
                      "NearestMean(scale=2.0)-check_pickle": "a known reason"}
    with pytest.raises(ValueError, match="unknown check"):
        parametrize_with_checks([NearestMean], expected_failures={"check_nope": "x"})


@parametrize_with_checks([NearestMean])
def test_parametrized_checks_run_one_test_per_check(check):
    check()


# ---- issue 61: a method that writes into its inputs ---------------------------------------

def _scribble(a):
    """Write into a dense array or a CSR matrix's values, in place."""
    (a.data if sp.issparse(a) else a)[:1] += 1


class WritesInto(NearestMean):
    """Writes into one argument of one call: ``where`` = (call, argument, "dense"|"sparse")."""

    def __init__(self, scale=1.0, where=("fit", "X", "dense")):
        super().__init__(scale)
        self.where = where

    def _maybe_write(self, call, **args):
        name, arg, kind = self.where
        if name == call and sp.issparse(args["X"]) == (kind == "sparse"):
            _scribble(args[arg])

    def fit(self, X, y, n_classes=None):
        self._maybe_write("fit", X=X, y=y)
        return super().fit(X, y, n_classes)

    def predict_topk(self, X, k=1):
        out = super().predict_topk(X, k)
        self._maybe_write("predict_topk", X=X)
        return out

    def log_proba(self, X, y):
        out = super().log_proba(X, y)
        self._maybe_write("log_proba", X=X, y=y)
        return out


@pytest.mark.parametrize("where", [
    ("fit", "X", "dense"), ("fit", "y", "dense"), ("fit", "X", "sparse"),
    ("fit", "y", "sparse"), ("predict_topk", "X", "dense"), ("predict_topk", "X", "sparse"),
    ("log_proba", "X", "dense"), ("log_proba", "y", "dense"), ("log_proba", "X", "sparse"),
    ("log_proba", "y", "sparse")])
def test_a_method_writing_into_an_input_fails_naming_the_call_and_argument(where):
    from xcbench.testing import check_inputs_unchanged

    call, arg, kind = where
    shown = "sparse CSR" if kind == "sparse" else kind
    check_inputs_unchanged(Subject(NearestMean))  # the unchanged method passes
    with pytest.raises(AssertionError, match=rf"^{call} wrote into its argument {arg} "
                                             rf"\({shown} X\)"):
        check_inputs_unchanged(Subject(WritesInto, {"where": where}))
