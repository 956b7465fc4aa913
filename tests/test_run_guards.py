"""Guards of ``xcbench run`` from issue 34: impossible probabilities stored as ok, run options
accepted that should be refused up front, and plugins that call ``sys.exit``."""
import json

import pytest
from test_cli_check import AlwaysSure, NeverPossible
from test_reliability import Registry

import xcbench
from xcbench.cli import EXIT_CELL_FAILED, EXIT_USAGE, main
from xcbench.contract.plugins import register_plugin
from xcbench.run.options import RunOptions
from xcbench.run.plan import parse_param_overrides


def _run(tmp_path, *args):
    out = tmp_path / "out"
    code = main(["run", "--dataset", "synthetic-small", "--out", str(out), "--in-process",
                 "--latency-calls", "5", "--quiet", "--no-report", *args])
    path = out / "results.jsonl"
    records = [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
    return code, records


@pytest.mark.parametrize("cls, words", [(AlwaysSure, "summing to 5"),
                                        (NeverPossible, "probability zero on every row")])
def test_impossible_probabilities_are_an_error_record(tmp_path, fresh_plugins, cls, words):
    register_plugin(Registry(xcbench.MethodSpec("odd", "flat", "a test method", cls)),
                    name="test-odd")
    code, (record,) = _run(tmp_path, "--methods", "odd")
    assert code == EXIT_CELL_FAILED
    assert record["status"] == "error" and words in record["error"]


@pytest.mark.parametrize("seeds", ["-1", "", "0,-3", " , "])
def test_bad_seeds_are_refused_before_any_cell(tmp_path, capsys, seeds):
    """Before: --seeds -1 ran and stored an error record; --seeds '' said "no runs", rc 0."""
    code, records = _run(tmp_path, "--methods", "ova", "--seeds", seeds)
    assert code == EXIT_USAGE and not records
    assert "--seeds" in capsys.readouterr().err


def test_a_repeated_param_sweeps_both_values():
    """Before: --param softmax:C=1 --param softmax:C=2 kept only C=2."""
    assert parse_param_overrides(["softmax:C=1", "softmax:C=2,3"]) == {"softmax": {"C": [1, 2, 3]}}
    with pytest.raises(ValueError, match="already swept"):
        parse_param_overrides(["st:k=50", "st:k+depth=100+7"])


def test_fit_threads_equal_to_threads_is_the_default_key():
    """Before: --fit-threads 1 and the default (fit threads = threads = 1) were one run under
    two keys."""
    assert RunOptions(fit_threads=1).keyed() == RunOptions().keyed()
    assert RunOptions(threads=2, fit_threads=2).keyed() == RunOptions(threads=2).keyed()
    assert RunOptions(fit_threads=2).keyed() != RunOptions().keyed()


@pytest.fixture
def exiting_plugin(tmp_path, monkeypatch, fresh_plugins):
    """An installed plugin (a dist-info with an xcbench entry point) whose registration hook
    calls sys.exit(3)."""
    dist = tmp_path / "exiting_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: exiting-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[xcbench]\nexiting = exiting_plugin\n")
    (tmp_path / "exiting_plugin.py").write_text(
        "import sys\nimport xcbench\n\n\n@xcbench.hookimpl\n"
        "def register_methods(register):\n    sys.exit(3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from xcbench.contract.plugins import reset_plugin_manager

    reset_plugin_manager()
    yield
    reset_plugin_manager()


def test_a_plugin_hook_calling_sys_exit_is_a_warning_not_the_end(exiting_plugin, capsys):
    """Before: `xcbench list methods` printed nothing and exited 3."""
    from xcbench.contract.plugins import PluginLoadWarning

    with pytest.warns(PluginLoadWarning, match=r"'exiting'.*called sys.exit\(3\)"):
        assert main(["list", "methods"]) == 0
    assert "softmax" in capsys.readouterr().out


def test_a_broken_plugin_is_one_warning_line_per_run(tmp_path):
    """Before: the plugin-load warning printed twice per run, each time followed by Python's
    echo of the xcbench source line that warned."""
    import os
    import subprocess
    import sys

    dist = tmp_path / "broken_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[xcbench]\nbroken = broken_plugin\n")
    (tmp_path / "broken_plugin.py").write_text("raise ImportError('broken on purpose')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-m", "xcbench.cli", "run", "--methods", "ova",
                          "--dataset", "synthetic-small", "--out", str(tmp_path / "out"),
                          "--latency-calls", "5", "--quiet", "--no-report"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = [x for x in run.stderr.splitlines() if "broken" in x or "_load_entry_points" in x]
    assert len(lines) == 1 and "failed to load: ImportError: broken on purpose" in lines[0]
