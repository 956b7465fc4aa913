"""Run one function in a forked child process with a timeout and a memory cap.

The child dies with its parent (``PR_SET_PDEATHSIG``), caps its data segment so an
allocation over the limit raises MemoryError, and the parent kills it if its resident memory
still grows past the limit: an overrun becomes an ``error`` status, never a kernel OOM kill
of the whole run. The child leads its own process group, and the parent kills the whole
group when the cell ends (timeout, memory, done or interrupted), so a subprocess a method
started does not outlive its cell. Ctrl-C and SIGTERM are held back while the child is
forked and delivered right after, so a signal landing in the fork is not lost.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
import traceback

from .memory import cap_data_memory, format_gb, rss

#: seconds between the parent's checks of the child (result, timeout, memory)
POLL_SECONDS = 0.2

#: the signals that stop a run; held back while a cell's child is forked
STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def error_text(exc: BaseException) -> str:
    """A failure as stored in a record: type, message (with a hint when a method wrote into
    its read-only inputs), then the traceback."""
    from .inputs import WRITE_HINT, is_input_write

    hint = f" ({WRITE_HINT})" if is_input_write(exc) else ""
    return f"{type(exc).__name__}: {exc}{hint}\n{traceback.format_exc()}"


def memory_error_text(exc: BaseException, limit: int) -> str:
    """The error of a cell that ran out of its memory cap."""
    return (f"exceeded the memory limit of {format_gb(limit)} ({type(exc).__name__}: {exc}); "
            "run a smaller problem, use the method's hashing/size parameters, or raise "
            f"--memory-limit\n{traceback.format_exc()}")


def over_limits(pid: int, elapsed: float, timeout: float, memory_limit: int | None,
                baseline: int) -> tuple[str, str] | None:
    """(status, error) when a cell's process running for ``elapsed`` s has passed its timeout
    or its resident memory is over ``baseline + memory_limit``; None while within both."""
    if elapsed >= timeout:
        cpu = process_cpu_seconds(pid)
        spent = f" after {cpu:.0f} s of CPU" if cpu is not None else ""
        return "timeout", f"exceeded the timeout of {timeout:g} s{spent}"
    used = rss(pid) if memory_limit else None
    if used is not None and used > baseline + memory_limit:
        return "error", (f"exceeded the memory limit of {format_gb(memory_limit)} "
                         f"(resident memory {format_gb(used)}, stopped); run a smaller "
                         "problem, use the method's hashing/size parameters, or raise "
                         "--memory-limit")
    return None


def process_cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system, all threads) process ``pid`` has used, from
    /proc/PID/stat; None where that cannot be read. A timeout's message quotes it, so that a
    cell cut short on a loaded machine says how much work it got."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def parent_death_signal(sig: int) -> bool:
    """Ask Linux to send ``sig`` to this process when its parent dies (``PR_SET_PDEATHSIG``);
    False where that is not available."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(1, int(sig), 0, 0, 0) == 0  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False


def _child(conn, parent_pid, memory_limit, fn, args):
    parent_death_signal(signal.SIGKILL)
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it kills us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # blocked across the fork
    _lead_own_group(0)
    try:
        if memory_limit:
            cap_data_memory(memory_limit)
        conn.send(("ok", fn(*args)))
    except MemoryError as exc:
        conn.send(("error", memory_error_text(exc, memory_limit) if memory_limit
                   else error_text(exc)))
    except BaseException as exc:  # report every failure, including SystemExit
        conn.send(("error", error_text(exc)))
    finally:
        conn.close()


def run_in_child(fn, args, timeout: float, memory_limit: int | None = None, on_wait=None):
    """Run ``fn(*args)`` in a forked child; return (status, result or error text) with
    status ``ok``, ``error`` or ``timeout``.

    ``memory_limit`` (bytes beyond what the process holds at the fork) caps the child;
    ``on_wait(seconds)`` is called about once a second while the child works."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    baseline = rss() or 0
    proc = ctx.Process(target=_child, args=(child, os.getpid(), memory_limit, fn, args),
                       daemon=True)
    try:
        # a Ctrl-C or SIGTERM landing while os.fork runs its hooks would be swallowed
        # ("Exception ignored in ... _releaseLock"); blocked, it is delivered just after
        held = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            proc.start()
        finally:
            child.close()
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        _lead_own_group(proc.pid)  # also here: the group exists before it may be killed
        start, last_report = time.perf_counter(), 0.0
        while not parent.poll(POLL_SECONDS):  # EOF (a dead child) also ends the wait
            elapsed = time.perf_counter() - start
            breach = over_limits(proc.pid, elapsed, timeout, memory_limit, baseline)
            if breach is not None:
                return breach
            if on_wait is not None and elapsed - last_report >= 1.0:
                last_report = elapsed
                on_wait(elapsed)
        try:
            status, payload = parent.recv()
        except EOFError:
            proc.join()
            return "error", death_text(proc.exitcode, memory_limit)
        proc.join()
        return status, payload
    finally:
        if proc.pid is not None:
            kill_group(proc.pid)  # the child and any process it started
        if proc.is_alive():
            proc.kill()
            proc.join()
        parent.close()


def _lead_own_group(pid: int) -> None:
    """Make process ``pid`` (0: this one) the leader of its own process group; called by
    both the child and the parent, whichever runs first (no-op where it fails)."""
    try:
        os.setpgid(pid, 0)
    except OSError:  # the child is gone already, or leads its group already
        pass


def kill_group(pgid: int) -> None:
    """SIGKILL every process of the group ``pgid`` (no-op when it has none left)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass


def death_text(exitcode, memory_limit) -> str:
    """Why a cell's process died, from its exit code: SIGKILL is what the kernel's
    out-of-memory killer sends; any other signal is named, not blamed on memory (it came
    from a user, a job scheduler or a library in the run that stopped its own process)."""
    text = f"the run's process died (exit code {exitcode})"
    if exitcode is None or exitcode >= 0:
        return text
    try:
        name = signal.Signals(-exitcode).name
    except ValueError:
        name = f"signal {-exitcode}"
    if -exitcode == signal.SIGKILL:
        limit = f" (limit {format_gb(memory_limit)})" if memory_limit else ""
        return text + f"; killed by {name}, possibly out of memory{limit}"
    return text + (f"; killed by {name} (not the out-of-memory killer's signal: a user, a "
                   "job scheduler or a library in the run stopped it; its stderr may say why)")
