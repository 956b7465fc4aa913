"""Run one function in a fresh Python interpreter (``subprocess``) with a timeout and a memory
cap: the isolation a daemonic process may use.

A daemonic process (a Dask worker started by ``dask worker`` under its nanny, as
dask-jobqueue and Kubernetes operators start them) may not fork ``multiprocessing``
children, but it may start programs. :func:`run_in_interpreter` has the signature and the
outcomes of :func:`~xcbench.run.isolation.run_in_child`: the child gets the function and
its arguments (the dataset included) as a pickle on its stdin, caps its data segment once it
has them, reports its phase and fit progress back over a pipe, dies with its parent, and the
parent kills it on timeout or when its resident memory outgrows the limit. Only what the
child can import exists there: functions are sent by reference, and plugins registered
in-process are sent along when they pickle (installed plugins load from their entry points).
"""
from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection

from .isolation import (POLL_SECONDS, death_text, error_text, kill_group, memory_error_text,
                        over_limits)
from .memory import rss
from .progress import phase_board

#: seconds a child may take to start and read its arguments, beyond the cell's timeout
STARTUP_SECONDS = 300.0
#: seconds between the child's reports of its phase and progress
FORWARD_SECONDS = 0.3


def run_in_interpreter(fn, args, timeout: float, memory_limit: int | None = None,
                       on_wait=None):
    """Run ``fn(*args)`` in a new interpreter; return (status, result or error text) as
    ``run_in_child`` does. ``memory_limit`` counts beyond what the child holds once it has
    read its arguments; the timeout starts then too. ``on_wait(seconds)`` is called about
    once a second, with the child's phase and progress copied to this process's board."""
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", __name__, str(write_fd)],
                            stdin=subprocess.PIPE, pass_fds=(write_fd,),
                            start_new_session=True)  # Ctrl-C reaches the parent only
    os.close(write_fd)
    conn = Connection(read_fd, writable=False)
    board = phase_board()
    try:
        try:
            _send_request(proc.stdin, fn, args, memory_limit)
        except (BrokenPipeError, OSError):
            pass  # the child died early: its exit code says why, below
        return _wait(proc, conn, board, timeout, memory_limit, on_wait)
    finally:
        kill_group(proc.pid)  # its own session: the child and any process it started
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        conn.close()


def _send_request(stream, fn, args, memory_limit) -> None:
    """sys.path first (so the child can import what the request refers to), then the
    in-process plugins that pickle, then (fn, args, memory_limit)."""
    pickle.dump(list(sys.path), stream)
    pickle.dump(_picklable_plugins(), stream)
    pickle.dump((fn, args, memory_limit), stream, protocol=pickle.HIGHEST_PROTOCOL)
    stream.close()


def _picklable_plugins() -> list[tuple[str, bytes]]:
    """(name, pickle) of each plugin registered in this process that pickles and did not
    come from an entry point (those the child loads itself)."""
    from importlib import metadata

    from ..contract.plugins import ENTRY_POINT_GROUP, get_plugin_manager

    installed = {ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}
    out = []
    for name, plugin in get_plugin_manager().list_name_plugin():
        if name in installed:
            continue
        try:
            out.append((name, pickle.dumps(plugin)))
        except Exception:  # noqa: BLE001 - a plugin defined where the child cannot see it
            continue
    return out


def _wait(proc, conn, board, timeout, memory_limit, on_wait):
    start = time.perf_counter()
    started, baseline, last_report = None, 0, 0.0
    while True:
        if conn.poll(POLL_SECONDS):
            try:
                message = conn.recv()
            except EOFError:
                return "error", death_text(proc.wait(), memory_limit)
            if message[0] == "ready":
                started, baseline = time.perf_counter(), message[1] or 0
            elif message[0] == "board":
                board.set(message[1])
                board.set_progress(*message[2])
            else:
                return message[0], message[1]
        now = time.perf_counter()
        if started is None:
            if now - start > STARTUP_SECONDS + timeout:
                return "error", (f"the cell's interpreter did not start within "
                                 f"{STARTUP_SECONDS + timeout:g} s")
            continue
        elapsed = now - started
        breach = over_limits(proc.pid, elapsed, timeout, memory_limit, baseline)
        if breach is not None:
            return breach
        if on_wait is not None and elapsed - last_report >= 1.0:
            last_report = elapsed
            on_wait(elapsed)


def _forward_board(conn, board, stop) -> None:
    """Send this process's phase and progress to the parent whenever they change."""
    last = None
    while not stop.wait(FORWARD_SECONDS):
        state = (board.read(), board.progress())
        if state != last:
            conn.send(("board", *state))
            last = state


def _child(fd: int) -> None:
    """The child's side: read the request, run it, send ("ok", result) or ("error", text)."""
    from .isolation import parent_death_signal
    from .memory import cap_data_memory

    parent_death_signal(signal.SIGKILL)
    conn = Connection(fd, readable=False)
    stdin = sys.stdin.buffer
    sys.path[:] = pickle.load(stdin)
    _register_plugins(pickle.load(stdin))
    fn, args, memory_limit = pickle.load(stdin)
    if memory_limit:
        cap_data_memory(memory_limit)
    conn.send(("ready", rss()))
    board, stop = phase_board(), threading.Event()
    forwarder = threading.Thread(target=_forward_board, args=(conn, board, stop), daemon=True)
    forwarder.start()
    try:
        result = ("ok", fn(*args))
    except MemoryError as exc:
        result = ("error", memory_error_text(exc, memory_limit) if memory_limit
                  else error_text(exc))
    except BaseException as exc:  # report every failure, including SystemExit
        result = ("error", error_text(exc))
    stop.set()
    forwarder.join()
    conn.send(result)
    conn.close()


def _register_plugins(plugins: list[tuple[str, bytes]]) -> None:
    from ..contract.plugins import register_plugin

    for name, data in plugins:
        try:
            register_plugin(pickle.loads(data), name=name)
        except Exception:  # noqa: BLE001 - the cell reports a method it cannot find
            continue


if __name__ == "__main__":
    _child(int(sys.argv[1]))
