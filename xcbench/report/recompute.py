"""Recompute a record's quality metrics and path cost from its raw outputs (no refitting)."""
from __future__ import annotations

from ..metrics import DEFAULT_SMOOTHING_EPSILON, path_cost_summary, rank_quality_metrics


def recompute_record(record: dict, raw: dict) -> dict:
    """A copy of ``record`` whose ``metrics`` and ``path_cost`` are computed again from
    ``raw`` (the arrays :meth:`~xcbench.store.results.ResultStore.load_raw` reads: labels,
    y, true_rank, n_predicted, log_p, support, path_cost)."""
    n_classes = (record.get("dataset_stats") or {}).get("n_classes")
    epsilon = (record.get("metrics") or {}).get("smoothing_epsilon", DEFAULT_SMOOTHING_EPSILON)
    metrics = rank_quality_metrics(raw["true_rank"], int(raw["n_predicted"]), raw.get("log_p"),
                                   raw.get("support"), n_classes, epsilon=epsilon)
    return {**record, "metrics": metrics, "path_cost": path_cost_summary(raw.get("path_cost"))}


def recompute_records(store, records: list[dict]) -> tuple[list[dict], int]:
    """``records`` with every ``ok`` one that has raw outputs recomputed; also how many were.
    A record whose raw file is damaged keeps its stored metrics, with a warning."""
    out, done = [], 0
    for record in records:
        raw = (store.load_raw_or_warn(record, "its stored metrics are kept, not recomputed")
               if record.get("status") == "ok" else None)
        if raw is not None:
            record = recompute_record(record, raw)
            done += 1
        out.append(record)
    return out, done
