"""Runs the cells of a plan, each in its own process, and stores one record per measurement.

An executor (``executors``: one cell at a time here, or tasks on a Dask cluster) runs each
cell in a forked child with a timeout and a memory cap (see ``isolation``); this process
appends the records of a finished cell in one write (status ``ok``, ``timeout``,
``error`` or ``refused``), with the raw outputs beside them. An interrupted runner writes no
record for the cell it was running, so ``resume=True`` re-runs exactly the missing ones.
"""
from __future__ import annotations

import contextlib
import os
import pickle
import signal
import threading
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import __version__
from .cell_job import CellJob
from .data import get_dataset_spec
from .isolation import error_text, memory_error_text, run_in_child
from .measure import batch_throughput, latency_summary, single_example_latency, time_call
from .memory import default_memory_limit, format_gb, peak_rss, reset_peak_rss, rss
from .metrics import DEFAULT_SMOOTHING_EPSILON, path_cost_summary, quality_metrics
from .validate import (check_log_proba_output, check_path_cost_output,
                            check_support_output, check_topk_output)
from .plan import Cell, cell_method_params, expand_plan, validate_cells
from .plugins import get_method_spec
from .progress import report_phase
from .results import (KEYED_OPTIONS, RESULTS_FILE, ResultStore, build_record, encode_record,
                      run_key)

__all__ = ["Cell", "RunOptions", "expand_plan", "measure_cell", "run_plan", "execute_plan",
           "PlanOutcome"]


MIN_MEMORY_LIMIT = 64 * 2 ** 20


@dataclass
class RunOptions:
    """How each cell is measured. Values are checked when the options are made (scikit-learn
    parameter constraints), so a bad option fails before any cell runs."""

    timeout: float = 1800.0
    threads: int = 1
    fit_threads: int | None = None  # threads while fitting; None: the same as ``threads``
    latency_calls: int = 1000
    latency_warmup: int = 50
    throughput_repeats: int = 3
    throughput_budget: float = 60.0  # seconds; no further batch repeat once reached
    topk: int = 5
    smoothing_epsilon: float = DEFAULT_SMOOTHING_EPSILON
    isolate: bool = True
    memory_limit: int | None = None  # bytes a cell may use; None: a share of available RAM
    keep_raw: bool = True  # write OUT/raw/<key>.npz beside each ok record
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        from numbers import Integral, Real

        from sklearn.utils._param_validation import Interval, validate_parameter_constraints

        constraints = {
            "timeout": [Interval(Real, 0, None, closed="neither")],
            "threads": [Interval(Integral, 1, None, closed="left")],
            "fit_threads": [Interval(Integral, 1, None, closed="left"), None],
            "latency_calls": [Interval(Integral, 1, None, closed="left")],
            "latency_warmup": [Interval(Integral, 0, None, closed="left")],
            "throughput_repeats": [Interval(Integral, 1, None, closed="left")],
            "throughput_budget": [Interval(Real, 0, None, closed="neither")],
            "topk": [Interval(Integral, 1, None, closed="left")],
            "smoothing_epsilon": [Interval(Real, 0, 1, closed="neither")],
            "isolate": ["boolean"],
            # below ~64 MB a capped child cannot even start its threads (it stalls until the
            # timeout instead of failing), so smaller limits are refused up front
            "memory_limit": [Interval(Integral, MIN_MEMORY_LIMIT, None, closed="left"), None],
            "keep_raw": ["boolean"],
            "extra": [dict],
        }
        validate_parameter_constraints(constraints, asdict(self), caller_name="RunOptions")

    def keyed(self) -> dict:
        """The options that change measurements (part of each record's key)."""
        return {k: getattr(self, k) for k in KEYED_OPTIONS}

    def effective_memory_limit(self) -> int | None:
        """``memory_limit``, or the default share of the available RAM."""
        return self.memory_limit or default_memory_limit()


def _nnz(X) -> int:
    return int(X.nnz) if sp.issparse(X) else int(np.prod(X.shape))


def measure_cell(cell: Cell, dataset, options: RunOptions) -> list[dict]:
    """Fit one cell in this process and measure it once per query combination; return the
    measured sections of each record (and its raw arrays), in the order of ``cell.queries``."""
    from threadpoolctl import threadpool_limits

    spec = get_method_spec(cell.method)
    params = cell_method_params(cell, spec.valid_params())
    fit_threads = options.fit_threads or options.threads
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        method = spec.make(**params)
        report_phase("fitting")
        reset = reset_peak_rss()
        before = rss()
        with threadpool_limits(limits=fit_threads):
            _, fit_seconds = time_call(method.fit, dataset.X_train, dataset.y_train,
                                       n_classes=dataset.n_classes)
        memory = {"rss_before_fit_bytes": before,
                  "fit_peak_rss_bytes": peak_rss() if reset else None,
                  "model_pickle_bytes": _pickled_size(method)}
        results = []
        report_phase("measuring")
        for query in cell.queries:
            method.set_params(**dict(query))
            with threadpool_limits(limits=options.threads):
                results.append(_measure_fitted(method, dataset, options))
    messages = list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))
    for sections in results:
        sections["summary"]["fit_seconds"] = sections["timings"]["fit_seconds"] = fit_seconds
        sections["summary"]["train_examples_per_s"] = float(dataset.X_train.shape[0] / fit_seconds)
        sections["timings"]["fit_threads"] = fit_threads
        sections["memory"] = dict(memory)
        sections["warnings"] = messages
    return results


def _pickled_size(method) -> int | None:
    """Bytes of the fitted model's pickle (None if it cannot be pickled)."""
    try:
        return len(pickle.dumps(method, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # noqa: BLE001 - a model that does not pickle has no size here
        return None


def _measure_fitted(method, dataset, options: RunOptions) -> dict:
    """Quality metrics, statistics, prediction timings and path cost of a fitted method,
    after checking its outputs; raw arrays under ``"raw_arrays"``."""
    X, y, n, k = dataset.X_test, dataset.y_test, dataset.X_test.shape[0], options.topk
    (labels, scores), first_predict = time_call(method.predict_topk, X, k)
    check_topk_output(labels, scores, n, k, dataset.n_classes)
    try:
        log_p, log_proba_seconds = time_call(method.log_proba, X, y)
        support = method.support_size(X)
    except NotImplementedError:  # a method with no probability model reports no perplexity
        log_p, log_proba_seconds, support = None, None, None
    if log_p is not None:
        check_log_proba_output(log_p, n)
        check_support_output(support, n, dataset.n_classes)
    metrics = quality_metrics(labels, y, log_p, support, dataset.n_classes,
                              epsilon=options.smoothing_epsilon)
    batch_seconds = batch_throughput(method, X, k, options.throughput_repeats,
                                     options.throughput_budget)
    latency = single_example_latency(method, X, options.latency_calls,
                                     options.latency_warmup, k=1)
    summary = {"throughput_per_s": float(n / np.median(batch_seconds)),
               **latency_summary(latency)}
    timings = {"first_predict_seconds": first_predict, "log_proba_seconds": log_proba_seconds,
               "batch_predict_seconds": batch_seconds.tolist(), "batch_size": n,
               "latency_seconds": latency.tolist()}
    stats = method.stats()
    cost = _path_cost(method, X)  # after the timed calls: measuring never slows them
    return {"metrics": metrics, "stats": stats, "summary": summary, "timings": timings,
            "path_cost": path_cost_summary(cost),
            "raw_arrays": {"labels": labels, "scores": scores, "log_p": log_p,
                           "support": support, "path_cost": cost, "y": np.asarray(y)}}


def _path_cost(method, X):
    """``method.path_cost(X)`` checked, or None for a method that does not measure it."""
    try:
        cost = np.asarray(method.path_cost(X), dtype=np.float64)
    except NotImplementedError:
        return None
    check_path_cost_output(cost, X.shape[0])
    return cost


def _run_inline(cell, dataset, options, memory_limit=None, on_wait=None):
    try:
        return "ok", measure_cell(cell, dataset, options)
    except MemoryError as exc:
        return "error", memory_error_text(exc, memory_limit) if memory_limit else error_text(exc)
    except Exception as exc:  # noqa: BLE001 - a failing cell becomes its error record
        return "error", error_text(exc)


def _run_isolated(cell, dataset, options, memory_limit=None, on_wait=None):
    return run_in_child(measure_cell, (cell, dataset, options), options.timeout,
                        memory_limit, on_wait)


def memory_refusal(cell: Cell, dataset, memory_limit: int | None) -> str | None:
    """Why ``cell`` must not run within ``memory_limit`` bytes (its method's
    ``estimate_memory`` is larger), or None if it may run."""
    if not memory_limit:
        return None
    spec = get_method_spec(cell.method)
    method = spec.make(**cell_method_params(cell, spec.valid_params()))
    X = dataset.X_train
    estimate = method.estimate_memory(int(X.shape[0]), int(X.shape[1]), _nnz(X),
                                      int(dataset.n_classes))
    if estimate is None or estimate <= memory_limit:
        return None
    return (f"would need ~{format_gb(estimate)} (limit {format_gb(memory_limit)}); run a "
            "smaller problem, use the method's hashing/size parameters, or raise "
            "--memory-limit")


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
                 scheduler: str | None = None, workers: int | None = None) -> PlanOutcome:
    """Run every cell of the plan; return a PlanOutcome.

    Everything that can be checked is checked before any cell runs: the output folder, the
    plan, every method's parameter values, the dataset names and the executor options. With
    ``resume=True`` measurements already stored (any status) are not repeated; a cell stored
    in part is re-run and only its missing records are added. ``command`` is stored in each
    record. ``executor`` is ``local`` (one cell at a time here) or ``dask`` (a LocalCluster of
    ``workers`` processes, or the cluster whose scheduler is at ``scheduler``); either way
    the records are appended here, one cell at a time, as cells finish.
    """
    from .cell_job import cached_dataset, dataset_facts
    from .executors import make_executor
    from .progress import RunProgress

    options = options or RunOptions()
    cells = expand_plan(methods, datasets, seeds, param_overrides)
    validate_cells(cells)
    dataset_specs = {name: get_dataset_spec(name) for name in dict.fromkeys(datasets)}
    out = check_out_dir(out)
    runner = make_executor(executor, scheduler, workers)
    store = ResultStore(out)
    stored = {r["key"]: r for r in store.records()} if resume else {}
    outcome, facts = PlanOutcome([], []), {}
    with sigterm_as_interrupt(), runner:
        memory_limit = runner.default_memory_limit(options)
        bar = RunProgress(len(cells), runner.parallel, enabled=progress)

        def jobs():
            for name in dataset_specs:
                bar.status("data", f"loading {name}")
                dataset = cached_dataset(name, data_dir)
                facts[name] = dataset_facts(dataset)
                bar.status("data", "")
                for cell in [c for c in cells if c.dataset == name]:
                    keys = _cell_keys(cell, dataset.checksum, options)
                    outcome.reused += [stored[k] for k in keys if k in stored]
                    if all(key in stored for key in keys):
                        bar.skipped()
                        continue
                    bar.planned(cell.method)
                    yield CellJob(cell, data_dir, dataset.checksum, options, memory_limit)

        def on_status(job, phase, seconds):
            bar.status(job.label, f"{phase} {seconds:.0f} s")

        try:
            with contextlib.closing(runner.run(jobs(), on_status)) as finished:
                for job, result in finished:
                    new = _outcome_records(store, job, result, facts, dataset_specs, stored,
                                           command)
                    store.append_many(new)
                    outcome.records += new
                    bar.finished(job.label, job.cell.method, result.wall_seconds,
                                 [one_line(r) for r in new])
        finally:
            bar.close()
    return outcome


def _cell_keys(cell: Cell, checksum: str, options: RunOptions) -> list[str]:
    """The record key of each measurement of ``cell`` (independent of the executor)."""
    return [run_key(cell.method, p, cell.dataset, checksum, cell.seed, __version__,
                    options.keyed()) for p in cell.run_params()]


def _outcome_records(store, job, result, facts, dataset_specs, stored, command) -> list[dict]:
    """The records of a finished job (see :func:`_cell_records`), its raw outputs written."""
    cell, options = job.cell, job.options
    memory_limit = result.memory_limit if result.memory_limit is not None else job.memory_limit
    common = dict(method=cell.method, spec=get_method_spec(cell.method),
                  dataset=facts[cell.dataset], dataset_name=cell.dataset,
                  dataset_description=dataset_specs[cell.dataset].description, seed=cell.seed,
                  started_at=result.started_at, wall_seconds=result.wall_seconds,
                  environment=result.environment, command=command,
                  options={**options.keyed(), "timeout": options.timeout,
                           "memory_limit": memory_limit})
    return _cell_records(store, cell, _cell_keys(cell, job.checksum, options), result.status,
                         result.payload, common, options, skip=stored)


def _run_cell(cell, dataset, options, memory_limit, on_wait=None):
    """(status, measured sections or error text) of one cell: ``refused`` when its memory
    estimate exceeds the limit, else the result of running it (isolated or inline)."""
    try:
        refusal = memory_refusal(cell, dataset, memory_limit)
    except Exception as exc:  # noqa: BLE001 - a broken estimate fails its cell
        return "error", "estimate_memory failed: " + error_text(exc)
    if refusal:
        return "refused", refusal
    runner = _run_isolated if options.isolate else _run_inline
    return runner(cell, dataset, options, memory_limit, on_wait=on_wait)


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
    from .method_params import run_params_text
    from .report.numbers import percent

    head = (f"{record['method']} {run_params_text(record['method'], record.get('params'))} "
            f"on {record['dataset']} seed {record['seed']}")
    if record["status"] != "ok":
        reason = next(iter((record.get("error") or "").splitlines()), "")
        return f"{head}: {record['status'].upper()} {reason}".rstrip()
    m, s = record["metrics"], record["summary"]
    return (f"{head}: top-1 error {percent(m['top1_error'])}, fit {s['fit_seconds']:.1f} s, "
            f"p50 {s['latency_p50_ms']:.3f} ms")

