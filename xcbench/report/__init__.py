"""Reports: pure functions of a result store (markdown tables and plots)."""
from __future__ import annotations

from pathlib import Path

from ..results import ResultStore
from .plot import error_vs_latency_plot
from .table import markdown_report

__all__ = ["markdown_report", "error_vs_latency_plot", "write_report"]


def write_report(out, title: str = "xcbench report", command: str | None = None) -> dict:
    """Write ``report.md`` and one ``error_vs_latency-<dataset>.png`` per dataset into ``out``.

    Returns {"markdown": path, "plots": [paths]}. Raises FileNotFoundError if no results.
    """
    out = Path(out)
    store = ResultStore(out)
    records = store.latest()
    if not records:
        raise FileNotFoundError(f"no results in {store.path}; run `xcbench run --out {out}` first")
    plots = []
    for dataset in sorted({r["dataset"] for r in records}):
        path = out / f"error_vs_latency-{dataset}.png"
        if error_vs_latency_plot([r for r in records if r["dataset"] == dataset], path,
                                 title=f"{dataset}: top-1 error vs latency"):
            plots.append(path)
    text = markdown_report(records, title=title, command=command,
                           plot_names={p.name.split("-", 1)[1][:-4]: p.name for p in plots})
    md = out / "report.md"
    md.write_text(text, encoding="utf-8")
    return {"markdown": md, "plots": plots}
