import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import xcbench
from xcbench.contract.plugins import register_plugin
from xcbench.report import write_report
from xcbench.store.results import ResultStore
from xcbench.run.runner import RunOptions, expand_plan, run_plan

FAST = RunOptions(latency_calls=50, latency_warmup=5, throughput_repeats=1, timeout=60)


def test_expand_plan_is_the_full_product():
    cells = expand_plan(["ova", "softmax"], ["synthetic-small"], seeds=[0, 1],
                        param_overrides={"softmax": {"C": [0.1, 1.0]}})
    assert len(cells) == 2 + 4
    assert {c.params_dict["C"] for c in cells if c.method == "softmax"} == {0.1, 1.0}


def test_expand_plan_rejects_unknown_parameter():
    with pytest.raises(ValueError, match="valid parameters"):
        expand_plan(["ova"], ["synthetic-small"], param_overrides={"ova": {"bogus": [1]}})


def test_run_plan_records_and_resume(tmp_path):
    records = run_plan(["softmax"], ["synthetic-small"], seeds=[0, 1], out=tmp_path,
                       options=FAST, progress=False)
    assert [r["status"] for r in records] == ["ok", "ok"]
    r = records[0]
    assert r["schema_version"] == 2 and len(r["key"]) == 16
    assert len(r["timings"]["latency_seconds"]) == 50
    assert r["environment"]["threads"] == 1
    assert 0 <= r["metrics"]["top1_error"] <= 1
    assert r["dataset_stats"]["bayes_error"] < r["metrics"]["top1_error"] + 0.05
    again = run_plan(["softmax"], ["synthetic-small"], seeds=[0, 1, 2], out=tmp_path,
                     options=FAST, progress=False, resume=True)
    assert [x["seed"] for x in again] == [2]
    assert len(ResultStore(tmp_path).records()) == 3


class _Sleepy(xcbench.Method):
    def __init__(self, seconds=30.0):
        self.seconds = seconds

    def fit(self, X, y, n_classes=None):
        time.sleep(self.seconds)
        return self


class _Broken(xcbench.Method):
    def fit(self, X, y, n_classes=None):
        raise RuntimeError("this method always fails")


class _Crashy(xcbench.Method):
    def fit(self, X, y, n_classes=None):
        os._exit(3)  # the process dies without reporting back


class _Plugin:
    @xcbench.hookimpl
    def register_methods(self, register):
        register(xcbench.MethodSpec("sleepy", "flat", "sleeps in fit", _Sleepy))
        register(xcbench.MethodSpec("broken", "flat", "raises in fit", _Broken))
        register(xcbench.MethodSpec("crashy", "flat", "kills its process", _Crashy))


def test_timeout_and_error_are_recorded_and_reported(tmp_path, fresh_plugins):
    register_plugin(_Plugin(), name="test-failures")
    # sleepy sleeps 30 s; 8 s leave softmax time to finish beside other jobs (2 s did not)
    options = RunOptions(**{**FAST.__dict__, "timeout": 8.0})
    t0 = time.perf_counter()
    records = run_plan(["sleepy", "broken", "crashy", "softmax"], ["synthetic-small"],
                       out=tmp_path, options=options, progress=False)
    assert time.perf_counter() - t0 < 40
    status = {r["method"]: r["status"] for r in records}
    assert status == {"sleepy": "timeout", "broken": "error", "crashy": "error", "softmax": "ok"}
    assert "this method always fails" in records[1]["error"]
    assert "exit code 3" in records[2]["error"]
    text = write_report(tmp_path)["markdown"].read_text()
    # a row names the values the run used (the method's defaults here): sleepy's own
    # parameter (resolved: the run set none), and "defaults" for a method without any
    assert "| sleepy | resolved seconds=30 | 0 | timeout |" in text
    assert "| broken | defaults | 0 | error | RuntimeError: this method always fails |" in text
    assert "| softmax |" in text


def test_killed_run_then_resume_gives_each_cell_once(tmp_path):
    cmd = [sys.executable, "-m", "xcbench.cli", "run", "--methods", "ova,softmax",
           "--dataset", "synthetic-small", "--seeds", "0,1,2,3,4,5", "--out", str(tmp_path),
           "--latency-calls", "3000", "--quiet", "--no-report"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    results = tmp_path / "results.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline:
        if results.exists() and results.read_text().count("\n") >= 2:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the runner and its child, mid-way
    proc.wait()
    before = results.read_text().count("\n")
    assert 2 <= before < 12, "the kill should land mid-way through the 12 cells"
    done = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = results.read_text().splitlines()
    keys = [json.loads(line)["key"] for line in lines]  # every line parses
    assert len(keys) == 12 and len(set(keys)) == 12


def test_query_params_measured_on_one_fit(tmp_path):
    records = run_plan(["hsm"], ["synthetic-small"], out=tmp_path, options=FAST,
                       progress=False, param_overrides={"hsm": {"epochs": [2]}})
    assert [r["query_params"]["decoder"] for r in records] == ["exact", "greedy", "topk",
                                                                 "beam"]
    assert len({r["summary"]["fit_seconds"] for r in records}) == 1  # one fit
    fit = records[0]["summary"]
    assert 0 < fit["fit_cpu_seconds"] <= 2 * fit["fit_seconds"] + 0.05  # fit threads = 1
    assert len({r["key"] for r in records}) == 4
    assert records[0]["metrics"]["top1_error"] == records[2]["metrics"]["top1_error"]
    again = run_plan(["hsm"], ["synthetic-small"], out=tmp_path, options=FAST, progress=False,
                     param_overrides={"hsm": {"epochs": [2], "decoder": ["topk"]}},
                     resume=True)
    assert again == []  # the topk record exists already


def test_zipped_params_are_swept_together_not_crossed():
    from xcbench.run.plan import parse_param_overrides
    overrides = parse_param_overrides(["st:k+depth=50+8,100+7", "st:alpha=1"])
    cells = expand_plan(["st"], ["letter"], param_overrides=overrides)
    assert sorted((c.params_dict["k"], c.params_dict["depth"]) for c in cells) == \
        [(50, 8), (100, 7)]
    assert all(c.params_dict["alpha"] == 1 for c in cells)
    with pytest.raises(ValueError, match="2 parts"):
        parse_param_overrides(["st:k+depth=50"])
    with pytest.raises(ValueError, match="valid parameters"):
        expand_plan(["st"], ["letter"], param_overrides={"st": {"k+bogus": [(1, 2)]}})


class _AutoDepth(xcbench.Method):
    """Resolves its ``"auto"`` depth from the number of classes at fit time."""

    def __init__(self, depth="auto"):
        self.depth = depth

    def fit(self, X, y, n_classes=None):
        k = int(n_classes or (np.max(y) + 1))
        self.n_classes_ = k
        self.resolved_params_ = {"depth": int(np.ceil(np.log2(k))) if self.depth == "auto"
                                 else self.depth}
        return self

    def predict_topk(self, X, k):
        n = X.shape[0]
        labels = np.tile(np.arange(min(k, self.n_classes_), dtype=np.int64), (n, 1))
        return labels, -np.arange(labels.shape[1], dtype=float)[None, :].repeat(n, 0)

    def stats(self):
        return {"n_params": 0, "bytes": 0}


class _AutoPlugin:
    @xcbench.hookimpl
    def register_methods(self, register):
        register(xcbench.MethodSpec("auto-depth", "flat", "resolves depth at fit", _AutoDepth))


def test_resolved_auto_values_land_in_effective_params(tmp_path, fresh_plugins):
    register_plugin(_AutoPlugin(), name="test-auto")
    records = run_plan(["auto-depth"], ["synthetic-small"], out=tmp_path, options=FAST,
                       progress=False)
    record = records[0]
    assert record["status"] == "ok", record["error"]
    k = record["dataset_stats"]["n_classes"]
    assert record["params"] == {}
    assert record["resolved_params"] == {"depth": int(np.ceil(np.log2(k)))}
    assert record["effective_params"]["depth"] == int(np.ceil(np.log2(k)))
    stored = ResultStore(tmp_path).records()[0]
    assert stored["effective_params"]["depth"] == record["effective_params"]["depth"]
