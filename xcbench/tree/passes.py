"""How many passes an online learner makes over its data: a fixed number, or ``"auto"``,
Vowpal Wabbit's multi-pass regime (the one its demos use for data sets below a million rows):
every ``period``-th row is held out of training, and passes continue until the held-out
error has not improved for ``patience`` passes in a row, at most ``max_passes`` (VW's
``--holdout_period 10 --early_terminate 3`` defaults with ``--passes 80``). The model kept is
the one after the last pass, as in VW; it has seen 1 - 1/period of the rows. From
``LARGE_DATA`` rows on, ``"auto"`` makes one pass over all rows, as VW's demos for large
data sets do. A learner that needs held-out rows for something other than stopping (LOMtree
chooses its probabilities' smoothing on them) asks for ``keep_out`` rows: when the regime
holds none out (a fixed number of passes, or large data), every period-th row, at most
``keep_out`` of them, is kept out of training all the same. The VW peers' settings rule
(``xcbench_peers.vw_settings``) uses the same numbers, so both sides of a comparison train
under one regime.
"""
from __future__ import annotations

import numpy as np

from ..fit_progress import report_progress

AUTO_MAX_PASSES = 80     # VW's ALOI demo: --passes 80 with holdout early termination
HOLDOUT_PERIOD = 10      # VW's --holdout_period default
PATIENCE = 3             # VW's --early_terminate default
LARGE_DATA = 1_000_000   # VW's demos at this size or more make one pass


def kept_out_rows(n_rows: int, keep_out: int, period: int = HOLDOUT_PERIOD):
    """Every ``period``-th row, at most ``keep_out`` of them (int64, sorted), to keep out of
    training for a choice made on held-out rows; None when ``keep_out`` is 0 or there are
    fewer than ``2 * period`` rows."""
    if keep_out <= 0 or n_rows < 2 * period:
        return None
    return np.arange(period - 1, n_rows, period, dtype=np.int64)[:int(keep_out)]


class PassSchedule:
    """The row order of each training pass, and when to stop.

    >>> schedule = PassSchedule(n_rows, passes, rng)
    >>> for order in schedule:            # an int64 permutation of the training rows
    ...     train_on(order)
    ...     schedule.report(error_on(schedule.holdout))   # only when schedule.holdout is set
    # (it stops early only under "auto"'s own holdout)
    """

    def __init__(self, n_rows: int, passes, rng: np.random.Generator,
                 period: int = HOLDOUT_PERIOD, patience: int = PATIENCE,
                 max_passes: int = AUTO_MAX_PASSES, keep_out: int = 0):
        self.rng = rng
        self.auto = passes == "auto" and period <= n_rows < LARGE_DATA
        rows = np.arange(n_rows, dtype=np.int64)
        if self.auto:
            held = rows % period == period - 1
            self.train, self.holdout = rows[~held], rows[held]
            self.max_passes, self.patience = int(max_passes), int(patience)
        else:  # a fixed count; "auto" on too few rows to hold out or on large data: one pass
            self.train, self.holdout = rows, None
            self.max_passes = 1 if passes == "auto" else int(passes)
            held = kept_out_rows(n_rows, keep_out, period)  # held out, not to stop on
            if held is not None:
                self.train, self.holdout = np.setdiff1d(rows, held), held
        self.errors: list[float] = []
        self._since_best = 0

    def __iter__(self):
        for done in range(self.max_passes):
            report_progress(done, self.max_passes, "pass")
            yield self.rng.permutation(self.train)
            if self.auto and self._since_best >= self.patience:
                return

    def report(self, holdout_error: float) -> None:
        """Record the held-out error after a pass (call once per pass when ``holdout``)."""
        best = min(self.errors, default=np.inf)
        self.errors.append(float(holdout_error))
        self._since_best = 0 if holdout_error < best else self._since_best + 1

    @property
    def passes_done(self) -> int:
        return len(self.errors) if self.auto else self.max_passes
