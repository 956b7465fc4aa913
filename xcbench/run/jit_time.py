"""Time numba spends inside a timed call, so fit and prediction times can leave it out.

numba announces two events (``numba.core.event``, numba >= 0.53): ``numba:compiler_lock``
is held while a kernel is compiled *or* loaded from numba's on-disk cache, and
``numba:compile`` while it is compiled. ``jit_timed_call`` listens to both during one call
and returns the call's wall time with the part spent in the JIT (``JitTiming``).

Events nest (compiling a kernel compiles the kernels it calls) and may come from several
threads, so a clock counts the wall time during which at least one is open, once.
"""
from __future__ import annotations

import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass

from numba.core import event

#: numba's event held while a kernel is compiled or loaded from its on-disk cache
JIT_EVENT = "numba:compiler_lock"
#: numba's event held while a kernel is compiled (not while loaded from the cache)
COMPILE_EVENT = "numba:compile"


class _OpenTime(event.Listener):
    """Wall seconds during which at least one event of a kind was open (any thread), and
    the CPU seconds of the threads that had one open."""

    def __init__(self):
        self._lock = threading.Lock()
        self._open = 0
        self._opened_at = 0.0
        self._thread_depth: dict[int, tuple[int, float]] = {}
        self.wall_seconds = 0.0
        self.cpu_seconds = 0.0

    def on_start(self, evt):
        with self._lock:
            if self._open == 0:
                self._opened_at = time.perf_counter()
            self._open += 1
            thread = threading.get_ident()
            depth, cpu_start = self._thread_depth.get(thread, (0, 0.0))
            self._thread_depth[thread] = (depth + 1, time.thread_time() if depth == 0
                                          else cpu_start)

    def on_end(self, evt):
        thread = threading.get_ident()
        with self._lock:
            if thread not in self._thread_depth:  # opened before this clock listened
                return
            self._open -= 1
            if self._open == 0:
                self.wall_seconds += time.perf_counter() - self._opened_at
            depth, cpu_start = self._thread_depth.pop(thread)
            if depth > 1:
                self._thread_depth[thread] = (depth - 1, cpu_start)
            else:
                self.cpu_seconds += time.thread_time() - cpu_start


@dataclass(frozen=True)
class JitTiming:
    """One timed call: its ``wall_seconds``, the part of it in numba's JIT
    (``jit_seconds``: compiling plus loading cached kernels), the part compiling
    (``compile_seconds``) and the CPU seconds of the JIT (``jit_cpu_seconds``)."""

    wall_seconds: float
    jit_seconds: float
    compile_seconds: float
    jit_cpu_seconds: float

    @property
    def work_seconds(self) -> float:
        """Wall seconds of the call without the JIT."""
        return max(self.wall_seconds - self.jit_seconds, 0.0)

    @property
    def cache_seconds(self) -> float:
        """Seconds of the JIT not compiling: loading kernels from numba's on-disk cache,
        saving compiled ones to it (and waiting for numba's compiler lock)."""
        return max(self.jit_seconds - self.compile_seconds, 0.0)

    def fields(self, name: str) -> dict:
        """The record's timings of this call called ``name``: ``<name>_seconds`` (without
        the JIT), ``<name>_wall_seconds``, ``<name>_compile_seconds`` (all JIT time) and
        ``<name>_cache_seconds`` (the part of it reading and writing numba's cache)."""
        return {f"{name}_seconds": self.work_seconds,
                f"{name}_wall_seconds": self.wall_seconds,
                f"{name}_compile_seconds": self.jit_seconds,
                f"{name}_cache_seconds": self.cache_seconds}


def jit_timed_call(fn, *args, **kwargs):
    """Run ``fn`` once; return (result, its ``JitTiming``)."""
    jit, compiling = _OpenTime(), _OpenTime()
    with ExitStack() as listening:
        for kind, clock in ((JIT_EVENT, jit), (COMPILE_EVENT, compiling)):
            event.register(kind, clock)
            listening.callback(event.unregister, kind, clock)
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        wall = time.perf_counter() - start
    return result, JitTiming(wall, jit.wall_seconds, compiling.wall_seconds, jit.cpu_seconds)
