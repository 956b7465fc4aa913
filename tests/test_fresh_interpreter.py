"""A cell isolated in a fresh interpreter (what a daemonic process may start): the same
outcomes, timeout, memory cap and progress reports as a forked child."""
import multiprocessing as mp
import os
import time

import numpy as np

from xcbench.fit_progress import progress_listener, report_progress
from xcbench.run.fresh_interpreter import run_in_interpreter
from xcbench.run.progress import phase_board, report_phase


def add(a, b):
    return a + b


def fail():
    raise ValueError("bad value in the child")


def sleep(seconds):
    time.sleep(seconds)


def allocate(megabytes):
    block = np.ones(megabytes * 2 ** 20 // 8)
    return float(block.sum())


def die():
    os._exit(3)


def work():
    report_phase("fitting")
    with progress_listener(phase_board().set_progress):  # as measure_cell listens to a fit
        for step in (1, 2):
            report_progress(step, 2, "epoch")
            time.sleep(1.3)
    report_phase("measuring")
    time.sleep(1.3)
    return os.getpid()


def test_results_and_errors_come_back():
    assert run_in_interpreter(add, (2, 3), timeout=60) == ("ok", 5)
    status, text = run_in_interpreter(fail, (), timeout=60)
    assert status == "error" and text.startswith("ValueError: bad value in the child")
    assert "Traceback" in text
    assert run_in_interpreter(die, (), timeout=60) == \
        ("error", "the run's process died (exit code 3)")


def test_timeout_and_memory_cap_hold():
    start = time.perf_counter()
    status, text = run_in_interpreter(sleep, (30,), timeout=1.0)
    assert status == "timeout" and text.startswith("exceeded the timeout of 1 s after ")
    assert time.perf_counter() - start < 20
    status, text = run_in_interpreter(allocate, (1500,), timeout=60,
                                      memory_limit=300 * 2 ** 20)
    assert status == "error" and "exceeded the memory limit of 0.315 GB" in text


def spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_a_timeout_says_how_much_cpu_the_cell_got():
    """On a loaded machine a cell can time out having had little CPU: the message says."""
    status, text = run_in_interpreter(spin, (30,), timeout=3.0)
    assert status == "timeout"
    cpu = float(text.split(" after ")[1].split(" s of CPU")[0])
    assert 0.5 <= cpu <= 8, text  # the interpreter's start (imports) counts too


def test_phase_and_progress_reach_the_parent():
    board, seen = phase_board(), []
    board.set("")
    status, pid = run_in_interpreter(
        work, (), timeout=60, on_wait=lambda s: seen.append((board.read(),
                                                             board.progress_text())))
    assert status == "ok" and pid != os.getpid()
    assert {("fitting", "epoch 1/2"), ("fitting", "epoch 2/2")} & set(seen), seen
    assert seen[-1] == ("measuring", "")


def _in_a_daemon(queue):
    try:
        mp.get_context("fork").Process(target=add, args=(1, 1)).start()
        forked = "forked"
    except AssertionError as exc:
        forked = str(exc)
    queue.put((forked, run_in_interpreter(add, (1, 1), timeout=60)))


def test_a_daemonic_process_cannot_fork_a_child_but_can_start_an_interpreter():
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_in_a_daemon, args=(queue,), daemon=True)
    proc.start()
    forked, result = queue.get(timeout=120)
    proc.join(timeout=30)
    assert "daemonic processes are not allowed to have children" in forked
    assert result == ("ok", 2)
