"""``xcbench check METHOD``: run the conformance checks on a registered method and say
what each checked."""
from __future__ import annotations

from .common import duration

PROBLEMS = ("gaussian", "word-ids")
#: seconds one check may take by default (a check fits a few small models)
DEFAULT_CHECK_TIMEOUT = 300.0
#: memory one check may use by default, beyond what ``xcbench check`` holds itself
DEFAULT_CHECK_MEMORY = "4G"


def parse_check_params(items) -> dict:
    """``["C=0.5", "solver=lbfgs"]`` -> {"C": 0.5, "solver": "lbfgs"}; ValueError naming a
    malformed item."""
    from ..run.plan import parse_value

    params = {}
    for item in items or []:
        name, eq, value = item.partition("=")
        if not (eq and name.strip()):
            raise ValueError(f"--param {item!r}: expected NAME=VALUE, e.g. --param C=0.5")
        params[name.strip()] = parse_value(value.strip())
    return params


def cmd_check(args) -> int:
    from .exit_codes import EXIT_CELL_FAILED, EXIT_OK
    from ..run.plan import check_param_names
    from ..contract.plugins import get_method_spec
    from ..testing import gaussian_problem, run_checks, word_id_problem
    from ..run.memory import parse_size
    from .check_isolation import isolated_runner, load_compiled_input_checks

    spec = get_method_spec(args.method)
    params = parse_check_params(args.param)
    check_param_names(spec, params)
    skip = tuple(s.strip() for s in (args.skip or "").split(",") if s.strip())
    problem = gaussian_problem if args.problem == "gaussian" else word_id_problem
    run_one = None
    if not args.in_process:
        run_one = isolated_runner(args.timeout, parse_size(args.memory_limit))
        load_compiled_input_checks(problem()[0])

    def show(name, outcome, text):
        print(f"{'pass' if outcome == 'pass' else 'FAIL'}  {name}: {text}", flush=True)

    report = run_checks(spec, params, skip, problem, stop_at_failure=False, on_result=show,
                        run_one=run_one)
    for name in report.skipped:
        print(f"skip  {name}")
    print(report.summary())
    return EXIT_OK if report.ok else EXIT_CELL_FAILED


def add_parser(subparsers, add_common) -> None:
    """Register ``xcbench check``."""
    p = subparsers.add_parser(
        "check", help="run the conformance checks on a method and say what each checked",
        description="Run every conformance check of the method contract (xcbench.testing) "
                    "on a registered method, on a small problem, each in its own process with "
                    "a timeout and a memory cap, and print each check with what it checks; "
                    "exit 1 if any fails (a crash, exit, hang or memory blow-up included).")
    p.add_argument("method", metavar="METHOD", help="a registered method name")
    p.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="a constructor parameter for the checks, e.g. --param epochs=20 "
                        "(repeatable)")
    p.add_argument("--skip", default="", metavar="CHECK[,CHECK]",
                   help="checks to leave out, comma-separated")
    p.add_argument("--problem", choices=PROBLEMS, default="gaussian",
                   help="the data the checks use: gaussian (default; 12 classes in 8 "
                        "dimensions) or word-ids (3 word ids per row, for text methods)")
    p.add_argument("--timeout", type=duration, default=DEFAULT_CHECK_TIMEOUT,
                   metavar="DURATION",
                   help="time each check may run in its own process before it fails, e.g. "
                        f"90s or 10m (default {DEFAULT_CHECK_TIMEOUT:g} seconds)")
    p.add_argument("--memory-limit", default=DEFAULT_CHECK_MEMORY, metavar="SIZE",
                   help="memory each check may use beyond this process's, e.g. 512M or 2G "
                        f"(default {DEFAULT_CHECK_MEMORY}); more fails the check")
    p.add_argument("--in-process", action="store_true",
                   help="run the checks in this process (no isolation, timeout or memory "
                        "cap; for a debugger)")
    add_common(p, out=False, data=False)
    p.set_defaults(func=cmd_check)
