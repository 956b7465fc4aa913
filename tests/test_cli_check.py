"""``check_method`` says what it checked (a CheckReport), and ``xcbench check METHOD``."""
import pytest
from test_conformance import NearestMean

import xcbench
from xcbench import MethodSpec
from xcbench.cli import EXIT_CELL_FAILED, EXIT_USAGE, main
from xcbench.contract.conformance import CHECK_NAMES, NO_PROBABILITY_MODEL
from xcbench.contract.plugins import register_plugin
from xcbench.testing import check_method, run_checks

PROBABILITY_CHECKS = ("check_log_proba", "check_top1_matches_log_proba",
                      "check_support_size_counts_log_proba", "check_log_proba_sums_to_one")


class Centroids(NearestMean):
    """NearestMean without a probability model and without a path cost."""

    def log_proba(self, X, y):
        raise NotImplementedError("no probability model")

    def path_cost(self, X):
        raise NotImplementedError("no path cost")


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
        "Centroids: 17 of 17 checks run passed (5 with nothing to check), 1 skipped"


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
    assert main(["check", "centroids", "--param", "scale=0.5",
                 "--skip", "check_deterministic"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("pass  check_fit_predict_dense: fit and predict_topk on dense")
    assert "skip  check_deterministic" in out
    assert out[-1] == ("centroids(scale=0.5): 17 of 17 checks run passed "
                       "(5 with nothing to check), 1 skipped")
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


# --- issue 34: impossible probabilities; checks that raise something else ----------------

class AlwaysSure(NearestMean):
    """log p = 0 for every label: perplexity 1.0, stored as ok before."""

    def log_proba(self, X, y):
        import numpy as np

        return np.zeros(len(y))


class NeverPossible(NearestMean):
    """log p = -inf for every label: coverage 0, stored as ok before."""

    def log_proba(self, X, y):
        import numpy as np

        return np.full(len(y), -np.inf)


@pytest.mark.parametrize("cls, words", [(AlwaysSure, "sum to 12"),
                                        (NeverPossible, "sum to 0")])
def test_log_proba_that_is_not_a_distribution_fails_a_check(cls, words):
    """Before: such a method passed 15 of 15 checks."""
    report = run_checks(cls, stop_at_failure=False)
    assert "check_log_proba_sums_to_one" in report.failed
    assert words in report.failed["check_log_proba_sums_to_one"]


class WrongShape(Centroids):
    """predict_topk returns one column too few: later checks index past it."""

    def predict_topk(self, X, k=1):
        labels, scores = super().predict_topk(X, k)
        return labels[:, :-1], scores[:, :-1]


class CannotFit(Centroids):
    def fit(self, X, y, n_classes=None):
        raise RuntimeError("fit exploded")


@pytest.mark.parametrize("cls, error", [(WrongShape, "IndexError"),
                                        (CannotFit, "RuntimeError: fit exploded")])
def test_a_check_that_raises_any_error_is_a_fail_and_the_rest_run(cls, error, capsys):
    """Before: an IndexError (wrong-shape output) or a fit that raised ended the whole run
    with a traceback and no summary."""
    report = run_checks(cls, stop_at_failure=False)
    assert len(report) + len(report.failed) == len(CHECK_NAMES)  # every check ran
    assert any(error in text for text in report.failed.values()), report.failed
    with pytest.raises(AssertionError, match="failed for"):
        run_checks(cls)  # the first failure names its check, whatever it raised


# --- issue 61 item 12: the tolerance of a probability sum is 1e-3, not more ------------

class SumsTo(NearestMean):
    """NearestMean's probabilities times ``total``."""

    def __init__(self, scale=1.0, total=1.0):
        super().__init__(scale)
        self.total = total

    def log_proba(self, X, y):
        import numpy as np

        return np.minimum(super().log_proba(X, y) + np.log(self.total), 0.0)


@pytest.mark.parametrize("total, fails", [(1.01, True), (0.99, True), (1.0005, False),
                                          (0.9995, False)])
def test_probabilities_one_percent_off_fail_and_within_1e_3_pass(total, fails):
    """A tolerance of 0.5 instead of 1e-3 passed a method whose probabilities sum to 1.01."""
    from xcbench.testing import Subject, check_log_proba_sums_to_one

    subject = Subject(SumsTo, {"total": total})
    if fails:
        with pytest.raises(AssertionError, match=f"sum to {total:.6g} on row"):
            check_log_proba_sums_to_one(subject)
    else:
        check_log_proba_sums_to_one(subject)


def test_the_runners_top_k_check_refuses_a_sum_just_over_the_tolerance():
    import numpy as np

    from xcbench.contract.validate import check_topk_log_p

    check_topk_log_p(np.log([[0.6, 0.4009, 1e-300]]))  # 1.0009: float rounding of a model
    with pytest.raises(ValueError, match="summing to 1.005 > 1"):
        check_topk_log_p(np.log([[0.6, 0.405, 1e-300]]))
