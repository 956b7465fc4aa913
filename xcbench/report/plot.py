"""Plots of run results: test error against single-example latency, Pareto front marked."""
from __future__ import annotations

import math

from .aggregate import group_rows, params_label


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats on both coordinates (lower is better)."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], points[i][1]))
    front, best = [], math.inf
    for i in order:
        if points[i][1] < best:
            front.append(i)
            best = points[i][1]
    return front


def error_vs_latency_plot(records: list[dict], path, title: str = "") -> bool:
    """Save a PNG of top-1 error (%) vs p50 latency (ms, log scale); False if nothing to plot."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in group_rows(records)
            if all(math.isfinite(r["values"][c][0]) for c in ("p50 ms", "top-1 err %"))]
    if not rows:
        return False
    points = [(r["values"]["p50 ms"][0], 100 * r["values"]["top-1 err %"][0]) for r in rows]
    front = pareto_front(points)
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    for i, (row, (x, y)) in enumerate(zip(rows, points)):
        ax.scatter([x], [y], s=40, zorder=3, edgecolor="black" if i in front else "none",
                   label=f"{row['method']} ({params_label(row['params'])})")
    fx, fy = zip(*sorted(points[i] for i in front))
    ax.step(fx, fy, where="post", color="grey", linestyle="--", zorder=2, label="Pareto front (outlined points)")
    stats = records[0].get("dataset_stats") or {}
    if stats.get("bayes_error") is not None:
        ax.axhline(100 * stats["bayes_error"], color="red", linestyle=":", label="Bayes error")
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # no crowded labels
    return _finish_plot(fig, ax, path, title, "single-example latency p50 (ms, log scale)",
                        "top-1 test error (%)")


def _finish_plot(fig, ax, path, title: str, xlabel: str, ylabel: str) -> bool:
    """Label, grid and save a plot as PNG at ``path``; return True."""
    import matplotlib.pyplot as plt

    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def dataset_families(records: list[dict]) -> dict[str, list[str]]:
    """Families of datasets: names sharing a prefix (all but the last ``-`` part, e.g.
    ``synthetic-sparse`` for ``synthetic-sparse-1k``) whose numbers of classes differ;
    {family: dataset names sorted by K}, only families of two or more datasets."""
    n_classes = {}
    for r in records:
        k = (r.get("dataset_stats") or {}).get("n_classes")
        if k is not None and "-" in r["dataset"]:
            n_classes[r["dataset"]] = k
    groups: dict[str, list[str]] = {}
    for name in n_classes:
        groups.setdefault(name.rsplit("-", 1)[0], []).append(name)
    return {family: sorted(names, key=n_classes.get) for family, names in groups.items()
            if len({n_classes[n] for n in names}) > 1}


def latency_vs_k_plot(records: list[dict], path, title: str = "") -> bool:
    """Save a log-log PNG of p50 single-example latency (ms) against the number of classes
    K, one line per method and params; False if no method has two points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n_classes = {r["dataset"]: (r.get("dataset_stats") or {}).get("n_classes") for r in records}
    lines: dict[str, list[tuple[float, float]]] = {}
    for row in group_rows(records):
        p50 = row["values"]["p50 ms"][0]
        if math.isfinite(p50) and n_classes.get(row["dataset"]):
            label = f"{row['method']} ({params_label(row['params'])})"
            lines.setdefault(label, []).append((n_classes[row["dataset"]], p50))
    lines = {label: sorted(points) for label, points in lines.items() if len(points) > 1}
    if not lines:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    for label, points in sorted(lines.items()):
        ks, ms = zip(*points)
        ax.plot(ks, ms, marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    return _finish_plot(fig, ax, path, title, "number of classes K (log scale)",
                        "single-example latency p50 (ms, log scale)")
