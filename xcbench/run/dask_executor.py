"""The Dask executor: each cell is one task on a ``dask.distributed`` cluster.

Without a scheduler address it starts a ``LocalCluster`` on loopback (``workers`` processes
with one thread each, so a worker runs one cell at a time). Each task runs the cell on its
worker exactly as the local executor does (a forked child with the timeout and memory cap,
the same thread limits; a fresh interpreter on a daemonic worker, as ``dask worker`` starts
them) and sends back the measured sections and raw arrays; the client
writes the records. A task is never retried: a cell whose worker dies becomes an ``error``
record (the scheduler's ``allowed-failures`` is 0 on the local cluster, and ``retries=0`` on
every task), and the other cells go on. Importing this module imports ``distributed``;
nothing else in xcbench does.
"""
from __future__ import annotations

import collections
import contextlib
import time
import uuid
from datetime import datetime, timezone

try:
    import distributed
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("--executor dask needs dask.distributed: pip install 'xcbench[dask]' "
                      "(or pip install 'dask[distributed]')") from exc

from .cell_job import CellOutcome, run_cell_job

STATUS_TOPIC = "xcbench-cell-status"
#: Dask settings for a cluster that runs xcbench cells: workers may fork (non-daemonic),
#: start with this process's environment (Dask's default sets OMP/MKL/OpenBLAS thread counts
#: and malloc trimming; the cell sets its own thread limits, as a local run does), a task
#: whose worker dies is not retried, and a worker holds one task at a time
CLUSTER_CONFIG = {"distributed.worker.daemon": False,
                  "distributed.nanny.pre-spawn-environ": {},
                  "distributed.scheduler.allowed-failures": 0,
                  "distributed.scheduler.worker-saturation": 1.0}
DEFAULT_WORKERS = 2
#: seconds between the client's checks for finished tasks and free workers
POLL_SECONDS = 0.1


@contextlib.contextmanager
def local_cluster(workers: int = DEFAULT_WORKERS):
    """A loopback LocalCluster of ``workers`` single-threaded worker processes configured
    for xcbench cells (CLUSTER_CONFIG holds while it runs: its nannies read it again when
    they restart a dead worker); no dashboard. Closed on leaving the block."""
    import dask

    with dask.config.set(CLUSTER_CONFIG), \
            distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                     host="127.0.0.1", dashboard_address=None) as cluster:
        yield cluster


def _run_on_worker(job, job_id: str) -> CellOutcome:
    """Run ``job`` on this worker, publishing its phase to the client about once a second.
    On a daemonic worker (``dask worker`` under its nanny) the cell's isolated process is a
    fresh interpreter rather than a fork (see ``xcbench.run.fresh_interpreter``)."""
    worker = distributed.get_worker()

    def notify(phase, seconds, progress):
        worker.log_event(STATUS_TOPIC, {"id": job_id, "phase": phase, "seconds": seconds,
                                        "progress": progress})

    outcome = run_cell_job(job, "dask", notify)
    outcome.environment = {**outcome.environment, "worker": worker.address}
    return outcome


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class DaskExecutor:
    """Runs cells as tasks on a Dask cluster: the one at ``scheduler`` (``tcp://HOST:PORT``),
    or a LocalCluster of ``workers`` processes started for the run."""

    name = "dask"

    def __init__(self, scheduler: str | None = None, workers: int | None = None):
        if scheduler is not None and workers is not None:
            raise ValueError("--workers starts a local cluster, --scheduler connects to a "
                             "running one; give one of them")
        if workers is not None and workers < 1:
            raise ValueError(f"--workers {workers}: give at least 1 worker")
        self.scheduler, self.workers = scheduler, workers or DEFAULT_WORKERS
        self.cluster = self.client = None
        self.parallel = 1
        self._stack = contextlib.ExitStack()
        self._machines: dict[str, dict] = {}  # worker host address -> environment seen there

    def __enter__(self):
        with self._stack as stack:
            if self.scheduler is None:
                self.cluster = stack.enter_context(local_cluster(self.workers))
                self.client = stack.enter_context(distributed.Client(self.cluster))
            else:
                self.client = stack.enter_context(self._connect())
            self.parallel = max(1, sum(self.client.nthreads().values()))
            self._stack = stack.pop_all()
        return self

    def _connect(self):
        try:
            return distributed.Client(self.scheduler, timeout="30s")
        except OSError as exc:
            raise ValueError(f"--scheduler {self.scheduler}: cannot connect ({exc}); start "
                             "one with `dask scheduler` and workers with `dask worker "
                             "ADDRESS`") from exc

    def __exit__(self, *exc):
        self._stack.close()
        return False

    def default_memory_limit(self, options) -> int | None:
        """The memory limit of a cell when the options set none: on a local cluster this
        machine's share divided among the workers; on a remote one None (each worker takes
        its own machine's share)."""
        if options.memory_limit or not options.isolate:
            return options.memory_limit
        if self.cluster is None:
            return None
        limit = options.effective_memory_limit()
        return limit // self.workers if limit else None

    def run(self, jobs, on_status=None):
        """Yield (job, outcome) as each job finishes; a task that fails (its worker died, it
        was cancelled) yields an ``error`` outcome. At most one task per worker thread is
        in the cluster at a time, so no cell waits on a worker behind another (and dies with
        it); leaving early (Ctrl-C) cancels the tasks not yet finished."""
        run_id = uuid.uuid4().hex[:8]
        jobs = {f"{run_id}-{i}": job for i, job in enumerate(jobs)}
        if on_status is not None:
            def handler(event):
                message = event[1]
                if message.get("id") in jobs:
                    on_status(jobs[message["id"]], message["phase"], message["seconds"],
                              message.get("progress", ""))

            self.client.subscribe_topic(STATUS_TOPIC, handler)
        queue, running = collections.deque(jobs.items()), {}
        finished = distributed.as_completed()
        try:
            while queue or running:
                for _ in range(min(len(queue), self._free_threads(len(running)))):
                    job_id, job = queue.popleft()
                    future = self.client.submit(_run_on_worker, job, job_id, pure=False,
                                                key=f"xcbench-{job_id}", retries=0)
                    running[future] = job, time.perf_counter()
                    finished.add(future)
                if not finished.has_ready():
                    time.sleep(POLL_SECONDS)
                    continue
                for future in finished.next_batch(block=False):
                    job, submitted = running.pop(future)
                    yield job, self._outcome(future, submitted)
        finally:
            if on_status is not None:
                self.client.unsubscribe_topic(STATUS_TOPIC)
            if running:
                self.client.cancel(list(running))

    def _free_threads(self, in_flight: int) -> int:
        """Worker threads of the cluster now, minus the tasks in flight (at least 0)."""
        return max(0, sum(self.client.nthreads().values()) - in_flight)

    def _outcome(self, future, submitted: float) -> CellOutcome:
        """The outcome of a finished task; for a task that failed, an ``error`` outcome
        whose environment is that of the last cell measured on the same machine (if any)."""
        environment = {"executor": "dask"}
        try:
            outcome = future.result()
            worker = outcome.environment.get("worker")
            if worker:
                self._machines[distributed.comm.get_address_host(worker)] = outcome.environment
            return outcome
        except distributed.KilledWorker as exc:
            worker = getattr(exc, "last_worker", None)
            if worker is not None:
                environment = {**self._machines.get(worker.host, environment),
                               "worker": worker.address}
            text = (f"the Dask worker running this cell died ({exc}); the cell may have "
                    "crashed or run out of memory on that machine")
        except (Exception, distributed.CancelledError) as exc:  # noqa: BLE001
            text = f"the Dask task of this cell failed: {type(exc).__name__}: {exc}"
        return CellOutcome("error", text, _now(), time.perf_counter() - submitted,
                           environment, None)
