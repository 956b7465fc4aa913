"""The progress output of a run on a fake clock: plain lines when not a terminal, the time
left from finished cells (see also test_cell_costs.py), and the progress a fit reports."""
import io
import time

import numpy as np

import xcbench
from xcbench.fit_progress import progress_listener, report_progress
from xcbench.contract.plugins import register_plugin
from xcbench.run.cell_job import CellJob, cached_dataset
from xcbench.run.executors import LocalExecutor
from xcbench.run.options import RunOptions
from xcbench.run.plan import Cell
from xcbench.run.progress import RunProgress


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _plain(methods, clock):
    err, out = io.StringIO(), io.StringIO()
    bar = RunProgress(len(methods), methods=methods, stream=err, out=out, terminal=False,
                      clock=clock)
    return bar, err, out


def test_plain_lines_on_a_fake_clock():
    clock = FakeClock()
    bar, err, out = _plain(["ova", "ova", "softmax", "softmax"], clock)
    bar.cell_status("ova 1", "ova", "fitting", 3.0)  # the first status shows at once
    clock.now = 10.0
    bar.cell_status("ova 1", "ova", "fitting", 13.0)  # within 30 s of the last line: quiet
    clock.now = 31.0
    bar.cell_status("ova 1", "ova", "measuring", 34.0, "")
    bar.finished("ova 1", "ova", 40.0, ["ova C=1 on d seed 0: top-1 error 10.0%"])
    clock.now = 41.0
    bar.cell_status("ova 2", "ova", "fitting", 10.0, "pass 2/5")
    clock.now = 80.0
    bar.cell_status("ova 2", "ova", "fitting", 39.0, "pass 4/5")
    bar.finished("ova 2", "ova", 44.0, ["ova C=2 on d seed 0: top-1 error 9.00%"])
    bar.finished("softmax 1", "softmax", 20.0, ["softmax on d seed 0: top-1 error 8.00%"])
    bar.close()
    assert err.getvalue().splitlines() == [
        "xcbench run: 0/4 done; ova 1: fitting 3 s, ETA estimating",
        "xcbench run: 0/4 done; ova 1: measuring 34 s, ETA estimating",
        # ova's 40 s is the only time known: a rough guess for softmax's cells too (~)
        "xcbench run: 1/4 done, ETA ~2m00s",
        # ova 2 has 1 s left of ova's 40 s, but at least a tenth of them; 2 x 40 s softmax
        "xcbench run: 1/4 done; ova 2: fitting 39 s (pass 4/5), ETA ~1m24s",
        "xcbench run: 2/4 done, ETA ~1m24s",  # 2 softmax cells at ova's mean of 42 s
        "xcbench run: 3/4 done, ETA 20s",  # one softmax cell left, at softmax's 20 s
    ]
    assert out.getvalue().splitlines()[0] == "ova C=1 on d seed 0: top-1 error 10.0%"
    assert "\r" not in err.getvalue() + out.getvalue()


def test_eta_counts_the_cells_not_yet_planned_and_what_running_ones_have_left():
    clock = FakeClock()
    bar, err, _ = _plain(["a", "a", "a", "b"], clock)
    bar.finished("a1", "a", 10.0)
    bar.finished("b1", "b", 100.0)
    assert bar.eta() == "ETA 20s"  # two a cells left, not only the next one planned
    bar.cell_status("a2", "a", "fitting", 4.0)
    assert bar.eta() == "ETA 16s"  # 6 s left of a2, 10 s of a3


def test_skipped_cells_leave_the_estimate():
    bar, _, _ = _plain(["a", "b"], FakeClock())
    bar.skipped("b")
    bar.finished("a1", "a", 5.0)
    assert bar.eta() == "ETA 0s"


def test_on_a_terminal_the_bar_shows_the_time_left_then_the_fit_progress(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    stream = io.StringIO()
    bar = RunProgress(2, methods=["st", "st"], stream=stream, terminal=True)
    bar.cell_status("st on d seed 0", "st", "fitting", 42.0, "pass 3/10")
    bar.close()
    assert "ETA estimating; st on d seed 0: fitting 42 s (pass 3/10)" in stream.getvalue()


def test_nobody_listening_is_a_no_op_and_a_listener_hears_each_step():
    report_progress(1, 3, "pass")  # no listener: nothing happens
    heard = []
    with progress_listener(lambda *a: heard.append(a)):
        xcbench.Method.report_progress(1, 3, "pass")
        with progress_listener(None):
            report_progress(2, 3, "pass")
        report_progress(3, 3, "pass")
    report_progress(4, 3, "pass")
    assert heard == [(1, 3, "pass"), (3, 3, "pass")]


class PassesPrior(xcbench.Method):
    """A fit of three 1.2 s passes that reports each."""

    def fit(self, X, y, n_classes=None):
        for p in range(3):
            time.sleep(1.2)
            self.report_progress(p + 1, 3, "pass")
        self.order_ = np.argsort(-np.bincount(y, minlength=n_classes), kind="stable")
        return self

    def predict_topk(self, X, k=1):
        return np.tile(self.order_[:k], (X.shape[0], 1)), np.zeros((X.shape[0], k))

    def stats(self):
        return {"n_params": len(self.order_)}


class PassesPlugin:
    @xcbench.hookimpl
    def register_methods(self, register):
        register(xcbench.MethodSpec("passes-prior", "flat", "reports passes (test)",
                                    PassesPrior))


def test_a_forked_cell_reports_its_fit_progress(fresh_plugins):
    register_plugin(PassesPlugin(), name="test-passes")
    options = RunOptions(latency_calls=2, latency_warmup=0, throughput_repeats=1, timeout=60)
    dataset = cached_dataset("synthetic-small", None)
    job = CellJob(Cell("passes-prior", (), "synthetic-small", 0), None, dataset.checksum,
                  options, None)
    seen = []
    [(_, outcome)] = LocalExecutor().run(
        [job], lambda j, phase, s, progress: seen.append((phase, progress)))
    assert outcome.status == "ok", outcome.payload
    fitting = [p for phase, p in seen if phase == "fitting"]
    assert {"pass 1/3", "pass 2/3"} <= set(fitting)
    assert all(p == "" for phase, p in seen if phase == "measuring")
