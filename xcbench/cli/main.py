"""The ``xcbench`` command line: the parser (one module per subcommand) and ``main``."""
from __future__ import annotations

import argparse
import sys
import warnings

from ..store import compare, export
from . import check, compact, describe, listing, plot, report, run, tune
from .common import HintingParser, add_common
from .exit_codes import EXIT_CODES, EXIT_INTERRUPTED, EXIT_NOT_STORED, EXIT_USAGE


def build_parser() -> argparse.ArgumentParser:
    parser = HintingParser(
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
    run.add_parser(sub)
    report.add_parser(sub)
    plot.add_parser(sub)
    listing.add_parser(sub)
    describe.add_parser(sub, add_common)
    export.add_parser(sub, add_common)
    compare.add_parser(sub, add_common)
    check.add_parser(sub, add_common)
    tune.add_parser(sub)
    compact.add_parser(sub)
    return parser


def _version_text() -> str:
    """``xcbench X.Y.Z`` and the Python running it, for ``xcbench --version``."""
    import platform

    from ..version import __version__

    return f"xcbench {__version__} (Python {platform.python_version()})"


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    warnings.filterwarnings("default")
    shown_as = warnings.formatwarning
    if not args.debug:
        warnings.formatwarning = _one_line_warning
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("xcbench: interrupted; finished runs are stored, rerun with --resume to "
              "complete the rest", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - one clear line; the traceback with --debug
        from ..store.results import StoreWriteError

        if isinstance(exc, StoreWriteError) and not args.debug:
            print(f"xcbench: error: {exc.strerror}", file=sys.stderr)
            return EXIT_NOT_STORED
        if args.debug or not _is_input_error(exc):
            raise
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"xcbench: error: {message}", file=sys.stderr)
        print("(run with --debug for the traceback)", file=sys.stderr)
        return EXIT_USAGE
    finally:
        warnings.formatwarning = shown_as


def _one_line_warning(message, category, filename, lineno, line=None) -> str:
    """A warning as the command line shows it: the message and its kind, not the library
    line that raised it (``--debug`` shows Python's usual form)."""
    return f"xcbench: warning: {message} ({category.__name__})\n"


def _is_input_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a problem with the user's input (options, names, data files)
    rather than a bug, so one line says it all."""
    from ..data.fetch import DataError

    return isinstance(exc, (KeyError, ValueError, OSError, DataError))


if __name__ == "__main__":
    sys.exit(main())
