"""When the flat baselines' L-BFGS stops, and the record of how it stopped.

The solve stops at the first iteration k where either

- the gradient is small: the largest entry of the gradient of the objective, in the
  weights and intercepts themselves (not the solver's preconditioned variables), is at
  most ``tol``; or
- the objective has stopped moving: its relative decrease per iteration, averaged over the
  last ``WINDOW`` iterations, (f_{k-WINDOW} - f_k) / (WINDOW |f_k|), is at most ``tol``.
  An average, because single L-BFGS iterations can gain little just before a large step.

Both are "converged". Reaching a safety cap, ``max_iter`` iterations or ``max_seconds``
CPU seconds of solving (default ``MAX_SECONDS``, 1.5 hours single-threaded: a fit that has
not converged by then ends with its last iterate and a record, not a cell timeout), or a
line search that finds no decrease (the objective's rounding reached) are not: the record
says which (``FitReport.stopped_by``). The cap counts the process's CPU time, not wall
time, so that a machine shared with other jobs does not cut the solve short; with several
threads it is their sum.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import numpy as np

WINDOW = 5
MAX_SECONDS = 5400.0


@dataclass(frozen=True)
class FitReport:
    """How a solve ended; ``as_stats`` gives the keys every record's ``stats`` carries."""
    iterations: int
    converged: bool
    stopped_by: str  # "gradient", "objective", "max_iter", "max_seconds", "line_search",
    # "single_class"
    objective: float  # the final objective (mean loss + penalty / (C n))
    gradient_max: float  # largest |entry| of the final gradient in (W, b)
    relative_change: float  # the final averaged relative decrease per iteration (nan: < 2 iterations)
    tol: float

    def as_stats(self) -> dict:
        """The record's ``solver_*`` keys; a value that is not a finite number (the relative
        change of a solve of fewer than two iterations) is None, as JSON has no NaN."""
        return {f"solver_{k}": (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in asdict(self).items()}


class StopRule:
    """The L-BFGS callback: watches the objective and gradient of each iterate and raises
    ``StopIteration`` when either criterion of the module docstring holds. The objective
    reports each evaluation through ``seen``; L-BFGS-B's last evaluation before a callback
    is the accepted iterate, whose gradient the callback reads."""

    def __init__(self, tol: float, on_iteration=None, max_seconds: float | None = None):
        self.tol = float(tol)
        self._deadline = None if max_seconds is None else time.process_time() + max_seconds
        self.history: list[float] = []  # objective at each accepted iterate, from iteration 0
        self.gradient_max = np.inf
        self.stopped_by = ""
        self._last = (np.inf, np.inf)
        self._on_iteration = on_iteration

    def seen(self, value: float, gradient_max: float) -> None:
        """An evaluation of the objective (the last one before a callback is the iterate)."""
        if not self.history:
            self.history.append(value)
            self.gradient_max = gradient_max
        self._last = (value, gradient_max)

    @property
    def iterations(self) -> int:
        return max(len(self.history) - 1, 0)

    def relative_change(self) -> float:
        if len(self.history) < 2:
            return float("nan")
        span = min(WINDOW, len(self.history) - 1)
        now = self.history[-1]
        return (self.history[-1 - span] - now) / (span * max(abs(now), 1e-300))

    def __call__(self, intermediate_result) -> None:
        value, gradient_max = self._last
        if value != intermediate_result.fun:  # the iterate was not the last evaluation
            gradient_max = np.nan
        self.history.append(float(intermediate_result.fun))
        self.gradient_max = gradient_max
        if self._on_iteration is not None:
            self._on_iteration(self)
        if gradient_max <= self.tol:
            self.stopped_by = "gradient"
        elif len(self.history) > WINDOW and self.relative_change() <= self.tol:
            self.stopped_by = "objective"
        elif self._deadline is not None and time.process_time() > self._deadline:
            self.stopped_by = "max_seconds"
        if self.stopped_by:
            raise StopIteration

    def report(self, result, max_iter: int) -> FitReport:
        """The FitReport after ``minimize`` returned ``result``."""
        stopped_by = self.stopped_by
        if not stopped_by:
            if self.gradient_max <= self.tol:
                stopped_by = "gradient"
            elif self.iterations >= max_iter:
                stopped_by = "max_iter"
            else:
                stopped_by = "line_search"
        return FitReport(self.iterations, stopped_by in ("gradient", "objective"), stopped_by,
                         float(result.fun), float(self.gradient_max),
                         float(self.relative_change()), self.tol)
