"""Progress of a run: which phase a cell is in, and an estimate of the time left.

A cell's phase (``loading``, ``fitting``, ``measuring``) is written by whoever is doing that
work into a small shared-memory board that a forked child inherits, so the parent (the runner,
or a Dask worker) reads the child's phase while it waits. The estimate of the time left uses
the mean duration of the finished cells of each method (the overall mean for a method with
none finished yet), never an extrapolation from the first cell alone.
"""
from __future__ import annotations

import multiprocessing as mp
import threading
from collections import defaultdict

PHASES = ("loading", "fitting", "measuring")
_BOARD_BYTES = 16
#: running cells named on the progress line (the rest are counted)
SHOWN_RUNNING = 2


class PhaseBoard:
    """A phase name in shared memory: set in one process, read in its forked relatives."""

    def __init__(self):
        self._buffer = mp.get_context("fork").RawArray("c", _BOARD_BYTES)

    def set(self, phase: str) -> None:
        """Write ``phase`` (one of PHASES, or "" to clear)."""
        if phase and phase not in PHASES:
            raise ValueError(f"unknown phase {phase!r}; expected one of {PHASES}")
        self._buffer.value = phase.encode()

    def read(self) -> str:
        """The phase last written ("" if none)."""
        return self._buffer.value.decode()


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
                       parallel: int = 1) -> float | None:
    """Seconds left for the cells of ``remaining`` (one method name per cell), given the
    durations of finished cells by method, spread over ``parallel`` workers.

    Each remaining cell is expected to take its method's mean finished duration, or the mean
    over all finished cells when its method has none; None while nothing has finished."""
    if parallel < 1:
        raise ValueError(f"parallel must be at least 1, got {parallel}")
    durations = [d for ds in finished.values() for d in ds]
    if not remaining:
        return 0.0
    if not durations:
        return None
    overall = sum(durations) / len(durations)
    means = {m: sum(ds) / len(ds) for m, ds in finished.items() if ds}
    return sum(means.get(m, overall) for m in remaining) / parallel


def format_eta(seconds: float | None) -> str:
    """``ETA 1h02m``, ``ETA 3m05s``, ``ETA 42s`` or ``ETA ?`` when unknown."""
    if seconds is None:
        return "ETA ?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"ETA {hours}h{minutes:02d}m"
    return f"ETA {minutes}m{secs:02d}s" if minutes else f"ETA {secs}s"


class RunProgress:
    """The progress bar of a run: cells done, what is running and in which phase, and the
    time left (see :func:`estimate_remaining`). Safe to update from several threads (a Dask
    client reports phases from its event loop)."""

    def __init__(self, total: int, parallel: int = 1, enabled: bool = True):
        from tqdm.auto import tqdm

        self.parallel = parallel
        self._lock = threading.Lock()
        self._done: set[str] = set()
        self._finished: dict[str, list[float]] = defaultdict(list)
        self._pending: list[str] = []
        self._running: dict[str, str] = {}
        self._bar = tqdm(total=total, desc="xcbench run", unit="run", disable=not enabled,
                         bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]")
        self._write = tqdm.write
        self.enabled = enabled

    def planned(self, method: str) -> None:
        """A cell of ``method`` will run."""
        with self._lock:
            self._pending.append(method)

    def skipped(self) -> None:
        """A cell whose records are all stored already (resume)."""
        with self._lock:
            self._bar.update(1)

    def status(self, label: str, text: str) -> None:
        """Show what the running cell ``label`` is doing (a phase, seconds spent); an empty
        ``text`` removes it. Ignored for a cell already finished (a late report)."""
        with self._lock:
            if label in self._done:
                return
            if text:
                self._running[label] = text
            else:
                self._running.pop(label, None)
            self._refresh()

    def finished(self, label: str, method: str, seconds: float, lines=()) -> None:
        """Cell ``label`` of ``method`` finished after ``seconds``; print ``lines``."""
        with self._lock:
            self._done.add(label)
            self._running.pop(label, None)
            if method in self._pending:
                self._pending.remove(method)
            self._finished[method].append(seconds)
            if self.enabled:
                for line in lines:
                    self._write(line)
            self._bar.update(1)
            self._refresh()

    def eta(self) -> str:
        """The current estimate of the time left, formatted."""
        return format_eta(estimate_remaining(self._finished, self._pending, self.parallel))

    def _refresh(self) -> None:
        shown = list(self._running.items())[:SHOWN_RUNNING]
        running = "; ".join(f"{k}: {v}" for k, v in shown)
        if len(self._running) > SHOWN_RUNNING:
            running += f" (+{len(self._running) - SHOWN_RUNNING} running)"
        self._bar.set_postfix_str(", ".join(p for p in (running, self.eta()) if p),
                                  refresh=True)

    def close(self) -> None:
        self._bar.close()
