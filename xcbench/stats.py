"""Paired statistics for comparing two measurements of the same test rows.

- :func:`mcnemar_exact`: McNemar's exact test of two classifiers' top-1 errors on the same
  rows (a two-sided binomial test on the rows where exactly one of them is right).
- :func:`paired_bootstrap_error_difference`: a percentile bootstrap interval of
  ``error(B) - error(A)``, resampling test rows (the same rows for both).
- :func:`paired_bootstrap_perplexity_ratio`: a percentile bootstrap interval of
  ``perplexity(B) / perplexity(A)`` from each test row's log-probability of its true class,
  resampling test rows (the same rows for both).
- :func:`bootstrap_median_ratio`: a percentile bootstrap interval of
  ``median(B) / median(A)`` of two sets of timing repeats (resampled independently).
- :func:`clearly_better` / :func:`keep_unless_beaten`: whether one setting beats another
  on the same held-out rows by more than ``z`` standard errors, and the choice among a
  default and its challengers that follows from it (the methods' probes of C).

Pure functions of arrays; ``tests/test_stats.py`` checks them against scipy.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: significance level of every "significant" verdict, and the interval's confidence
ALPHA = 0.05
N_BOOTSTRAP = 10_000


@dataclass(frozen=True)
class McNemar:
    """McNemar's exact test: ``only_a`` rows only A got right, ``only_b`` rows only B got
    right, the two-sided ``pvalue``."""

    only_a: int
    only_b: int
    pvalue: float

    @property
    def significant(self) -> bool:
        return self.pvalue < ALPHA


@dataclass(frozen=True)
class Interval:
    """A point estimate and its bootstrap interval ``[low, high]`` at ``confidence``."""

    estimate: float
    low: float
    high: float
    confidence: float = 1 - ALPHA

    def excludes(self, value: float) -> bool:
        """Whether ``value`` lies outside the interval."""
        return not (self.low <= value <= self.high)


def _as_bool(correct, name: str) -> np.ndarray:
    arr = np.asarray(correct)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one boolean per test row, got shape {arr.shape}")
    return arr.astype(bool)


def _paired(correct_a, correct_b) -> tuple[np.ndarray, np.ndarray]:
    a, b = _as_bool(correct_a, "correct_a"), _as_bool(correct_b, "correct_b")
    if a.shape != b.shape:
        raise ValueError(f"paired tests need the same test rows on both sides, got "
                         f"{a.shape[0]} and {b.shape[0]} rows")
    return a, b


def mcnemar_exact(correct_a, correct_b) -> McNemar:
    """McNemar's exact test of ``correct_a`` vs ``correct_b`` (one bool per test row:
    whether that classifier's top-1 label is right): under the null hypothesis of equal
    error rates each discordant row is A's or B's with probability 1/2, so the p-value is
    the two-sided binomial test of ``only_a`` in ``only_a + only_b`` trials (1 when no row
    is discordant)."""
    from scipy.stats import binomtest

    a, b = _paired(correct_a, correct_b)
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    n = only_a + only_b
    pvalue = 1.0 if n == 0 else float(binomtest(only_a, n, 0.5).pvalue)
    return McNemar(only_a, only_b, min(pvalue, 1.0))


def paired_bootstrap_error_difference(correct_a, correct_b, n_resamples: int = N_BOOTSTRAP,
                                      confidence: float = 1 - ALPHA,
                                      seed: int = 0) -> Interval:
    """``error(B) - error(A)`` (fractions) and its percentile bootstrap interval over test
    rows resampled with replacement, the same rows for both sides.

    Each row contributes +1 (only A right), -1 (only B right) or 0, so a resample's mean is
    fixed by how many of its ``n`` rows fall in each group: the counts are drawn from the
    multinomial distribution with the observed group shares, which is the same distribution
    as resampling the rows, in O(n_resamples) time and memory."""
    a, b = _paired(correct_a, correct_b)
    n = a.shape[0]
    if n == 0:
        raise ValueError("no test rows to compare")
    plus, minus = int(np.sum(a & ~b)), int(np.sum(~a & b))
    estimate = (plus - minus) / n
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, [plus / n, minus / n, (n - plus - minus) / n], n_resamples)
    diffs = (counts[:, 0] - counts[:, 1]) / n
    low, high = np.quantile(diffs, [(1 - confidence) / 2, (1 + confidence) / 2])
    return Interval(float(estimate), float(low), float(high), confidence)


def paired_bootstrap_perplexity_ratio(log_p_a, log_p_b, n_resamples: int = 2_000,
                                      confidence: float = 1 - ALPHA,
                                      seed: int = 0) -> Interval:
    """``perplexity(B) / perplexity(A)`` and its percentile bootstrap interval over test rows
    resampled with replacement, the same rows for both sides. ``log_p_a`` / ``log_p_b``: each
    row's natural log-probability of its true class (finite: smoothed where a model gives
    zero). Perplexity is exp of the mean negative log-probability, so the ratio is
    exp(mean(log_p_a - log_p_b)) and a resample's ratio is that of its rows' mean."""
    a = np.asarray(log_p_a, dtype=np.float64)
    b = np.asarray(log_p_b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"paired tests need one log-probability per test row, the same rows "
                         f"on both sides, got shapes {a.shape} and {b.shape}")
    if a.size == 0:
        raise ValueError("no test rows to compare")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("log-probabilities must be finite (smooth the zero probabilities "
                         "first, e.g. with xcbench.metrics.smoothed_log_proba)")
    diff = a - b
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    chunk = max(1, 2_000_000 // diff.size)  # bound the resampled index matrix's memory
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        means[start:stop] = diff[rng.integers(0, diff.size, (stop - start, diff.size))].mean(1)
    low, high = np.quantile(np.exp(means), [(1 - confidence) / 2, (1 + confidence) / 2])
    return Interval(float(np.exp(diff.mean())), float(low), float(high), confidence)


def bootstrap_median_ratio(times_a, times_b, n_resamples: int = 2_000,
                           confidence: float = 1 - ALPHA, seed: int = 0) -> Interval:
    """``median(times_b) / median(times_a)`` and its percentile bootstrap interval, each
    side's repeats resampled with replacement independently (the timed calls of two runs
    are not paired). The interval covers call-to-call noise within each run, not drift
    between runs (another job starting on the machine)."""
    a = np.asarray(times_a, dtype=np.float64).ravel()
    b = np.asarray(times_b, dtype=np.float64).ravel()
    if a.size == 0 or b.size == 0:
        raise ValueError("each side needs at least one timing repeat")
    if np.median(a) <= 0:
        raise ValueError("the median of the baseline timings must be positive")
    rng = np.random.default_rng(seed)
    ratios = np.empty(n_resamples)
    chunk = max(1, 2_000_000 // max(a.size, b.size))  # bound the resample matrices' memory
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        med_a = np.median(rng.choice(a, (stop - start, a.size)), axis=1)
        med_b = np.median(rng.choice(b, (stop - start, b.size)), axis=1)
        ratios[start:stop] = med_b / med_a
    low, high = np.quantile(ratios, [(1 - confidence) / 2, (1 + confidence) / 2])
    return Interval(float(np.median(b) / np.median(a)), float(low), float(high), confidence)


#: standard errors by which a challenger must beat the default to replace it
Z_CLEARLY = 2.0


def clearly_better(right_new, right_old, z: float = Z_CLEARLY) -> bool:
    """Whether ``right_new`` (one bool per held-out row) beats ``right_old`` on the same
    rows by more than ``z`` standard errors of the paired difference: the gain in rows
    right exceeds z sqrt(rows where the two disagree) (the normal approximation of
    McNemar's test, one-sided)."""
    new, old = _paired(right_new, right_old)
    gain = int(new.sum()) - int(old.sum())
    disagree = int(np.count_nonzero(new != old))
    return gain > z * np.sqrt(disagree)


def keep_unless_beaten(right: dict, z: float = Z_CLEARLY):
    """The key of ``right`` (setting -> bool per held-out row, the default setting first)
    to use: the default, unless the most accurate other setting is ``clearly_better``."""
    first, *others = right
    challenger = max(others, key=lambda k: int(np.sum(right[k])), default=None)
    if challenger is not None and clearly_better(right[challenger], right[first], z):
        return challenger
    return first
