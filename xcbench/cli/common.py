"""What several subcommands share: the default results folder, the common options and the
comma-separated list syntax."""
from __future__ import annotations

import argparse

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
