"""``xcbench check METHOD``: run the conformance checks on a registered method and say
what each checked."""
from __future__ import annotations

PROBLEMS = ("gaussian", "word-ids")


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

    spec = get_method_spec(args.method)
    params = parse_check_params(args.param)
    check_param_names(spec, params)
    skip = tuple(s.strip() for s in (args.skip or "").split(",") if s.strip())
    problem = gaussian_problem if args.problem == "gaussian" else word_id_problem

    def show(name, outcome, text):
        print(f"{'pass' if outcome == 'pass' else 'FAIL'}  {name}: {text}", flush=True)

    report = run_checks(spec, params, skip, problem, stop_at_failure=False, on_result=show)
    for name in report.skipped:
        print(f"skip  {name}")
    print(report.summary())
    return EXIT_OK if report.ok else EXIT_CELL_FAILED


def add_parser(subparsers, add_common) -> None:
    """Register ``xcbench check``."""
    p = subparsers.add_parser(
        "check", help="run the conformance checks on a method and say what each checked",
        description="Run every conformance check of the method contract (xcbench.testing) "
                    "on a registered method, on a small problem, and print each check with "
                    "what it checks; exit 1 if any fails.")
    p.add_argument("method", metavar="METHOD", help="a registered method name")
    p.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="a constructor parameter for the checks, e.g. --param epochs=20 "
                        "(repeatable)")
    p.add_argument("--skip", default="", metavar="CHECK[,CHECK]",
                   help="checks to leave out, comma-separated")
    p.add_argument("--problem", choices=PROBLEMS, default="gaussian",
                   help="the data the checks use: gaussian (default; 12 classes in 8 "
                        "dimensions) or word-ids (3 word ids per row, for text methods)")
    add_common(p, out=False, data=False)
    p.set_defaults(func=cmd_check)
