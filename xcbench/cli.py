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


def _value(text: str):
    """Parse a parameter value: int, float, bool, None, else the string itself."""
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_param_overrides(items: list[str]) -> dict:
    """``["softmax:C=0.1,1", "st:k+depth=50+8,100+7"]`` ->
    {"softmax": {"C": [0.1, 1]}, "st": {"k+depth": [(50, 8), (100, 7)]}}: names joined by
    ``+`` are swept together (zipped), not crossed."""
    out: dict = {}
    for item in items or []:
        method, sep, rest = item.partition(":")
        name, eq, values = rest.partition("=")
        if not (sep and eq and method and name and values):
            raise ValueError(f"--param {item!r}: expected METHOD:NAME=V1[,V2...] or "
                             "METHOD:A+B=A1+B1,A2+B2, e.g. --param softmax:C=0.1,1")
        names = name.split("+")
        if len(names) == 1:
            out.setdefault(method, {})[name] = [_value(v) for v in _split(values)]
            continue
        combos = [tuple(_value(x) for x in v.split("+")) for v in _split(values)]
        if any(len(c) != len(names) for c in combos):
            raise ValueError(f"--param {item!r}: each value needs {len(names)} parts joined "
                             f"by '+' (one per name in {name!r})")
        out.setdefault(method, {})[name] = combos
    return out


def cmd_run(args) -> int:
    from .report import write_report
    from .runner import RunOptions, run_plan

    methods, datasets = _split(args.methods), _split(args.dataset)
    seeds = [int(s) for s in _split(args.seeds)]
    options = RunOptions(timeout=args.timeout, threads=args.threads, fit_threads=args.fit_threads,
                         latency_calls=args.latency_calls, isolate=not args.in_process)
    command = "xcbench " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    records = run_plan(methods, datasets, seeds, out=args.out,
                       param_overrides=parse_param_overrides(args.param), options=options,
                       resume=args.resume, data_dir=args.data_dir, progress=not args.quiet,
                       command=command)
    failed = [r for r in records if r["status"] != "ok"]
    print(f"{len(records)} run(s) recorded in {args.out}/results.jsonl"
          + (f", {len(failed)} did not finish" if failed else ""))
    if not args.no_report:
        paths = write_report(args.out)
        print(f"report: {paths['markdown']}")
    return 0


def cmd_report(args) -> int:
    from .report import write_report

    paths = write_report(args.out, title=args.title)
    print(f"report: {paths['markdown']}")
    for p in paths["plots"]:
        print(f"plot: {p}")
    return 0


def cmd_list(args) -> int:
    from .data import data_dir
    from .plugins import dataset_specs, method_specs

    if args.what == "methods":
        for name, spec in sorted(method_specs().items()):
            print(f"{name:<16} {spec.family:<9} {spec.description}  [plugin {spec.plugin}]")
    else:
        from .data.status import dataset_status

        where = data_dir(args.data_dir)
        for name, spec in sorted(dataset_specs().items()):
            print(f"{name:<22} {dataset_status(spec, where):<13} {spec.description}")
        print(f"(data directory: {where})")
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
    parser = argparse.ArgumentParser(
        prog="xcbench",
        description="Benchmark extreme multi-class classifiers: accuracy, perplexity with "
                    "coverage, model size, training time and inference latency.",
        epilog="Run `xcbench run` with no arguments for the default job (ova and softmax on "
               "the synthetic dataset), then read xcbench-results/report.md.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    run = sub.add_parser("run", help="run methods on datasets and write a report",
                         description="Plan methods x parameter grid x datasets x seeds, run "
                                     "each cell in its own process with a timeout, append one "
                                     "record per run to OUT/results.jsonl, then write a report.")
    run.add_argument("--methods", default=DEFAULT_METHODS,
                     help=f"comma-separated method names (default: {DEFAULT_METHODS}); "
                          "see `xcbench list methods`")
    run.add_argument("--dataset", "--datasets", default=DEFAULT_DATASET,
                     help=f"comma-separated dataset names (default: {DEFAULT_DATASET}); "
                          "see `xcbench list datasets`")
    run.add_argument("--seeds", default="0", help="comma-separated seeds (default: 0)")
    run.add_argument("--param", action="append", metavar="METHOD:NAME=V1[,V2]",
                     help="sweep a parameter, e.g. --param softmax:C=0.1,1 (repeatable); "
                          "sweep several together with +, e.g. --param st:k+depth=50+8,100+7")
    run.add_argument("--timeout", type=float, default=1800,
                     help="seconds before a run is stopped and recorded as timeout (default 1800)")
    run.add_argument("--threads", type=int, default=1,
                     help="BLAS/OpenMP threads per run (default 1: single-threaded timing)")
    run.add_argument("--fit-threads", type=int, default=None,
                     help="threads while fitting (default: --threads); timing stays at --threads")
    run.add_argument("--latency-calls", type=int, default=1000,
                     help="single-example calls timed per run (default 1000)")
    run.add_argument("--resume", action="store_true",
                     help="skip cells that already have a record in OUT (re-run only missing)")
    run.add_argument("--in-process", action="store_true",
                     help="run cells in this process (no isolation, no timeout; for debugging)")
    run.add_argument("--no-report", action="store_true", help="do not write the report")
    run.add_argument("--quiet", action="store_true", help="no progress output")
    _add_common(run)
    run.set_defaults(func=cmd_run)

    report = sub.add_parser("report", help="write report.md and plots from stored results",
                            description="Turn OUT/results.jsonl into OUT/report.md and one "
                                        "error-vs-latency PNG per dataset.")
    report.add_argument("--title", default="xcbench report")
    _add_common(report, data=False)
    report.set_defaults(func=cmd_report)

    lister = sub.add_parser("list", help="list registered methods or datasets")
    lister.add_argument("what", choices=["methods", "datasets"])
    _add_common(lister, out=False)
    lister.set_defaults(func=cmd_list)

    datasets = sub.add_parser("datasets", help="list datasets and whether they are available")
    _add_common(datasets, out=False)
    datasets.set_defaults(func=cmd_list, what="datasets")

    plugins = sub.add_parser("plugins", help="list loaded plugins and what they registered")
    plugins.set_defaults(func=cmd_plugins)
    return parser


def _add_common(p, out=True, data=True):
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
    except (KeyError, ValueError, FileNotFoundError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"xcbench: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("xcbench: interrupted; finished runs are stored, rerun with --resume to "
              "complete the rest", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
