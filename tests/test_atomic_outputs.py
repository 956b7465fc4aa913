"""report, plot and export replace their output files whole or not at all: a full disk
while writing leaves the previous file in place and no temporary behind."""
import errno
import os

import pytest

from report_records import record, write_store
from xcbench.report import write_report
from xcbench.store import atomic
from xcbench.store.export import write_output


def _full_disk(monkeypatch):
    """Every sync of a file written through xcbench.store.atomic fails as a full disk."""
    def no_space(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", no_space)


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if ".tmp" in p.name)


def test_a_full_disk_keeps_the_previous_report_and_its_plots(tmp_path, monkeypatch):
    write_store(tmp_path, [record("a", top1=0.2, p50_ms=0.01), record("b", top1=0.3)])
    first = write_report(tmp_path, html=True)
    outputs = [first["markdown"], first["html"], *first["plots"]]
    assert any(str(p).endswith(".png") for p in outputs)
    before = {p: open(p, "rb").read() for p in outputs}
    write_store(tmp_path, [record("a", top1=0.6, p50_ms=0.02), record("b", top1=0.7)])
    _full_disk(monkeypatch)
    with pytest.raises(OSError):
        write_report(tmp_path, html=True)
    for path, content in before.items():
        assert open(path, "rb").read() == content, path
    assert _leftovers(tmp_path) == []



def test_every_report_output_is_renamed_into_place(tmp_path, monkeypatch):
    """report.md, report.html and each plot are written to a temporary and renamed over the
    old file (a plain write_text would truncate the old file first)."""
    write_store(tmp_path, [record("a", top1=0.2, p50_ms=0.01), record("b", top1=0.3)])
    renamed, replace = [], os.replace
    monkeypatch.setattr(atomic.os, "replace",
                        lambda src, dst: (renamed.append(os.path.basename(dst)),
                                          replace(src, dst)))
    paths = write_report(tmp_path, html=True)
    written = [paths["markdown"], paths["html"], *paths["plots"]]
    assert sorted(renamed) == sorted(os.path.basename(p) for p in written)

def test_a_full_disk_keeps_the_previous_export(tmp_path, monkeypatch):
    target = tmp_path / "results.csv"
    write_output("a,b\n1,2\n", str(target))
    _full_disk(monkeypatch)
    with pytest.raises(OSError):
        write_output("a,b\n3,4\n" * 1000, str(target))
    assert target.read_text() == "a,b\n1,2\n"
    assert _leftovers(tmp_path) == []


def test_outputs_honour_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        write_output("x\n", str(tmp_path / "out.csv"))
    finally:
        os.umask(old)
    assert (tmp_path / "out.csv").stat().st_mode & 0o777 == 0o640
