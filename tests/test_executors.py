"""Choosing an executor: clear errors for options that do not fit, and no Dask import
unless the Dask executor is chosen."""
import subprocess
import sys

import pytest

from xcbench.cli import main
from xcbench.run.executors import LocalExecutor, make_executor


def test_local_is_the_default_and_rejects_dask_options():
    assert isinstance(make_executor(), LocalExecutor)
    with pytest.raises(ValueError, match="--executor dask only"):
        make_executor("local", workers=2)
    with pytest.raises(ValueError, match="unknown executor"):
        make_executor("ray")


def test_bad_dask_options_fail_before_any_work(tmp_path, capsys):
    pytest.importorskip("distributed")
    out = tmp_path / "out"
    assert main(["run", "--executor", "dask", "--workers", "0", "--out", str(out)]) == 2
    assert "--workers 0" in capsys.readouterr().err
    assert main(["run", "--executor", "dask", "--workers", "2", "--scheduler",
                 "tcp://127.0.0.1:1", "--out", str(out)]) == 2
    assert "give one of them" in capsys.readouterr().err
    assert not (out / "results.jsonl").exists()


def test_importing_xcbench_does_not_import_dask():
    code = ("import sys, xcbench, xcbench.cli, xcbench.run.runner, xcbench.run.executors; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
