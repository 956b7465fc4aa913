"""Rules every method output must follow, as functions raising ValueError with a clear
message: the runner stores an ``error`` record instead of measuring invalid output."""
from __future__ import annotations

import numpy as np

#: log p(y|x) may exceed 0 by rounding only
LOG_P_TOLERANCE = 1e-9


def check_topk_output(labels, scores, n: int, k: int, n_classes: int) -> None:
    """Raise ValueError unless (labels, scores) is a valid ``predict_topk(X, k)`` result for
    ``n`` rows: two (n, k) arrays, integer labels in 0..K-1 or -1 padding (score -inf) after
    the real labels, at least one real label per row, scores non-increasing, no repeats."""
    labels, scores = np.asarray(labels), np.asarray(scores)
    if labels.shape != (n, k) or scores.shape != (n, k):
        raise ValueError(f"predict_topk(X, {k}) must return two ({n}, {k}) arrays, got "
                         f"{labels.shape} and {scores.shape}")
    if not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"predict_topk labels must be integers, got {labels.dtype}")
    if not np.issubdtype(scores.dtype, np.floating):
        raise ValueError(f"predict_topk scores must be floats, got {scores.dtype}")
    if np.isnan(scores).any():
        raise ValueError("predict_topk returned NaN scores")
    valid = labels >= 0
    if np.any(labels[valid] >= n_classes):
        raise ValueError(f"predict_topk returned label {int(labels.max())}, out of range "
                         f"for n_classes={n_classes} (labels must be 0..{n_classes - 1})")
    if np.any(labels[~valid] != -1):
        raise ValueError(f"predict_topk returned label {int(labels.min())}: negative labels "
                         "other than the -1 padding are not allowed")
    if not np.all(np.isneginf(scores[~valid])):
        raise ValueError("predict_topk padding (label -1) must have score -inf")
    if n and k and not np.all(valid[:, 0]):
        raise ValueError("predict_topk must give every row at least one real label")
    if k > 1:
        if not np.all(valid[:, :-1] | ~valid[:, 1:]):
            raise ValueError("predict_topk padding (-1) must come after the real labels")
        s = np.where(valid, scores, -np.inf)
        if not np.all((s[:, :-1] >= s[:, 1:]) | ~valid[:, 1:]):
            raise ValueError("predict_topk rows must be sorted by decreasing score")
        ordered = np.sort(np.where(valid, labels, -1 - np.arange(k)), axis=1)
        if np.any(ordered[:, 1:] == ordered[:, :-1]):
            raise ValueError("predict_topk repeated a label within a row")


def check_log_proba_output(log_p, n: int) -> None:
    """Raise ValueError unless ``log_p`` is ``log_proba`` output for ``n`` rows: an (n,) float
    array of values <= 0, -inf allowed (probability zero), NaN not."""
    log_p = np.asarray(log_p)
    if log_p.shape != (n,) or not np.issubdtype(log_p.dtype, np.floating):
        raise ValueError(f"log_proba must return ({n},) floats, got {log_p.shape} {log_p.dtype}")
    if np.isnan(log_p).any():
        raise ValueError("log_proba returned NaN (use -inf for probability zero)")
    if log_p.size and log_p.max() > LOG_P_TOLERANCE:
        raise ValueError(f"log_proba returned {log_p.max():.4g} > 0: log-probabilities must "
                         "be <= 0")


def check_path_cost_output(cost, n: int) -> None:
    """Raise ValueError unless ``cost`` is ``path_cost`` output: (n,) finite values >= 0."""
    cost = np.asarray(cost)
    if cost.shape != (n,) or not np.issubdtype(cost.dtype, np.number):
        raise ValueError(f"path_cost must return ({n},) numbers, got {cost.shape} {cost.dtype}")
    if not np.all(np.isfinite(cost)) or np.any(cost < 0):
        raise ValueError("path_cost must be finite and >= 0 for every row")


def check_support_output(support, n: int, n_classes: int) -> None:
    """Raise ValueError unless ``support`` is ``support_size`` output: (n,) ints in 1..K."""
    support = np.asarray(support)
    if support.shape != (n,) or not np.issubdtype(support.dtype, np.integer):
        raise ValueError(f"support_size must return ({n},) integers, got {support.shape} "
                         f"{support.dtype}")
    if support.size and (support.min() < 1 or support.max() > n_classes):
        raise ValueError(f"support_size must be in 1..{n_classes} for every row")
