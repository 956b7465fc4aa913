"""numba's JIT is timed apart from the work: fit and first-prediction times leave it out,
records keep it (``compile_seconds``), reports mark older records whose fit times include
it, and ``compare`` names records whose fit was mostly compilation."""
import json
import os
import subprocess
import sys
import time

import numba
import numpy as np
import pytest

import xcbench
from xcbench.contract.plugins import register_plugin
from xcbench.report import markdown_report
from xcbench.run.jit_time import jit_timed_call
from xcbench.run.runner import RunOptions, one_line, run_plan
from xcbench.store.compare import compare_outputs

from report_records import record
from test_cli_export_compare import record as stored_record, store

FAST = RunOptions(latency_calls=20, latency_warmup=2, throughput_repeats=1, timeout=120)
SLEEP = 0.3


def fresh_kernel():
    """A numba kernel no process has compiled yet (a new function object each call), calling
    another fresh kernel so that compilations nest."""
    @numba.njit
    def inner(x):
        return np.sum(x * 2.0)

    @numba.njit
    def kernel(x):
        total = 0.0
        for i in range(x.shape[0]):
            total += inner(x[i:i + 1]) + np.sqrt(abs(x[i]))
        return total

    return kernel


def sleep_then_compile():
    time.sleep(SLEEP)
    return fresh_kernel()(np.arange(10.0))


def test_a_kernel_compiled_inside_the_call_is_timed_apart():
    result, timing = jit_timed_call(sleep_then_compile)
    assert result == sum(2 * i + np.sqrt(i) for i in range(10))
    assert timing.compile_seconds > 0.02 and timing.jit_seconds >= timing.compile_seconds
    assert timing.wall_seconds >= SLEEP + timing.compile_seconds
    # without the JIT the call is the sleep; with it, it would be at least a compile longer
    # (half a compile of slack for a loaded machine)
    assert SLEEP <= timing.work_seconds < SLEEP + timing.compile_seconds / 2
    kernel = fresh_kernel()
    kernel(np.arange(3.0))
    _, again = jit_timed_call(kernel, np.arange(3.0))  # compiled already: no JIT time
    assert again.jit_seconds == 0 and again.work_seconds == again.wall_seconds


class _CompilesInFit(xcbench.Method):
    """Sleeps SLEEP seconds and compiles fresh kernels in fit, and again in predict_topk."""

    def fit(self, X, y, n_classes=None):
        self.n_classes_ = int(n_classes or np.max(y) + 1)
        sleep_then_compile()
        return self

    def predict_topk(self, X, k):
        fresh_kernel()(np.arange(3.0))
        n, k = X.shape[0], min(k, self.n_classes_)
        labels = np.tile(np.arange(k, dtype=np.int64), (n, 1))
        return labels, -np.arange(k, dtype=float)[None, :].repeat(n, 0)

    def stats(self):
        return {"n_params": 0, "bytes": 0}


class _Plugin:
    @xcbench.hookimpl
    def register_methods(self, register):
        register(xcbench.MethodSpec("compiles-in-fit", "flat", "compiles a kernel in fit",
                                    _CompilesInFit))


def test_compilation_inside_a_timed_fit_is_not_fit_time(tmp_path, fresh_plugins):
    register_plugin(_Plugin(), name="test-compile")
    [r] = run_plan(["compiles-in-fit"], ["synthetic-small"], out=tmp_path, options=FAST,
                   progress=False)
    assert r["status"] == "ok", r["error"]
    summary, timings = r["summary"], r["timings"]
    assert summary["compile_seconds"] > 0.05
    assert SLEEP <= summary["fit_seconds"] < SLEEP + summary["compile_seconds"] / 2
    assert (f"fit {summary['fit_seconds']:.1f} s (+{summary['compile_seconds']:.1f} s "
            "compiling)") in one_line(r)
    assert summary["fit_wall_seconds"] >= summary["fit_seconds"] + summary["compile_seconds"] \
        - 1e-6
    assert timings["fit_seconds"] == summary["fit_seconds"]
    assert timings["fit_compile_seconds"] == summary["compile_seconds"]
    assert summary["train_examples_per_s"] * summary["fit_seconds"] == \
        pytest.approx(r["dataset_stats"]["n_train"])
    assert timings["first_predict_compile_seconds"] > 0.02
    assert timings["first_predict_seconds"] + timings["first_predict_compile_seconds"] == \
        pytest.approx(timings["first_predict_wall_seconds"])


def _old(rec):
    """``rec`` as written before xcbench timed the JIT apart."""
    for name in ("compile_seconds", "fit_wall_seconds"):
        rec["summary"].pop(name)
    return rec


def test_report_marks_fit_times_that_include_compilation():
    new = markdown_report([record("ova"), record("softmax")])
    assert "†" not in new
    mixed = markdown_report([record("ova"), _old(record("softmax")),
                             _old(record("softmax", seed=1))],
                            columns="top1_error,fit_seconds,compile_seconds")
    rows = {line.split(" | ")[0]: line for line in mixed.splitlines()
            if line.startswith("| ova") or line.startswith("| softmax")}
    assert rows["| softmax"].endswith("| 1.23 † | n/a |")
    assert rows["| ova"].endswith("| 1.23 | 0.500 |")
    assert "† The fit times of the row marked † include numba's JIT compilation" in mixed
    no_fit = markdown_report([_old(record("softmax"))], columns="top1_error")
    assert "†" not in no_fit  # no fit column, nothing to mark


def test_compare_names_records_whose_fit_was_mostly_compilation(tmp_path):
    def compiled(rec, seconds):
        rec["summary"].update(compile_seconds=seconds,
                              fit_wall_seconds=rec["summary"]["fit_seconds"] + seconds)
        return rec

    a = store(tmp_path / "a", [compiled(stored_record("hsm", {}, fit=2.0), 18.0),
                               compiled(stored_record("st", {}, fit=2.0), 0.1),
                               _old(stored_record("ova", {}, fit=2.0))])
    b = store(tmp_path / "b", [compiled(stored_record("hsm", {}, fit=2.0), 0.5),
                               compiled(stored_record("st", {}, fit=2.0), 0.1),
                               _old(stored_record("ova", {}, fit=2.0))])
    text = compare_outputs(a, b)
    assert "hsm on letter seed 0 (A: 90% of 20 s)" in text
    assert "st on letter" not in text.split("Fit times leave out")[1].split("\n")[0]
    assert "(A: 1, B: 1)" in text
    assert "| hsm | defaults | letter | 0 | 20.0 | 20.0 | 1 | 1 | 1 |" in text


def _cell_with_cache(method_args, dataset, cache, out):
    """The summary of one ``xcbench run`` cell in a fresh interpreter with ``cache`` as
    numba's cache folder."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-m", "xcbench.cli", "run", *method_args,
                           "--dataset", dataset, "--latency-calls", "20", "--no-report",
                           "--quiet", "--out", str(out)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    [line] = (out / "results.jsonl").read_text().splitlines()
    r = json.loads(line)
    assert r["status"] == "ok", r["error"]
    return r["summary"]


def test_with_an_empty_numba_cache_the_first_fit_is_not_slower(tmp_path):
    """hsm's first cell compiles its kernels, the second loads them from numba's cache;
    without the JIT their fit times are within 1.3x (they were 10-35x apart)."""
    data = os.environ.get("XCBENCH_DATA_DIR")
    dataset = "letter" if data and os.path.isdir(os.path.join(data, "letter")) \
        else "synthetic-small"
    args = ["--methods", "hsm", "--param", "hsm:decoder=exact", "--param", "hsm:epochs=2"]
    first, second = (_cell_with_cache(args, dataset, tmp_path / "cache", tmp_path / name)
                     for name in ("first", "second"))
    assert first["compile_seconds"] > 1.0 and first["compile_seconds"] > \
        2 * second["compile_seconds"]  # the first compiled, the second loaded
    print(f"{dataset}: first {first}, second {second}")
    assert first["fit_seconds"] <= 1.3 * second["fit_seconds"]
    assert first["fit_wall_seconds"] > 1.3 * second["fit_wall_seconds"]  # as measured before
