"""The cross-dataset summary at the top of a multi-dataset report: per method, its mean
rank by top-1 error and by p50 latency, and the datasets where it is on the Pareto front."""
from __future__ import annotations

import math

from .plot import pareto_front


def ranks(values: dict[str, float]) -> dict[str, float]:
    """Rank of each key by its value, 1 = lowest; equal values share their mean rank."""
    order = sorted(values, key=values.get)
    out, i = {}, 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for name in order[i:j + 1]:
            out[name] = (i + j) / 2 + 1
        i = j + 1
    return out


def _best(rows: list[dict], column: str) -> dict[str, float]:
    """{method: its lowest finite value of ``column`` over ``rows``}."""
    best: dict[str, float] = {}
    for row in rows:
        value = row["values"][column][0]
        if math.isfinite(value):
            best[row["method"]] = min(value, best.get(row["method"], math.inf))
    return best


def front_methods(rows: list[dict]) -> set[str]:
    """Methods with a row on the Pareto front of (p50, top-1 error) among ``rows``."""
    both = [r for r in rows if all(math.isfinite(r["values"][c][0])
                                   for c in ("p50", "top1_error"))]
    points = [(r["values"]["p50"][0], r["values"]["top1_error"][0]) for r in both]
    return {both[i]["method"] for i in pareto_front(points)}


def method_ranking(rows: list[dict]) -> list[dict]:
    """Per method (rows of ``group_rows`` over several datasets): ``datasets`` it ran on,
    ``error_rank`` and ``p50_rank`` (mean over those datasets of the rank of its best row
    among the methods of that dataset; None without a value) and ``front`` (datasets where
    one of its rows is on the Pareto front); sorted by error rank, then name."""
    per_method: dict[str, dict] = {}
    for dataset in sorted({r["dataset"] for r in rows}):
        ds_rows = [r for r in rows if r["dataset"] == dataset]
        error, p50 = ranks(_best(ds_rows, "top1_error")), ranks(_best(ds_rows, "p50"))
        front = front_methods(ds_rows)
        for method in sorted({r["method"] for r in ds_rows}):
            entry = per_method.setdefault(method, {"method": method, "datasets": [],
                                                   "error": [], "p50": [], "front": []})
            entry["datasets"].append(dataset)
            if method in error:
                entry["error"].append(error[method])
            if method in p50:
                entry["p50"].append(p50[method])
            if method in front:
                entry["front"].append(dataset)
    out = []
    for entry in per_method.values():
        out.append({"method": entry["method"], "datasets": entry["datasets"],
                    "error_rank": _mean(entry["error"]), "p50_rank": _mean(entry["p50"]),
                    "front": entry["front"]})
    return sorted(out, key=lambda e: (e["error_rank"] is None, e["error_rank"] or 0,
                                      e["method"]))


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _rank_text(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def ranking_lines(rows: list[dict]) -> list[str]:
    """Markdown lines of the cross-dataset summary (a heading, what it shows, a table);
    no lines when ``rows`` cover fewer than two datasets."""
    datasets = sorted({r["dataset"] for r in rows})
    if len(datasets) < 2:
        return []
    lines = ["## Across datasets", "",
             f"Per method over the {len(datasets)} datasets below: on each dataset its best "
             "row (over params and machines) is ranked among the methods run there (1 = "
             "best; ties share their mean rank), and the ranks are averaged over the datasets "
             "it ran on. Pareto front: datasets where one of its rows is not beaten on both "
             "top-1 error and p50 latency by another row.", "",
             "| method | datasets | mean rank by top-1 error | mean rank by p50 | "
             "on the Pareto front of |", "|---|---|---|---|---|"]
    for entry in method_ranking(rows):
        lines.append(f"| {entry['method']} | {len(entry['datasets'])} | "
                     f"{_rank_text(entry['error_rank'])} | {_rank_text(entry['p50_rank'])} | "
                     f"{', '.join(entry['front']) or 'none'} |")
    return lines + [""]
