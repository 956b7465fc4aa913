"""One cell measured: fit its method, check and time its outputs (``measure_cell``), in an
isolated child or inline, unless its memory estimate exceeds the limit (``run_cell``)."""
from __future__ import annotations

import multiprocessing as mp
import pickle
import warnings

import numpy as np
import scipy.sparse as sp

from ..fit_progress import progress_listener
from ..contract.plugins import get_method_spec
from ..contract.validate import (check_log_proba_output, check_path_cost_output,
                                 check_support_output, check_topk_log_p, check_topk_output)
from ..metrics import path_cost_summary, quality_metrics
from .fresh_interpreter import run_in_interpreter
from .inputs import private_copy, read_only_dataset
from .isolation import error_text, memory_error_text, run_in_child
from .jit_time import jit_timed_call
from .measure import batch_throughput, cpu_seconds, latency_summary, single_example_latency
from .memory import format_gb, peak_rss, reset_peak_rss, rss
from .options import RunOptions
from .plan import Cell, cell_method_params
from .progress import phase_board, report_phase


def _nnz(X) -> int:
    return int(X.nnz) if sp.issparse(X) else int(np.prod(X.shape))


def measure_cell(cell: Cell, dataset, options: RunOptions) -> list[dict]:
    """Fit one cell in this process and measure it once per query combination; return the
    measured sections of each record (and its raw arrays), in the order of ``cell.queries``.
    The method gets read-only views of the data (``inputs``)."""
    from threadpoolctl import threadpool_limits

    dataset = read_only_dataset(dataset)
    spec = get_method_spec(cell.method)
    params = cell_method_params(cell, spec.valid_params())
    fit_threads = options.fit_threads or options.threads
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        method = spec.make(**params)
        report_phase("fitting")
        reset = reset_peak_rss()
        before, cpu_before = rss(), cpu_seconds()
        with threadpool_limits(limits=fit_threads), \
                progress_listener(phase_board().set_progress):
            _, fit = jit_timed_call(method.fit, dataset.X_train, dataset.y_train,
                                    n_classes=dataset.n_classes)
        fit_cpu_seconds = max(cpu_seconds() - cpu_before - fit.jit_cpu_seconds, 0.0)
        resolved = resolved_params(method)
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
        sections["timings"].update(fit.fields("fit"))
        sections["summary"]["fit_seconds"] = fit.work_seconds
        sections["summary"]["compile_seconds"] = fit.jit_seconds
        sections["summary"]["fit_wall_seconds"] = fit.wall_seconds
        sections["summary"]["fit_cpu_seconds"] = fit_cpu_seconds
        sections["timings"]["fit_cpu_seconds"] = fit_cpu_seconds
        sections["summary"]["train_examples_per_s"] = float(dataset.X_train.shape[0]
                                                            / max(fit.work_seconds, 1e-9))
        sections["timings"]["fit_threads"] = fit_threads
        sections["memory"] = dict(memory)
        sections["warnings"] = messages
        if resolved:
            sections["resolved_params"] = dict(resolved)
    return results


def resolved_params(method) -> dict | None:
    """The values a fitted method chose for its ``"auto"`` parameters (its optional
    ``resolved_params_`` dict: name -> value used), or None when it has none."""
    resolved = getattr(method, "resolved_params_", None)
    if resolved is None:
        return None
    if not isinstance(resolved, dict):
        raise TypeError(f"{type(method).__name__}.resolved_params_ must be a dict of "
                        f"parameter name -> value used, got {type(resolved).__name__}")
    return resolved


def _pickled_size(method) -> int | None:
    """Bytes of the fitted model's pickle (None if it cannot be pickled)."""
    try:
        return len(pickle.dumps(method, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # noqa: BLE001 - a model that does not pickle has no size here
        return None


def _measure_fitted(method, dataset, options: RunOptions) -> dict:
    """Quality metrics, statistics, prediction timings and path cost of a fitted method,
    after checking its outputs; raw arrays under ``"raw_arrays"``. What is scored (the test
    labels, each output) is the scorer's own copy, taken before the method runs again."""
    X, y, n, k = dataset.X_test, dataset.y_test, dataset.X_test.shape[0], options.topk
    truth = private_copy(y)
    (labels, scores), first_predict = jit_timed_call(method.predict_topk, X, k)
    check_topk_output(labels, scores, n, k, dataset.n_classes)
    labels, scores = private_copy(labels), private_copy(scores)
    try:
        log_p, log_proba = jit_timed_call(method.log_proba, X, y)
        log_p = private_copy(log_p)
        support = private_copy(method.support_size(X))
    except NotImplementedError:  # a method with no probability model reports no perplexity
        log_p, log_proba, support = None, None, None
    if log_p is not None:
        check_log_proba_output(log_p, n)
        check_support_output(support, n, dataset.n_classes)
        check_topk_log_p(_topk_log_p(method, X, labels))
    metrics = quality_metrics(labels, truth, log_p, support, dataset.n_classes,
                              epsilon=options.smoothing_epsilon)
    batch_seconds = batch_throughput(method, X, k, options.throughput_repeats,
                                     options.throughput_budget)
    latency = single_example_latency(method, X, options.latency_calls,
                                     options.latency_warmup, k=1)
    summary = {"throughput_per_s": float(n / np.median(batch_seconds)),
               **latency_summary(latency)}
    timings = {**first_predict.fields("first_predict"),
               **(log_proba.fields("log_proba") if log_proba else {"log_proba_seconds": None}),
               "batch_predict_seconds": batch_seconds.tolist(), "batch_size": n,
               "latency_seconds": latency.tolist()}
    stats = method.stats()
    cost = _path_cost(method, X)  # after the timed calls: measuring never slows them
    return {"metrics": metrics, "stats": stats, "summary": summary, "timings": timings,
            "path_cost": path_cost_summary(cost),
            "raw_arrays": {"labels": labels, "scores": scores, "log_p": log_p,
                           "support": support, "path_cost": cost, "y": truth}}


#: test rows whose top-k labels' log_proba the runner checks (cheap: k calls on these rows)
SANITY_ROWS = 64


def _topk_log_p(method, X, labels):
    """log_proba of the top-k labels of the first SANITY_ROWS test rows (-inf for padding)."""
    rows = min(SANITY_ROWS, labels.shape[0])
    sample, top = X[:rows], labels[:rows]
    out = np.full(top.shape, -np.inf)
    for j in range(top.shape[1]):
        real = top[:, j] >= 0
        if real.any():
            out[real, j] = method.log_proba(sample[real], top[real, j])
    return out


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
    """The cell in a forked child; in a fresh interpreter where this process may not fork
    one (a daemonic process, e.g. a Dask worker under its nanny)."""
    run = run_in_interpreter if mp.current_process().daemon else run_in_child
    return run(measure_cell, (cell, dataset, options), options.timeout, memory_limit,
               on_wait)


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


def run_cell(cell, dataset, options, memory_limit, on_wait=None):
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
