import numpy as np
import pytest

from xcbench.metrics import (perplexity_with_coverage, precision_at_k, quality_metrics,
                             smoothed_log_proba, smoothed_perplexity, topk_error)


def test_topk_error_and_precision():
    labels = np.array([[0, 1], [2, 0], [1, 2]])
    y = np.array([0, 0, 0])
    assert topk_error(labels, y, 1) == pytest.approx(2 / 3)
    assert topk_error(labels, y, 2) == pytest.approx(1 / 3)
    assert precision_at_k(labels, y, 2) == pytest.approx((2 / 3) / 2)


def test_perplexity_with_coverage():
    log_p = np.array([np.log(0.5), np.log(0.25), -np.inf, -np.inf])
    ppl, cov = perplexity_with_coverage(log_p)
    assert cov == 0.5
    assert ppl == pytest.approx(np.exp(-(np.log(0.5) + np.log(0.25)) / 2))
    assert np.isnan(perplexity_with_coverage(np.array([-np.inf]))[0])


def test_smoothed_perplexity_by_hand():
    # K=4, row 0: true label has p=0.5 and 2 classes have p=0; row 1: true label has p=0
    log_p = np.array([np.log(0.5), -np.inf])
    support = np.array([2, 3])
    eps = 0.01
    expected_p = np.array([0.5 / (1 + 2 * eps), eps / (1 + eps)])
    got = smoothed_perplexity(log_p, support, 4, eps)
    assert got == pytest.approx(np.exp(-np.log(expected_p).mean()))
    assert smoothed_log_proba(log_p, support, 4, eps) == pytest.approx(np.log(expected_p))


def test_smoothing_is_identity_without_zeros():
    log_p = np.log(np.array([0.2, 0.7]))
    assert smoothed_perplexity(log_p, np.array([5, 5]), 5) == \
        pytest.approx(perplexity_with_coverage(log_p)[0])


def test_quality_metrics_keys():
    out = quality_metrics(np.array([[0, 1, 2, 3, 4]]), np.array([3]), np.array([-1.0]),
                          np.array([5]), 5)
    assert out["top1_error"] == 1.0 and out["top5_error"] == 0.0 and out["coverage"] == 1.0


def test_path_cost_summary():
    from xcbench.metrics import path_cost_summary

    assert path_cost_summary(None) is None
    assert path_cost_summary(np.array([])) is None
    assert path_cost_summary(np.array([1.0, 2.0, 6.0])) == {"mean": 3.0, "p50": 2.0, "max": 6.0}


def test_a_finite_but_tiny_probability_gives_a_finite_smoothed_perplexity():
    """exp(-800) is finite in log space; before, exp(800) overflowed to inf (stored "inf")."""
    eps = 1e-5
    log_p = np.array([-800.0, np.log(0.5)])
    got = smoothed_perplexity(log_p, np.array([3, 3]), 3, eps)
    assert np.isfinite(got)
    assert got == pytest.approx(np.exp(-(np.log(eps) + np.log(0.5)) / 2))  # floored at eps


def test_a_tiny_probability_is_stored_as_a_finite_smoothed_perplexity(tmp_path,
                                                                       fresh_plugins):
    from fault_plugins import register
    from xcbench.run.runner import RunOptions, run_plan
    from xcbench.store.results import ResultStore

    register()
    run_plan(["tiny"], ["synthetic-small"], out=tmp_path, progress=False,
             options=RunOptions(latency_calls=5, timeout=60, isolate=False))
    [stored] = ResultStore(tmp_path).records()
    value = stored["metrics"]["perplexity_smoothed"]
    assert isinstance(value, float) and value <= (1 + 1e-5 * 50) / 1e-5
