"""Progress of a run: which phase a cell is in, how far its fit got, and the time left.

A cell's phase (``loading``, ``fitting``, ``measuring``) and the progress its fit reports
(``report_progress``: ``pass 3/10``) are written by whoever is doing that work into a small
shared-memory board that a forked child inherits, so the parent (the runner, or a Dask
worker) reads them while it waits. The time left is the sum of what each cell still to run is
expected to take (``cell_costs``: this run's finished cells and this machine's earlier
records), spread over the workers.
"""
from __future__ import annotations

import multiprocessing as mp
import threading

from ..fit_progress import progress_text
from .cell_costs import CellCosts, Guess, time_left
from .terminal import terminal_size

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


def format_duration(seconds: float) -> str:
    """``1h02m``, ``3m05s`` or ``42s``."""
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def format_eta(left: float | Guess | None) -> str:
    """``ETA 1h02m``, ``ETA 3m05s``, ``ETA 42s``, ``ETA <1s``, ``ETA estimating`` when unknown;
    ``ETA ~3m05s`` for a rough :class:`Guess` (from another method's time)."""
    if left is None:
        return "ETA estimating"
    guess = left if isinstance(left, Guess) else Guess(float(left))
    mark = "~" if guess.rough else ""
    if 0 < guess.seconds < 0.5:
        return f"ETA {mark}<1s"
    return f"ETA {mark}{format_duration(guess.seconds)}"


def cell_text(phase: str, seconds: float, progress: str = "") -> str:
    """What a running cell shows: ``fitting 40 s`` or ``fitting 40 s (pass 3/10)``."""
    return f"{phase} {seconds:.0f} s" + (f" ({progress})" if progress else "")


class RunProgress:
    """The progress of a run: cells done, what is running (phase, seconds, the fit's own
    progress) and the time left (see :func:`~xcbench.run.cell_costs.time_left`).

    On a terminal it is a tqdm bar (80 columns wide when the terminal reports no width).
    Otherwise (output piped to a file or a CI log) it writes plain lines without carriage
    returns or padding: each finished cell's lines, then ``N/TOTAL done, ETA ...``, and
    while cells run at most one status line every ``PLAIN_SECONDS``. ``cells`` lists the
    (method, dataset) of every cell of the plan (``methods``: the methods alone, datasets
    unknown); ``costs`` holds what is known of their durations beforehand (a
    :class:`~xcbench.run.cell_costs.CellCosts`, e.g. from the store's earlier records);
    ``clock`` (seconds) paces the plain lines. Safe to update from several threads (a Dask
    client reports phases from its event loop)."""

    #: seconds between two plain status lines while cells run
    PLAIN_SECONDS = 30.0

    def __init__(self, total: int, parallel: int = 1, enabled: bool = True, methods=(),
                 stream=None, out=None, terminal: bool | None = None, clock=None, cells=(),
                 costs: CellCosts | None = None):
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
        self._remaining = Counter([(m, None) for m in methods] + [tuple(c) for c in cells])
        self.costs = costs if costs is not None else CellCosts()
        self._running: dict[str, tuple[tuple | None, str, float]] = {}  # label: cell, text, s
        self._last_plain: float | None = None
        self._bar = None
        if enabled and terminal:
            from tqdm.auto import tqdm

            columns, lines = terminal_size(self._stream)
            self._bar = tqdm(total=total, desc="xcbench run", unit="run", file=self._stream,
                             ncols=columns, nrows=lines,
                             bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} "
                                        "[{elapsed}{postfix}]")

    def planned(self, method: str, dataset: str | None = None) -> None:
        """A cell of ``method`` will run (for plans whose methods were not given up front)."""
        with self._lock:
            self._remaining[method, dataset] += 1

    def dataset_loaded(self, name: str, stats: dict | None) -> None:
        """Dataset ``name`` was loaded: its size (``stats``) scales other cells' durations."""
        with self._lock:
            self.costs.learn_size(name, stats)
            self._show(force=False)

    def skipped(self, method: str | None = None, dataset: str | None = None) -> None:
        """A cell whose records are all stored already (resume)."""
        with self._lock:
            if method is not None:
                self._uncount(method, dataset)
            self._advance()

    def status(self, label: str, text: str, method: str | None = None,
               seconds: float = 0.0, dataset: str | None = None) -> None:
        """Show what the running cell ``label`` (of ``method`` on ``dataset``, running for
        ``seconds``) is doing; an empty ``text`` removes it. Ignored for a cell already
        finished (a late report)."""
        with self._lock:
            if label in self._done_labels:
                return
            if text:
                cell = None if method is None else (method, dataset)
                self._running[label] = (cell, text, seconds)
            else:
                self._running.pop(label, None)
            self._show()

    def cell_status(self, label: str, method: str, phase: str, seconds: float,
                    progress: str = "", dataset: str | None = None) -> None:
        """A running cell's phase, seconds and fit progress (see :func:`cell_text`)."""
        self.status(label, cell_text(phase, seconds, progress), method, seconds, dataset)

    def finished(self, label: str, method: str, seconds: float, lines=(),
                 dataset: str | None = None) -> None:
        """Cell ``label`` of ``method`` on ``dataset`` finished after ``seconds``; print
        ``lines``."""
        with self._lock:
            self._done_labels.add(label)
            self._running.pop(label, None)
            self._uncount(method, dataset)
            self.costs.finished(method, dataset, seconds)
            if self.enabled:
                for line in lines:
                    self._print_result(line)
            self._advance()
            if self.enabled and not self.terminal:
                self._plain(f"{self._done}/{self.total} done, {self.eta()}")

    def eta(self) -> str:
        """The current estimate of the time left, formatted."""
        if self._done >= self.total:
            return format_eta(0.0)
        running = [(*cell, s) for cell, _, s in self._running.values() if cell is not None]
        waiting = self._remaining.copy()
        waiting.subtract((m, d) for m, d, _ in running)
        not_started = [cell for cell, n in waiting.items() for _ in range(max(n, 0))]
        return format_eta(time_left(self.costs, not_started, running, self.parallel))

    def _uncount(self, method: str, dataset: str | None) -> None:
        """One cell of ``method`` on ``dataset`` is no longer waiting (of ``method`` on
        another dataset when none is waiting there, e.g. ``dataset`` not given)."""
        fallbacks = [cell for cell in self._remaining if cell[0] == method]
        for cell in [(method, dataset), *fallbacks]:
            if self._remaining[cell] > 0:
                self._remaining[cell] -= 1
                return

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
        running, eta = self._running_text(), self.eta()
        if self._bar is not None:  # the time left first: a narrow terminal cuts the end
            self._bar.set_postfix_str("; ".join(p for p in (eta, running) if p), refresh=True)
            return
        line = ", ".join(p for p in (running, eta) if p)
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
