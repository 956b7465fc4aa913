"""``xcbench run``: plan methods x parameters x datasets x seeds, run each cell isolated,
store the records and write the report."""
from __future__ import annotations

import shlex
import sys

from .common import DEFAULT_OUT, CommaList, add_common, duration, split
from .exit_codes import EXIT_CELL_FAILED, EXIT_CODES, EXIT_OK

DEFAULT_METHODS = "ova,softmax"
DEFAULT_DATASET = "synthetic"

#: the defaults of the options a suite also sets. Their flags default to None ("not
#: given"), so that a flag given with --suite is seen even when it spells the default value
#: (``--timeout 1800`` overrides a suite's timeout)
RUN_DEFAULTS = {"methods": DEFAULT_METHODS, "dataset": DEFAULT_DATASET, "seeds": "0",
                "timeout": 1800.0, "threads": 1, "latency_calls": 1000, "out": DEFAULT_OUT}

#: run option -> the command-line flag that sets it (for error messages)
_FLAGS = {"timeout": "--timeout", "threads": "--threads", "fit_threads": "--fit-threads",
          "latency_calls": "--latency-calls", "memory_limit": "--memory-limit"}


def _run_options(args):
    """RunOptions from the command line; ValueError naming the flag of a bad value."""
    from ..run.memory import parse_size
    from ..run.runner import RunOptions

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


def _parse_seeds(text: str) -> list[int]:
    """``--seeds 0,1,2`` as integers; ValueError saying why a seed cannot be used."""
    from ..run.plan import seed_problem

    try:
        seeds = [int(s) for s in split(text)]
    except ValueError:
        raise ValueError(f"--seeds {text!r}: expected integers, e.g. --seeds 0,1,2") from None
    if not seeds:
        raise ValueError(f"--seeds {text!r}: expected one or more integers >= 0, e.g. "
                         "--seeds 0,1,2")
    problems = [seed_problem(seed) for seed in seeds if seed_problem(seed)]
    if problems:
        raise ValueError(f"--seeds {text!r}: seed {problems[0]}")
    return seeds


def cmd_run(args) -> int:
    from ..run.plan import parse_param_overrides
    from ..run.resume import parse_retry
    from ..run.runner import execute_plan
    from ..tune.params_file import merge_params_files

    retry = parse_retry(args.retry)
    if retry and not args.resume:
        raise ValueError("--retry re-runs stored cells of a results folder: use it with "
                         "--resume")
    if args.append and args.resume:
        raise ValueError("--append measures every cell again, --resume only the missing ones: "
                         "give one of them")
    if args.reuse_from and not args.resume:
        raise ValueError("--reuse-from copies stored records into a results folder, as "
                         "--resume keeps its own: use it with --resume")
    command = "xcbench " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    if args.suite:
        return _run_suite(args, retry, command)
    for name, value in RUN_DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.only or args.dry_run or args.retire_unplanned:
        raise ValueError("--only, --dry-run and --retire-unplanned work on a suite: use them "
                         "with --suite")
    methods, datasets = split(args.methods), split(args.dataset)
    for flag, given, names, example, kind in (
            ("--methods", args.methods, methods, "ova,softmax", "methods"),
            ("--dataset", args.dataset, datasets, "synthetic", "datasets")):
        if not names:
            raise ValueError(f"{flag} {given!r} names nothing; give one or more "
                             f"comma-separated names, e.g. {flag} {example} (`xcbench list "
                             f"{kind}`)")
    seeds = _parse_seeds(args.seeds)
    options = _run_options(args)
    _check_second_run(args, args.out)
    outcome = execute_plan(methods, datasets, seeds, out=args.out,
                           param_overrides=merge_params_files(
                               args.params_file, parse_param_overrides(args.param)),
                           options=options,
                           resume=args.resume, data_dir=args.data_dir,
                           progress=not args.quiet, command=command, executor=args.executor,
                           scheduler=args.scheduler, workers=args.workers, retry=retry,
                           reuse_from=args.reuse_from or ())
    return _finish(args, outcome, args.out)


#: flags a suite sets itself (with --suite they are refused rather than silently ignored);
#: --timeout and --memory-limit may override the suite's, as they change no measurement
_SUITE_FLAGS = {"methods": "--methods", "dataset": "--dataset", "seeds": "--seeds",
                "param": "--param", "params_file": "--params-file", "threads": "--threads",
                "fit_threads": "--fit-threads", "latency_calls": "--latency-calls"}


def _run_suite(args, retry, command) -> int:
    """``xcbench run --suite FILE|NAME [--only NAMES]``: every run of the suite, into the
    suite's ``out`` unless --out is given; the report with the suite's title and columns."""
    from ..run.suites import load_suite
    from ..run.suites.execute import execute_suite

    given = [flag for name, flag in _SUITE_FLAGS.items() if getattr(args, name) is not None]
    if given:
        raise ValueError(f"--suite sets the plan and its run options; {', '.join(given)} "
                         "cannot be combined with it (edit the suite file, or use --only)")
    overrides = {"isolate": not args.in_process}
    if args.timeout is not None:
        overrides["timeout"] = args.timeout
    if args.memory_limit:
        from ..run.memory import parse_size

        overrides["memory_limit"] = parse_size(args.memory_limit)
    suite = load_suite(args.suite)
    if args.retire_unplanned and args.only:
        raise ValueError("--retire-unplanned judges records against the whole suite: drop "
                         "--only")
    if args.only:
        suite = suite.only(args.only)
    out = args.out = args.out or suite.out or DEFAULT_OUT
    if args.retire_unplanned:
        return _retire_unplanned(suite, out)
    if suite.out is not None and out == suite.out:
        _announce_outside_out(suite)
    if args.dry_run:
        return _print_plan(suite, out, whole=not args.only)
    _check_second_run(args, out)
    outcome = execute_suite(suite, out, progress=not args.quiet, command=command,
                            option_overrides=overrides,
                            resume=args.resume, data_dir=args.data_dir,
                            executor=args.executor, scheduler=args.scheduler,
                            workers=args.workers, retry=retry,
                            reuse_from=args.reuse_from or ())
    print(f"suite {suite.name}: {len(suite.runs)} run(s) in "
          f"{outcome.wall_seconds / 60:.1f} min (expected: {suite.expected_wall or 'not stated'})")
    from ..run.suites import newest_per_planned

    return _finish(args, outcome, out, title=suite.report.get("title"),
                   columns=suite.report.get("columns"),
                   select=lambda records: newest_per_planned(suite, records))


def _check_second_run(args, out) -> None:
    """Refuse to run into a folder that holds records already unless --resume (keep them,
    run the missing cells) or --append (measure every cell again, beside them) says which."""
    from pathlib import Path

    from ..store.results import RESULTS_FILE

    results = Path(out) / RESULTS_FILE
    if args.resume or args.append or not results.is_file() or results.stat().st_size == 0:
        return
    raise ValueError(f"{results} holds records already: add --resume to keep them and run "
                     "only the cells without a record, or --append to measure every cell "
                     "again and add the new records beside the old ones (or choose another "
                     "--out)")


def _announce_outside_out(suite) -> None:
    """A warning line when a suite's ``out`` lies outside its file's folder (absolute, or
    climbing out with ``..``): a suite file decides where results are written."""
    import os

    if suite.path is None:
        return
    home = os.path.abspath(suite.path.parent)
    out = os.path.abspath(suite.out)
    if os.path.commonpath([home, out]) != home:
        print(f"warning: suite {suite.path} writes its results outside its folder, to {out} "
              "(its `out`); give --out to choose the folder", file=sys.stderr)


def _print_plan(suite, out, whole: bool = True) -> int:
    """``--dry-run``: each run's cells and measurements, and how the plan matches the
    records already in ``out`` (any code)."""
    from pathlib import Path

    from ..run.suites import plan_vs_records, suite_cells
    from ..store.results import ResultStore

    planned = suite_cells(suite)
    for run in suite.runs:
        cells = [c for r, c in planned if r is run]
        print(f"{run.label}: {len(cells)} cell(s), "
              f"{sum(len(c.run_params()) for c in cells)} measurement(s)")
    total = sum(len(c.run_params()) for _, c in planned)
    print(f"suite {suite.name}: {len(planned)} cell(s), {total} measurement(s); expected "
          f"wall time: {suite.expected_wall or 'not stated'}")
    if (Path(out) / "results.jsonl").exists():
        records = ResultStore(out).latest()
        missing, extra = plan_vs_records(suite, records)
        print(f"{out}: {total - len(missing)} of the {total} planned measurement(s) have a "
              f"record (any code); {len(extra)} record(s) there are not in the suite"
              + (" (--retire-unplanned moves them aside)" if extra and whole else ""))
        print(_stored_time_line(suite, records))
    for folder in suite.reuse_from:
        print(_lender_line(suite, folder, total))
    return EXIT_OK


def _lender_line(suite, folder, total: int) -> str:
    """How many of the planned measurements a ``reuse_from`` folder holds (ok records of any
    code; ``--resume`` copies those made by the running code)."""
    from ..run.suites import plan_vs_records
    from ..store.results import ResultStore

    store = ResultStore(folder)
    if not store.path.is_file():
        return f"reuse_from {folder}: no results file there (--resume will refuse it)"
    missing, _ = plan_vs_records(suite, [r for r in store.latest() if r["status"] == "ok"])
    return (f"reuse_from {folder}: holds {total - len(missing)} of the {total} planned "
            "measurement(s) (ok, any code; --resume copies those this code made)")


def _stored_time_line(suite, records) -> str:
    """How long the planned cells took when their newest records were made, per dataset:
    a measured guide to the wall time of a re-run (one cell at a time)."""
    from ..run.progress import format_duration
    from ..run.suites import stored_cell_seconds

    seconds, without = stored_cell_seconds(suite, records)
    parts = ", ".join(f"{name} {format_duration(s)}" for name, s in seconds.items())
    return (f"stored cell time: {format_duration(sum(seconds.values()))}"
            + (f" ({parts})" if len(seconds) > 1 else "")
            + ": the planned cells' newest records' wall times, one cell after another "
            "(any code or machine)"
            + (f"; {without} cell(s) have no record" if without else ""))


def _retire_unplanned(suite, out) -> int:
    """``--retire-unplanned``: move the records of ``out`` that the suite does not plan
    (e.g. after a row of the suite file changed) to ``out/retired.jsonl``; run nothing."""
    from ..run.suites import planned_test
    from ..store.results import RETIRED_FILE, ResultStore

    planned = planned_test(suite)
    moved = ResultStore(out).retire(lambda record: not planned(record))
    print(f"{out}: moved {moved} record(s) the suite does not plan to {out}/{RETIRED_FILE} "
          "(their raw outputs stay in raw/)")
    return EXIT_OK


def _finish(args, outcome, out, title=None, columns=None, select=None) -> int:
    """Print the summary of a finished run, write the report (of the records ``select``
    keeps, see ``write_report``); the exit code."""
    from ..report import write_report
    from ..report.summary import run_summary

    records = outcome.records
    failed = outcome.failed()
    if outcome.taken:
        print(f"{len(outcome.taken)} cell(s) skipped: another run into {args.out} is measuring "
              f"them (e.g. {outcome.taken[0]}); rerun with --resume once it is done to report "
              "them all")
    print(run_summary(records, outcome.reused))
    if outcome.resume_note:
        print(outcome.resume_note)
    print(f"{len(records)} run(s) recorded in {out}/results.jsonl"
          + (f", {len(outcome.reused)} kept from before" if outcome.reused else "")
          + (f"; {len(failed)} did not finish ok" if failed else ""))
    if not args.no_report and (records or outcome.reused):
        paths = write_report(out, **({"title": title} if title else {}), columns=columns,
                             select=select)
        print(f"report: {paths['markdown']}" + (f" and {paths['html']}" if paths["html"] else ""))
    return EXIT_CELL_FAILED if failed else EXIT_OK


def add_parser(sub) -> None:
    """Register ``xcbench run``."""
    # allow_abbrev=False: with --param and --params-file, a prefix such as --params would
    # silently mean --params-file
    run = sub.add_parser("run", help="run methods on datasets and write a report",
                         allow_abbrev=False,
                         description="Plan methods x parameter grid x datasets x seeds, run "
                                     "each cell in its own process with a timeout, append one "
                                     "record per run to OUT/results.jsonl, then write a report. "
                                     + EXIT_CODES)
    run.add_argument("--methods", action=CommaList, default=None,
                     help=f"comma-separated method names (default: {DEFAULT_METHODS}); "
                          "see `xcbench list methods`")
    run.add_argument("--dataset", "--datasets", action=CommaList, default=None,
                     help=f"comma-separated dataset names (default: {DEFAULT_DATASET}), or "
                          "file:TRAIN[:TEST] for your own files (docs/own-data.md); see "
                          "`xcbench list datasets`")
    run.add_argument("--seeds", action=CommaList, default=None,
                     help="comma-separated seeds (default: 0)")
    run.add_argument("--param", action="append", metavar="METHOD:NAME=V1[,V2]",
                     help="sweep a parameter, e.g. --param softmax:C=0.1,1 (repeatable); "
                          "sweep several together with +, e.g. --param st:k+depth=50+8,100+7; "
                          "`xcbench describe METHOD` lists a method's parameters")
    run.add_argument("--params-file", action="append", metavar="FILE",
                     help="fixed parameters of one method from a JSON file, as `xcbench tune` "
                          "writes (OUT/best-METHOD.json; repeatable, one file per method); "
                          "a --param of the same name wins")
    run.add_argument("--timeout", type=duration, default=None,
                     help="time before a run is stopped and recorded as timeout: seconds or "
                          "a duration such as 30m or 1h30m (default 1800 s)")
    run.add_argument("--threads", type=int, default=None,
                     help="BLAS/OpenMP threads per run (default 1: single-threaded timing)")
    run.add_argument("--fit-threads", type=int, default=None,
                     help="threads while fitting (default: --threads); timing stays at --threads")
    run.add_argument("--latency-calls", type=int, default=None,
                     help="single-example calls timed per run (default 1000)")
    run.add_argument("--memory-limit", default=None, metavar="SIZE",
                     help="memory one run may use, e.g. 4G or 512M, at least 64M (default: 70%% of the "
                          "available RAM); a run whose method estimates more is recorded as "
                          "refused, one that exceeds it as an error")
    run.add_argument("--suite", default=None, metavar="FILE|NAME",
                     help="run a suite file (TOML: methods, parameter grids, datasets, seeds, "
                          "run options; docs/suites.md) or a named suite: quick, standard, "
                          "scaling")
    run.add_argument("--only", action=CommaList, default=None, metavar="METHOD|DATASET[,...]",
                     help="with --suite: only the cells of these methods and/or datasets")
    run.add_argument("--dry-run", action="store_true",
                     help="with --suite: check the suite, print its runs' cells and how many "
                          "already have a record in OUT; run nothing")
    run.add_argument("--retire-unplanned", action="store_true",
                     help="with --suite: move the records in OUT that the suite does not plan "
                          "(left by an edited suite file) to OUT/retired.jsonl, so its report "
                          "shows the suite's measurements only; run nothing")
    run.add_argument("--resume", action="store_true",
                     help="skip cells that already have a record made by this code in OUT "
                          "(re-run only missing ones, and those made by other code)")
    run.add_argument("--append", action="store_true",
                     help="run into an --out that holds records already, measuring every "
                          "cell again and adding the new records beside the old ones "
                          "(without --resume or --append such a run is refused)")
    run.add_argument("--retry", default=None, metavar="failed|error|timeout|refused",
                     help="with --resume: also re-run the stored cells of these statuses "
                          "(comma-separated; failed = error, timeout and refused)")
    run.add_argument("--reuse-from", action="append", default=None, metavar="FOLDER",
                     help="with --resume: copy in (raw outputs included) the records another "
                          "results folder holds of this plan's measurements made by this code "
                          "(same key), instead of measuring them again; may be repeated. A "
                          "suite may list such folders itself (reuse_from = [...])")
    run.add_argument("--in-process", action="store_true",
                     help="run cells in this process (no isolation, no timeout; for debugging); "
                          "its records say so, and an isolated --resume measures them again")
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
    add_common(run)
    # the options a suite also sets default to None, "not given" (see RUN_DEFAULTS)
    run.set_defaults(func=cmd_run, out=None)
