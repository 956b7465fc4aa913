"""How long a planned cell is expected to take: the time-left estimate of a run.

A cell is named by its method and dataset. Its expected seconds come from the first of these
that knows something, most specific first:

1. cells of the same method and dataset finished in this run (their mean);
2. this machine's earlier records of the same method and dataset (the store's ``ok``
   records with this host's name and CPU count), times how much faster or slower this run
   has been than those records so far (the *pace*);
3. cells of the same method on other datasets of known size, finished in this run or
   recorded earlier (paced), scaled by rows x classes (``n_train * n_classes``; their plain
   mean when the sizes are not known);
4. any cell finished in this run, scaled the same way: a
   rough guess (another method's time), marked as such, so that a run whose methods each
   have one cell shows a time left from its first finished cell on.

Nothing known: None (``estimating``).
"""
from __future__ import annotations

import os
import platform
import warnings
from collections import defaultdict
from dataclasses import dataclass

#: a running cell is expected to need at least this share of the longer of its estimate
#: and the time it has run (one that outran its estimate is not about to finish at once)
MIN_SHARE_LEFT = 0.1


@dataclass(frozen=True)
class Guess:
    """Expected seconds, and whether they come from another method's time (rough)."""

    seconds: float
    rough: bool = False


def dataset_size(stats: dict | None) -> float | None:
    """rows x classes of a dataset (``n_train * n_classes`` of its stats), None if unknown."""
    stats = stats or {}
    rows, classes = stats.get("n_train"), stats.get("n_classes")
    if not rows or not classes:
        return None
    return float(rows) * float(classes)


def this_machine() -> dict:
    """What the records of a run on this machine say about it: host and CPU count."""
    return {"host": platform.node(), "cpu_count": os.cpu_count()}


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)


class CellCosts:
    """Expected seconds of cells by (method, dataset), learnt from earlier records
    (``earlier``: (method, dataset, seconds) triples) and from this run's finished cells
    (:meth:`finished`); ``sizes`` maps datasets to rows x classes (:meth:`learn_size` adds
    more)."""

    def __init__(self, earlier=(), sizes: dict | None = None):
        self._earlier: dict[tuple, list[float]] = defaultdict(list)
        for method, dataset, seconds in earlier:
            self._earlier[method, dataset].append(float(seconds))
        self._now: dict[tuple, list[float]] = defaultdict(list)
        self.sizes: dict[str, float] = dict(sizes or {})
        self._paced = [0.0, 0.0]  # this run's seconds, earlier seconds, of the same cells

    @classmethod
    def from_records(cls, records, machine: dict | None = None) -> "CellCosts":
        """Costs learnt from the ``ok`` records of ``machine`` (default: this one) among
        ``records``; every record's dataset stats give that dataset's size."""
        machine = this_machine() if machine is None else machine
        earlier, sizes = [], {}
        for r in records:
            size = dataset_size(r.get("dataset_stats"))
            if size is not None:
                sizes[r.get("dataset")] = size
            env = r.get("environment") or {}
            if r.get("status") == "ok" and isinstance(r.get("wall_seconds"), (int, float)) \
                    and all(env.get(k) == v for k, v in machine.items()):
                earlier.append((r.get("method"), r.get("dataset"), r["wall_seconds"]))
        return cls(earlier, sizes)

    @classmethod
    def from_store(cls, store) -> "CellCosts":
        """:meth:`from_records` of a ResultStore's records, read quietly: a record it cannot
        read is reported by the commands that use records, not by the time-left estimate."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return cls.from_records(store.records())

    def learn_size(self, dataset: str, stats: dict | None) -> None:
        """Record ``dataset``'s size from its stats (as loaded)."""
        size = dataset_size(stats)
        if size is not None:
            self.sizes[dataset] = size

    def finished(self, method: str, dataset: str | None, seconds: float) -> None:
        """A cell of this run finished after ``seconds``."""
        before = self._earlier.get((method, dataset))
        if before:
            self._paced[0] += seconds
            self._paced[1] += _mean(before)
        self._now[method, dataset].append(float(seconds))

    def pace(self) -> float:
        """This run's seconds over the earlier records' for the same cells (1 if none yet)."""
        now, earlier = self._paced
        return now / earlier if earlier > 0 else 1.0

    def expected(self, method: str, dataset: str | None) -> Guess | None:
        """The expected seconds of a cell of ``method`` on ``dataset`` (see the module's
        docstring for the order), None when nothing is known."""
        if self._now.get((method, dataset)):
            return Guess(_mean(self._now[method, dataset]))
        pace = self.pace()
        if self._earlier.get((method, dataset)):
            return Guess(_mean(self._earlier[method, dataset]) * pace)
        same_method = [(d, s) for (m, d), ds in self._now.items() if m == method for s in ds]
        same_method += [(d, s * pace) for (m, d), ds in self._earlier.items() if m == method
                        for s in ds]
        if same_method:
            return Guess(self._scaled(dataset, same_method))
        anything = [(d, s) for (_, d), ds in self._now.items() for s in ds]
        return Guess(self._scaled(dataset, anything), rough=True) if anything else None

    def _scaled(self, dataset, samples) -> float:
        """From (dataset, seconds) samples: their mean seconds per unit of size times
        ``dataset``'s size, or their plain mean when the sizes are not known."""
        target = self.sizes.get(dataset)
        rates = [s / self.sizes[d] for d, s in samples if d in self.sizes]
        if target is not None and rates:
            return _mean(rates) * target
        return _mean(s for _, s in samples)


def time_left(costs: CellCosts, waiting, running=(), parallel: int = 1) -> Guess | None:
    """Seconds left for the ``waiting`` cells ((method, dataset) per cell not started) and
    the ``running`` ones ((method, dataset, seconds it has run) each), spread over
    ``parallel`` workers; never less than the longest a running cell is expected to need.
    None while any of them has no estimate."""
    if parallel < 1:
        raise ValueError(f"parallel must be at least 1, got {parallel}")
    total, longest, rough = 0.0, 0.0, False
    for method, dataset, seconds in [(m, d, None) for m, d in waiting] + list(running):
        guess = costs.expected(method, dataset)
        if guess is None:
            return None
        rough = rough or guess.rough
        left = guess.seconds if seconds is None else running_left(guess.seconds, seconds)
        total += left
        if seconds is not None:
            longest = max(longest, left)
    return Guess(max(total / parallel, longest), rough)


def running_left(expected: float, seconds: float) -> float:
    """What a cell expected to take ``expected`` s still needs after ``seconds``: the rest of
    its estimate, and at least ``MIN_SHARE_LEFT`` of the longer of the two (never 0 while it
    runs)."""
    return max(expected - seconds, MIN_SHARE_LEFT * max(expected, seconds))
