"""Run each conformance check of ``xcbench check`` in its own process, as ``xcbench run``
runs a cell (``xcbench.run.isolation.run_in_child``): with a timeout and a memory cap.

Whatever the method does (crash, ``os._exit``, ``sys.exit``, hang, allocate without end) is
that check's FAIL with its reason; the other checks still run. Each check's process leads its
own process group, and the group is killed once the check ends, so programs the method
started do not outlive their check.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ..contract.method import check_X
from ..run.isolation import run_in_child
from ..testing import check_outcome


def _run_as_group_leader(pid_box, check):
    """In the check's process: lead a new process group (its id put in ``pid_box``), then
    run the check; a MemoryError propagates so the cap's message says what happened."""
    os.setpgid(0, 0)
    pid_box.value = os.getpid()
    return check_outcome(check, passthrough=(MemoryError,))


def kill_process_group(pgid: int) -> None:
    """SIGKILL every process left in group ``pgid`` (none left is fine)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def load_compiled_input_checks(X) -> None:
    """Load the compiled code of xcbench's own input checks (``check_X`` on dense and CSR,
    float64 and float32 copies of ``X``) in this process, so that each check's process
    inherits it instead of loading it again (about 1 s per check)."""
    for dense in (np.asarray(X, dtype=np.float64), np.asarray(X, dtype=np.float32)):
        check_X(dense)
        check_X(sp.csr_matrix(dense))


def isolated_runner(timeout: float, memory_limit: int | None
                    ) -> Callable[[str, Callable], tuple[str, str | None]]:
    """A ``run_one`` for ``xcbench.testing.run_checks`` that runs each check in a forked
    process stopped after ``timeout`` seconds or ``memory_limit`` bytes; a process that
    exits, dies, times out or runs out of memory is the check's ("fail", reason)."""

    def run_one(name, check):
        pid_box = mp.get_context("fork").Value("i", 0, lock=False)
        try:
            status, payload = run_in_child(_run_as_group_leader, (pid_box, check), timeout,
                                           memory_limit)
        finally:
            if pid_box.value:
                kill_process_group(pid_box.value)
        if status == "ok":
            return payload
        reason = payload.splitlines()[0] if payload else "no reason given"
        return "fail", f"{status} in the check's own process: {reason}"

    return run_one
