"""Group run records into table rows: one per (dataset, method, params), over seeds."""
from __future__ import annotations

import json

import numpy as np

#: (column title, where the value lives, key, format) for each aggregated column
COLUMNS = [
    ("top-1 err %", "metrics", "top1_error", "pct"),
    ("top-5 err %", "metrics", "top5_error", "pct"),
    ("PPL", "metrics", "perplexity", "num"),
    ("covered %", "metrics", "coverage", "pct"),
    ("PPL smoothed", "metrics", "perplexity_smoothed", "num"),
    ("size MB", "stats", "bytes", "mb"),
    ("depth", "stats", "depth", "num"),
    ("vectors/pred", "path_cost", "mean", "num"),
    ("p50 ms", "summary", "latency_p50_ms", "ms"),
    ("p99 ms", "summary", "latency_p99_ms", "ms"),
    ("throughput /s", "summary", "throughput_per_s", "int"),
    ("train s", "summary", "fit_seconds", "num"),
    ("train ex/s", "summary", "train_examples_per_s", "int"),
    ("fit peak RSS MB", "memory", "fit_peak_rss_bytes", "mb"),
    ("model MB", "memory", "model_pickle_bytes", "mb"),
]


def params_label(params: dict) -> str:
    """Compact, stable text for a params dict (random_state left out)."""
    items = sorted((k, v) for k, v in params.items() if k != "random_state")
    return ", ".join(f"{k}={v}" for k, v in items) or "defaults"


def _number(value):
    if value is None or isinstance(value, str):
        return np.nan if value in (None, "nan") else float(value)
    return float(value)


def group_rows(records: list[dict]) -> list[dict]:
    """Rows of successful runs: identity, n_seeds, and per column (mean, std) over seeds."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        if r["status"] != "ok":
            continue
        ident = (r["dataset"], r["method"], json.dumps(r["params"], sort_keys=True))
        groups.setdefault(ident, []).append(r)
    rows = []
    for (dataset, method, params), runs in sorted(groups.items()):
        row = {"dataset": dataset, "method": method, "params": json.loads(params),
               "n_seeds": len(runs), "values": {}}
        for title, section, key, _ in COLUMNS:
            vals = np.array([_number((r.get(section) or {}).get(key)) for r in runs])
            finite = vals[np.isfinite(vals)]
            if len(finite) == 0:
                row["values"][title] = (np.nan, np.nan) if np.isnan(vals).all() else \
                    (float(vals[0]), 0.0)
            else:
                row["values"][title] = (float(finite.mean()),
                                        float(finite.std(ddof=1)) if len(finite) > 1 else 0.0)
        rows.append(row)
    return rows
