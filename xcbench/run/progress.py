"""Progress of a run: which phase a cell is in, how far its fit got, and the time left.

A cell's phase (``loading``, ``fitting``, ``measuring``) and the progress its fit reports
(``report_progress``: ``pass 3/10``) are written by whoever is doing that work into a small
shared-memory board that a forked child inherits, so the parent (the runner, or a Dask
worker) reads them while it waits. The time left comes from the finished cells of the same
method only: until every method still to run has finished a cell, it says ``estimating``.
"""
from __future__ import annotations

import multiprocessing as mp
import threading
from collections import defaultdict

from ..fit_progress import progress_text

PHASES = ("loading", "fitting", "measuring")
_BOARD_BYTES = 16
_WHAT_BYTES = 48
#: running cells named on the progress line (the rest are counted)
SHOWN_RUNNING = 2


class PhaseBoard:
    """A phase name and the fit's progress in shared memory: set in one process, read in its
    forked relatives (a fresh-interpreter child sends its own to the parent, which sets
    them here)."""

    def __init__(self):
        ctx = mp.get_context("fork")
        self._buffer = ctx.RawArray("c", _BOARD_BYTES)
        self._counts = ctx.RawArray("d", 2)  # step, total (total 0: nothing reported)
        self._what = ctx.RawArray("c", _WHAT_BYTES)

    def set(self, phase: str) -> None:
        """Write ``phase`` (one of PHASES, or "" to clear); clears the progress."""
        if phase and phase not in PHASES:
            raise ValueError(f"unknown phase {phase!r}; expected one of {PHASES}")
        self.set_progress(0, 0, "")
        self._buffer.value = phase.encode()

    def read(self) -> str:
        """The phase last written ("" if none)."""
        return self._buffer.value.decode()

    def set_progress(self, step: float, total: float, what: str = "") -> None:
        """Write the progress a fit reported (``report_progress``)."""
        self._counts[1] = 0  # a reader in between sees "nothing reported", never a mix
        self._what.value = what.encode()[:_WHAT_BYTES - 1]
        self._counts[0] = float(step)
        self._counts[1] = float(total)

    def progress(self) -> tuple[float, float, str]:
        """(step, total, what) last written; total 0 when nothing was reported."""
        return self._counts[0], self._counts[1], self._what.value.decode(errors="replace")

    def progress_text(self) -> str:
        """``pass 3/10``, or '' when the fit reported nothing."""
        return progress_text(*self.progress())


_board: PhaseBoard | None = None


def phase_board() -> PhaseBoard:
    """This process's board (made on first use, so children forked later share it)."""
    global _board
    if _board is None:
        _board = PhaseBoard()
    return _board


def report_phase(phase: str) -> None:
    """Record that this process (or the cell child it runs) entered ``phase``."""
    phase_board().set(phase)


def estimate_remaining(finished: dict[str, list[float]], remaining: list[str],
                       parallel: int = 1, running=()) -> float | None:
    """Seconds left for the cells of ``remaining`` (one method name per cell not started)
    and ``running`` ((method, seconds it has run) per cell), spread over ``parallel``
    workers, from the durations of finished cells by method.

    A cell is expected to take its method's mean finished duration (a running one, what is
    left of it); None while a method among them has no finished cell: another method's
    duration says nothing about it."""
    if parallel < 1:
        raise ValueError(f"parallel must be at least 1, got {parallel}")
    means = {m: sum(ds) / len(ds) for m, ds in finished.items() if ds}
    running = list(running)
    if any(m not in means for m in [*remaining, *(m for m, _ in running)]):
        return None
    left = sum(means[m] for m in remaining)
    left += sum(max(means[m] - seconds, 0.0) for m, seconds in running)
    return left / parallel


def format_duration(seconds: float) -> str:
    """``1h02m``, ``3m05s`` or ``42s``."""
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def format_eta(seconds: float | None) -> str:
    """``ETA 1h02m``, ``ETA 3m05s``, ``ETA 42s`` or ``ETA estimating`` when unknown."""
    return "ETA estimating" if seconds is None else f"ETA {format_duration(seconds)}"


def cell_text(phase: str, seconds: float, progress: str = "") -> str:
    """What a running cell shows: ``fitting 40 s`` or ``fitting 40 s (pass 3/10)``."""
    return f"{phase} {seconds:.0f} s" + (f" ({progress})" if progress else "")


class RunProgress:
    """The progress of a run: cells done, what is running (phase, seconds, the fit's own
    progress) and the time left (see :func:`estimate_remaining`).

    On a terminal it is a tqdm bar. Otherwise (output piped to a file or a CI log) it writes
    plain lines without carriage returns or padding: each finished cell's lines, then
    ``N/TOTAL done, ETA ...``, and while cells run at most one status line every
    ``PLAIN_SECONDS``. ``methods`` lists the method of every cell of the plan (the time left
    counts them all); ``clock`` (seconds) paces the plain lines. Safe to update from several
    threads (a Dask client reports phases from its event loop)."""

    #: seconds between two plain status lines while cells run
    PLAIN_SECONDS = 30.0

    def __init__(self, total: int, parallel: int = 1, enabled: bool = True, methods=(),
                 stream=None, out=None, terminal: bool | None = None, clock=None):
        import sys
        import time
        from collections import Counter

        self.total, self.parallel, self.enabled = total, parallel, enabled
        self._stream = stream if stream is not None else sys.stderr
        self._out = out
        self._clock = clock or time.monotonic
        if terminal is None:
            terminal = bool(getattr(self._stream, "isatty", lambda: False)())
        self.terminal = terminal
        self._lock = threading.Lock()
        self._done_labels: set[str] = set()
        self._done = 0
        self._remaining = Counter(methods)
        self._finished: dict[str, list[float]] = defaultdict(list)
        self._running: dict[str, tuple[str | None, str, float]] = {}  # label: method, text, s
        self._last_plain: float | None = None
        self._bar = None
        if enabled and terminal:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc="xcbench run", unit="run", file=self._stream,
                             bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} "
                                        "[{elapsed}{postfix}]")

    def planned(self, method: str) -> None:
        """A cell of ``method`` will run (for plans whose methods were not given up front)."""
        with self._lock:
            self._remaining[method] += 1

    def skipped(self, method: str | None = None) -> None:
        """A cell whose records are all stored already (resume)."""
        with self._lock:
            if method is not None and self._remaining[method] > 0:
                self._remaining[method] -= 1
            self._advance()

    def status(self, label: str, text: str, method: str | None = None,
               seconds: float = 0.0) -> None:
        """Show what the running cell ``label`` (of ``method``, running for ``seconds``) is
        doing; an empty ``text`` removes it. Ignored for a cell already finished (a late
        report)."""
        with self._lock:
            if label in self._done_labels:
                return
            if text:
                self._running[label] = (method, text, seconds)
            else:
                self._running.pop(label, None)
            self._show()

    def cell_status(self, label: str, method: str, phase: str, seconds: float,
                    progress: str = "") -> None:
        """A running cell's phase, seconds and fit progress (see :func:`cell_text`)."""
        self.status(label, cell_text(phase, seconds, progress), method, seconds)

    def finished(self, label: str, method: str, seconds: float, lines=()) -> None:
        """Cell ``label`` of ``method`` finished after ``seconds``; print ``lines``."""
        with self._lock:
            self._done_labels.add(label)
            self._running.pop(label, None)
            if self._remaining[method] > 0:
                self._remaining[method] -= 1
            self._finished[method].append(seconds)
            if self.enabled:
                for line in lines:
                    self._print_result(line)
            self._advance()
            if self.enabled and not self.terminal:
                self._plain(f"{self._done}/{self.total} done, {self.eta()}")

    def eta(self) -> str:
        """The current estimate of the time left, formatted."""
        running = [(m, s) for m, _, s in self._running.values() if m is not None]
        waiting = self._remaining.copy()
        waiting.subtract(m for m, _ in running)
        not_started = [m for m, n in waiting.items() for _ in range(max(n, 0))]
        if self._done >= self.total:
            return format_eta(0.0)
        return format_eta(estimate_remaining(self._finished, not_started, self.parallel,
                                             running))

    def _advance(self) -> None:
        self._done += 1
        if self._bar is not None:
            self._bar.update(1)
        self._show(force=False)

    def _print_result(self, line: str) -> None:
        if self._bar is not None:
            self._bar.write(line)  # above the bar (tqdm.write, on stdout)
        else:
            import sys

            print(line, file=self._out if self._out is not None else sys.stdout, flush=True)

    def _running_text(self) -> str:
        shown = list(self._running.items())[:SHOWN_RUNNING]
        text = "; ".join(f"{label}: {what}" for label, (_, what, _) in shown)
        if len(self._running) > SHOWN_RUNNING:
            text += f" (+{len(self._running) - SHOWN_RUNNING} running)"
        return text

    def _show(self, force: bool = True) -> None:
        if not self.enabled:
            return
        line = ", ".join(p for p in (self._running_text(), self.eta()) if p)
        if self._bar is not None:
            self._bar.set_postfix_str(line, refresh=True)
            return
        now = self._clock()
        if self._running and force and (self._last_plain is None
                                        or now - self._last_plain >= self.PLAIN_SECONDS):
            self._plain(f"{self._done}/{self.total} done; {line}")

    def _plain(self, line: str) -> None:
        self._last_plain = self._clock()
        print(f"xcbench run: {line}", file=self._stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
