"""Output rules of the method contract, shared by the conformance checks and the runner (an
invalid output becomes the cell's ``error`` record instead of being measured).

Each function raises ValueError with a message naming what is wrong with a method's output;
it returns None when the output follows the contract (see ``xcbench.contract.method``).
"""
from __future__ import annotations

import numpy as np

# log p may exceed 0 by rounding only
LOG_P_TOLERANCE = 1e-9


def check_topk_output(labels, scores, n: int, k: int, n_classes: int) -> None:
    """Check ``predict_topk`` output: two (n, k) arrays, int labels in 0..K-1 or -1 padding
    (score -inf, after the real labels), float scores non-increasing along each row, no label
    repeated within a row, at least one real label per row."""
    labels, scores = np.asarray(labels), np.asarray(scores)
    if labels.shape != (n, k) or scores.shape != (n, k):
        raise ValueError(f"predict_topk must return two ({n}, {k}) arrays, "
                         f"got labels {labels.shape} and scores {scores.shape}")
    if not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"predict_topk labels must be integers, got dtype {labels.dtype}")
    if not np.issubdtype(scores.dtype, np.floating):
        raise ValueError(f"predict_topk scores must be floats, got dtype {scores.dtype}")
    if n == 0 or k == 0:
        return
    valid = labels >= 0
    if np.any(labels[valid] >= n_classes):
        raise ValueError(f"predict_topk returned label {int(labels.max())}, out of range "
                         f"for n_classes={n_classes} (labels must be 0..K-1)")
    if np.any(labels[~valid] != -1):
        raise ValueError(f"predict_topk returned negative label {int(labels.min())}; "
                         "only -1 is allowed, as padding")
    if not np.all(np.isneginf(scores[~valid])):
        raise ValueError("predict_topk padding (label -1) must have score -inf")
    if np.isnan(scores[valid]).any():
        raise ValueError("predict_topk returned a NaN score for a real label")
    if not np.all(valid[:, 0]):
        raise ValueError("predict_topk returned a row with no predicted label "
                         "(every row needs at least one real label first)")
    if not np.all(valid[:, :-1] | ~valid[:, 1:]):
        raise ValueError("predict_topk padding (-1) must come after the real labels of a row")
    s = np.where(valid, scores, -np.inf)
    if not np.all((s[:, :-1] >= s[:, 1:]) | ~valid[:, 1:]):
        raise ValueError("predict_topk rows are not sorted by decreasing score")
    real = np.where(valid, labels, -1 - np.arange(k))  # distinct stand-ins for padding
    srt = np.sort(real, axis=1)
    if np.any(srt[:, 1:] == srt[:, :-1]):
        raise ValueError("predict_topk repeated a label within a row")


def check_log_proba_output(log_p, n: int) -> None:
    """Check ``log_proba`` output: (n,) floats, each <= 0 (-inf allowed), none NaN."""
    log_p = np.asarray(log_p)
    if log_p.shape != (n,):
        raise ValueError(f"log_proba must return shape ({n},), got {log_p.shape}")
    if not np.issubdtype(log_p.dtype, np.floating):
        raise ValueError(f"log_proba must return floats, got dtype {log_p.dtype}")
    if np.isnan(log_p).any():
        raise ValueError("log_proba returned NaN (use -inf for probability zero)")
    if n and np.max(log_p) > LOG_P_TOLERANCE:
        raise ValueError(f"log_proba must be <= 0 (a log-probability), max was {np.max(log_p)}")


#: how far a sum of probabilities may exceed 1 (float32 models sum to 1 within ~1e-4)
PROBABILITY_SUM_TOLERANCE = 1e-3


def check_topk_log_p(log_p_topk) -> None:
    """Check the log_proba of each row's top-k labels ((rows, k), -inf for padding): the
    probabilities of k distinct labels cannot sum above 1, and a method cannot give its own
    first choice probability zero on every row. (A log_proba of 0 everywhere, or -inf
    everywhere, passes the per-row checks but not these.)"""
    log_p_topk = np.asarray(log_p_topk, dtype=np.float64)
    if not log_p_topk.size:
        return
    total = np.exp(log_p_topk).sum(axis=1)
    if total.max() > 1 + PROBABILITY_SUM_TOLERANCE:
        row = int(np.argmax(total))
        raise ValueError(f"log_proba gives the top-{log_p_topk.shape[1]} labels of a row "
                         f"probabilities summing to {total[row]:.4g} > 1 (row {row}); "
                         "log_proba must be a log-probability over the classes")
    if np.all(np.isneginf(log_p_topk[:, 0])):
        raise ValueError("log_proba gives the top-1 label probability zero on every row "
                         "checked; it must be the log-probability of the method's own model")


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
