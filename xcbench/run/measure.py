"""Timing: fit time, single-example latency distribution, batch throughput.

Every repeat is kept; summaries (percentiles, medians) are computed from them, never
"best of N".
"""
from __future__ import annotations

import resource
import time

import numpy as np
import scipy.sparse as sp


def time_call(fn, *args, **kwargs):
    """Run ``fn`` once; return (result, wall seconds)."""
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start


def cpu_seconds() -> float:
    """CPU seconds used so far by this process (all its threads) and by the child processes
    it has waited for (a peer's command-line tool): differences of it time work on a loaded
    machine, where the wall time also counts waiting for a core."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def single_rows(X, n: int) -> list:
    """``n`` one-row slices of X (cycling through its rows), prepared before timing."""
    if X.shape[0] == 0:
        raise ValueError("cannot time single-example calls on X with 0 rows; pass at least "
                         "one test row")
    idx = np.arange(n) % X.shape[0]
    if sp.issparse(X):
        X = sp.csr_matrix(X)
    return [X[i:i + 1] for i in idx]


def single_example_latency(method, X, n_calls: int = 1000, n_warmup: int = 50,
                           k: int = 1) -> np.ndarray:
    """Seconds per ``predict_topk(x, k)`` call on one example, for ``n_calls`` calls.

    Rows are sliced before timing; ``n_warmup`` untimed calls come first.
    """
    rows = single_rows(X, n_calls + n_warmup)
    for row in rows[:n_warmup]:
        method.predict_topk(row, k)
    out = np.empty(n_calls)
    clock = time.perf_counter_ns
    for i, row in enumerate(rows[n_warmup:]):
        t0 = clock()
        method.predict_topk(row, k)
        out[i] = clock() - t0
    return out * 1e-9


def interleaved_p50(models: dict, test_rows: dict, rounds: int = 5, calls: int = 1000,
                    warmup: int = 50) -> dict:
    """{key: p50 single-example latency (ms) per round} of ``models`` timed in turn within
    each round, so machine load hits them alike (for latency ratios between models on a
    busy machine). Round r times ``calls`` predict_topk(x, 1) calls (after ``warmup``) on the
    rows of ``test_rows[key]`` from row r x calls on, cycling through all of them."""
    p50 = {key: [] for key in models}
    for r in range(rounds):
        for key, method in models.items():
            X = test_rows[key]
            if X.shape[0]:  # (no rows: single_example_latency names the problem)
                X = X[(r * calls + np.arange(warmup + calls)) % X.shape[0]]
            seconds = single_example_latency(method, X, calls, warmup)
            p50[key].append(float(np.median(seconds)) * 1e3)
    return p50


def batch_throughput(method, X, k: int = 5, repeats: int = 3,
                     budget_seconds: float | None = None) -> np.ndarray:
    """Wall seconds of ``predict_topk(X, k)`` on the whole batch, one entry per repeat.
    With ``budget_seconds``, no repeat starts once the repeats so far took that long (at
    least one always runs): an O(K) decoder at K = 1e5 would otherwise spend most of a
    cell's time re-predicting the test set."""
    method.predict_topk(X[: min(X.shape[0], 64)], k)  # warm-up
    seconds = []
    for _ in range(repeats):
        seconds.append(time_call(method.predict_topk, X, k)[1])
        if budget_seconds is not None and sum(seconds) >= budget_seconds:
            break
    return np.array(seconds)


def latency_summary(seconds: np.ndarray) -> dict:
    """p50/p90/p99/mean of a latency sample, in milliseconds."""
    ms = np.asarray(seconds) * 1e3
    return {
        "latency_p50_ms": float(np.percentile(ms, 50)),
        "latency_p90_ms": float(np.percentile(ms, 90)),
        "latency_p99_ms": float(np.percentile(ms, 99)),
        "latency_mean_ms": float(ms.mean()),
    }
