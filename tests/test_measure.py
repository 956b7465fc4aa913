import time

import numpy as np
import pytest
import scipy.sparse as sp

from xcbench.run.measure import batch_throughput, interleaved_p50, single_example_latency, single_rows


class _Echo:
    def predict_topk(self, X, k=1):
        return np.zeros((X.shape[0], k), dtype=np.int64), np.zeros((X.shape[0], k))


def test_single_rows_cycle_through_the_rows_dense_and_csr():
    X = np.arange(6.0).reshape(3, 2)
    rows = single_rows(X, 5)
    assert [r[0, 0] for r in rows] == [0, 2, 4, 0, 2]
    assert all(r.shape == (1, 2) for r in single_rows(sp.csr_matrix(X), 4))


def test_timing_on_an_empty_test_set_names_the_problem():
    with pytest.raises(ValueError, match="0 rows"):
        single_example_latency(_Echo(), np.zeros((0, 3)), n_calls=10)
    assert single_example_latency(_Echo(), np.ones((2, 3)), n_calls=10, n_warmup=1).shape == (10,)


class _Slow(_Echo):
    def predict_topk(self, X, k=1):
        time.sleep(0.02 if X.shape[0] > 64 else 0)
        return super().predict_topk(X, k)


def test_batch_repeats_stop_once_the_time_budget_is_spent():
    X = np.ones((100, 3))
    assert len(batch_throughput(_Slow(), X, repeats=3)) == 3
    assert len(batch_throughput(_Slow(), X, repeats=3, budget_seconds=0.01)) == 1


class _Recorder(_Echo):
    def __init__(self, log, name):
        self.log, self.name = log, name

    def predict_topk(self, X, k=1):
        self.log.append((self.name, float(X[0, 0])))
        return super().predict_topk(X, k)


def test_interleaved_p50_takes_turns_and_cycles_through_the_rows():
    log = []
    models = {"a": _Recorder(log, "a"), "b": _Recorder(log, "b")}
    rows = np.arange(3.0).reshape(3, 1)
    p50 = interleaved_p50(models, {"a": rows, "b": rows}, rounds=3, calls=2, warmup=0)
    assert {key: len(v) for key, v in p50.items()} == {"a": 3, "b": 3}
    assert [name for name, _ in log] == ["a", "a", "b", "b"] * 3  # models in turn, per round
    assert [x for name, x in log if name == "a"] == [0, 1, 2, 0, 1, 2]  # round r starts at 2r
    with pytest.raises(ValueError, match="0 rows"):
        interleaved_p50(models, {"a": rows[:0], "b": rows}, rounds=1, calls=2, warmup=0)


def test_cpu_seconds_count_work_not_waiting_and_include_waited_children():
    import subprocess
    import sys

    from xcbench.run.measure import cpu_seconds

    start = cpu_seconds()
    time.sleep(0.3)  # waiting costs no CPU
    assert cpu_seconds() - start < 0.15
    start = cpu_seconds()
    subprocess.run([sys.executable, "-c", "sum(i * i for i in range(3_000_000))"], check=True)
    assert cpu_seconds() - start > 0.1  # the child's work is counted once it is waited for
