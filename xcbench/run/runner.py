"""Runs the cells of a plan, each in its own process, and stores one record per measurement.

An executor (``executors``: one cell at a time here, or tasks on a Dask cluster) runs each
cell in a forked child with a timeout and a memory cap (see ``isolation``); this process
appends the records of a finished cell in one write (status ``ok``, ``timeout``,
``error`` or ``refused``), with the raw outputs beside them. An interrupted runner writes no
record for the cell it was running, so ``resume=True`` re-runs exactly the missing ones.
Runs with ``resume=True`` into one folder at the same time share the cells out: each cell is
claimed (``store.claims``) before it runs, so it is measured once.
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading
from dataclasses import dataclass
from pathlib import Path

from ..contract.plugins import get_method_spec
from ..data import get_dataset_spec
from ..store import provenance
from ..store.claims import CellClaims
from ..store.records import build_record, encode_record, run_key
from ..store.results import RESULTS_FILE, ResultStore
from ..version import __version__
from .resume import ResumeState
from .reuse_from import Lenders
from .cell import measure_cell
from .cell_job import CellJob
from .options import RunOptions
from .plan import Cell, expand_plan, validate_cells

__all__ = ["Cell", "RunOptions", "expand_plan", "measure_cell", "run_plan", "execute_plan",
           "PlanOutcome"]


def check_out_dir(out) -> Path:
    """``out`` as a results folder; ValueError before any work if it is a file or a
    ``.jsonl`` name, or cannot be created."""
    out = Path(out)
    if out.suffix == ".jsonl":
        raise ValueError(f"--out {out} looks like a results file; --out names a folder (the "
                         f"records go to FOLDER/{RESULTS_FILE}), e.g. --out {out.with_suffix('')}")
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a folder; choose a folder for results "
                         "and the report")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--out {out}: cannot create the folder ({exc.strerror})") from exc
    if not os.access(out, os.W_OK):
        raise ValueError(f"--out {out}: the folder is not writable")
    results = out / RESULTS_FILE
    if results.exists() and not results.is_file():
        raise ValueError(f"--out {out}: {results} is not a file (a folder?); the records are "
                         "appended to that file: move it away or choose another --out")
    if results.exists() and not os.access(results, os.W_OK):
        raise ValueError(f"--out {out}: {results} is not writable")
    return out


@contextlib.contextmanager
def sigterm_as_interrupt():
    """Within the block, SIGTERM raises KeyboardInterrupt (as Ctrl-C does), so the running
    child is killed and finished records are kept; a no-op outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@dataclass
class PlanOutcome:
    """What a run did: the records it stored and the stored ones it reused (``resume``)."""

    records: list
    reused: list
    #: cells skipped because another run held their claim (``resume``), as "method on dataset"
    taken: list = None
    resume_note: str | None = None  # what --resume reused and why it re-ran the others

    def __post_init__(self):
        self.taken = [] if self.taken is None else self.taken

    def failed(self) -> list:
        """The records of this plan (new or reused) whose status is not ``ok``."""
        return [r for r in self.records + self.reused if r["status"] != "ok"]


def run_plan(methods, datasets, seeds=(0,), out="xcbench-results", param_overrides=None,
             options: RunOptions | None = None, resume=False, data_dir=None, progress=True,
             command: str | None = None, **executor) -> list[dict]:
    """Run every cell of the plan, append one record per measurement to ``out``; return
    the new records (see :func:`execute_plan`)."""
    return execute_plan(methods, datasets, seeds, out, param_overrides, options, resume,
                        data_dir, progress, command, **executor).records


def execute_plan(methods, datasets, seeds=(0,), out="xcbench-results", param_overrides=None,
                 options: RunOptions | None = None, resume=False, data_dir=None,
                 progress=True, command: str | None = None, executor: str = "local",
                 scheduler: str | None = None, workers: int | None = None,
                 retry=(), reuse_from=()) -> PlanOutcome:
    """Run every cell of the plan; return a PlanOutcome.

    Everything that can be checked is checked before any cell runs: the output folder, the
    plan, every method's parameter values, the dataset names and the executor options. With
    ``resume=True`` measurements already stored by the same code (any status, less those in
    ``retry``, e.g. ``("refused",)``) are not repeated; a cell stored in part is re-run and
    only its missing records are added (``resume_note`` says what was reused and why the
    rest was re-run; see ``resume``). With ``resume=True``, ``reuse_from`` names other
    results folders whose records of this plan's measurements by this code are copied in,
    raw outputs included, instead of measured again (``reuse_from.Lenders``). ``command``
    is stored in each record. ``executor`` is ``local`` (one cell at a time here) or
    ``dask`` (a LocalCluster of ``workers`` processes, or the cluster whose scheduler is at
    ``scheduler``); either way the records are appended here, one cell at a time, as cells
    finish.
    """
    from .cell_job import cached_dataset, dataset_facts
    from .executors import make_executor
    from .cell_costs import CellCosts
    from .progress import RunProgress

    options = options or RunOptions()
    cells = expand_plan(methods, datasets, seeds, param_overrides)
    validate_cells(cells)
    dataset_specs = {name: get_dataset_spec(name) for name in dict.fromkeys(datasets)}
    out = check_out_dir(out)
    runner = make_executor(executor, scheduler, workers)
    store = ResultStore(out)
    code = provenance.code_state()
    previous = ResumeState(store.records() if resume else [], code, retry, options.isolate)
    stored = previous.stored
    lenders = Lenders(reuse_from if resume else (), options.isolate)
    claims = CellClaims(store) if resume else None
    outcome, facts = PlanOutcome([], []), {}
    with sigterm_as_interrupt(), runner:
        memory_limit = runner.default_memory_limit(options)
        bar = RunProgress(len(cells), runner.parallel, enabled=progress,
                          cells=[(c.method, c.dataset) for c in cells],
                          costs=CellCosts.from_store(store))

        def jobs():
            for name in dataset_specs:
                bar.status("data", f"loading {name}")
                dataset = cached_dataset(name, data_dir)
                facts[name] = dataset_facts(dataset)
                bar.dataset_loaded(name, dataset.stats)
                bar.status("data", "")
                for cell in [c for c in cells if c.dataset == name]:
                    keys = _cell_keys(cell, dataset.checksum, options, code)
                    lenders.lend(store, keys, stored)
                    if claims is not None and _claim(store, claims, keys, stored,
                                                     previous) == "taken":
                        outcome.taken.append(f"{cell.method} on {cell.dataset} seed {cell.seed}")
                        bar.skipped(cell.method, cell.dataset)
                        continue
                    outcome.reused += previous.reuse(cell, keys, dataset.checksum,
                                                     options.keyed(), _plugin(cell))
                    if all(key in stored for key in keys):
                        bar.skipped(cell.method, cell.dataset)
                        continue
                    yield CellJob(cell, data_dir, dataset.checksum, options, memory_limit)

        def on_status(job, phase, seconds, progress=""):
            bar.cell_status(job.label, job.cell.method, phase, seconds, progress,
                            dataset=job.cell.dataset)
            if claims is not None:
                claims.renew()  # a claim's lease runs out unless the run measuring renews it

        try:
            with contextlib.closing(runner.run(jobs(), on_status)) as finished:
                for job, result in finished:
                    new = _outcome_records(store, job, result, facts, dataset_specs, stored,
                                           command, code)
                    store.append_many(new)
                    if claims is not None:
                        claims.release(_cell_keys(job.cell, job.checksum, options, code)[0])
                    outcome.records += new
                    bar.finished(job.label, job.cell.method, result.wall_seconds,
                                 [one_line(r) for r in new], dataset=job.cell.dataset)
        finally:
            bar.close()
            if claims is not None:
                claims.release_all()
            store.remove_stale_temporaries()
            outcome.resume_note = "; ".join(
                note for note in (previous.summary(), lenders.summary()) if note) or None
    return outcome


def _claim(store, claims, keys, stored, previous: ResumeState) -> str:
    """Claim a cell (named by its first key) under the store lock, after reading the records
    other runs stored meanwhile into ``stored`` (``ResumeState.usable``: a cell another run
    measured or retried since this one started is done): ``"claimed"``, ``"stored"`` or
    ``"taken"``."""
    with store.lock():
        if not all(k in stored for k in keys):
            stored.update(previous.usable(r for r in store.records() if r["key"] in keys))
        return claims.claim(keys[0], lambda _: all(k in stored for k in keys))


def _plugin(cell: Cell) -> str | None:
    return get_method_spec(cell.method).plugin


def _cell_keys(cell: Cell, checksum: str, options: RunOptions, code: dict) -> list[str]:
    """The record key of each measurement of ``cell`` made by ``code`` (independent of the
    executor)."""
    key_code = provenance.key_code(code, _plugin(cell))
    return [run_key(cell.method, p, cell.dataset, checksum, cell.seed, __version__,
                    options.keyed(), key_code) for p in cell.run_params()]


def _outcome_records(store, job, result, facts, dataset_specs, stored, command,
                     code) -> list[dict]:
    """The records of a finished job (see :func:`_cell_records`), its raw outputs written."""
    cell, options = job.cell, job.options
    memory_limit = result.memory_limit if result.memory_limit is not None else job.memory_limit
    common = dict(method=cell.method, spec=get_method_spec(cell.method),
                  dataset=facts[cell.dataset], dataset_name=cell.dataset,
                  dataset_description=dataset_specs[cell.dataset].description, seed=cell.seed,
                  started_at=result.started_at, wall_seconds=result.wall_seconds,
                  environment=result.environment, command=command, code=code,
                  options={**options.keyed(), "timeout": options.timeout,
                           "memory_limit": memory_limit, "in_process": not options.isolate})
    return _cell_records(store, cell, _cell_keys(cell, job.checksum, options, code),
                         result.status, result.payload, common, options, skip=stored)


def _cell_records(store, cell, keys, status, payload, common, options, skip=()) -> list[dict]:
    """The records of one finished cell, except those whose key is in ``skip`` (stored
    already); if any cannot be stored (a non-JSON value), one ``error`` record per
    measurement naming the bad field instead. Raw outputs are written first."""
    records, raws = [], []
    for i, (key, params) in enumerate(zip(keys, cell.run_params())):
        sections = dict(payload[i]) if status == "ok" else {}
        raws.append(sections.pop("raw_arrays", None))
        records.append(build_record(key=key, params=params, query_params=dict(cell.queries[i]),
                                    status=status, error=None if status == "ok" else payload,
                                    sections=sections, **common))
    try:
        for record in records:
            encode_record(record)
    except TypeError as exc:
        error = f"the measured results cannot be stored: {exc}"
        return [build_record(key=r["key"], params=r["params"], query_params=r["query_params"],
                             status="error", error=error, **common)
                for r in records if r["key"] not in skip]
    kept = []
    for record, raw in zip(records, raws):
        if record["key"] in skip:
            continue
        if raw is not None and options.keep_raw:
            record["raw"] = store.save_raw(record["key"], raw)
        kept.append(record)
    return kept


def one_line(record: dict) -> str:
    """A record as one line of progress output, naming the parameter values the run used
    (its params, then the method's defaults for the others)."""
    from ..contract.method_params import run_params_text
    from ..report.numbers import percent

    head = (f"{record['method']} {run_params_text(record['method'], record.get('params'))} "
            f"on {record['dataset']} seed {record['seed']}")
    if record["status"] != "ok":
        reason = next(iter((record.get("error") or "").splitlines()), "")
        return f"{head}: {record['status'].upper()} {reason}".rstrip()
    m, s = record["metrics"], record["summary"]
    jit = s.get("compile_seconds") or 0.0
    compiled = f" (+{jit:.1f} s compiling)" if jit >= 0.05 else ""
    return (f"{head}: top-1 error {percent(m['top1_error'])}, fit {s['fit_seconds']:.1f} s"
            f"{compiled}, p50 {s['latency_p50_ms']:.3f} ms")

