"""A cell's processes (issue 61 items 5 and 10): a subprocess a method starts does not
outlive the cell's timeout, and Ctrl-C / SIGTERM landing while a cell's child is forked
stops the run with the interrupted exit code."""
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fault_plugins import register
from xcbench.cli.exit_codes import EXIT_INTERRUPTED

ROOT = Path(__file__).resolve().parent.parent


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_subprocess_a_method_starts_does_not_survive_the_cells_timeout(tmp_path,
                                                                         fresh_plugins):
    from xcbench.run.runner import RunOptions, run_plan

    register()
    pid_file = tmp_path / "pid"
    [record] = run_plan(["spawner"], ["synthetic-small"], out=tmp_path / "out",
                        param_overrides={"spawner": {"pid_file": [str(pid_file)]}},
                        options=RunOptions(latency_calls=5, timeout=4.0), progress=False)
    assert record["status"] == "timeout"
    _assert_gone(int(pid_file.read_text()))


def _assert_gone(pid: int) -> None:
    deadline = time.time() + 10
    while _alive(pid) and time.time() < deadline:
        time.sleep(0.1)
    alive = _alive(pid)
    if alive:
        os.kill(pid, signal.SIGKILL)  # leave nothing behind, then fail
    assert not alive, "the method's subprocess outlived the cell"


def test_in_a_fresh_interpreter_too_a_methods_subprocess_dies_with_the_timeout(tmp_path):
    from fault_plugins import spawn_and_sleep
    from xcbench.run.fresh_interpreter import run_in_interpreter

    pid_file = tmp_path / "pid"
    status, _ = run_in_interpreter(spawn_and_sleep, (str(pid_file),), timeout=8.0)
    assert status == "timeout"
    _assert_gone(int(pid_file.read_text()))


FORK_HOOK = textwrap.dedent("""
    import os, signal, sys, time
    from xcbench.run.isolation import run_in_child
    from xcbench.run.runner import sigterm_as_interrupt

    # the signal lands exactly while os.fork runs its hooks in the parent
    os.register_at_fork(after_in_parent=lambda: os.kill(os.getpid(), signal.{sig}))
    t0 = time.perf_counter()
    try:
        with sigterm_as_interrupt():
            run_in_child(time.sleep, (20,), timeout=60)
    except KeyboardInterrupt:
        print(f"interrupted after {{time.perf_counter() - t0:.1f}} s")
        sys.exit(130)
    print(f"ran to the end: {{time.perf_counter() - t0:.1f}} s")
    sys.exit(0)
""")


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_signal_landing_in_the_fork_is_not_lost(sig):
    done = subprocess.run([sys.executable, "-c", FORK_HOOK.format(sig=sig)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, (done.stdout, done.stderr[-2000:])
    assert "Exception ignored" not in done.stderr
    seconds = float(done.stdout.split("interrupted after ")[1].split()[0])
    assert seconds < 10  # stopped at once, not after the 20 s cell


def test_sigterm_at_random_small_delays_after_a_cell_starts_always_stops_the_run(tmp_path):
    """Each try starts a run of quick cells, waits for its first record (the next cell's
    child is forked right after), then sends SIGTERM 0-40 ms later; every try must exit 130
    without running the remaining cells. Bounded: at most 6 tries or 120 s."""
    rng = random.Random(61)
    cmd = [sys.executable, "-m", "xcbench.cli", "run", "--methods", "softmax",
           "--dataset", "synthetic-small", "--seeds", ",".join(map(str, range(40))),
           "--latency-calls", "5", "--no-report", "--quiet"]
    deadline, tries = time.time() + 120, 0
    while tries < 6 and time.time() < deadline:
        out = tmp_path / f"try{tries}"
        proc = subprocess.Popen([*cmd, "--out", str(out)], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
        results = out / "results.jsonl"
        while proc.poll() is None and not (results.exists() and results.stat().st_size):
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.04))
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        stored = results.read_text().count("\n")
        assert code == EXIT_INTERRUPTED, (tries, code, proc.stderr.read().decode()[-2000:])
        assert stored < 40, f"try {tries}: the run went on to the end"
        tries += 1
    assert tries >= 3  # enough tries ran within the bound to mean something
