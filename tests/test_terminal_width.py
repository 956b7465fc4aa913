"""A terminal that reports no width (a pseudo-terminal of 0 columns) still shows the bar."""
import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios

from xcbench.run.terminal import FALLBACK_COLUMNS, terminal_columns

#: a run's progress on stderr, as ``xcbench run`` draws it
CHILD = """
from xcbench.run.progress import RunProgress
bar = RunProgress(2, methods=["ova", "ova"])
bar.cell_status("ova on d seed 0", "ova", "fitting", 3.0)
bar.finished("ova on d seed 0", "ova", 10.0)
bar.close()
"""


def _read_all(fd) -> str:
    chunks = []
    while select.select([fd], [], [], 60.0)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace")


def _set_columns(fd, columns):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))


def test_a_terminal_of_zero_columns_falls_back_to_80(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    main, side = pty.openpty()
    try:
        with os.fdopen(os.dup(side), "w") as stream:
            assert os.get_terminal_size(side).columns == 0  # what the issue saw
            assert terminal_columns(stream) == FALLBACK_COLUMNS
            _set_columns(side, 132)
            assert terminal_columns(stream) == 132
            monkeypatch.setenv("COLUMNS", "100")
            assert terminal_columns(stream) == 100
    finally:
        os.close(main)
        os.close(side)


def test_no_terminal_at_all_gets_the_fallback(monkeypatch, tmp_path):
    monkeypatch.delenv("COLUMNS", raising=False)
    with open(tmp_path / "log", "w") as stream:
        assert terminal_columns(stream) == FALLBACK_COLUMNS


def test_the_bar_is_drawn_on_a_terminal_reporting_zero_columns():
    main, side = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    try:
        child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.DEVNULL,
                                 stdout=side, stderr=side, env=env)
        os.close(side)
        side = None
        shown = _read_all(main)
        assert child.wait(timeout=60) == 0, shown
    finally:
        os.close(main)
        if side is not None:
            os.close(side)
    last = shown.replace("\r\n", "\n").split("\r")[-1]
    assert "1/2" in last and "|" in last and "ETA 10s" in last, shown
    assert max(len(line) for line in shown.replace("\n", "\r").split("\r")) <= FALLBACK_COLUMNS
