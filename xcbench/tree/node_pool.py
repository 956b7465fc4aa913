"""Independent node problems solved side by side: the fit-thread budget of the node-by-node
trees (``label_tree`` and ``hsm`` with ``solver="liblinear"``).

The nodes of a label tree are fitted independently of each other, so with more than one
core allowed they can be solved at once. Worker processes, not threads: LIBLINEAR (through
scikit-learn) releases the GIL while it trains, but it draws its coordinate order from one
random generator for the whole process, which every fit reseeds; two fits in threads would
interleave their draws and the model would depend on the timing. A worker process has its
own generator, each node fit seeds it, and the results come back in node order, so the
model is the same bits whatever the number of workers (``tests/test_tree_node_pool.py``).

How many: a method's ``n_jobs="auto"`` is the thread limit the caller set for the fit
(``xcbench run --fit-threads`` sets it with ``threadpoolctl`` around ``fit``), read back as
the smallest thread count of the thread pools loaded in this process, or the number of
cores when none is loaded. Starting the workers (a fresh interpreter each, importing
scikit-learn) takes about a second, so ``"auto"`` stays in this process when the data has
fewer than ``PARALLEL_MIN_VALUES`` stored values.
"""
from __future__ import annotations

import os
from numbers import Integral

PARALLEL_MIN_VALUES = 100_000  # below this many stored values of X, "auto" is one job


def thread_budget() -> int:
    """The thread limit in force here: the smallest ``num_threads`` of the loaded thread
    pools (BLAS, OpenMP; ``threadpoolctl``), else the cores this process may use."""
    from threadpoolctl import threadpool_info

    limits = [int(info["num_threads"]) for info in threadpool_info()
              if info.get("num_threads")]
    if limits:
        return max(1, min(limits))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def resolve_jobs(n_jobs, n_values: int) -> int:
    """Worker count for a fit over data with ``n_values`` stored values: an int as given,
    ``"auto"`` the ``thread_budget`` (1 below ``PARALLEL_MIN_VALUES`` values)."""
    if isinstance(n_jobs, Integral):
        return max(1, int(n_jobs))
    if n_jobs != "auto":
        raise ValueError(f"n_jobs must be a positive int or 'auto', got {n_jobs!r}")
    return thread_budget() if n_values >= PARALLEL_MIN_VALUES else 1


def solve_all(solve, tasks, n_jobs: int):
    """``solve(task)`` for each task of the iterable ``tasks``, yielded in task order; with
    ``n_jobs`` > 1 in that many worker processes (joblib's loky backend: the workers are
    kept for the next call), tasks drawn lazily a few ahead of the workers. Every solve
    runs with one BLAS / OpenMP thread, here or in a worker: a multinomial node's L-BFGS
    sums in an order that depends on its thread count, so this keeps the model the same
    whatever ``n_jobs`` and whatever thread limit the caller set."""
    from threadpoolctl import threadpool_limits

    if n_jobs <= 1:
        with threadpool_limits(limits=1):
            for task in tasks:
                yield solve(task)
        return
    from joblib import Parallel, delayed, parallel_config

    with parallel_config(backend="loky", inner_max_num_threads=1):
        yield from Parallel(n_jobs=n_jobs, return_as="generator", pre_dispatch="2 * n_jobs",
                            batch_size=1)(delayed(solve)(task) for task in tasks)
