"""What a registered method's parameters are: defaults, readable constraints, which are
query-time, the effective values of a run (its params over the defaults) and the one
canonical spelling of a value (``C=1`` and ``C=1.0`` are one cell, one record key)."""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from numbers import Integral, Real

#: marks a parameter the factory requires (it has no default)
REQUIRED = "(required)"
#: parameters left out of one-line summaries: the seed is shown on its own, the others
#: change how a fit reports or runs, not what it learns
NOT_SUMMARISED = ("random_state", "verbose", "n_jobs")


@dataclass
class ParamInfo:
    """One parameter of a method: its default, the values it accepts (readable), the
    values the runner sweeps by default and, for a query-time parameter, the values it
    measures on one fitted model."""

    name: str
    default: object
    constraint: str
    grid: list | None = None
    query_values: list | None = None

    @property
    def is_query(self) -> bool:
        return self.query_values is not None


def method_defaults(spec) -> dict:
    """The default value of each parameter the method's factory takes: the factory's
    signature defaults, overridden by the spec's ``default_params``; ``REQUIRED`` for a
    parameter with neither."""
    params = inspect.signature(spec.factory).parameters
    defaults = {name: (REQUIRED if p.default is p.empty else p.default)
                for name, p in params.items()
                if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    return {**defaults, **spec.default_params}


def effective_params(spec, params: dict) -> dict:
    """Every parameter value a run of ``spec``'s method with ``params`` uses: ``params``
    first (what the run set), then the defaults of the others in the factory's order."""
    defaults = method_defaults(spec)
    return {**params, **{k: v for k, v in defaults.items() if k not in params}}


def _constraints_of(spec) -> dict:
    factory = spec.factory
    return dict(getattr(factory, "_parameter_constraints", None) or {})


def method_parameters(spec) -> list[ParamInfo]:
    """A ParamInfo for every parameter of ``spec``'s method, in the factory's order."""
    constraints = _constraints_of(spec)
    return [ParamInfo(name, default, constraint_text(constraints.get(name)),
                      grid=spec.param_grid.get(name), query_values=spec.query_params.get(name))
            for name, default in method_defaults(spec).items()]


def constraint_text(constraints) -> str:
    """scikit-learn ``_parameter_constraints`` entries as text, e.g. ``int in [1, inf)``,
    ``one of {'a', 'b'}`` or ``float in (0, 1) or None``; ``any`` when there are none."""
    if not constraints:
        return "any"
    if constraints == "no_validation":
        return "any (not validated)"
    shown = [_one_constraint(c) for c in constraints]
    return " or ".join(dict.fromkeys(s for s in shown if s))


_NAMED = {"boolean": "bool", "random_state": "int seed, RandomState or None",
          "array-like": "array-like", "sparse matrix": "sparse matrix",
          "callable": "callable", "verbose": "int or bool", "cv_object": "cv splitter"}


def _one_constraint(c) -> str:
    """One constraint as text ('' for a hidden one)."""
    kind = type(c).__name__
    if kind == "Hidden":
        return ""
    if c is None:
        return "None"
    if isinstance(c, str):
        return _NAMED.get(c, c)
    if isinstance(c, type):
        return _type_name(c)
    if kind == "Interval":
        return _interval_text(c)
    if hasattr(c, "options"):  # StrOptions / Options
        options = [repr(o) for o in sorted(c.options, key=str)]
        return options[0] if len(options) == 1 else "one of {" + ", ".join(options) + "}"
    if kind == "_Booleans":
        return "bool"
    if kind == "_NoneConstraint":
        return "None"
    if kind == "_InstancesOf":
        return _type_name(c.type)
    return str(c)


def _type_name(t) -> str:
    if isinstance(t, type) and issubclass(t, bool):
        return "bool"
    if t is Integral or (isinstance(t, type) and issubclass(t, Integral)):
        return "int"
    if t is Real or (isinstance(t, type) and issubclass(t, Real)):
        return "float"
    return getattr(t, "__name__", str(t))


def _interval_text(c) -> str:
    left = "-inf" if c.left is None else _number(c.left)
    right = "inf" if c.right is None else _number(c.right)
    opening = "[" if c.closed in ("left", "both") and c.left is not None else "("
    closing = "]" if c.closed in ("right", "both") and c.right is not None else ")"
    return f"{_type_name(c.type)} in {opening}{left}, {right}{closing}"


def _number(x) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def canonical_value(value):
    """One spelling per value: numpy scalars become Python ones and a float holding an
    integer becomes that int (``1.0`` -> ``1``); booleans, strings and None are kept."""
    if hasattr(value, "item") and not isinstance(value, (list, tuple, dict)):
        value = value.item()
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() \
            and abs(value) < 2 ** 53:
        return int(value)
    if isinstance(value, (list, tuple)):
        return tuple(canonical_value(v) for v in value)
    return value


def canonical_params(params: dict) -> dict:
    """``params`` with every value canonicalised (see :func:`canonical_value`)."""
    return {k: canonical_value(v) for k, v in params.items()}


def value_text(value) -> str:
    """One spelling of a parameter value, used everywhere xcbench shows one (progress lines,
    report tables and legends, ``compare``, ``describe``), as typed after ``--param``: a
    float holding an integer without ``.0`` (``C=1`` whether stored as 1 or 1.0), other
    floats as Python writes them (``0.1``, ``1e-05``), numpy scalars as Python numbers, lists
    as ``[a,b]``, the empty string as ``''``, anything else as ``str`` (``loss=01``)."""
    value = canonical_value(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(value_text(v) for v in value) + "]"
    if value == "":
        return "''"
    return str(value)


def params_text(params: dict, sort: bool = True) -> str:
    """``C=1, penalty=l2``: ``params`` as xcbench shows them (sorted by name unless ``sort``
    is False; ``random_state`` left out); ``defaults`` if nothing is left."""
    items = [(k, v) for k, v in params.items() if k != "random_state"]
    if sort:
        items.sort(key=lambda item: item[0])
    return ", ".join(f"{k}={value_text(v)}" for k, v in items) or "defaults"


def params_summary(params: dict, limit: int = 90) -> str:
    """``k=50, depth=8, alpha=1 ...`` for ``params`` (the effective values of a run, in their
    order), without ``NOT_SUMMARISED`` names, cut at about ``limit`` characters with
    ``(+N more)``."""
    items = [f"{k}={value_text(v)}" for k, v in params.items() if k not in NOT_SUMMARISED]
    shown: list[str] = []
    for i, item in enumerate(items):
        rest = len(items) - i
        tail = f" (+{rest} more)" if rest > 1 else ""
        if shown and len(", ".join(shown + [item])) + len(tail) > limit:
            return ", ".join(shown) + f" (+{rest} more)"
        shown.append(item)
    return ", ".join(shown)


def run_params_text(method: str, params: dict | None) -> str:
    """The effective parameter values of a run of ``method`` with ``params`` in one short
    line (``params_summary``); only ``params`` when the method is not registered here."""
    from .plugins import get_method_spec

    params = params or {}
    try:
        params = effective_params(get_method_spec(method), params)
    except KeyError:
        pass
    return params_summary(params) or "(no parameters)"
