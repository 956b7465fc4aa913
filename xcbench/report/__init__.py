"""Reports: pure functions of a result store (markdown tables and plots)."""
from __future__ import annotations

from pathlib import Path

from ..results import ResultStore
from .plot import dataset_families, error_vs_latency_plot, latency_vs_k_plot
from .recompute import recompute_records
from .table import markdown_report

__all__ = ["markdown_report", "error_vs_latency_plot", "latency_vs_k_plot", "write_report"]


def write_report(out, title: str = "xcbench report", command: str | None = None,
                 recompute: bool = False) -> dict:
    """Write ``report.md``, one ``error_vs_latency-<dataset>.png`` per dataset and one
    ``latency_vs_k-<family>.png`` per dataset family (datasets of several sizes K) into ``out``.

    With ``recompute`` the quality metrics and path costs are computed again from the raw
    outputs in ``out/raw``. Returns {"markdown": path, "plots": [paths], "recomputed": n}.
    Raises FileNotFoundError if there are no results.
    """
    out = Path(out)
    store = ResultStore(out)
    records = store.latest()
    if not records:
        raise FileNotFoundError(f"no results in {store.path}; run `xcbench run --out {out}` first")
    recomputed = 0
    if recompute:
        records, recomputed = recompute_records(store, records)
    plots, plot_names = [], {}
    for dataset in sorted({r["dataset"] for r in records}):
        path = out / f"error_vs_latency-{dataset}.png"
        if error_vs_latency_plot([r for r in records if r["dataset"] == dataset], path,
                                 title=f"{dataset}: top-1 error vs latency"):
            plots.append(path)
            plot_names[dataset] = path.name
    family_plots = {}
    for family, names in dataset_families(records).items():
        path = out / f"latency_vs_k-{family}.png"
        if latency_vs_k_plot([r for r in records if r["dataset"] in names], path,
                             title=f"{family}: single-example latency vs K"):
            plots.append(path)
            family_plots[family] = path.name
    text = markdown_report(records, title=title, command=command, plot_names=plot_names,
                           family_plots=family_plots)
    md = out / "report.md"
    md.write_text(text, encoding="utf-8")
    return {"markdown": md, "plots": plots, "recomputed": recomputed}
