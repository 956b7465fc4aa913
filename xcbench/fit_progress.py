"""Progress from inside a method's ``fit``: ``report_progress(step, total, what)``.

A long learner calls it once per pass, epoch, tree level or candidate value, e.g.
``report_progress(p + 1, self.passes, "pass")``; the runner's progress line then shows
``fitting 40 s (pass 3/10)`` instead of the seconds alone. Nothing is passed to ``fit`` and
nothing is stored on the model: whoever runs the fit listens with
:func:`progress_listener` (the runner does, around each fit), and with nobody listening a
call costs one global lookup. Methods that never call it (every plugin written before it)
work as before. ``Method.report_progress`` is the same function, for methods that subclass
:class:`~xcbench.contract.method.Method`.
"""
from __future__ import annotations

import contextlib
from typing import Callable

Listener = Callable[[float, float, str], None]

_listener: Listener | None = None


def report_progress(step: float, total: float, what: str = "") -> None:
    """Tell whoever runs this fit that ``step`` of ``total`` ``what`` (e.g. ``"pass"``,
    ``"epoch"``, ``"level"``) are done. A no-op when nobody listens; a listener's failure
    never stops the fit."""
    listener = _listener
    if listener is None:
        return
    try:
        listener(step, total, what)
    except Exception:  # noqa: BLE001 - showing progress must not break a fit
        pass


@contextlib.contextmanager
def progress_listener(callback: Listener | None):
    """Within the block, ``report_progress`` calls ``callback(step, total, what)`` (None:
    nobody listens); the previous listener is restored after it. E.g.
    ``with progress_listener(lambda s, t, w: print(f"{w} {s:g}/{t:g}")): method.fit(X, y)``."""
    global _listener
    previous, _listener = _listener, callback
    try:
        yield
    finally:
        _listener = previous


def progress_text(step: float, total: float, what: str) -> str:
    """``pass 3/10`` (``3/10`` without a name); '' when nothing was reported (total 0)."""
    if not total:
        return ""
    counted = f"{step:g}/{total:g}"
    return f"{what} {counted}" if what else counted
