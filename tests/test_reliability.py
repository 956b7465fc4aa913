"""The reliability probes of issue 11: each defect found by trying to break the runner and
the store, as a test that failed before the fix."""
import json
import mmap
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from numbers import Real

import numpy as np
import pytest
from sklearn.utils._param_validation import Interval

import xcbench
from xcbench.cli import main
from xcbench.contract.plugins import register_plugin
from xcbench.report import write_report
from xcbench.report.numbers import sig3
from xcbench.store.results import SCHEMA_VERSION, ResultStore, run_key
from xcbench.run.runner import RunOptions, expand_plan, run_plan

INLINE = RunOptions(latency_calls=5, latency_warmup=1, throughput_repeats=1, timeout=60,
                    isolate=False)
ISOLATED = RunOptions(latency_calls=5, latency_warmup=1, throughput_repeats=1, timeout=60)


class Prior(xcbench.Method):
    """Predicts classes by training frequency (fast; a base for broken variants)."""

    _parameter_constraints = {"smoothing": [Interval(Real, 0, None, closed="neither")],
                              "decoder": [str]}

    def __init__(self, smoothing=1.0, decoder="a"):
        self.smoothing = smoothing
        self.decoder = decoder

    def fit(self, X, y, n_classes=None):
        self.n_classes_ = n_classes or int(np.max(y)) + 1
        counts = np.bincount(y, minlength=self.n_classes_) + self.smoothing
        self.log_prior_ = np.log(counts / counts.sum())
        self.order_ = np.argsort(-self.log_prior_, kind="stable")
        return self

    def predict_topk(self, X, k=1):
        n, kk = X.shape[0], min(k, self.n_classes_)
        labels = np.full((n, k), -1, dtype=np.int64)
        scores = np.full((n, k), -np.inf)
        labels[:, :kk] = self.order_[:kk]
        scores[:, :kk] = self.log_prior_[self.order_[:kk]]
        return labels, scores

    def log_proba(self, X, y):
        return self.log_prior_[np.asarray(y)]

    def stats(self):
        return {"n_params": self.n_classes_, "bytes": self.log_prior_.nbytes}


class Registry:
    def __init__(self, *specs):
        self.specs = specs

    @xcbench.hookimpl
    def register_methods(self, register):
        for spec in self.specs:
            register(spec)


def register(name, cls, **kwargs):
    register_plugin(Registry(xcbench.MethodSpec(name, "flat", "a test method", cls, **kwargs)),
                    name=f"test-{name}")


def lines(path):
    return (path / "results.jsonl").read_text().splitlines()


# defect 2 -----------------------------------------------------------------------------------
def test_append_after_a_truncated_tail_keeps_the_new_record(tmp_path):
    store = ResultStore(tmp_path)
    good = {"schema_version": SCHEMA_VERSION, "key": "a", "method": "m", "params": {},
            "dataset": "d", "seed": 0, "status": "ok"}
    store.append(good)
    with open(store.path, "a") as f:
        f.write('{"schema_version": 2, "key": "b", "met')  # a writer killed mid-line
    with pytest.warns(UserWarning, match="incomplete"):
        store.append({**good, "key": "c"})
    with pytest.warns(UserWarning, match=r"results.jsonl:2: skipping a corrupt"):
        keys = [r["key"] for r in store.records()]
    assert keys == ["a", "c"]


# defect 3 -----------------------------------------------------------------------------------
class SetStats(Prior):
    def stats(self):
        return {"n_params": 1, "bytes": 8, "classes": {1, 2}}


def test_non_json_stats_fail_their_cell_only(tmp_path, fresh_plugins):
    register("set-stats", SetStats)
    register("prior", Prior)
    records = run_plan(["set-stats", "prior"], ["synthetic-small"], out=tmp_path,
                       options=INLINE, progress=False)
    assert [r["status"] for r in records] == ["error", "ok"]
    assert "['stats']['classes'] is a set" in records[0]["error"]
    assert len(ResultStore(tmp_path).records()) == 2


# defect 4 -----------------------------------------------------------------------------------
class BadOutput(Prior):
    def __init__(self, smoothing=1.0, decoder="a", mode="positive"):
        super().__init__(smoothing, decoder)
        self.mode = mode

    def predict_topk(self, X, k=1):
        labels, scores = super().predict_topk(X, k)
        if self.mode == "out_of_range":
            labels[:, 0] = self.n_classes_ + 3
        elif self.mode == "negative":
            labels[:, 0] = -5
        elif self.mode == "float":
            labels = labels.astype(np.float64)
        elif self.mode == "shape":
            labels, scores = labels[:, :1], scores[:, :1]
        return labels, scores

    def log_proba(self, X, y):
        log_p = super().log_proba(X, y)
        if self.mode == "positive":
            return log_p + 5.0
        if self.mode == "nan":
            return np.where(np.arange(len(log_p)) == 0, np.nan, log_p)
        return log_p


@pytest.mark.parametrize("mode, message", [
    ("positive", "must be <= 0"), ("nan", "NaN"), ("out_of_range", "out of range"),
    ("negative", "negative label"), ("float", "must be integers"), ("shape", r"\(500, 5\)")])
def test_invalid_method_output_is_an_error_record(tmp_path, fresh_plugins, mode, message):
    register("bad", BadOutput)
    [record] = run_plan(["bad"], ["synthetic-small"], out=tmp_path, options=INLINE,
                        progress=False, param_overrides={"bad": {"mode": [mode]}})
    assert record["status"] == "error"
    assert re.search(message, record["error"].splitlines()[0])


# defect 5 -----------------------------------------------------------------------------------
SLEEPY_RUN = textwrap.dedent("""
    import sys, time, xcbench
    from xcbench.contract.plugins import register_plugin
    from xcbench.run.runner import RunOptions, expand_plan, run_plan

    class Sleepy(xcbench.Method):
        def fit(self, X, y, n_classes=None):
            time.sleep(60)
            return self

    class P:
        @xcbench.hookimpl
        def register_methods(self, register):
            register(xcbench.MethodSpec("sleepy", "flat", "sleeps", Sleepy))

    register_plugin(P(), name="sleepy")
    try:
        run_plan(["sleepy"], ["synthetic-small"], out=sys.argv[1], progress=False,
                 options=RunOptions(timeout=120))
    except KeyboardInterrupt:
        sys.exit(130)
""")


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_cell_process_dies_with_the_runner(tmp_path, sig):
    proc = subprocess.Popen([sys.executable, "-c", SLEEPY_RUN, str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline, children = time.time() + 180, []
    while not children and time.time() < deadline:
        time.sleep(0.2)
        children = _children(proc.pid)
    assert children, "the runner did not start a cell process"
    time.sleep(0.5)
    os.kill(proc.pid, sig)
    rc = proc.wait(timeout=30)
    deadline = time.time() + 10
    while any(map(_alive, children)) and time.time() < deadline:
        time.sleep(0.1)
    alive = [c for c in children if _alive(c)]
    for c in alive:
        os.kill(c, signal.SIGKILL)
    assert not alive, "the cell's process outlived the runner"
    if sig == signal.SIGTERM:
        assert rc == 130  # handled like Ctrl-C
        assert not (tmp_path / "results.jsonl").exists()  # no record for the killed cell


# defect 7 -----------------------------------------------------------------------------------
def test_records_of_another_schema_are_skipped_with_a_warning(tmp_path, fresh_plugins):
    register("prior", Prior)
    run_plan(["prior"], ["synthetic-small"], out=tmp_path, options=INLINE, progress=False)
    with open(tmp_path / "results.jsonl", "a") as f:
        f.write(json.dumps({"schema_version": 99, "key": "x"}) + "\n")
        f.write(json.dumps({"schema_version": SCHEMA_VERSION, "key": "y", "method": "m"}) + "\n")
    with pytest.warns(UserWarning) as caught:
        assert len(ResultStore(tmp_path).records()) == 1
        write_report(tmp_path)
        again = run_plan(["prior"], ["synthetic-small"], out=tmp_path, options=INLINE,
                         progress=False, resume=True)
    text = " ".join(str(w.message) for w in caught)
    assert "results.jsonl:2: skipping a record of schema version 99" in text
    assert "results.jsonl:3: skipping a record missing field(s) params" in text
    assert again == []


# defect 9 -----------------------------------------------------------------------------------
def test_partly_stored_cell_is_completed_once_on_resume(tmp_path, fresh_plugins):
    register("prior", Prior, query_params={"decoder": ["a", "b", "c"]})
    first = run_plan(["prior"], ["synthetic-small"], out=tmp_path, options=INLINE,
                     progress=False)
    assert len(first) == 3
    results = tmp_path / "results.jsonl"
    results.write_text(lines(tmp_path)[0] + "\n")  # killed after the first record
    again = run_plan(["prior"], ["synthetic-small"], out=tmp_path, options=INLINE,
                     progress=False, resume=True)
    assert [r["query_params"]["decoder"] for r in again] == ["b", "c"]
    keys = [json.loads(line)["key"] for line in lines(tmp_path)]
    assert sorted(keys) == sorted(r["key"] for r in first)


# defect 12 ----------------------------------------------------------------------------------
@pytest.mark.parametrize("options", [{"latency_calls": 0}, {"timeout": -5}, {"threads": 0},
                                     {"topk": 0}, {"memory_limit": -1}])
def test_bad_run_options_fail_when_made(options):
    with pytest.raises(ValueError, match=next(iter(options))):
        RunOptions(**options)


def test_bad_options_on_the_command_line_fail_before_any_work(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", "--latency-calls", "0", "--out", str(out), "--quiet"]) == 2
    assert "--latency-calls must be an int in the range [1, inf)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:  # --timeout is a duration, refused by the parser
        main(["run", "--timeout", "-5", "--out", str(out), "--quiet"])
    assert stop.value.code == 2
    assert "argument --timeout: '-5' is not a duration" in capsys.readouterr().err
    assert not out.exists()


def test_parameter_values_are_validated_before_any_cell(tmp_path, fresh_plugins):
    register("prior", Prior)
    with pytest.raises(ValueError, match=r"(?s)nothing was run.*prior \{'smoothing': -1\}"):
        run_plan(["prior"], ["synthetic-small"], out=tmp_path / "o", options=INLINE,
                 progress=False, param_overrides={"prior": {"smoothing": [1.0, -1]}})
    with pytest.raises(ValueError, match="decoder"):
        run_plan(["prior"], ["synthetic-small"], out=tmp_path / "o", options=INLINE,
                 progress=False, param_overrides={"prior": {"decoder": [3]}})
    assert not (tmp_path / "o").exists()


# defect 13 ----------------------------------------------------------------------------------
def test_out_that_is_a_file_or_a_jsonl_name_fails_first(tmp_path, fresh_plugins):
    register("prior", Prior)
    with pytest.raises(ValueError, match="names a folder"):
        run_plan(["prior"], ["synthetic-small"], out=tmp_path / "r.jsonl", options=INLINE,
                 progress=False)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        run_plan(["prior"], ["synthetic-small"], out=tmp_path / "file", options=INLINE,
                 progress=False)
    assert not (tmp_path / "r.jsonl").exists()


# defect 14 ----------------------------------------------------------------------------------
def test_equal_values_are_one_cell_and_options_are_in_the_key():
    cells = expand_plan(["softmax"], ["synthetic-small"],
                        param_overrides={"softmax": {"C": [1, 1.0, 2]}})
    assert len(cells) == 2
    key = lambda params, **opts: run_key("softmax", params, "d", "c", 0, "v",
                                         {"threads": 1, **opts})
    assert key({"C": 1}) == key({"C": 1.0}) != key({"C": 2})
    assert key({"C": 1}) != key({"C": 1}, threads=2)
    assert key({"C": 1}) != key({"C": 1}, latency_calls=10)


# defect 15 ----------------------------------------------------------------------------------
class Walker(Prior):
    """Its predict writes the last row's path length, as the old tree methods did."""

    def predict_topk(self, X, k=1):
        self.last_cost_ = float(X.shape[0] % 7)
        return super().predict_topk(X, k)

    def path_cost(self, X):
        return (np.arange(X.shape[0]) % 4).astype(np.float64)

    def stats(self):
        return {**super().stats(), "nodes_per_prediction": self.last_cost_}


def test_path_cost_is_measured_once_as_its_own_section(tmp_path, fresh_plugins):
    register("walker", Walker)
    register("prior", Prior)
    walker, prior = run_plan(["walker", "prior"], ["synthetic-small"], out=tmp_path,
                             options=INLINE, progress=False)
    assert walker["path_cost"] == {"mean": 1.5, "p50": 1.5, "max": 3.0}
    assert prior["path_cost"] is None
    text = write_report(tmp_path, columns="all")["markdown"].read_text()
    row = next(line for line in text.splitlines() if line.startswith("| walker"))
    header = next(line for line in text.splitlines() if line.startswith("| method"))
    col = [c.strip() for c in header.split("|")].index("path cost (vectors)")
    assert [c.strip() for c in row.split("|")][col] == "1.50"


# defect 10 (command line) ------------------------------------------------------------------
def test_data_error_is_one_line_without_traceback(tmp_path, capsys):
    data = tmp_path / "data"
    (data / "letter").mkdir(parents=True)
    (data / "letter" / "letter-recognition.data").write_text("not the letter data\n")
    argv = ["run", "--methods", "ova", "--dataset", "letter", "--data-dir", str(data),
            "--out", str(tmp_path / "out"), "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("xcbench: error:") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 2  # the error and the --debug hint
    with pytest.raises(Exception, match="(?i)checksum|sha"):
        main(argv + ["--debug"])


# exit codes and the summary ----------------------------------------------------------------
class Broken(Prior):
    def fit(self, X, y, n_classes=None):
        raise RuntimeError("this method always fails")


def test_run_exits_1_when_a_cell_fails_and_prints_a_summary(tmp_path, capsys, fresh_plugins):
    register("broken", Broken)
    register("prior", Prior)
    argv = ["run", "--methods", "broken,prior", "--dataset", "synthetic-small", "--out",
            str(tmp_path), "--quiet", "--in-process", "--latency-calls", "5", "--no-report"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert re.search(r"^broken +\S.* synthetic-small +0 +error\n  why: RuntimeError: this "
                     "method always fails", out, re.M)
    assert re.search(r"^prior +\S.* synthetic-small +0 +ok +[\d.]+%$", out, re.M)
    assert main(["run", "--methods", "prior", "--dataset", "synthetic-small", "--out",
                 str(tmp_path / "ok"), "--quiet", "--in-process", "--latency-calls", "5",
                 "--no-report"]) == 0


# memory guard and memory columns (issue 10) ------------------------------------------------
class Greedy(Prior):
    """Estimates a petabyte."""

    def estimate_memory(self, n_samples, n_features, nnz, n_classes):
        return 10 ** 15


class Hog(Prior):
    """Allocates ``megabytes`` of memory in fit (touched, so resident)."""

    def __init__(self, smoothing=1.0, decoder="a", megabytes=100):
        super().__init__(smoothing, decoder)
        self.megabytes = megabytes

    def fit(self, X, y, n_classes=None):
        # a fresh anonymous mapping, every page touched: new resident memory whatever the
        # (forked) process's heap already holds
        block = mmap.mmap(-1, self.megabytes * 2 ** 20)
        np.frombuffer(block, dtype=np.uint8)[::4096] = 1
        block.close()
        return super().fit(X, y, n_classes)


def test_memory_guard_refuses_and_caps(tmp_path, fresh_plugins):
    register("greedy", Greedy)
    register("hog", Hog)
    register("prior", Prior)
    options = RunOptions(**{**ISOLATED.__dict__, "memory_limit": 300 * 2 ** 20})
    records = run_plan(["greedy", "hog", "prior"], ["synthetic-small"], out=tmp_path,
                       options=options, progress=False,
                       param_overrides={"hog": {"megabytes": [2000, 50]}})
    by = {(r["method"], r["params"].get("megabytes")): r for r in records}
    refused = by[("greedy", None)]
    assert refused["status"] == "refused"
    assert refused["error"].startswith("would need ~1,000,000 GB (limit 0.315 GB);")
    assert "--memory-limit" in refused["error"]
    assert by[("hog", 2000)]["status"] == "error"
    assert "exceeded the memory limit of 0.315 GB" in by[("hog", 2000)]["error"]
    small = by[("hog", 50)]
    assert small["status"] == by[("prior", None)]["status"] == "ok"
    mem = small["memory"]
    assert mem["fit_peak_rss_bytes"] - mem["rss_before_fit_bytes"] > 40 * 2 ** 20
    assert 0 < mem["model_pickle_bytes"] < 2 ** 20
    text = write_report(tmp_path, columns="all")["markdown"].read_text()
    assert "fit peak RSS (MB)" in text
    # the table of runs that did not finish names the values the run used, not `defaults`
    assert "| greedy | resolved decoder=a, smoothing=1 | 0 | refused |" in text


class Estimates(Prior):
    """Estimates ``megabytes`` of memory (and uses little)."""

    def __init__(self, smoothing=1.0, decoder="a", megabytes=100):
        super().__init__(smoothing, decoder)
        self.megabytes = megabytes

    def estimate_memory(self, n_samples, n_features, nnz, n_classes):
        return self.megabytes * 2 ** 20


def test_memory_guard_refuses_an_estimate_just_over_the_limit(tmp_path, fresh_plugins):
    """Issue 61: only a petabyte against 0.3 GB was tested, so a guard allowing 10x its limit
    passed. 330 MB against 300 MB is refused, 270 MB runs."""
    register("estimates", Estimates)
    options = RunOptions(**{**INLINE.__dict__, "memory_limit": 300 * 2 ** 20})
    records = run_plan(["estimates"], ["synthetic-small"], out=tmp_path, options=options,
                       progress=False, param_overrides={"estimates": {"megabytes": [330, 270]}})
    status = {r["params"]["megabytes"]: r["status"] for r in records}
    assert status == {330: "refused", 270: "ok"}
    refused = next(r for r in records if r["status"] == "refused")
    assert refused["error"].startswith("would need ~0.346 GB (limit 0.315 GB);")


def test_the_resident_memory_watch_stops_a_cell_just_over_its_limit():
    """The watch of a cell's resident memory (over_limits) at 1.25x and 0.8x its limit."""
    from xcbench.run.isolation import over_limits
    from xcbench.run.memory import rss

    used = rss()
    assert over_limits(os.getpid(), 0.0, 60.0, int(used / 1.25), 0)[0] == "error"
    assert over_limits(os.getpid(), 0.0, 60.0, int(used / 0.8), 0) is None


def _allocate_after_capping(limit, megabytes):
    from xcbench.run.memory import cap_data_memory

    cap_data_memory(limit)
    block = np.ones(megabytes * 2 ** 20 // 8)  # touched: data segment and resident
    return int(block.size)


def test_the_data_segment_cap_refuses_an_allocation_just_over_it():
    """The cap alone (no resident-memory watch: memory_limit None) at 1.5x and 0.5x."""
    from xcbench.run.isolation import run_in_child

    status, text = run_in_child(_allocate_after_capping, (200 * 2 ** 20, 300), 60)
    assert status == "error" and text.startswith("MemoryError"), text
    assert run_in_child(_allocate_after_capping, (200 * 2 ** 20, 100), 60)[0] == "ok"


# raw outputs and --recompute --------------------------------------------------------------
def test_raw_outputs_recompute_the_metrics(tmp_path, fresh_plugins, capsys):
    register("walker", Walker)
    [record] = run_plan(["walker"], ["synthetic-small"], out=tmp_path, options=INLINE,
                        progress=False)
    raw = ResultStore(tmp_path).load_raw(record)
    assert raw["labels"].shape == (500, 5) and raw["log_p"].shape == (500,)
    assert raw["path_cost"].shape == (500,)
    tampered = {**record, "metrics": {**record["metrics"], "top1_error": 0.0},
                "path_cost": None}
    (tmp_path / "results.jsonl").write_text(json.dumps(tampered) + "\n")
    assert main(["report", "--out", str(tmp_path), "--recompute", "--columns", "all"]) == 0
    assert "recomputed the metrics of 1 record(s)" in capsys.readouterr().out
    text = (tmp_path / "report.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| walker"))
    assert f"| {sig3(100 * record['metrics']['top1_error'])} |" in row and "| 1.50 |" in row


# latency vs K -----------------------------------------------------------------------------
def test_latency_vs_k_plot_for_a_dataset_family(tmp_path):
    store = ResultStore(tmp_path)
    base = {"schema_version": SCHEMA_VERSION, "seed": 0, "status": "ok", "params": {}}
    for dataset, k in [("fam-1k", 1000), ("fam-10k", 10000), ("other", 5)]:
        for method, ms in [("tree", 0.01), ("flat", 0.001 * k)]:
            store.append({**base, "key": dataset + method, "method": method,
                          "dataset": dataset, "dataset_stats": {"n_classes": k},
                          "metrics": {"top1_error": 0.5},
                          "summary": {"latency_p50_ms": ms}})
    plots = write_report(tmp_path)["plots"]
    assert tmp_path / "latency_vs_k-fam.png" in plots
    assert "latency_vs_k-fam.png" in (tmp_path / "report.md").read_text()
    assert not (tmp_path / "latency_vs_k-other.png").exists()


def test_progress_is_reported_while_a_child_works():
    from xcbench.run.isolation import run_in_child

    seen = []
    status, value = run_in_child(time.sleep, (2.5,), timeout=30, on_wait=seen.append)
    assert status == "ok" and value is None
    assert len(seen) >= 1 and all(s >= 1.0 for s in seen)


def test_a_killed_cell_is_blamed_on_memory_only_for_sigkill():
    """SIGKILL is the out-of-memory killer's signal; SIGTERM (a user's kill) is named as such."""
    import signal

    from xcbench.run.isolation import death_text

    assert "SIGKILL, possibly out of memory (limit" in death_text(-signal.SIGKILL, 2 ** 30)
    term = death_text(-signal.SIGTERM, 2 ** 30)
    assert "killed by SIGTERM (not the out-of-memory" in term and "possibly out of" not in term
    assert death_text(3, None) == "the run's process died (exit code 3)"


def test_an_isolated_cell_after_an_in_process_one_survives_numba_parallel_kernels(tmp_path):
    """ova's numba parallel kernels used in this process, then a forked cell: with GNU
    OpenMP as numba's layer the child was terminated ("fork() called from a process already
    using GNU OpenMP"). Run in a fresh interpreter so the layer choice is not the suite's."""
    import subprocess
    import sys

    script = f"""
from xcbench.api import run_plan
from xcbench.run.runner import RunOptions
out = {str(tmp_path)!r}
first = run_plan(["ova"], ["synthetic-small"], out=out + "/a", progress=None,
                 options=RunOptions(isolate=False, latency_calls=5))
second = run_plan(["ova"], ["synthetic-small"], out=out + "/b", progress=None,
                  options=RunOptions(latency_calls=5))
print(first[0]["status"], second[0]["status"], second[0].get("error"))
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_THREADING_LAYER")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[:2] == ["ok", "ok"], done.stdout + done.stderr[-2000:]
