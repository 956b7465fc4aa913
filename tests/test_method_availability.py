"""A method whose optional library is missing is refused at planning, with the install
command, before any cell runs (``xcbench.contract.availability``). A missing library is
simulated with ``sys.modules[name] = None``, which makes ``import name`` fail."""
import sys

import pytest

from xcbench.cli import main
from xcbench.contract.availability import MethodUnavailable, module_available
from xcbench.contract.method import MethodSpec
from xcbench.contract.plugins import get_method_spec
from xcbench.run.plan import expand_plan

VW_INSTALL = "pip install 'xcbench[vw]'"


@pytest.fixture
def no_vw(monkeypatch):
    monkeypatch.setitem(sys.modules, "vowpalwabbit", None)
    with pytest.raises(ImportError):
        import vowpalwabbit  # noqa: F401 - the simulation holds


def test_module_available_finds_installed_modules_only(monkeypatch):
    assert module_available("json")
    assert not module_available("no_such_module_for_xcbench")
    assert not module_available("no_such_package_for_xcbench.sub")
    monkeypatch.setitem(sys.modules, "json", None)
    assert not module_available("json")


def test_every_peer_method_declares_its_library_and_install_command():
    for name, extra in [("vw-oaa", "vw"), ("vw-lomtree", "vw"), ("nxc-plt", "napkinxc"),
                        ("fasttext-hs", "fasttext"), ("omikuji-bonsai", "omikuji")]:
        spec = get_method_spec(name)
        assert spec.requires and spec.install == f"pip install 'xcbench[{extra}]'", name


def test_a_plan_with_a_missing_library_is_refused_with_the_install_command(no_vw):
    with pytest.raises(MethodUnavailable, match=r"'vw-oaa' needs vowpalwabbit.*"
                                                + VW_INSTALL.replace("[", r"\[")):
        expand_plan(["ova", "vw-oaa"], ["synthetic-small"])
    assert expand_plan(["ova"], ["synthetic-small"])  # the others still plan


def test_a_plan_with_the_library_installed_plans():
    pytest.importorskip("vowpalwabbit")
    assert [c.method for c in expand_plan(["vw-oaa"], ["synthetic-small"])] == ["vw-oaa"]


def test_xcbench_run_refuses_before_any_cell_runs(no_vw, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["run", "--methods", "ova,vw-oaa", "--dataset", "synthetic-small",
                 "--out", str(out), "--no-report", "--quiet"])
    assert code == 2
    assert VW_INSTALL in capsys.readouterr().err
    assert not (out / "results.jsonl").exists()


SUITE = """
name = "with-vw"
datasets = ["synthetic-small"]
seeds = [0]

[[runs]]
methods = ["ova"]

[[runs]]
methods = ["vw-oaa"]
"""


def test_a_suite_is_refused_before_its_first_run_but_still_read(no_vw, tmp_path, capsys):
    """Running: refused before the first run (whose ova needs nothing). Reading the plan (a
    report of the suite, --dry-run) does not need the library."""
    import tomllib

    from xcbench.run.suites import parse_suite, suite_cells
    from xcbench.run.suites.execute import execute_suite

    suite = parse_suite(tomllib.loads(SUITE))
    assert [cell.method for _, cell in suite_cells(suite)] == ["ova", "vw-oaa"]
    with pytest.raises(MethodUnavailable, match="'vw-oaa' needs vowpalwabbit"):
        execute_suite(suite, tmp_path / "out", progress=False)
    assert not (tmp_path / "out" / "results.jsonl").exists()
    path = tmp_path / "suite.toml"
    path.write_text(SUITE)
    assert main(["run", "--suite", str(path), "--out", str(tmp_path / "cli")]) == 2
    assert VW_INSTALL in capsys.readouterr().err


def test_xcbench_tune_refuses_before_tuning(no_vw, tmp_path, capsys):
    pytest.importorskip("optuna")
    code = main(["tune", "vw-oaa", "--dataset", "synthetic-small", "--trials", "1",
                 "--out", str(tmp_path / "tune")])
    assert code == 2
    assert VW_INSTALL in capsys.readouterr().err
    assert not (tmp_path / "tune" / "results.jsonl").exists()


def test_without_an_install_command_the_modules_pip_name_is_given():
    from xcbench.contract.availability import unavailable_reason

    class Dummy:
        def __init__(self):
            pass

    spec = MethodSpec(name="needs-missing", family="flat", description="", factory=Dummy,
                      requires=("no_such_module_for_xcbench.models",))

    assert unavailable_reason(spec).endswith("pip install no_such_module_for_xcbench")


def test_list_methods_says_which_are_not_installed(no_vw, capsys):
    assert main(["list", "methods"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert lines["vw-oaa"].endswith(f"(not installed: {VW_INSTALL})")
    assert "not installed" not in lines["ova"]
