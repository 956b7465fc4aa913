"""Executors: who runs the cells of a plan.

An executor takes cell jobs (:class:`~xcbench.run.cell_job.CellJob`) and yields each with its
outcome as it finishes; the runner turns outcomes into records and appends them to the one
store. ``local`` (the default) runs one isolated cell at a time on this machine; ``dask``
runs them on a Dask cluster (see :mod:`xcbench.run.dask_executor`, imported only when chosen).
"""
from __future__ import annotations

from .cell_job import run_cell_job

EXECUTORS = ("local", "dask")


class LocalExecutor:
    """Runs one cell at a time in this process (each in a forked child, as configured)."""

    name = "local"
    parallel = 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def default_memory_limit(self, options) -> int | None:
        """The memory limit of a cell when the options set none: this machine's share."""
        return options.effective_memory_limit() if options.isolate else options.memory_limit

    def run(self, jobs, on_status=None):
        """Yield (job, outcome) for each job in order; ``on_status(job, phase, seconds,
        progress)`` is called while a cell loads and works."""
        for job in jobs:
            notify = None if on_status is None else \
                (lambda phase, seconds, progress, job=job:
                 on_status(job, phase, seconds, progress))
            yield job, run_cell_job(job, self.name, notify)


def make_executor(name: str = "local", scheduler: str | None = None, workers: int | None = None):
    """The executor called ``name``; ValueError for an unknown name or options that do not
    apply to it (``scheduler`` and ``workers`` are for ``dask``)."""
    if name not in EXECUTORS:
        raise ValueError(f"--executor {name!r}: unknown executor; choose one of "
                         f"{', '.join(EXECUTORS)}")
    if name == "local":
        if scheduler is not None or workers is not None:
            raise ValueError("--scheduler and --workers apply to --executor dask only; add "
                             "--executor dask or drop them")
        return LocalExecutor()
    try:
        from .dask_executor import DaskExecutor
    except ImportError as exc:
        raise ValueError(str(exc)) from exc
    return DaskExecutor(scheduler=scheduler, workers=workers)
