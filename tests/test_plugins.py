import inspect
import warnings
from importlib import metadata

import pytest

import xcbench
from xcbench.contract import hookspecs
from xcbench.contract.plugins import (PluginLoadWarning, get_plugin_manager, plugin_infos,
                             register_plugin, reset_plugin_manager)


def test_hookspecs_documented_and_no_pending(fresh_plugins):
    pm = get_plugin_manager()
    pm.check_pending()  # a misspelt hook implementation fails here
    names = [n for n, f in inspect.getmembers(hookspecs, inspect.isfunction)
             if n.startswith("register_")]
    assert set(names) == {"register_methods", "register_datasets"}
    for name in names:
        assert (getattr(hookspecs, name).__doc__ or "").strip(), f"hook {name} has no docstring"


def test_builtin_plugins_come_from_entry_points(fresh_plugins):
    names = {ep.name for ep in metadata.entry_points(group="xcbench")}
    assert {"linear", "builtin_datasets"} <= names
    infos = {i.name: i for i in plugin_infos()}
    assert set(infos["linear"].methods) == {"ova", "softmax"}
    assert "synthetic" in infos["builtin_datasets"].datasets


def test_env_var_restricts_plugins(fresh_plugins, monkeypatch):
    monkeypatch.setenv("XCBENCH_PLUGINS", "builtin_datasets")
    reset_plugin_manager()
    assert xcbench.list_methods() == []
    assert "synthetic" in xcbench.list_datasets()


def test_broken_plugin_warns_and_others_load(fresh_plugins, monkeypatch):
    good = list(metadata.entry_points(group="xcbench"))
    broken = metadata.EntryPoint(name="broken", value="xcbench_no_such_module", group="xcbench")
    monkeypatch.setattr(metadata, "entry_points",
                        lambda group=None: [*good, broken] if group == "xcbench" else [])
    reset_plugin_manager()
    with pytest.warns(PluginLoadWarning, match="broken.*xcbench_no_such_module"):
        get_plugin_manager()
    assert "softmax" in xcbench.list_methods()


def test_in_process_plugin_registers_method(fresh_plugins):
    from xcbench_linear import Softmax

    class Plugin:
        @xcbench.hookimpl
        def register_methods(self, register):
            register(xcbench.MethodSpec("softmax2", "flat", "a copy", Softmax))

    register_plugin(Plugin(), name="copy")
    assert "softmax2" in xcbench.list_methods()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        xcbench.make_method("softmax2", C=2.0)


def test_plugin_whose_register_hook_raises_is_skipped_with_a_warning(fresh_plugins):
    class Raising:
        @xcbench.hookimpl
        def register_methods(self, register):
            raise RuntimeError("cannot register")

    register_plugin(Raising(), name="raising")
    with pytest.warns(PluginLoadWarning, match="'raising': register_methods failed.*cannot"):
        names = xcbench.list_methods()
    assert "softmax" in names
    with pytest.warns(PluginLoadWarning):
        infos = {i.name: i for i in plugin_infos()}
    assert infos["raising"].methods == [] and "ova" in infos["linear"].methods


def test_api_and_runner_do_not_import_each_other():
    import ast
    from pathlib import Path

    root = Path(xcbench.__file__).parent
    for module, other in [("run/runner", "api"), ("run/plan", "api"),
                          ("contract/plugins", "runner")]:
        tree = ast.parse((root / f"{module}.py").read_text())
        imported = {node.module.split(".")[-1] for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module}
        assert other not in imported, f"xcbench.{module} imports xcbench.{other}"
