"""``xcbench plot`` (any two measured quantities of stored results) and the table and HTML
options of ``xcbench report``."""
from __future__ import annotations

import argparse
from pathlib import Path

from ..report.columns import column_names_help
from .common import add_common

QUANTITIES = ("quantities (for --x, --y and --columns):\n" + column_names_help())


def add_report_options(report) -> None:
    """Add ``--columns`` and ``--html/--no-html`` to the ``report`` subparser."""
    report.add_argument("--columns", default=None, metavar="NAME,...",
                        help="table columns, comma-separated, or 'all' (default: top1_error, "
                             "top5_error, perplexity, coverage, p50, fit_seconds, model_mb); "
                             "names in `xcbench plot --help`")
    report.add_argument("--html", action=argparse.BooleanOptionalAction, default=True,
                        help="also write the self-contained OUT/report.html (default: yes)")


def plot_file(out: Path, x: str, y: str, dataset: str) -> Path:
    """Where ``xcbench plot`` saves the plot of ``y`` vs ``x`` on ``dataset`` by default."""
    return out / f"{y}_vs_{x}-{dataset}.png"


def cmd_plot(args) -> int:
    """Save one plot of --y against --x per dataset (or the one --dataset); 0 on success."""
    from ..report.columns import get_column
    from ..report.plot import metric_plot
    from ..store.export import check_output_file, stored_records

    xcol, ycol = get_column(args.x, "--x"), get_column(args.y, "--y")
    out = Path(args.out)
    records = stored_records(out, "plot")
    present = sorted({r["dataset"] for r in records})
    if args.dataset is not None and args.dataset not in present:
        raise ValueError(f"--dataset {args.dataset!r}: no results for it in {out}; datasets "
                         f"there: {', '.join(present)}")
    datasets = [args.dataset] if args.dataset else present
    if args.output and len(datasets) > 1:
        raise ValueError(f"--output names one file but {out} holds {len(datasets)} datasets "
                         f"({', '.join(present)}); add --dataset NAME")
    if args.output:
        check_output_file(args.output, "plot.png")
    written = []
    for dataset in datasets:
        path = Path(args.output) if args.output else plot_file(out, args.x, args.y, dataset)
        if metric_plot([r for r in records if r["dataset"] == dataset], args.x, args.y, path,
                       title=f"{dataset}: {ycol.header} vs {xcol.header}"):
            written.append(path)
            print(f"plot: {path}")
        else:
            print(f"{dataset}: no finished run measured both {args.x} and {args.y}")
    if not written:
        raise ValueError(f"nothing to plot: no finished run measured both {args.x} and "
                         f"{args.y}")
    return 0


def add_parser(subparsers) -> None:
    """Register the ``plot`` subcommand on ``subparsers``."""
    plot = subparsers.add_parser(
        "plot", help="plot any two measured quantities of stored results",
        description="Plot --y against --x for each dataset in OUT/results.jsonl: one point "
                    "per method, params and machine, error bars (latency p25-p75 over all "
                    "timed calls, other quantities ± std over seeds), the Pareto front when "
                    "both quantities have a better direction.",
        epilog=QUANTITIES, formatter_class=argparse.RawDescriptionHelpFormatter)
    plot.add_argument("--x", default="p50", help="quantity on the x axis (default: p50)")
    plot.add_argument("--y", default="top1_error",
                      help="quantity on the y axis (default: top1_error)")
    plot.add_argument("--dataset", default=None,
                      help="plot only this dataset (default: one plot per dataset)")
    plot.add_argument("--output", default=None, metavar="FILE.png",
                      help="file to write (one dataset only; default: OUT/Y_vs_X-DATASET.png)")
    add_common(plot, data=False)
    plot.set_defaults(func=cmd_plot)
