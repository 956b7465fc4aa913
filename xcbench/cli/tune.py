"""``xcbench tune METHOD[,METHOD] --dataset D [--trials N | --time-budget DURATION]``: tune
each method with the same budget on a validation split of D's training rows, print the best
parameters as ``--param`` options and write them to a params file ``xcbench run`` reads."""
from __future__ import annotations

import shlex
import sys

from .common import CommaList, add_common, duration, split
from .exit_codes import EXIT_INTERRUPTED, EXIT_OK

DEFAULT_OUT = "xcbench-tune"


def cmd_tune(args) -> int:
    from ..run.memory import parse_size
    from ..tune import tune, tune_options
    from ..tune.output import OBJECTIVE_NAMES, objective_text
    from ..tune.storage import require_optuna

    try:
        require_optuna()
    except ImportError as exc:
        raise ValueError(str(exc)) from None  # one line, exit code 2
    if args.methods and args.methods_option:
        raise ValueError("name the methods once: xcbench tune METHOD[,METHOD] --dataset D "
                         "(or --methods METHOD[,METHOD])")
    methods = split(args.methods or args.methods_option or "")
    if not methods:
        raise ValueError("name the method(s) to tune: xcbench tune METHOD[,METHOD] --dataset D "
                         "(e.g. xcbench tune lomtree --dataset synthetic --trials 20)")
    options = tune_options(timeout=args.timeout, threads=args.threads,
                           isolate=not args.in_process,
                           memory_limit=parse_size(args.memory_limit) if args.memory_limit
                           else None)
    _check_names(methods, args.dataset)  # before hours of tuning the first method
    command = "xcbench " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    results = []
    for method in methods:
        try:
            result = tune(method, args.dataset, trials=args.trials, time_budget=args.time_budget,
                          seed=args.seed, out=args.out, objective=args.objective,
                          validation_fraction=args.validation_fraction,
                          repeats=args.repeats, defaults=not args.no_defaults, options=options,
                          data_dir=args.data_dir, progress=not args.quiet, command=command)
        except KeyboardInterrupt:
            print(f"xcbench: interrupted while tuning {method}; finished trials are stored in "
                  f"{args.out}, run the same command again to resume", file=sys.stderr)
            return EXIT_INTERRUPTED
        results.append(result)
        found = (f"trial {result.best_trial} of {len(result.trials)}"
                 if result.best_trial is not None else
                 f"the defaults (no trial of {len(result.trials)} beat them)")
        print(f"{method}: best validation {OBJECTIVE_NAMES[result.objective]} "
              f"{objective_text(result.objective, result.best_value)}: {found}")
        print(f"  {result.files['best']}: " + (_param_line(result) or "(the defaults)"))
    files = " ".join(f"--params-file {r.files['best']}" for r in results)
    print(f"trace: {results[-1].files['trace']}")
    print(f"measure them on the test rows: xcbench run --methods {','.join(methods)} "
          f"--dataset {args.dataset} --seeds {args.seed} {files}")
    return EXIT_OK


def _check_names(methods, dataset) -> None:
    """KeyError/ValueError for an unknown dataset or method, a method whose optional library
    is not installed, or a method with no valid search space."""
    from ..contract.availability import check_available
    from ..contract.plugins import get_method_spec
    from ..contract.search_space import check_search_space
    from ..data import get_dataset_spec
    from ..tune.study import spec_space

    get_dataset_spec(dataset)
    specs = [get_method_spec(method) for method in methods]
    check_available(specs)
    for spec in specs:
        check_search_space(spec_space(spec), spec)


def _param_line(result) -> str:
    from ..tune.output import param_line

    return param_line(result.method, result.best_params)


def add_parser(subparsers) -> None:
    """Register ``xcbench tune``."""
    from ..tune import DEFAULT_TRIALS, OBJECTIVES
    from ..tune.study import DEFAULT_VALIDATION_FRACTION

    p = subparsers.add_parser(
        "tune", help="tune methods with the same budget on a validation split (Optuna)",
        description="Tune each method's declared search space (`xcbench describe METHOD`) "
                    "with the same budget, scoring every trial on a validation split carved "
                    "from the dataset's training rows with the seed; the test rows are never "
                    "read. Each trial runs as a cell of `xcbench run` (own process, timeout, "
                    "memory cap, a record in OUT/results.jsonl); rerunning the same command "
                    "resumes the study (OUT/tune.journal). Writes OUT/best-METHOD.json (for "
                    "`xcbench run --params-file`), OUT/trials-METHOD.csv and OUT/trace.png. "
                    "See docs/tuning.md.")
    p.add_argument("methods", metavar="METHOD[,METHOD]", nargs="?",
                   help="method name(s), comma-separated: each gets the same budget")
    p.add_argument("--methods", dest="methods_option", action=CommaList,
                   metavar="METHOD[,METHOD]",
                   help="the same, spelt as `xcbench run` spells it")
    p.add_argument("--dataset", required=True, help="a dataset name or file:TRAIN[:TEST]")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--trials", type=int, default=None,
                        help=f"trials per method (default {DEFAULT_TRIALS})")
    budget.add_argument("--time-budget", type=duration, default=None, metavar="DURATION",
                        help="trial wall time per method instead of a trial count, e.g. 30m, "
                             "2h, 1h30m or seconds (trials measured on a busy machine see "
                             "fewer trials)")
    p.add_argument("--seed", type=int, default=0,
                   help="seeds the validation split, the sampler and the methods (default 0)")
    p.add_argument("--repeats", type=int, default=1, metavar="R",
                   help="fits per trial, with method seeds SEED..SEED+R-1; the objective is "
                        "their mean (for methods whose result varies with the seed; costs R "
                        "times the trial; default 1)")
    p.add_argument("--no-defaults", action="store_true",
                   help="do not score the method's defaults first (by default they are, "
                        "outside the budget, and kept when no trial beats them)")
    p.add_argument("--objective", choices=OBJECTIVES, default="top1_error",
                   help="validation metric to minimise (default top1_error)")
    p.add_argument("--validation-fraction", type=float, default=DEFAULT_VALIDATION_FRACTION,
                   help="share of the training rows held out to score trials (default "
                        f"{DEFAULT_VALIDATION_FRACTION:g})")
    p.add_argument("--timeout", type=duration, default=1800, metavar="DURATION",
                   help="time before one trial is stopped and counted as failed, e.g. 10m or "
                        "seconds (default 1800)")
    p.add_argument("--threads", type=int, default=1, help="threads per trial (default 1)")
    p.add_argument("--memory-limit", default=None, metavar="SIZE",
                   help="memory one trial may use, e.g. 4G (default: 70%% of the available "
                        "RAM)")
    p.add_argument("--in-process", action="store_true",
                   help="run trials in this process (no isolation, no timeout; debugging)")
    p.add_argument("--quiet", action="store_true", help="no line per trial")
    p.add_argument("--out", default=DEFAULT_OUT,
                   help=f"folder of the study, trial records and outputs (default: "
                        f"./{DEFAULT_OUT}); the same --out resumes")
    add_common(p, out=False)
    p.set_defaults(func=cmd_tune)
