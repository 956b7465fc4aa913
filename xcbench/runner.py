"""Plans (method x params x dataset x seed) and runs each cell in its own process.

Each run is isolated in a forked child with a timeout; the parent appends exactly one record
per finished cell (status ``ok``, ``timeout`` or ``error``). An interrupted runner writes no
record for the cell it was running, so ``resume=True`` re-runs exactly the missing cells.
"""
from __future__ import annotations

import multiprocessing as mp
import time
import traceback
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np
from sklearn.model_selection import ParameterGrid

from . import __version__
from .data import data_dir as resolve_data_dir
from .data import get_dataset_spec
from .measure import batch_throughput, latency_summary, single_example_latency, time_call
from .metrics import DEFAULT_SMOOTHING_EPSILON, quality_metrics
from .results import SCHEMA_VERSION, ResultStore, environment, run_key


@dataclass(frozen=True)
class Cell:
    """One fit of a plan: a method with fixed build params on one dataset with one seed,
    measured once per combination of its query params (``queries``; one empty one if the
    method has none). Each measurement becomes one record."""

    method: str
    params: tuple  # sorted (name, value) pairs, hashable
    dataset: str
    seed: int
    queries: tuple = ((),)  # tuple of sorted (name, value) pair tuples

    @property
    def params_dict(self) -> dict:
        return dict(self.params)

    def run_params(self) -> list[dict]:
        """The params of each record this cell produces: build params + one query combo."""
        return [{**dict(self.params), **dict(q)} for q in self.queries]


@dataclass
class RunOptions:
    """How each cell is measured."""

    timeout: float = 1800.0
    threads: int = 1
    fit_threads: int | None = None  # threads while fitting; None: the same as ``threads``
    latency_calls: int = 1000
    latency_warmup: int = 50
    throughput_repeats: int = 3
    topk: int = 5
    smoothing_epsilon: float = DEFAULT_SMOOTHING_EPSILON
    isolate: bool = True
    extra: dict = field(default_factory=dict)


def expand_plan(methods, datasets, seeds=(0,), param_overrides=None) -> list[Cell]:
    """All cells: for each method its param grid (overrides replace grid entries), x datasets x seeds.

    ``param_overrides`` maps method name to {param: [values]}. Unknown methods or parameters
    raise KeyError/ValueError listing what is valid.
    """
    from .api import get_method_spec

    param_overrides = param_overrides or {}
    unknown = set(param_overrides) - set(methods)
    if unknown:
        raise ValueError(f"parameters given for method(s) not in the plan: {sorted(unknown)}")
    cells = []
    for name in methods:
        spec = get_method_spec(name)
        overrides = param_overrides.get(name, {})
        spec.validate_params({part: None for key in overrides for part in key.split("+")})
        zipped = [key for key in overrides if "+" in key]
        if any(part in spec.query_params for key in zipped for part in key.split("+")):
            raise ValueError(f"query parameters of {name!r} cannot be swept together with '+'")
        grid = {**{k: list(v) for k, v in spec.param_grid.items()},
                **{k: list(v) for k, v in overrides.items() if k not in spec.query_params}}
        query_grid = {k: list(overrides.get(k, v)) for k, v in spec.query_params.items()}
        queries = tuple(tuple(sorted(q.items())) for q in ParameterGrid(query_grid or [{}]))
        for params in map(_unzip, ParameterGrid(grid or [{}])):
            for dataset in datasets:
                for seed in seeds:
                    cells.append(Cell(name, tuple(sorted(params.items())), dataset, int(seed),
                                      queries))
    return cells


def _unzip(params: dict) -> dict:
    """{"k+depth": (50, 8)} -> {"k": 50, "depth": 8}; other entries unchanged."""
    out = {}
    for key, value in params.items():
        out.update(zip(key.split("+"), value) if "+" in key else [(key, value)])
    return out


def measure_cell(cell: Cell, dataset, options: RunOptions) -> dict:
    """Fit one cell in this process and measure it once per query combination; return the
    measured sections of each record, in the order of ``cell.queries``."""
    from threadpoolctl import threadpool_limits

    from .api import get_method_spec

    spec = get_method_spec(cell.method)
    params = cell.params_dict
    if "random_state" in spec.valid_params():
        params.setdefault("random_state", cell.seed)
    fit_threads = options.fit_threads or options.threads
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        method = spec.make(**params)
        with threadpool_limits(limits=fit_threads):
            _, fit_seconds = time_call(method.fit, dataset.X_train, dataset.y_train,
                                       n_classes=dataset.n_classes)
        results = []
        for query in cell.queries:
            method.set_params(**dict(query))
            with threadpool_limits(limits=options.threads):
                results.append(_measure_fitted(method, dataset, options))
    messages = list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))
    for sections in results:
        sections["summary"]["fit_seconds"] = sections["timings"]["fit_seconds"] = fit_seconds
        sections["summary"]["train_examples_per_s"] = float(dataset.X_train.shape[0] / fit_seconds)
        sections["timings"]["fit_threads"] = fit_threads
        sections["warnings"] = messages
    return results


def _measure_fitted(method, dataset, options: RunOptions) -> dict:
    """Quality metrics, statistics and prediction timings of a fitted method."""
    X, y = dataset.X_test, dataset.y_test
    (labels, _), first_predict = time_call(method.predict_topk, X, options.topk)
    try:
        log_p, log_proba_seconds = time_call(method.log_proba, X, y)
        support = method.support_size(X)
    except NotImplementedError:  # a method with no probability model reports no perplexity
        log_p, log_proba_seconds, support = None, None, None
    metrics = quality_metrics(labels, y, log_p, support, dataset.n_classes,
                              epsilon=options.smoothing_epsilon)
    batch_seconds = batch_throughput(method, X, options.topk, options.throughput_repeats)
    latency = single_example_latency(method, X, options.latency_calls,
                                     options.latency_warmup, k=1)
    summary = {"throughput_per_s": float(X.shape[0] / np.median(batch_seconds)),
               **latency_summary(latency)}
    timings = {"first_predict_seconds": first_predict, "log_proba_seconds": log_proba_seconds,
               "batch_predict_seconds": batch_seconds.tolist(), "batch_size": X.shape[0],
               "latency_seconds": latency.tolist()}
    return {"metrics": metrics, "stats": method.stats(), "summary": summary, "timings": timings}


def _error_text(exc: BaseException) -> str:
    """The error stored in a failed run's record: type, message, then the traceback."""
    return f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"


def _child(conn, cell, dataset, options):
    try:
        conn.send(("ok", measure_cell(cell, dataset, options)))
    except BaseException as exc:  # report every failure, including SystemExit
        conn.send(("error", _error_text(exc)))
    finally:
        conn.close()


def _run_isolated(cell, dataset, options, on_wait=None):
    """Run one cell in a forked child; return (status, payload or error text).

    ``on_wait(seconds)`` is called about once a second while the child works (progress)."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, cell, dataset, options), daemon=True)
    proc.start()
    child.close()
    try:
        start = time.perf_counter()
        while not parent.poll(min(1.0, options.timeout)):  # EOF (a dead child) also ends it
            elapsed = time.perf_counter() - start
            if elapsed >= options.timeout:
                return "timeout", f"exceeded the timeout of {options.timeout:g} s"
            if on_wait is not None:
                on_wait(elapsed)
        try:
            status, payload = parent.recv()
        except EOFError:
            proc.join()
            return "error", f"the run's process died (exit code {proc.exitcode})"
        proc.join()
        return status, payload
    finally:
        if proc.is_alive():
            proc.kill()
            proc.join()
        parent.close()


def _run_inline(cell, dataset, options, on_wait=None):
    try:
        return "ok", measure_cell(cell, dataset, options)
    except Exception as exc:
        return "error", _error_text(exc)


def run_plan(methods, datasets, seeds=(0,), out="xcbench-results", param_overrides=None,
             options: RunOptions | None = None, resume=False, data_dir=None, progress=True,
             command: str | None = None):
    """Run every cell of the plan, append one record per measurement to ``out``; return
    the new records.

    With ``resume=True`` cells whose records are all stored already (any status) are skipped.
    ``command`` (the command line that asked for the run) is stored in each record.
    """
    from tqdm.auto import tqdm

    from .api import get_method_spec

    options = options or RunOptions()
    cells = expand_plan(methods, datasets, seeds, param_overrides)
    for name in datasets:  # fail early on an unknown dataset, before any work
        get_dataset_spec(name)
    store = ResultStore(out)
    done = store.keys() if resume else set()
    env = environment(options.threads)
    records = []
    bar = tqdm(total=len(cells), desc="xcbench run", unit="run", disable=not progress)
    for dataset_name in dict.fromkeys(c.dataset for c in cells):
        bar.set_postfix_str(f"loading {dataset_name}")
        dataset_spec = get_dataset_spec(dataset_name)
        dataset = dataset_spec.load(resolve_data_dir(data_dir))
        for cell in [c for c in cells if c.dataset == dataset_name]:
            keys = [run_key(cell.method, p, cell.dataset, dataset.checksum, cell.seed,
                            __version__) for p in cell.run_params()]
            if all(key in done for key in keys):
                bar.update(1)
                continue
            label = f"{cell.method} on {dataset_name} seed {cell.seed}"
            bar.set_postfix_str(label)
            started = datetime.now(timezone.utc).isoformat(timespec="seconds")
            t0 = time.perf_counter()
            runner = _run_isolated if options.isolate else _run_inline
            status, payload = runner(
                cell, dataset, options,
                on_wait=lambda s: bar.set_postfix_str(f"{label}, {s:.0f} s", refresh=True))
            spec = get_method_spec(cell.method)
            for i, (key, params) in enumerate(zip(keys, cell.run_params())):
                record = {
                    "schema_version": SCHEMA_VERSION, "key": key, "method": cell.method,
                    "plugin": spec.plugin, "family": spec.family, "params": params,
                    "query_params": dict(cell.queries[i]), "dataset": dataset_name,
                    "dataset_checksum": dataset.checksum, "dataset_version": dataset.version,
                    "dataset_description": dataset_spec.description,
                    "dataset_sources": dataset.info.get("source_sha256", {}),
                    "seed": cell.seed, "status": status,
                    "error": None if status == "ok" else payload, "started_at": started,
                    "wall_seconds": time.perf_counter() - t0, "dataset_stats": dataset.stats,
                    "environment": env, "command": command,
                    **(payload[i] if status == "ok" else {}),
                }
                store.append(record)
                records.append(record)
                if progress:
                    tqdm.write(_one_line(record))
            bar.update(1)
    bar.close()
    return records


def _one_line(record: dict) -> str:
    head = f"{record['method']} {record['params']} on {record['dataset']} seed {record['seed']}"
    if record["status"] != "ok":
        return f"{head}: {record['status'].upper()} {record['error'].splitlines()[0]}"
    m, s = record["metrics"], record["summary"]
    return (f"{head}: top-1 error {m['top1_error']:.3f}, fit {s['fit_seconds']:.1f} s, "
            f"p50 {s['latency_p50_ms']:.3f} ms")
