"""The plugin manager: built-in and third-party plugins, all loaded from entry points.

Spec lookups (``get_method_spec``) live here too. Set ``XCBENCH_PLUGINS`` to a comma-separated list of plugin (entry-point) names to load
only those; set it to an empty string to load none. A plugin that fails to import is
reported as a warning naming it and its error, as is one whose ``register_*`` hook raises;
the others still load.
"""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from importlib import metadata

import pluggy

from . import hookspecs

ENTRY_POINT_GROUP = "xcbench"
ENV_PLUGINS = "XCBENCH_PLUGINS"

_pm: pluggy.PluginManager | None = None


class PluginLoadWarning(UserWarning):
    """A plugin could not be imported or registered."""


@dataclass
class PluginInfo:
    """What one plugin is and what it registered."""

    name: str
    version: str
    methods: list = field(default_factory=list)
    datasets: list = field(default_factory=list)
    #: (name pattern, what it is) of the method names the plugin answers through the
    #: ``resolve_method`` hook (its module's ``RESOLVES``), or None
    resolves: tuple | None = None


def _allowed_plugins() -> set[str] | None:
    value = os.environ.get(ENV_PLUGINS)
    if value is None:
        return None
    return {name.strip() for name in value.split(",") if name.strip()}


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    allowed = _allowed_plugins()
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if allowed is not None and ep.name not in allowed:
            continue
        if pm.get_plugin(ep.name) is not None:
            continue
        try:
            plugin = ep.load()
            pm.register(plugin, name=ep.name)
        except (Exception, SystemExit) as exc:  # a broken plugin must not take others down
            _warn(f"xcbench plugin {ep.name!r} ({ep.value}) failed to load: {_what(exc)}")
            continue
        dist = getattr(ep, "dist", None)
        if dist is not None:
            _versions[ep.name] = dist.version


_versions: dict[str, str] = {}
_warned: dict = {}  # the warnings registry: each plugin problem is shown once per process


def _what(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r})"
    return f"{type(exc).__name__}: {exc}"


def _warn(text: str) -> None:
    """A PluginLoadWarning shown once, as one line (no echoed source line of xcbench's)."""
    warnings.warn_explicit(text, PluginLoadWarning, filename="xcbench", lineno=0,
                           module=__name__, registry=_warned)


def get_plugin_manager() -> pluggy.PluginManager:
    """Return the process-wide plugin manager, loading entry-point plugins on first use."""
    global _pm
    if _pm is None:
        pm = pluggy.PluginManager("xcbench")
        pm.add_hookspecs(hookspecs)
        _load_entry_points(pm)
        _pm = pm
    return _pm


def reset_plugin_manager() -> None:
    """Forget the plugin manager so the next use reloads entry points (for tests)."""
    global _pm
    _pm = None
    _versions.clear()


def register_plugin(plugin, name: str | None = None) -> None:
    """Register a plugin object (a module or class with hook implementations) in-process."""
    get_plugin_manager().register(plugin, name=name)


def unregister_plugin(name: str) -> None:
    """Remove an in-process plugin registered under ``name``."""
    pm = get_plugin_manager()
    plugin = pm.get_plugin(name)
    if plugin is not None:
        pm.unregister(plugin)


def _collect(hook_name: str) -> dict[str, tuple[object, str]]:
    """Call one registration hook on each plugin; return {spec name: (spec, plugin name)}."""
    pm = get_plugin_manager()
    found: dict[str, tuple[object, str]] = {}
    for impl in getattr(pm.hook, hook_name).get_hookimpls():
        specs: list = []
        try:
            impl.function(**{arg: specs.append for arg in impl.argnames})
        except (Exception, SystemExit) as exc:  # a broken plugin must not take others down
            _warn(f"xcbench plugin {impl.plugin_name!r}: {hook_name} failed, so nothing it "
                  f"registers is used: {_what(exc)}")
            continue
        for spec in specs:
            if spec.name in found:
                warnings.warn(
                    f"{hook_name}: {spec.name!r} from plugin {impl.plugin_name!r} replaces "
                    f"the one from {found[spec.name][1]!r}",
                    PluginLoadWarning,
                    stacklevel=2,
                )
            spec.plugin = impl.plugin_name
            found[spec.name] = (spec, impl.plugin_name)
    return found


def method_specs() -> dict:
    """All registered method specs, by name."""
    return {name: spec for name, (spec, _) in _collect("register_methods").items()}


def dataset_specs() -> dict:
    """All registered dataset specs, by name."""
    return {name: spec for name, (spec, _) in _collect("register_datasets").items()}


def lookup(specs: dict, name: str, kind: str):
    """``specs[name]``; KeyError naming the unknown ``kind``, the registered names close to
    it ("did you mean") and all the registered ones."""
    if name not in specs:
        from ..suggest import did_you_mean

        raise KeyError(f"unknown {kind} {name!r}{did_you_mean(name, specs)}; registered "
                       f"{kind}s: {', '.join(sorted(specs)) or '(none)'} "
                       f"(see `xcbench list {kind}s`)")
    return specs[name]


def get_method_spec(name: str):
    """The MethodSpec called ``name``: a registered one, else one a plugin resolves from the
    name (``resolve_method``, e.g. ``sklearn:sklearn.linear_model.SGDClassifier``);
    KeyError lists the registered ones, ValueError says why a resolvable name is unusable."""
    specs = method_specs()
    if name not in specs:
        spec = get_plugin_manager().hook.resolve_method(name=name)
        if spec is not None:
            return spec
    return lookup(specs, name, "method")


def plugin_infos() -> list[PluginInfo]:
    """One PluginInfo per loaded plugin, with what each registered."""
    pm = get_plugin_manager()
    infos = {name: PluginInfo(name, _plugin_version(name, plugin), resolves=_resolves(plugin))
             for name, plugin in pm.list_name_plugin()}
    for name, (_, plugin_name) in _collect("register_methods").items():
        infos[plugin_name].methods.append(name)
    for name, (_, plugin_name) in _collect("register_datasets").items():
        infos[plugin_name].datasets.append(name)
    return sorted(infos.values(), key=lambda info: info.name)


def _resolves(plugin) -> tuple | None:
    """A plugin's family of resolved method names: its ``RESOLVES`` (pattern, description),
    or a generic one when it implements ``resolve_method`` without saying; else None."""
    if not hasattr(plugin, "resolve_method"):
        return None
    return tuple(getattr(plugin, "RESOLVES", ("(names of its own)",
                                              "method names answered by resolve_method")))


def _plugin_version(name: str, plugin) -> str:
    if name in _versions:
        return _versions[name]
    return str(getattr(plugin, "__version__", "unknown"))
