"""Progress: the time-left estimate (a pure function) and the phases a running cell reports."""
import time

import numpy as np
import pytest

import xcbench
from xcbench.run.cell_job import CellJob, cached_dataset
from xcbench.run.executors import LocalExecutor
from xcbench.run.isolation import run_in_child
from xcbench.run.plan import Cell
from xcbench.contract.plugins import register_plugin
from xcbench.run.cell_costs import CellCosts, Guess, time_left
from xcbench.run.progress import PhaseBoard, format_eta, phase_board, report_phase
from xcbench.run.runner import RunOptions, execute_plan


def test_time_left_is_estimating_until_something_is_known():
    costs = CellCosts()
    assert time_left(costs, [("ova", "d"), ("st", "d")]) is None
    assert format_eta(None) == "ETA estimating"
    assert time_left(costs, []) == Guess(0.0)
    assert time_left(costs, [], running=[("st", "d", 5.0)]) is None


def test_time_left_uses_each_methods_mean_and_what_running_cells_have_left():
    costs = CellCosts()
    for method, seconds in [("ova", 10.0), ("ova", 30.0), ("st", 2.0)]:
        costs.finished(method, "d", seconds)
    assert time_left(costs, [("ova", "d"), ("st", "d"), ("st", "d")]).seconds == \
        pytest.approx(24.0)
    assert time_left(costs, [("ova", "d")] * 2, parallel=2).seconds == pytest.approx(20.0)
    # a running ova cell 15 s in has 5 s left
    assert time_left(costs, [("st", "d")], running=[("ova", "d", 15.0)]).seconds == \
        pytest.approx(7.0)
    # one past its mean still needs a tenth of its time so far: never "ETA 0s" while it runs
    assert time_left(costs, [], running=[("ova", "d", 50.0)]).seconds == pytest.approx(5.0)
    # with two workers the time left is never below what the running cell needs
    assert time_left(costs, [("st", "d")], running=[("ova", "d", 5.0)], parallel=2).seconds \
        == pytest.approx(15.0)
    with pytest.raises(ValueError, match="parallel"):
        time_left(costs, [("ova", "d")], parallel=0)


@pytest.mark.parametrize("seconds, text", [(0, "ETA 0s"), (0.3, "ETA <1s"), (42.4, "ETA 42s"),
                                           (185, "ETA 3m05s"), (3720, "ETA 1h02m"),
                                           (Guess(185, rough=True), "ETA ~3m05s")])
def test_eta_format(seconds, text):
    assert format_eta(seconds) == text


def test_a_forked_child_reports_its_phase_to_the_parent():
    board = phase_board()
    board.set("")
    seen = []

    def work():
        report_phase("fitting")
        time.sleep(1.3)
        report_phase("measuring")
        time.sleep(1.3)

    status, _ = run_in_child(work, (), timeout=30, on_wait=lambda s: seen.append(board.read()))
    assert status == "ok"
    assert seen[0] == "fitting" and seen[-1] == "measuring"
    with pytest.raises(ValueError, match="unknown phase"):
        PhaseBoard().set("dancing")


class SlowPrior(xcbench.Method):
    """Fits in 1.2 s and predicts in 0.3 s per call (so each phase lasts over a second)."""

    def fit(self, X, y, n_classes=None):
        time.sleep(1.2)
        self.order_ = np.argsort(-np.bincount(y, minlength=n_classes), kind="stable")
        return self

    def predict_topk(self, X, k=1):
        time.sleep(0.3)
        return np.tile(self.order_[:k], (X.shape[0], 1)), np.zeros((X.shape[0], k))

    def stats(self):
        return {"n_params": len(self.order_)}


class SlowPlugin:
    @xcbench.hookimpl
    def register_methods(self, register):
        register(xcbench.MethodSpec("slow-prior", "flat", "slow prior (test)", SlowPrior))


def test_a_cell_reports_loading_fitting_measuring_in_order(fresh_plugins):
    register_plugin(SlowPlugin(), name="test-slow")
    options = RunOptions(latency_calls=2, latency_warmup=0, throughput_repeats=1, timeout=60)
    dataset = cached_dataset("synthetic-small", None)
    job = CellJob(Cell("slow-prior", (), "synthetic-small", 0), None, dataset.checksum,
                  options, None)
    phases = []
    [(_, outcome)] = LocalExecutor().run([job], lambda j, phase, s, p: phases.append(phase))
    assert outcome.status == "ok", outcome.payload
    assert list(dict.fromkeys(phases)) == ["loading", "fitting", "measuring"]


def test_piped_progress_is_plain_lines_with_the_eta_of_the_same_method(tmp_path,
                                                                        fresh_plugins, capsys):
    register_plugin(SlowPlugin(), name="test-slow")
    options = RunOptions(latency_calls=2, latency_warmup=0, throughput_repeats=1, timeout=60)
    outcome = execute_plan(["slow-prior"], ["synthetic-small"], [0, 1], out=tmp_path,
                           options=options)
    assert [r["status"] for r in outcome.records] == ["ok", "ok"]
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert "\r" not in captured.err and all(line == line.rstrip() for line in err)
    assert err[0] == "xcbench run: 0/2 done; data: loading synthetic-small, ETA estimating"
    assert err[1].startswith("xcbench run: 1/2 done, ETA ") and "estimating" not in err[1]
    assert err[2] == "xcbench run: 2/2 done, ETA 0s"
    assert captured.out.count("slow-prior ") == 2  # one result line per cell, on stdout
