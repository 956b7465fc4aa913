"""Files replaced whole or not at all: written to a temporary beside the target, synced,
then renamed over it. A full disk or a kill mid-write leaves the previous file in place
(and no temporary), never a truncated one."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def replace_atomically(target, write, prefix: str | None = None, suffix: str = ".tmp") -> None:
    """Replace ``target`` by what ``write(binary file)`` writes: into a temporary beside it,
    synced, then renamed over it; the temporary is removed if anything fails. The file gets
    the permissions the umask gives every other file (mkstemp alone would make it 0600)."""
    target = Path(target)
    prefix = prefix if prefix is not None else f".{target.name}."
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~umask())
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomically(target, text: str) -> None:
    """``Path(target).write_text(text)`` (UTF-8), whole or not at all."""
    replace_atomically(target, lambda f: f.write(text.encode("utf-8")))


def umask() -> int:
    """This process's umask (read by setting it, then putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
