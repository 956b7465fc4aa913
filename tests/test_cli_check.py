"""``check_method`` says what it checked (a CheckReport), and ``xcbench check METHOD``."""
import numpy as np
import pytest

import xcbench
from xcbench import Method, MethodSpec
from xcbench.cli import EXIT_CELL_FAILED, EXIT_USAGE, main
from xcbench.conformance import CHECK_NAMES, NO_PROBABILITY_MODEL
from xcbench.method import check_labels, check_X, topk_from_scores
from xcbench.plugins import register_plugin
from xcbench.testing import check_method, run_checks

PROBABILITY_CHECKS = ("check_log_proba", "check_top1_matches_log_proba",
                      "check_support_size_counts_log_proba")


class Centroids(Method):
    """Nearest class mean, no probability model and no path cost."""

    def __init__(self, shift=0.0):
        self.shift = shift

    def fit(self, X, y, n_classes=None):
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        X = X.toarray() if hasattr(X, "toarray") else X
        self.n_features_in_ = X.shape[1]
        self.means_ = np.array([X[y == c].mean(0) if np.any(y == c) else
                                np.full(X.shape[1], 1e3) for c in range(self.n_classes_)])
        return self

    def predict_topk(self, X, k=1):
        X = check_X(X, self.n_features_in_)
        X = X.toarray() if hasattr(X, "toarray") else X
        scores = -((X[:, None, :] - self.means_[None]) ** 2).sum(-1) + self.shift
        return topk_from_scores(scores, k)

    def log_proba(self, X, y):
        raise NotImplementedError("no probability model")

    def stats(self):
        return {"n_params": int(self.means_.size), "bytes": int(self.means_.nbytes)}


class Forgetful(Centroids):
    """Pickles without its means: check_pickle must fail."""

    def __getstate__(self):
        state = dict(self.__dict__)
        state["means_"] = state["means_"] * 0
        return state


def test_report_lists_passed_checks_and_what_could_not_be_checked():
    report = check_method(Centroids, skip=("check_clone",))
    assert list(report) == [n for n in CHECK_NAMES if n != "check_clone"]
    assert report.skipped == ["check_clone"] and report.ok
    assert {n: report.notes[n] for n in PROBABILITY_CHECKS} == \
        dict.fromkeys(PROBABILITY_CHECKS, NO_PROBABILITY_MODEL)
    assert "path cost" in report.notes["check_path_cost"]
    text = str(report)
    assert "pass  check_pickle: a pickle round trip of the fitted model predicts the same" \
        in text
    assert f"pass  check_log_proba: {NO_PROBABILITY_MODEL}" in text
    assert "skip  check_clone" in text
    assert text.splitlines()[-1] == \
        "Centroids: 15 of 15 checks run passed (4 with nothing to check), 1 skipped"


def test_every_check_says_what_it_checks():
    from xcbench.testing import check_description

    for name in CHECK_NAMES:
        assert len(check_description(name)) > 20, f"{name} has no docstring"


def test_run_checks_can_go_on_after_a_failure():
    with pytest.raises(AssertionError, match="check_pickle failed"):
        check_method(Forgetful)
    report = run_checks(Forgetful, stop_at_failure=False)
    assert list(report.failed) == ["check_pickle"] and not report.ok
    assert "check_stats" in report and "check_pickle" not in report
    assert "FAILED: check_pickle" in report.summary()


class ChecksPlugin:
    @xcbench.hookimpl
    def register_methods(self, register):
        register(MethodSpec(name="centroids", family="flat", description="test",
                            factory=Centroids))
        register(MethodSpec(name="forgetful", family="flat", description="test",
                            factory=Forgetful))


def test_check_command_prints_each_check_and_exits_by_outcome(capsys, fresh_plugins):
    register_plugin(ChecksPlugin(), name="checks-plugin")
    assert main(["check", "centroids", "--param", "shift=0.5",
                 "--skip", "check_deterministic"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("pass  check_fit_predict_dense: fit and predict_topk on dense")
    assert "skip  check_deterministic" in out
    assert out[-1] == ("centroids(shift=0.5): 15 of 15 checks run passed "
                       "(4 with nothing to check), 1 skipped")
    assert main(["check", "forgetful"]) == EXIT_CELL_FAILED
    out = capsys.readouterr().out
    assert "FAIL  check_pickle: predictions differ after a pickle round trip" in out
    assert out.splitlines()[-1].endswith("FAILED: check_pickle")


def test_check_command_refuses_bad_names(capsys):
    assert main(["check", "sofmax"]) == EXIT_USAGE
    assert "did you mean 'softmax'" in capsys.readouterr().err
    assert main(["check", "softmax", "--param", "Cc=1"]) == EXIT_USAGE
    assert "'Cc' (did you mean 'C'?)" in capsys.readouterr().err
    assert main(["check", "softmax", "--param", "C"]) == EXIT_USAGE
    assert "expected NAME=VALUE" in capsys.readouterr().err
    assert main(["check", "softmax", "--skip", "check_typo"]) == EXIT_USAGE
    assert "unknown check(s) check_typo" in capsys.readouterr().err
