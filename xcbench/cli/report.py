"""``xcbench report``: report.md, report.html and the plots of a results folder."""
from __future__ import annotations

from .common import add_common
from .plot import add_report_options


def cmd_report(args) -> int:
    from ..report import write_report

    out, title, columns, select = args.out, args.title, args.columns, None
    if args.suite:  # the suite's folder, title and columns, unless given here
        from ..run.suites import load_suite, newest_per_planned

        suite = load_suite(args.suite)
        select = lambda records: newest_per_planned(suite, records)  # noqa: E731
        out = out if out != args.defaults["out"] else (suite.out or out)
        title = title if title != args.defaults["title"] else suite.report.get("title", title)
        columns = columns or suite.report.get("columns")
    paths = write_report(out, title=title, recompute=args.recompute, columns=columns,
                         html=args.html, select=select)
    if args.recompute:
        print(f"recomputed the metrics of {paths['recomputed']} record(s) from raw outputs")
    print(f"report: {paths['markdown']}" + (f" and {paths['html']}" if paths["html"] else ""))
    for p in paths["plots"]:
        print(f"plot: {p}")
    return 0


def add_parser(sub) -> None:
    """Register ``xcbench report``."""
    report = sub.add_parser("report", help="write report.md, report.html and plots",
                            description="Turn OUT/results.jsonl into OUT/report.md, the "
                                        "self-contained OUT/report.html and per dataset "
                                        "error-vs-latency and error-vs-path-cost PNGs.")
    report.add_argument("--title", default="xcbench report")
    report.add_argument("--suite", default=None, metavar="FILE|NAME",
                        help="take the results folder, title and columns from a suite file "
                             "(its `out` and [report] table; --out, --title and --columns "
                             "given here win); a record that a newer record of the same "
                             "planned measurement supersedes is left out")
    report.add_argument("--recompute", action="store_true",
                        help="recompute the quality metrics from the raw outputs kept in "
                             "OUT/raw (no refitting)")
    add_report_options(report)
    add_common(report, data=False)
    report.set_defaults(func=cmd_report, defaults={a.dest: a.default for a in report._actions})
