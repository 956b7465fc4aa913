"""Quality metrics computed from predictions (pure functions of arrays)."""
from __future__ import annotations

import numpy as np

#: Default epsilon of smoothed perplexity: every class the model gives probability zero
#: receives this probability before renormalising (the softmax-tree paper's "*" rows,
#: where epsilon is tuned by cross-validation; here it is a fixed, documented constant).
DEFAULT_SMOOTHING_EPSILON = 1e-5


def topk_hits(labels: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """Boolean (n,): whether the true label is among the first ``k`` predicted labels."""
    if labels.shape[1] < k:
        raise ValueError(f"need at least {k} predicted labels per row, got {labels.shape[1]}")
    return (labels[:, :k] == np.asarray(y)[:, None]).any(axis=1)


def topk_error(labels, y, k: int = 1) -> float:
    """Top-k error in [0, 1]: fraction of rows whose label is not in the top k."""
    return float(1.0 - topk_hits(labels, y, k).mean())


def precision_at_k(labels, y, k: int) -> float:
    """Precision@k in [0, 1/k] for single-label data: hits in the top k divided by k."""
    return float(topk_hits(labels, y, k).mean() / k)


def perplexity_with_coverage(log_p: np.ndarray) -> tuple[float, float]:
    """(perplexity over covered rows, covered fraction); covered = finite log p(y|x).

    Perplexity is exp of the mean negative natural-log likelihood; NaN if nothing is covered.
    """
    log_p = np.asarray(log_p, dtype=np.float64)
    covered = np.isfinite(log_p)
    coverage = float(covered.mean()) if log_p.size else float("nan")
    if not covered.any():
        return float("nan"), coverage
    return float(np.exp(-log_p[covered].mean())), coverage


def smoothed_log_proba(log_p, support_size, n_classes: int,
                       epsilon: float = DEFAULT_SMOOTHING_EPSILON) -> np.ndarray:
    """Per row, the natural log of the true class's probability after giving each
    zero-probability class ``epsilon`` and renormalising.

    For row i, ``n_classes - support_size[i]`` classes have probability zero; after
    smoothing p'(y) = max(p(y), epsilon) / (1 + epsilon * n_zero_i): a true class given
    zero, or a probability below epsilon, counts as epsilon. Always finite, at least
    log(epsilon / (1 + epsilon * n_classes)), so the smoothed perplexity is finite too
    (a finite but tiny p(y), e.g. exp(-800), would otherwise overflow it to inf).
    """
    log_p = np.asarray(log_p, dtype=np.float64)
    n_zero = n_classes - np.asarray(support_size, dtype=np.float64)
    numerator = np.maximum(log_p, np.log(epsilon))  # -inf (probability zero) included
    return numerator - np.log1p(epsilon * n_zero)


def smoothed_perplexity(log_p, support_size, n_classes: int,
                        epsilon: float = DEFAULT_SMOOTHING_EPSILON) -> float:
    """Perplexity of the smoothed probabilities (:func:`smoothed_log_proba`)."""
    return float(np.exp(-smoothed_log_proba(log_p, support_size, n_classes, epsilon).mean()))


def true_label_rank(labels, y) -> np.ndarray:
    """Per row, the position of the true label among the predicted labels (its first
    match), or the number of predicted labels when it is not among them; the smallest
    unsigned type that holds them."""
    labels = np.asarray(labels)
    match = labels == np.asarray(y)[:, None]
    rank = np.where(match.any(axis=1), match.argmax(axis=1), labels.shape[1])
    return rank.astype(np.uint8 if labels.shape[1] < 256 else np.uint32)


def quality_metrics(labels, y, log_p=None, support_size=None, n_classes=None,
                    ks=(1, 5), epsilon: float = DEFAULT_SMOOTHING_EPSILON) -> dict:
    """All quality metrics of one run as a flat dict (errors and coverage as fractions)."""
    return rank_quality_metrics(true_label_rank(labels, y), labels.shape[1], log_p,
                                support_size, n_classes, ks, epsilon)


def rank_quality_metrics(rank, n_predicted: int, log_p=None, support_size=None,
                         n_classes=None, ks=(1, 5),
                         epsilon: float = DEFAULT_SMOOTHING_EPSILON) -> dict:
    """:func:`quality_metrics` from each row's true-label rank (:func:`true_label_rank`)
    among ``n_predicted`` predicted labels: what the raw outputs keep of the labels."""
    out = {}
    rank = np.asarray(rank)
    for k in ks:
        if n_predicted >= k:
            hits = rank < k
            out[f"top{k}_error"] = float(1.0 - hits.mean())
            out[f"P@{k}"] = float(hits.mean() / k)
    if log_p is not None:
        log_p = np.asarray(log_p, dtype=np.float64)  # a compact raw file keeps float32
        ppl, coverage = perplexity_with_coverage(log_p)
        out["perplexity"] = ppl
        out["coverage"] = coverage
        out["mean_log_proba_covered"] = float(np.mean(log_p[np.isfinite(log_p)])) \
            if np.isfinite(log_p).any() else float("nan")
        if support_size is not None and n_classes is not None:
            out["perplexity_smoothed"] = smoothed_perplexity(log_p, support_size, n_classes,
                                                             epsilon)
            out["smoothing_epsilon"] = epsilon
    return out


def path_cost_summary(cost) -> dict | None:
    """mean / p50 / max of per-row path costs (vectors evaluated per prediction); None when
    there are none."""
    if cost is None:
        return None
    cost = np.asarray(cost, dtype=np.float64)
    if not cost.size:
        return None
    return {"mean": float(cost.mean()), "p50": float(np.percentile(cost, 50)),
            "max": float(cost.max())}
