"""One cell as a self-contained job: what an executor runs, locally or on a Dask worker.

A job names its dataset (and the data directory to load it from) rather than carrying the
data, so it is small to send; the process that runs it loads the dataset through the same
registry (checksums verified by the dataset cache), keeps the last one loaded for the next
cell, checks that its checksum equals the client's, and measures the cell with the same
isolation as a local run. The outcome names the host and CPU that measured it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache

from ..version import __version__
from ..contract.method_params import params_text
from .plan import Cell


@dataclass
class CellJob:
    """A cell to run: the cell, where its dataset is, the dataset checksum the client saw,
    the run options, the memory limit (None: the running machine's default share) and the
    client's xcbench version (part of every record key)."""

    cell: Cell
    data_dir: str | None
    checksum: str
    options: object  # RunOptions
    memory_limit: int | None
    client_version: str = __version__

    @property
    def label(self) -> str:
        """``method C=1, tol=0.1 on dataset seed N`` (params shown when set)."""
        c = self.cell
        params = f" {params_text(dict(c.params))}" if c.params else ""
        return f"{c.method}{params} on {c.dataset} seed {c.seed}"


@dataclass
class CellOutcome:
    """What running a job gave: status and payload (the measured sections of each record, or
    the error text), when and for how long it ran, where, and the memory limit it ran under."""

    status: str
    payload: object
    started_at: str
    wall_seconds: float
    environment: dict
    memory_limit: int | None


@dataclass
class DatasetFacts:
    """What a record says about its dataset (checksum, version, info, stats), without the
    data, so the client need not keep every dataset of a plan in memory."""

    checksum: str
    version: str
    info: dict
    stats: dict


def dataset_facts(dataset) -> DatasetFacts:
    """The DatasetFacts of a loaded dataset."""
    return DatasetFacts(dataset.checksum, dataset.version,
                        {"source_sha256": dataset.info.get("source_sha256", {})}, dataset.stats)


_loaded: dict = {}


def cached_dataset(name: str, data_dir: str | None):
    """Dataset ``name`` loaded from ``data_dir`` through the registry; the last one loaded in
    this process is kept, so the cells of one dataset load it once. Its arrays are made
    read-only, so that no cell can change the data of the next (``inputs.freeze``)."""
    from ..data import data_dir as resolve_data_dir
    from ..data import get_dataset_spec
    from .inputs import freeze

    key = (name, str(resolve_data_dir(data_dir)))
    if key not in _loaded:
        _loaded.clear()  # free the previous dataset before loading the next
        dataset = get_dataset_spec(name).load(resolve_data_dir(data_dir))
        for array in (dataset.X_train, dataset.y_train, dataset.X_test, dataset.y_test):
            freeze(array)
        _loaded[key] = dataset
    return _loaded[key]


@lru_cache(maxsize=4)
def host_environment(threads: int, executor: str) -> dict:
    """The environment of this process (host, CPU, versions) and the executor's name."""
    from ..store.records import environment

    return {**environment(threads), "executor": executor}


def run_cell_job(job: CellJob, executor: str = "local", notify=None) -> CellOutcome:
    """Run ``job`` in this process's way (isolated child unless ``options.isolate`` is off);
    never raises for a failure of the cell or its data, which become the outcome's error.

    ``notify(phase, seconds, progress)`` is called while loading and about once a second
    while the cell works, with its phase and the progress its fit reported (``pass 3/10``,
    or ''; see :mod:`xcbench.run.progress`)."""
    from .isolation import error_text
    from .memory import default_memory_limit
    from .progress import phase_board
    from .cell import run_cell

    options, board = job.options, phase_board()
    memory_limit = job.memory_limit
    if memory_limit is None and options.isolate:
        memory_limit = default_memory_limit()
    env = host_environment(options.threads, executor)
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()  # reset once the dataset is loaded: wall time is the cell's
    board.set("loading")
    if notify is not None:
        notify("loading", 0.0, "")

    def outcome(status, payload):
        board.set("")
        return CellOutcome(status, payload, started, time.perf_counter() - t0, env, memory_limit)

    if job.client_version != __version__:
        return outcome("error", f"host {env['host']} runs xcbench {__version__}, the client "
                                f"{job.client_version}; install the same xcbench on every "
                                "machine")
    try:
        dataset = cached_dataset(job.cell.dataset, job.data_dir)
    except Exception as exc:  # noqa: BLE001 - a dataset that fails here fails its cell
        return outcome("error", f"loading dataset {job.cell.dataset!r} on host "
                                f"{env['host']} failed: " + error_text(exc))
    if dataset.checksum != job.checksum:
        return outcome("error", f"dataset {job.cell.dataset!r} on host {env['host']} has "
                                f"checksum {dataset.checksum}, the client's has {job.checksum}; "
                                "give every machine the same data (--data-dir or "
                                "XCBENCH_DATA_DIR pointing at the same files)")
    t0 = time.perf_counter()
    on_wait = None if notify is None else \
        (lambda seconds: notify(board.read(), seconds, board.progress_text()))
    return outcome(*run_cell(job.cell, dataset, options, memory_limit, on_wait=on_wait))
