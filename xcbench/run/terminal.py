"""The size of the terminal progress is drawn on, with a fallback when it reports none."""
from __future__ import annotations

import os

#: columns and lines used when the terminal reports none (a pseudo-terminal saying 0 x 0)
FALLBACK_COLUMNS, FALLBACK_LINES = 80, 24


def terminal_size(stream) -> tuple[int, int]:
    """(columns, lines) of the terminal ``stream`` writes to. Each is taken from the
    environment (``COLUMNS``, ``LINES``) when set to a positive number, else from what the
    terminal reports, else ``FALLBACK_COLUMNS`` / ``FALLBACK_LINES`` (the terminal reports
    0, or ``stream`` is no terminal at all)."""
    try:
        reported = tuple(os.get_terminal_size(stream.fileno()))
    except (AttributeError, OSError, ValueError):
        reported = (0, 0)
    size = []
    for name, seen, fallback in zip(("COLUMNS", "LINES"), reported,
                                    (FALLBACK_COLUMNS, FALLBACK_LINES)):
        size.append(next((n for n in (_positive(os.environ.get(name)), seen) if n > 0),
                         fallback))
    return size[0], size[1]


def terminal_columns(stream) -> int:
    """The columns of :func:`terminal_size`."""
    return terminal_size(stream)[0]


def _positive(text: str | None) -> int:
    try:
        return max(int(text or ""), 0)
    except ValueError:
        return 0
