"""Fit cost, accuracy, latency and model size of label_tree and hsm: one JSON line per
(method, seed, n_jobs) fit of the code on PYTHONPATH. Usage (README.md):

    python reports/fit-cost/bench.py --dataset synthetic-sparse-1k --seeds 0,1,2 --jobs 1,2

Fit seconds are wall time with BLAS/OpenMP limited to ``n_jobs`` threads (as
``xcbench run --fit-threads`` does); p50 is the median of single-row top-1 predictions.
"""
from __future__ import annotations

import argparse
import inspect
import json
import pickle
import time

import numpy as np
from threadpoolctl import threadpool_limits

from xcbench.api import make_method
from xcbench.data import load_dataset

LATENCY_ROWS = 300


def measure(method_name, dataset, seed, jobs):
    params = {"random_state": seed}
    method = make_method(method_name, **params)
    if "n_jobs" in inspect.signature(type(method).__init__).parameters:
        method.set_params(n_jobs="auto")  # the thread limit below decides
    with threadpool_limits(limits=jobs):
        start = time.perf_counter()
        method.fit(dataset.X_train, dataset.y_train, n_classes=dataset.n_classes)
        fit = time.perf_counter() - start
    with threadpool_limits(limits=1):
        labels = method.predict_topk(dataset.X_test, 1)[0][:, 0]
        rows = dataset.X_test[:LATENCY_ROWS]
        method.predict_topk(rows[:1], 1)  # compiled before timing
        times = []
        for i in range(rows.shape[0]):
            t = time.perf_counter()
            method.predict_topk(rows[i:i + 1], 1)
            times.append(time.perf_counter() - t)
    return {"method": method_name, "dataset": dataset.name, "seed": seed, "jobs": jobs,
            "fit_s": round(fit, 2), "top1_pct": round(100 * float(np.mean(labels != dataset.y_test)), 3),
            "p50_us": round(1e6 * float(np.median(times)), 1),
            "pickle_mb": round(len(pickle.dumps(method)) / 2**20, 3)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="synthetic-sparse-1k")
    parser.add_argument("--methods", default="label_tree,hsm")
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--jobs", default="1")
    args = parser.parse_args()
    dataset = load_dataset(args.dataset)
    for seed in map(int, args.seeds.split(",")):
        for method in args.methods.split(","):
            for jobs in map(int, args.jobs.split(",")):
                print(json.dumps(measure(method, dataset, seed, jobs)), flush=True)


if __name__ == "__main__":
    main()
