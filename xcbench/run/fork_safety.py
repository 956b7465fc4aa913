"""Keep numba's parallel kernels usable in the forked child processes xcbench runs cells in.

numba picks a threading layer at the first parallel launch, by default the first available
of tbb, omp (GNU OpenMP), workqueue. GNU OpenMP cannot be used again in a forked child of a
process that already used it: numba terminates the child ("fork() called from a process
already using GNU OpenMP") with SIGTERM. That happens when a cell runs in-process (or a user
fits ``ova``/``softmax`` directly) and a later cell runs isolated in the same Python process.
xcbench therefore asks numba to try the fork-safe layers first: tbb, then workqueue, then
omp. A layer named by the user (``NUMBA_THREADING_LAYER`` or
``NUMBA_THREADING_LAYER_PRIORITY``) is left alone.
"""
from __future__ import annotations

import os
import sys

FORK_SAFE_PRIORITY = ("tbb", "workqueue", "omp")


def prefer_fork_safe_numba_threading() -> None:
    """Put numba's fork-safe threading layers first, unless the user chose one."""
    if "NUMBA_THREADING_LAYER" in os.environ or "NUMBA_THREADING_LAYER_PRIORITY" in os.environ:
        return
    os.environ["NUMBA_THREADING_LAYER_PRIORITY"] = " ".join(FORK_SAFE_PRIORITY)
    numba = sys.modules.get("numba")
    if numba is not None:  # imported before xcbench: its config has already read the env
        numba.config.THREADING_LAYER_PRIORITY = list(FORK_SAFE_PRIORITY)
