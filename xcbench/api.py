"""The small public API for notebooks and scripts (the CLI is a thin layer over it)."""
from __future__ import annotations

from .contract.method import Method
from .run.runner import run_plan as _run_plan
from .contract.plugins import dataset_specs, get_method_spec, method_specs


def list_methods() -> list[str]:
    """Names of all registered methods, sorted."""
    return sorted(method_specs())


def list_datasets() -> list[str]:
    """Names of all registered datasets, sorted."""
    return sorted(dataset_specs())


def make_method(name: str, **params) -> Method:
    """An unfitted method from the registry, its defaults overridden by ``params``."""
    return get_method_spec(name).make(**params)


def run_plan(methods, datasets, seeds=(0,), out="xcbench-results", **kwargs) -> list[dict]:
    """Run methods x param grid x datasets x seeds; return the new result records.

    Keyword arguments are those of :func:`xcbench.run.runner.run_plan` (``param_overrides``,
    ``options``, ``resume``, ``data_dir``, ``progress``).
    """
    return _run_plan(methods, datasets, seeds, out=out, **kwargs)
