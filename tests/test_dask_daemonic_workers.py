"""Cells on Dask workers started as clusters start them: a separate ``dask scheduler`` and
plain ``dask worker`` processes (daemonic, under a nanny), none of them configured for
xcbench. Each cell runs isolated in a fresh interpreter there, with the same records."""
import os
import socket
import subprocess
import sys
import time

import pytest

distributed = pytest.importorskip("distributed")

from xcbench.run.runner import RunOptions, execute_plan  # noqa: E402

pytestmark = pytest.mark.slow

FAST = RunOptions(latency_calls=5, latency_warmup=1, throughput_repeats=1, timeout=120)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dask_command(*args) -> list[str]:
    """``dask ARGS`` as this interpreter runs it (the environment xcbench is installed in)."""
    return [sys.executable, "-m", "dask", *args]


@pytest.fixture(scope="module")
def plain_cluster(tmp_path_factory):
    """`dask scheduler` and two `dask worker` processes with their defaults (nanny,
    daemonic workers), in an environment without xcbench's Dask settings."""
    address = f"tcp://127.0.0.1:{_free_port()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DASK_")}
    logs = tmp_path_factory.mktemp("dask-logs")
    procs = [subprocess.Popen(_dask_command("scheduler", "--host", "127.0.0.1", "--port",
                                            address.rsplit(":", 1)[1],
                                            "--no-dashboard"),
                              env=env, stdout=subprocess.DEVNULL,
                              stderr=open(logs / "scheduler.log", "w"))]
    try:
        for i in range(2):
            procs.append(subprocess.Popen(
                _dask_command("worker", address, "--nthreads", "1", "--no-dashboard",
                              "--local-directory", str(logs / f"w{i}")),
                env=env, stdout=subprocess.DEVNULL, stderr=open(logs / f"worker{i}.log", "w")))
        with distributed.Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
            daemonic = client.run(lambda: __import__("multiprocessing").current_process().daemon)
        assert list(daemonic.values()) == [True, True]  # what the cells must cope with
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_every_cell_is_ok_on_plain_daemonic_workers(tmp_path, plain_cluster):
    outcome = execute_plan(["ova", "softmax"], ["synthetic-small"], [0, 1], out=tmp_path,
                           options=FAST, progress=False, executor="dask",
                           scheduler=plain_cluster,
                           param_overrides={"ova": {"max_iter": [20]},
                                            "softmax": {"max_iter": [20]}})
    assert len(outcome.records) == 4
    assert [r["status"] for r in outcome.records] == ["ok"] * 4, \
        [r["error"] for r in outcome.records]
    for record in outcome.records:
        assert record["environment"]["worker"].startswith("tcp://127.0.0.1:")
        assert record["memory"]["fit_peak_rss_bytes"] > 0
        assert record["metrics"]["top1_error"] < 0.9


def test_a_cell_over_its_timeout_on_a_daemonic_worker_is_a_timeout(tmp_path, plain_cluster):
    slow = RunOptions(latency_calls=5, latency_warmup=1, throughput_repeats=1, timeout=0.5)
    start = time.perf_counter()
    outcome = execute_plan(["softmax"], ["synthetic-small"], [0], out=tmp_path, options=slow,
                           progress=False, executor="dask", scheduler=plain_cluster,
                           param_overrides={"softmax": {"max_iter": [100000], "tol": [0]}})
    assert [r["status"] for r in outcome.records] == ["timeout"]
    assert time.perf_counter() - start < 120
