"""Temporary files named after the host and process that write them, so that a later run
can tell the ones a killed run left behind (its process is gone) from the ones a live run
is still writing, and remove them.

A temporary's name is ``.<key>.<host>.<pid>.<anything>`` with ``.tmp`` in it; files written
on another host are never removed (their process cannot be checked from here).
"""
from __future__ import annotations

import os
import socket
from pathlib import Path

HOST = socket.gethostname()


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def temporary_prefix(key: str) -> str:
    """The start of a temporary's name for ``key`` written by this process."""
    return f".{key}.{HOST}.{os.getpid()}."


def _writer_pid(name: str) -> int | None:
    """The process id in a temporary's name, if this host wrote it; else None."""
    marker = f".{HOST}."
    if not (name.startswith(".") and ".tmp" in name and marker in name):
        return None
    pid = name.split(marker, 1)[1].split(".", 1)[0]
    return int(pid) if pid.isdigit() else None


def remove_stale_temporaries(folder: Path) -> list[str]:
    """Remove the temporaries in ``folder`` whose writing process (on this host) is gone;
    return their names."""
    removed = []
    try:
        names = [p.name for p in Path(folder).iterdir()]
    except OSError:
        return removed
    for name in names:
        pid = _writer_pid(name)
        if pid is not None and not process_alive(pid):
            (Path(folder) / name).unlink(missing_ok=True)
            removed.append(name)
    return removed
