"""The Dask executor on a 2-worker loopback LocalCluster: the same records as the local
executor, a worker killed mid-cell becomes that cell's error record, and resume works across
executors. Skipped when dask.distributed is not installed."""
import os
import signal
import socket
import sys
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import cloudpickle  # noqa: E402 - a dependency of distributed

import xcbench  # noqa: E402
from xcbench.run.dask_executor import local_cluster  # noqa: E402
from xcbench.contract.plugins import register_plugin  # noqa: E402
from xcbench.store.results import ResultStore  # noqa: E402
from xcbench.run.runner import RunOptions, execute_plan  # noqa: E402

# the worker processes do not import this test module: send its classes by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])

FAST = RunOptions(latency_calls=5, latency_warmup=1, throughput_repeats=1, timeout=60)


class Prior(xcbench.Method):
    """Predicts the most frequent training classes (fast)."""

    def fit(self, X, y, n_classes=None):
        self.n_classes_ = n_classes or int(np.max(y)) + 1
        counts = np.bincount(y, minlength=self.n_classes_) + 1.0
        self.log_prior_ = np.log(counts / counts.sum())
        self.order_ = np.argsort(-self.log_prior_, kind="stable")
        return self

    def predict_topk(self, X, k=1):
        labels = np.tile(self.order_[:k], (X.shape[0], 1))
        return labels, self.log_prior_[labels]

    def log_proba(self, X, y):
        return self.log_prior_[np.asarray(y)]

    def stats(self):
        return {"n_params": self.n_classes_}


class KillsItsWorker(Prior):
    """With ``kill``, kills the process that runs the cell (the Dask worker: the cell runs
    in its forked child) after 3 s; without, a Prior."""

    def __init__(self, kill=True):
        self.kill = kill

    def fit(self, X, y, n_classes=None):
        if self.kill:
            time.sleep(3)  # the cells beside it finish first
            os.kill(os.getppid(), signal.SIGKILL)
            time.sleep(30)
        return super().fit(X, y, n_classes)


class TestMethods:
    @xcbench.hookimpl
    def register_methods(self, register):
        register(xcbench.MethodSpec("prior", "flat", "class prior (test)", Prior))
        register(xcbench.MethodSpec("kills-worker", "flat", "kills its worker (test)",
                                    KillsItsWorker))


class RegisterTestMethods(distributed.WorkerPlugin):
    """Registers the test methods on every worker, restarted ones included."""

    def setup(self, worker):
        from xcbench.contract.plugins import get_plugin_manager

        if get_plugin_manager().get_plugin("test-dask") is None:
            register_plugin(TestMethods(), name="test-dask")


@pytest.fixture(scope="module")
def scheduler():
    with local_cluster(2) as cluster, distributed.Client(cluster) as client:
        client.register_plugin(RegisterTestMethods())
        yield cluster.scheduler_address


@pytest.fixture
def test_methods(fresh_plugins):
    register_plugin(TestMethods(), name="test-dask")


def _by_key(records):
    return {r["key"]: r for r in records}


def test_dask_records_equal_the_local_ones(tmp_path, scheduler, test_methods):
    plan = (["softmax", "prior"], ["synthetic-small"], [0, 1])
    overrides = {"softmax": {"max_iter": [20]}}
    local = execute_plan(*plan, out=tmp_path / "local", param_overrides=overrides,
                         options=FAST, progress=False).records
    dask = execute_plan(*plan, out=tmp_path / "dask", param_overrides=overrides,
                        options=FAST, progress=False, executor="dask",
                        scheduler=scheduler).records
    assert len(local) == len(dask) == 4
    local, dask = _by_key(local), _by_key(dask)
    assert local.keys() == dask.keys()
    for key, record in dask.items():
        assert record["status"] == local[key]["status"] == "ok"
        assert record["metrics"] == local[key]["metrics"]
        assert record["stats"] == local[key]["stats"]
        assert record["environment"]["executor"] == "dask"
        assert record["environment"]["host"] == local[key]["environment"]["host"]
        assert (tmp_path / "dask" / record["raw"]).is_file()  # written on the client


def test_a_killed_worker_is_its_cells_error_and_the_rest_go_on(tmp_path, scheduler,
                                                               test_methods):
    outcome = execute_plan(["prior", "kills-worker"], ["synthetic-small"], [0],
                           out=tmp_path, options=FAST, progress=False, executor="dask",
                           scheduler=scheduler,
                           param_overrides={"kills-worker": {"kill": [True, False]}})
    status = {(r["method"], r["params"].get("kill"), r["seed"]): r["status"]
              for r in outcome.records}
    assert status == {("kills-worker", True, 0): "error", ("kills-worker", False, 0): "ok",
                      ("prior", None, 0): "ok"}
    killed = next(r for r in outcome.records if r["status"] == "error")
    assert "worker running this cell died" in killed["error"]
    # named by the cells measured on the same machine before, and the dead worker's address
    ok = next(r for r in outcome.records if r["status"] == "ok")
    assert killed["environment"]["host"] == ok["environment"]["host"] == socket.gethostname()
    assert killed["environment"]["worker"].startswith("tcp://127.0.0.1:")
    assert len(ResultStore(tmp_path).records()) == 3


def test_resume_runs_exactly_the_missing_cells_across_executors(tmp_path, scheduler,
                                                                test_methods):
    first = execute_plan(["prior"], ["synthetic-small"], [0, 1], out=tmp_path, options=FAST,
                         progress=False, executor="dask", scheduler=scheduler)
    assert [r["status"] for r in first.records] == ["ok", "ok"]
    local = execute_plan(["prior"], ["synthetic-small"], [0, 1, 2], out=tmp_path,
                         options=FAST, progress=False, resume=True)
    assert [r["seed"] for r in local.records] == [2] and len(local.reused) == 2
    dask = execute_plan(["prior"], ["synthetic-small"], [0, 1, 2, 3], out=tmp_path,
                        options=FAST, progress=False, resume=True, executor="dask",
                        scheduler=scheduler)
    assert [r["seed"] for r in dask.records] == [3] and len(dask.reused) == 3
    assert len(ResultStore(tmp_path).records()) == 4


def test_a_dataset_or_version_mismatch_on_the_worker_is_an_error(scheduler):
    from xcbench.run.cell_job import CellJob, cached_dataset
    from xcbench.run.dask_executor import _run_on_worker
    from xcbench.run.plan import Cell

    cell = Cell("softmax", (), "synthetic-small", 0)
    checksum = cached_dataset("synthetic-small", None).checksum
    other_data = CellJob(cell, None, "not-the-checksum", FAST, None)
    other_version = CellJob(cell, None, checksum, FAST, None, client_version="0.0-other")
    with distributed.Client(scheduler) as client:
        data, version = client.gather([client.submit(_run_on_worker, job, name, pure=False)
                                       for name, job in [("data", other_data),
                                                         ("version", other_version)]])
    assert data.status == version.status == "error"
    assert "not-the-checksum" in data.payload and checksum in data.payload
    assert "0.0-other" in version.payload and xcbench.__version__ in version.payload
