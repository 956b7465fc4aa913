"""A method's search space: the values ``xcbench tune`` may try for each parameter, declared
in its registration (``MethodSpec.search_space``) and checked here.

A space is a dict, parameter name -> entry, declared beside the method's parameters
(``MethodSpec.search_space``). An entry is either

- a range: ``{"low": 1e-3, "high": 1e2, "log": True}`` (a float), with ``"int": True`` an
  integer (``{"low": 2, "high": 128, "log": True, "int": True}``); or
- a choice: ``{"choices": ["kmeans", "random"]}`` (strings, numbers, booleans or None).

Any entry may add ``"when": {"solver": "liblinear"}`` (or a list of allowed values): it is
searched only when the parameters named there, which must come earlier in the space, took
one of those values; otherwise the method's default is used. Entries are searched in the
order they are declared (``xcbench.tune.space`` samples them).
"""
from __future__ import annotations

import math
from numbers import Real

_RANGE_KEYS = {"low", "high", "log", "int", "when"}
_CHOICE_KEYS = {"choices", "when"}


def check_search_space(space: dict, spec=None, values: bool = True) -> None:
    """Raise ValueError naming the first problem of ``space``: a malformed entry, a ``when``
    that names a later or unknown entry, and, given the method's ``spec``, a parameter the
    method does not take or (``values``) a bound or choice its parameter constraints refuse.
    ``MethodSpec`` checks all but the values at registration (that builds the method once per
    value, ~5 ms a space); ``xcbench tune`` checks them before any trial."""
    if not isinstance(space, dict):
        raise ValueError(f"a search space is a dict of parameter -> entry, got "
                         f"{type(space).__name__}")
    where = f"search space of {spec.name!r}" if spec is not None else "search space"
    seen: dict = {}
    for name, entry in space.items():
        _check_entry(name, entry, seen, where)
        seen[name] = entry
    if spec is not None:
        valid = spec.valid_params()
        unknown = [name for name in space if name not in valid]
        if unknown:
            raise ValueError(f"{where}: unknown parameter(s) {', '.join(map(repr, unknown))}; "
                             f"valid parameters: {', '.join(valid)}")
        if values:
            _check_values(space, spec, where)


def _check_entry(name, entry, earlier: dict, where: str) -> None:
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: {name!r} must be a dict such as {{'low': 0.1, 'high': 10}} "
                         f"or {{'choices': [...]}}, got {entry!r}")
    if "choices" in entry:
        _check_choices(name, entry, where)
    elif "low" in entry and "high" in entry:
        _check_range(name, entry, where)
    else:
        raise ValueError(f"{where}: {name!r} needs 'low' and 'high', or 'choices'")
    for other, allowed in (entry.get("when") or {}).items():
        if other not in earlier:
            raise ValueError(f"{where}: {name!r} is searched when {other!r} is, so {other!r} "
                             "must be an earlier entry of the space")
        choices = earlier[other].get("choices")
        bad = [v for v in _as_list(allowed) if choices is not None and v not in choices]
        if bad:
            raise ValueError(f"{where}: {name!r} 'when' {other!r} is {bad[0]!r}, not one of "
                             f"its choices {choices}")


def _check_choices(name, entry, where) -> None:
    unknown = set(entry) - _CHOICE_KEYS
    if unknown:
        raise ValueError(f"{where}: {name!r} has unknown key(s) {sorted(unknown)} (a choice "
                         "entry takes 'choices' and 'when')")
    choices = entry["choices"]
    if not isinstance(choices, (list, tuple)) or not choices:
        raise ValueError(f"{where}: {name!r} 'choices' must be a non-empty list")
    for c in choices:
        if c is not None and not isinstance(c, (str, bool, int, float)):
            raise ValueError(f"{where}: {name!r} choice {c!r} is not a string, number, "
                             "boolean or None")


def _check_range(name, entry, where) -> None:
    unknown = set(entry) - _RANGE_KEYS
    if unknown:
        raise ValueError(f"{where}: {name!r} has unknown key(s) {sorted(unknown)} (a range "
                         "takes 'low', 'high', 'log', 'int' and 'when')")
    low, high = entry["low"], entry["high"]
    if not all(isinstance(v, Real) and not isinstance(v, bool) and math.isfinite(v)
               for v in (low, high)):
        raise ValueError(f"{where}: {name!r} 'low' and 'high' must be finite numbers")
    if not low < high:
        raise ValueError(f"{where}: {name!r} needs low < high, got {low} and {high}")
    if entry.get("log") and low <= 0:
        raise ValueError(f"{where}: {name!r} is searched on a log scale, so 'low' must be "
                         f"> 0, got {low}")
    if entry.get("int") and not (float(low).is_integer() and float(high).is_integer()):
        raise ValueError(f"{where}: {name!r} is an integer range, so 'low' and 'high' must "
                         "be whole numbers")


def _check_values(space: dict, spec, where: str) -> None:
    """The method's constraints accept every bound and choice."""
    for name, entry in space.items():
        values = entry["choices"] if "choices" in entry else [entry["low"], entry["high"]]
        for value in values:
            value = int(value) if entry.get("int") else value
            try:
                method = spec.factory(**{**spec.default_params, name: value})
                if getattr(method, "_parameter_constraints", None):
                    method._validate_params()
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{where}: {name}={value!r} is refused by the method: "
                                 f"{exc}") from None


def _as_list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def is_active(entry: dict, params: dict) -> bool:
    """Whether ``entry`` is searched given the parameters chosen so far (its ``when``)."""
    return all(params.get(other) in _as_list(allowed)
               for other, allowed in (entry.get("when") or {}).items())


def entry_text(entry: dict) -> str:
    """One entry as text: ``float in [0.001, 100], log``, ``one of kmeans, random``, with
    ``when solver=liblinear`` where it applies."""
    if "choices" in entry:
        text = "one of " + ", ".join(str(c) for c in entry["choices"])
    else:
        kind = "int" if entry.get("int") else "float"
        text = f"{kind} in [{entry['low']:g}, {entry['high']:g}]" + (
            ", log" if entry.get("log") else "")
    when = entry.get("when") or {}
    if when:
        text += " (when " + ", ".join(
            f"{k}={'|'.join(str(v) for v in _as_list(a))}" for k, a in when.items()) + ")"
    return text
