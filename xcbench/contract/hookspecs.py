"""The hooks a plugin may implement. Each hook receives a ``register`` callback.

Plugins implement these with ``@xcbench.hookimpl``; a hook implementation may take
fewer arguments than the spec lists, so hooks can grow without breaking plugins.
"""
import pluggy

hookspec = pluggy.HookspecMarker("xcbench")
hookimpl = pluggy.HookimplMarker("xcbench")


@hookspec
def register_methods(register):
    """Register classification methods: call ``register(MethodSpec(...))`` once per method."""


@hookspec
def register_datasets(register):
    """Register datasets: call ``register(DatasetSpec(...))`` once per dataset."""


@hookspec(firstresult=True)
def resolve_method(name):
    """Return the MethodSpec of a method name no plugin registered (a family of names such
    as ``sklearn:PATH``), or None when ``name`` is not one of yours. Raise ValueError when
    it is yours but unusable, saying why."""
