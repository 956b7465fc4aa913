"""What several subcommands share: the default results folder, the common options, the
comma-separated list syntax, durations as option values (``duration``, over
``xcbench.run.durations.parse_duration``, which suites use too), and the parser that hints
at misspelt options."""
from __future__ import annotations

import argparse

from ..run.durations import parse_duration

DEFAULT_OUT = "xcbench-results"


def split(text: str) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]``."""
    return [t.strip() for t in text.split(",") if t.strip()]


class CommaList(argparse.Action):
    """A comma-separated list option that may be repeated: ``--methods ova --methods st``
    means ``--methods ova,st`` (argparse alone would keep only the last). The first use
    replaces the default; the value stays one comma-separated string."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_comma_lists_given", set())
        current = getattr(namespace, self.dest, None)
        if self.dest in given and current:
            values = f"{current},{values}"
        given.add(self.dest)
        setattr(namespace, self.dest, values)


def add_common(p, out=True, data=True):
    """Add the options most commands share: ``--debug``, and ``--out`` and ``--data-dir``
    unless ``out``/``data`` is False."""
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="show the full traceback of an error")
    if out:
        p.add_argument("--out", default=DEFAULT_OUT,
                       help=f"results and report directory (default: ./{DEFAULT_OUT})")
    if data:
        p.add_argument("--data-dir", default=None,
                       help="data directory (default: $XCBENCH_DATA_DIR or the user cache)")


def duration(text) -> float:
    """``parse_duration`` as an argparse ``type=``: the error names the option and shows the
    accepted forms (``argument --timeout: '10x' is not a duration: write e.g. ...``)."""
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class HintingParser(argparse.ArgumentParser):
    """An ArgumentParser whose "unrecognized arguments" error names the options close to
    each misspelt one (``--seed 0`` -> did you mean --seeds?), with the usage of the
    subcommand that was given. Subparsers made by its ``add_subparsers`` are HintingParsers
    too, so every command gets the hints from this one place."""

    def parse_args(self, args=None, namespace=None):
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = self._command_parser(parsed)
            hints = unknown_option_hints(extras, command)
            command.error("unrecognized arguments: " + " ".join(extras) + hints)
        return parsed

    def _command_parser(self, parsed) -> argparse.ArgumentParser:
        """The subcommand's parser when one was chosen (its usage and options), else self."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = getattr(parsed, action.dest or "", None)
                if chosen in action.choices:
                    return action.choices[chosen]
        return self


def unknown_option_hints(extras: list[str], parser: argparse.ArgumentParser) -> str:
    """``" (did you mean --seeds?)"``, one hint per misspelt option of ``extras`` that is
    close to an option of ``parser``; an empty string when none is."""
    from ..suggest import close_matches

    options = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    unknown = [e.split("=", 1)[0] for e in extras if e.startswith("--")]
    hints = []
    for name in dict.fromkeys(unknown):
        found = close_matches(name, options, n=2, cutoff=0.75)
        if found:
            named = f"{name}: " if len(unknown) > 1 else ""
            hints.append(f"{named}did you mean {' or '.join(found)}?")
    return f" ({'; '.join(hints)})" if hints else ""
