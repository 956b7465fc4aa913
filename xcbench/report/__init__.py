"""Reports: pure functions of a result store (markdown and HTML tables, plots)."""
from __future__ import annotations

import re
from pathlib import Path

from ..store.atomic import write_text_atomically
from ..store.export import stored_records
from ..store.results import ResultStore
from .columns import select_columns
from .plot import (dataset_families, error_vs_latency_plot, error_vs_path_cost_plot,
                   latency_vs_k_plot, method_colours, metric_plot)
from .recompute import recompute_records
from .table import markdown_report

__all__ = ["markdown_report", "error_vs_latency_plot", "error_vs_path_cost_plot",
           "latency_vs_k_plot", "metric_plot", "write_report"]

#: the plots of each dataset: (file name prefix, caption, plotting function)
DATASET_PLOTS = [
    ("error_vs_latency", "top-1 error vs single-example latency", error_vs_latency_plot),
    ("error_vs_path_cost", "top-1 error vs path cost (vectors evaluated per prediction)",
     error_vs_path_cost_plot),
]


def file_part(name: str) -> str:
    """``name`` made safe inside a file name: runs of characters other than letters, digits,
    '.', '-' and '_' (e.g. the '/' and ':' of a ``file:`` dataset) become '_'."""
    return re.sub(r"[^\w.-]+", "_", name)


def write_report(out, title: str = "xcbench report", command: str | None = None,
                 recompute: bool = False, columns: str | None = None,
                 html: bool = True, select=None) -> dict:
    """Write ``report.md`` (and ``report.html`` unless ``html`` is False), per dataset an
    ``error_vs_latency-<dataset>.png`` and ``error_vs_path_cost-<dataset>.png`` and one
    ``latency_vs_k-<family>.png`` per dataset family (datasets of several sizes K) into
    ``out``; ``columns`` picks the table columns (see ``xcbench.report.columns``);
    ``select``, a function of the newest records, keeps those the report shows (the CLI
    passes a suite's view, ``xcbench.run.suites.newest_per_planned``).

    With ``recompute`` the quality metrics and path costs are computed again from the raw
    outputs in ``out/raw``. Returns {"markdown": path, "html": path or None, "plots":
    [paths], "recomputed": n}. Raises ValueError if there are no readable results or
    for an unknown column name.
    """
    select_columns(columns)  # a bad name fails before any work
    out = Path(out)
    store = ResultStore(out)
    records = stored_records(out, "report")
    if select is not None:
        records = select(records)
    if not records:
        raise ValueError(f"{store.path}: none of its records is a measurement the suite "
                         "plans; run the suite into this folder first")
    recomputed = 0
    if recompute:
        records, recomputed = recompute_records(store, records)
    plots, captions = [], {}
    colours = method_colours(r["method"] for r in records)  # the same in every plot
    for dataset in sorted({r["dataset"] for r in records}):
        ds_records = [r for r in records if r["dataset"] == dataset]
        for prefix, caption, plot in DATASET_PLOTS:
            path = out / f"{prefix}-{file_part(dataset)}.png"
            if plot(ds_records, path, title=f"{dataset}: {caption}", colours=colours):
                plots.append(path)
                captions.setdefault(dataset, []).append((f"{caption} on {dataset}", path.name))
    family_plots = {}
    for family, names in dataset_families(records).items():
        path = out / f"latency_vs_k-{file_part(family)}.png"
        if latency_vs_k_plot([r for r in records if r["dataset"] in names], path,
                             title=f"{family}: single-example latency vs K", colours=colours):
            plots.append(path)
            family_plots[family] = path.name
    from .aggregate import group_rows
    from .significance import vs_best

    marks = vs_best(group_rows(records), records, store)
    text = markdown_report(records, title=title, command=command, plots=captions,
                           family_plots=family_plots, columns=columns, vs_best=marks)
    md = out / "report.md"
    write_text_atomically(md, text)
    html_path = None
    if html:
        from .html import markdown_to_html

        html_path = out / "report.html"
        write_text_atomically(html_path, markdown_to_html(text, title=title, image_dir=out))
    return {"markdown": md, "html": html_path, "plots": plots, "recomputed": recomputed}
