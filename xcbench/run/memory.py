"""Memory of a run: the limit (parse ``4G``, default a share of available RAM), the cap put on
a cell's process, and the peak resident memory of a fit (Linux ``/proc``)."""
from __future__ import annotations

import re
import resource

from ..numbers import format_gb  # noqa: F401 - re-exported: the run's messages use it

#: share of the available RAM a cell may use when no ``--memory-limit`` is given
DEFAULT_MEMORY_SHARE = 0.7
_UNITS = {"": 1, "B": 1, "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}


def parse_size(text) -> int:
    """Bytes of a size like ``4G``, ``512M``, ``1.5GB``, ``2048`` (binary units)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
        unit = ""
    else:
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([KMGT]?)(I?B)?\s*", str(text).upper())
        if not match:
            raise ValueError(f"memory size {text!r} not understood; write e.g. 4G, 512M or a "
                             "number of bytes")
        value, unit = float(match.group(1)), match.group(2)
    if value <= 0:
        raise ValueError(f"memory size must be positive, got {text!r}")
    return int(value * _UNITS[unit])


def _proc_status_kb(field: str, pid: int | str = "self") -> int | None:
    """A ``kB`` field of ``/proc/<pid>/status`` in bytes (None if unreadable)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def available_memory() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes (None where not readable)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def default_memory_limit() -> int | None:
    """``DEFAULT_MEMORY_SHARE`` of the available RAM, or None where it is unknown."""
    available = available_memory()
    return None if available is None else int(DEFAULT_MEMORY_SHARE * available)


def rss(pid: int | str = "self") -> int | None:
    """Resident memory of a process in bytes."""
    return _proc_status_kb("VmRSS", pid)


def reset_peak_rss() -> bool:
    """Reset this process's resident high-water mark (``VmHWM``); False if not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss() -> int:
    """This process's resident high-water mark in bytes (``VmHWM``, else ``ru_maxrss``)."""
    peak = _proc_status_kb("VmHWM")
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def cap_data_memory(limit: int) -> int | None:
    """Cap this process's data segment (heap and private mappings, ``RLIMIT_DATA``) at what
    it uses now plus ``limit`` bytes, so a larger allocation raises MemoryError; return the
    cap, or None where it cannot be set. (``RLIMIT_AS`` would also count the address space
    numba and BLAS reserve without using it.)"""
    used = _proc_status_kb("VmData") or 0
    cap = used + int(limit)
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    except (ValueError, OSError):
        return None
    return cap
