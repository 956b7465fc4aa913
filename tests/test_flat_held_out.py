"""softmax's C and temperature chosen on held-out training rows (xcbench_linear/held_out.py)."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import log_softmax

from xcbench_linear import Softmax
from xcbench_linear.defaults import C_MAX, C_MIN
from xcbench_linear.held_out import (MIN_HELD_OUT_ROWS, SEARCH_WORK, HeldOutScore,
                                     best_candidate, candidate_Cs, fit_temperature,
                                     score_held_out, search_is_cheap, split_rows)


def test_candidates_are_the_rules_C_times_powers_of_ten_within_the_bounds():
    assert candidate_Cs(1000.0) == [10.0, 100.0, 1000.0]  # never above the rule's C
    assert candidate_Cs(1.0) == [C_MIN, 1.0]  # the floor binds
    assert candidate_Cs(C_MIN) == [C_MIN]  # letter
    assert candidate_Cs(C_MAX) == [100.0, 1000.0, C_MAX]  # leaves100


def test_search_runs_only_where_it_is_cheap():
    """The measured datasets (docs/methods/flat.md): the four with at most 1e9 stored values
    x classes search; aloi27d, synthetic and PTB keep the rule's C and T = 1."""
    assert search_is_cheap(16_000, 16_000 * 16, 26, "lbfgs")  # letter
    assert search_is_cheap(10_000, 160_000, 1_000, "lbfgs")  # synthetic-sparse-1k
    assert search_is_cheap(43_642, 43_642 * 27, 438, "lbfgs")  # aloi27d-438
    assert not search_is_cheap(45_000, 45_000 * 27, 1_000, "lbfgs")  # aloi27d: 1.2e9
    assert not search_is_cheap(30_000, 30_000 * 128, 1_000, "lbfgs")  # synthetic: 3.8e9
    assert not search_is_cheap(1_000, 1_000, 10, "chunked-lbfgs")
    too_few = int(MIN_HELD_OUT_ROWS / 0.2) - 1
    assert not search_is_cheap(too_few, too_few, 10, "lbfgs")
    assert search_is_cheap(10**4, int(SEARCH_WORK / 10), 10, "lbfgs")
    assert not search_is_cheap(10**4, int(SEARCH_WORK / 10) + 1, 10, "lbfgs")


def test_held_out_rows_are_a_seeded_fifth_disjoint_from_the_fitted_ones():
    fit, held = split_rows(1000, 3)
    assert len(held) == 200 and len(fit) == 800
    assert np.array_equal(np.sort(np.concatenate([fit, held])), np.arange(1000))
    again = split_rows(1000, 3)
    assert np.array_equal(again[1], held)
    assert not np.array_equal(split_rows(1000, 4)[1], held)
    assert np.array_equal(split_rows(1000, None)[1], split_rows(1000, 0)[1])


def test_unseen_classes_count_as_errors_and_stay_out_of_the_log_loss():
    scores = np.array([[2.0, 0.0], [0.0, 2.0], [5.0, 0.0]])
    got = score_held_out(scores, np.array([0, 0, -1]), temperature=1.0)
    assert got.errors == 2  # row 2 wrong, row 3 of an unseen class
    want = np.mean([-log_softmax(scores[0])[0], -log_softmax(scores[1])[0]])
    assert got.log_loss == pytest.approx(want) and got.temperature == 1.0
    halved = score_held_out(scores, np.array([0, 0, -1]), temperature=2.0)
    assert halved.log_loss == pytest.approx(np.mean([-log_softmax(scores[0] / 2)[0],
                                                     -log_softmax(scores[1] / 2)[0]]))
    fitted = score_held_out(scores, np.array([0, 0, -1]))
    assert fitted.log_loss <= min(got.log_loss, halved.log_loss)
    assert score_held_out(scores, np.full(3, -1)) == HeldOutScore(3, np.inf, 1.0)


def test_lowest_log_loss_wins_among_candidates_within_one_standard_error_of_the_fewest_errors():
    """400 rows, 100 errors at best: one standard error is sqrt(400 x 0.25 x 0.75) = 8.7."""
    results = {1.0: HeldOutScore(100, 1.4, 1.0), 10.0: HeldOutScore(108, 1.1, 0.7),
               100.0: HeldOutScore(109, 0.9, 0.5)}
    assert best_candidate(results, 400) == 10.0  # 109 errors is more than 8.7 above 100
    results[100.0] = HeldOutScore(120, 0.5, 0.5)
    assert best_candidate(results, 400) == 10.0
    assert best_candidate({1.0: HeldOutScore(0, 0.3, 1.0), 2.0: HeldOutScore(0, 0.2, 1.0)},
                          50) == 2.0  # no errors: the tie goes to the log loss


@pytest.mark.parametrize("true_T", [0.4, 1.0, 2.5])
def test_temperature_recovers_the_one_that_generated_the_labels(true_T):
    rng = np.random.default_rng(0)
    scores = rng.normal(scale=3.0, size=(20_000, 6))
    p = np.exp(log_softmax(scores / true_T, axis=1))
    labels = (p.cumsum(axis=1) > rng.random((len(p), 1))).argmax(axis=1)
    assert fit_temperature(scores, labels) == pytest.approx(true_T, rel=0.05)
    assert fit_temperature(scores, np.full(len(p), -1)) == 1.0


def _blobs(n=1500, k=5, d=12, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    X = rng.normal(size=(n, d)) + 1.2 * rng.normal(size=(k, d))[y]
    return X, y


def test_default_fit_takes_the_held_out_choice_and_predicts_with_its_temperature():
    X, y = _blobs()
    X = 0.1 * X  # the rule's C x 100: 10, so the candidates are 0.1, 1 and 10
    model = Softmax(random_state=0).fit(X, y)
    C, T = model.resolved_params_["C"], model.resolved_params_["temperature"]
    assert C == best_candidate(model.held_out_, 300) and T == model.held_out_[C].temperature
    assert T != 1.0 and list(model.held_out_) == [0.1, 1.0, 10.0]
    plain = Softmax(C=C, temperature=1.0).fit(X, y)
    scores = X @ plain.weights_ + plain.intercept_
    assert np.allclose(model.log_proba(X, y), log_softmax(scores / T, axis=1)[np.arange(len(y)), y])
    assert np.array_equal(model.predict_topk(X, 3)[0], plain.predict_topk(X, 3)[0])
    again = Softmax(random_state=0).fit(sp.csr_matrix(X), y)  # sparse rows: the same choices
    assert again.resolved_params_ == pytest.approx(model.resolved_params_)


def test_explicit_C_fits_only_the_temperature_and_explicit_T_skips_the_search():
    X, y = _blobs()
    only_T = Softmax(C=0.5).fit(X, y)
    assert list(only_T.held_out_) == [0.5] and "C" not in only_T.resolved_params_
    assert only_T.resolved_params_["temperature"] > 0
    fixed = Softmax(C=0.5, temperature=2.0).fit(X, y)
    assert not hasattr(fixed, "held_out_") and "temperature" not in fixed.resolved_params_
    only_C = Softmax(temperature=2.0).fit(0.1 * X, y)  # 3 candidates scored at the given T
    assert {r.temperature for r in only_C.held_out_.values()} == {2.0}
    assert "temperature" not in only_C.resolved_params_


def test_small_data_keeps_the_rules_C_and_no_temperature():
    X, y = _blobs(n=300)
    model = Softmax().fit(X, y)
    assert model.resolved_params_["temperature"] == 1.0
    assert not hasattr(model, "held_out_")


def test_memory_estimate_counts_the_held_out_copy_of_the_rows_only_when_it_is_made():
    n, d, k = 10_000, 50, 20
    searching = Softmax().estimate_memory(n, d, n * d, k)
    fixed = Softmax(C=1.0, temperature=1.0).estimate_memory(n, d, n * d, k)
    assert searching - fixed == 12 * n * d + 8 * n
    big = 10**9 // k + 1  # stored values past SEARCH_WORK: no search, no copy
    assert Softmax().estimate_memory(n, d, big, k) == Softmax(
        C=1.0, temperature=1.0).estimate_memory(n, d, big, k)


def test_one_candidate_and_a_given_temperature_fit_nothing_on_held_out_rows():
    X, y = _blobs()  # the rule says C = 0.1, the floor: the only candidate
    model = Softmax(temperature=1.5).fit(X, y)
    assert not hasattr(model, "held_out_") and model.resolved_params_["C"] == 0.1
