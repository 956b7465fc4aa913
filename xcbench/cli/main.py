"""The ``xcbench`` command line: a thin layer over the Python API."""
from __future__ import annotations

import argparse
import shlex
import sys
import warnings

DEFAULT_OUT = "xcbench-results"
DEFAULT_METHODS = "ova,softmax"
DEFAULT_DATASET = "synthetic"


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


#: exit codes of ``xcbench`` (documented in ``xcbench --help``)
EXIT_OK, EXIT_CELL_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_CODES = ("exit codes: 0 every run finished ok; 1 some run failed, timed out or was "
              "refused; 2 usage or input error (bad option, unknown name, data problem); "
              "130 interrupted (Ctrl-C or SIGTERM)")

#: run option -> the command-line flag that sets it (for error messages)
_FLAGS = {"timeout": "--timeout", "threads": "--threads", "fit_threads": "--fit-threads",
          "latency_calls": "--latency-calls", "memory_limit": "--memory-limit"}


def _run_options(args):
    """RunOptions from the command line; ValueError naming the flag of a bad value."""
    from .memory import parse_size
    from .runner import RunOptions

    try:
        return RunOptions(timeout=args.timeout, threads=args.threads,
                          fit_threads=args.fit_threads, latency_calls=args.latency_calls,
                          isolate=not args.in_process,
                          memory_limit=parse_size(args.memory_limit) if args.memory_limit
                          else None)
    except ValueError as exc:
        message = str(exc)
        for name, flag in _FLAGS.items():
            message = message.replace(f"The '{name}' parameter of RunOptions", flag)
        raise ValueError(message) from None


def cmd_run(args) -> int:
    from .plan import parse_param_overrides
    from .report import write_report
    from .report.summary import run_summary
    from .runner import execute_plan

    methods, datasets = _split(args.methods), _split(args.dataset)
    try:
        seeds = [int(s) for s in _split(args.seeds)]
    except ValueError:
        raise ValueError(f"--seeds {args.seeds!r}: expected integers, e.g. --seeds 0,1,2") \
            from None
    options = _run_options(args)
    command = "xcbench " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    outcome = execute_plan(methods, datasets, seeds, out=args.out,
                           param_overrides=parse_param_overrides(args.param), options=options,
                           resume=args.resume, data_dir=args.data_dir,
                           progress=not args.quiet, command=command, executor=args.executor,
                           scheduler=args.scheduler, workers=args.workers)
    records = outcome.records
    failed = outcome.failed()
    print(run_summary(records, outcome.reused))
    print(f"{len(records)} run(s) recorded in {args.out}/results.jsonl"
          + (f", {len(outcome.reused)} kept from before" if outcome.reused else "")
          + (f"; {len(failed)} did not finish ok" if failed else ""))
    if not args.no_report and (records or outcome.reused):
        paths = write_report(args.out)
        print(f"report: {paths['markdown']}" + (f" and {paths['html']}" if paths["html"] else ""))
    return EXIT_CELL_FAILED if failed else EXIT_OK


def cmd_report(args) -> int:
    from .report import write_report

    paths = write_report(args.out, title=args.title, recompute=args.recompute,
                         columns=args.columns, html=args.html)
    if args.recompute:
        print(f"recomputed the metrics of {paths['recomputed']} record(s) from raw outputs")
    print(f"report: {paths['markdown']}" + (f" and {paths['html']}" if paths["html"] else ""))
    for p in paths["plots"]:
        print(f"plot: {p}")
    return 0


def cmd_list(args) -> int:
    from .data import data_dir
    from .plugins import dataset_specs, method_specs

    if args.what == "methods":
        for name, spec in sorted(method_specs().items()):
            print(f"{name:<16} {spec.family:<9} {spec.description}  [plugin {spec.plugin}]")
        print("(parameters and defaults of one: xcbench describe NAME)")
    else:
        from .data.status import dataset_status

        where = data_dir(args.data_dir)
        for name, spec in sorted(dataset_specs().items()):
            print(f"{name:<22} {dataset_status(spec, where):<13} {spec.description}")
        print(f"(data directory: {where}; shape and sources of one: xcbench describe NAME)")
    return 0


def cmd_plugins(args) -> int:
    from .plugins import plugin_infos

    for info in plugin_infos():
        parts = []
        if info.methods:
            parts.append("methods: " + ", ".join(sorted(info.methods)))
        if info.datasets:
            parts.append("datasets: " + ", ".join(sorted(info.datasets)))
        print(f"{info.name} {info.version}: " + ("; ".join(parts) or "registers nothing"))
    return 0


def build_parser() -> argparse.ArgumentParser:
    from .cli_plot import add_parser as add_plot_parser, add_report_options

    parser = argparse.ArgumentParser(
        prog="xcbench",
        description="Benchmark extreme multi-class classifiers: accuracy, perplexity with "
                    "coverage, model size, training time and inference latency.",
        epilog="Run `xcbench run` with no arguments for the default job (ova and softmax on "
               "the synthetic dataset), then read xcbench-results/report.md. " + EXIT_CODES)
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback of an error")
    parser.add_argument("--version", action="version", version=_version_text())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    run = sub.add_parser("run", help="run methods on datasets and write a report",
                         description="Plan methods x parameter grid x datasets x seeds, run "
                                     "each cell in its own process with a timeout, append one "
                                     "record per run to OUT/results.jsonl, then write a report. "
                                     + EXIT_CODES)
    run.add_argument("--methods", default=DEFAULT_METHODS,
                     help=f"comma-separated method names (default: {DEFAULT_METHODS}); "
                          "see `xcbench list methods`")
    run.add_argument("--dataset", "--datasets", default=DEFAULT_DATASET,
                     help=f"comma-separated dataset names (default: {DEFAULT_DATASET}), or "
                          "file:TRAIN[:TEST] for your own files (docs/own-data.md); see "
                          "`xcbench list datasets`")
    run.add_argument("--seeds", default="0", help="comma-separated seeds (default: 0)")
    run.add_argument("--param", action="append", metavar="METHOD:NAME=V1[,V2]",
                     help="sweep a parameter, e.g. --param softmax:C=0.1,1 (repeatable); "
                          "sweep several together with +, e.g. --param st:k+depth=50+8,100+7; "
                          "`xcbench describe METHOD` lists a method's parameters")
    run.add_argument("--timeout", type=float, default=1800,
                     help="seconds before a run is stopped and recorded as timeout (default 1800)")
    run.add_argument("--threads", type=int, default=1,
                     help="BLAS/OpenMP threads per run (default 1: single-threaded timing)")
    run.add_argument("--fit-threads", type=int, default=None,
                     help="threads while fitting (default: --threads); timing stays at --threads")
    run.add_argument("--latency-calls", type=int, default=1000,
                     help="single-example calls timed per run (default 1000)")
    run.add_argument("--memory-limit", default=None, metavar="SIZE",
                     help="memory one run may use, e.g. 4G or 512M, at least 64M (default: 70%% of the "
                          "available RAM); a run whose method estimates more is recorded as "
                          "refused, one that exceeds it as an error")
    run.add_argument("--resume", action="store_true",
                     help="skip cells that already have a record in OUT (re-run only missing)")
    run.add_argument("--in-process", action="store_true",
                     help="run cells in this process (no isolation, no timeout; for debugging)")
    run.add_argument("--executor", choices=["local", "dask"], default="local",
                     help="who runs the cells: local (default; one at a time here) or dask "
                          "(tasks on a Dask cluster; needs xcbench[dask])")
    run.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                     help="with --executor dask: the scheduler of a running cluster (default: "
                          "start a local cluster)")
    run.add_argument("--workers", type=int, default=None, metavar="N",
                     help="with --executor dask and no --scheduler: worker processes of the "
                          "local cluster, one cell at a time each (default 2)")
    run.add_argument("--no-report", action="store_true", help="do not write the report")
    run.add_argument("--quiet", action="store_true", help="no progress output")
    _add_common(run)
    run.set_defaults(func=cmd_run)

    report = sub.add_parser("report", help="write report.md, report.html and plots",
                            description="Turn OUT/results.jsonl into OUT/report.md, the "
                                        "self-contained OUT/report.html and per dataset "
                                        "error-vs-latency and error-vs-path-cost PNGs.")
    report.add_argument("--title", default="xcbench report")
    report.add_argument("--recompute", action="store_true",
                        help="recompute the quality metrics from the raw outputs kept in "
                             "OUT/raw (no refitting)")
    add_report_options(report)
    _add_common(report, data=False)
    report.set_defaults(func=cmd_report)
    add_plot_parser(sub)

    lister = sub.add_parser("list", help="list registered methods or datasets")
    lister.add_argument("what", choices=["methods", "datasets"])
    _add_common(lister, out=False)
    lister.set_defaults(func=cmd_list)

    datasets = sub.add_parser("datasets", help="list datasets and whether they are available")
    _add_common(datasets, out=False)
    datasets.set_defaults(func=cmd_list, what="datasets")

    plugins = sub.add_parser("plugins", help="list loaded plugins and what they registered")
    plugins.set_defaults(func=cmd_plugins)
    _add_commands(sub)
    return parser


def _add_commands(sub) -> None:
    """The commands that live in their own modules (describe, export, compare, check)."""
    from . import cli_check, cli_describe, compare, export

    cli_describe.add_parser(sub, _add_common)
    export.add_parser(sub, _add_common)
    compare.add_parser(sub, _add_common)
    cli_check.add_parser(sub, _add_common)


def _version_text() -> str:
    """``xcbench X.Y.Z`` and the Python running it, for ``xcbench --version``."""
    import platform

    from . import __version__

    return f"xcbench {__version__} (Python {platform.python_version()})"


def _add_common(p, out=True, data=True):
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="show the full traceback of an error")
    if out:
        p.add_argument("--out", default=DEFAULT_OUT,
                       help=f"results and report directory (default: ./{DEFAULT_OUT})")
    if data:
        p.add_argument("--data-dir", default=None,
                       help="data directory (default: $XCBENCH_DATA_DIR or the user cache)")


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    warnings.filterwarnings("default")
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("xcbench: interrupted; finished runs are stored, rerun with --resume to "
              "complete the rest", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - one clear line; the traceback with --debug
        if args.debug or not _is_input_error(exc):
            raise
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"xcbench: error: {message}", file=sys.stderr)
        print("(run with --debug for the traceback)", file=sys.stderr)
        return EXIT_USAGE


def _is_input_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a problem with the user's input (options, names, data files)
    rather than a bug, so one line says it all."""
    from .data.fetch import DataError

    return isinstance(exc, (KeyError, ValueError, OSError, DataError))


if __name__ == "__main__":
    sys.exit(main())
