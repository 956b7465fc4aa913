"""Plans: the cells (method x params x dataset x seed) a run measures, and the ``--param``
grammar that sweeps parameters.

Equal parameter values are one cell (``C=1`` and ``C=1.0``; keys use
:func:`~xcbench.contract.method_params.canonical_params`), and each cell's
methods are built and their parameters validated before any cell runs.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from sklearn.model_selection import ParameterGrid

from ..contract.method_params import canonical_params, canonical_value  # noqa: F401 - re-exported


@dataclass(frozen=True)
class Cell:
    """One fit of a plan: a method with fixed build params on one dataset with one seed,
    measured once per combination of its query params (``queries``; one empty one if the
    method has none). Each measurement becomes one record."""

    method: str
    params: tuple  # sorted (name, value) pairs, hashable
    dataset: str
    seed: int
    queries: tuple = ((),)  # tuple of sorted (name, value) pair tuples

    @property
    def params_dict(self) -> dict:
        return dict(self.params)

    def run_params(self) -> list[dict]:
        """The params of each record this cell produces: build params + one query combo."""
        return [{**dict(self.params), **dict(q)} for q in self.queries]


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def parse_value(text: str):
    """Parse a parameter value: int, float, bool, None, else the string itself. A number
    spelt with a leading zero (``01``, as st's ``loss="01"``) stays a string."""
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    if re.fullmatch(r"[+-]?0\d+", text):
        return text
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_param_overrides(items: list[str]) -> dict:
    """``["softmax:C=0.1,1", "st:k+depth=50+8,100+7"]`` ->
    {"softmax": {"C": [0.1, 1]}, "st": {"k+depth": [(50, 8), (100, 7)]}}: names joined by
    ``+`` are swept together (zipped), not crossed. The same name given twice for a method
    sweeps the values of both (``softmax:C=1`` and ``softmax:C=2`` -> ``C=1,2``); a name both
    alone and in a ``+`` group is refused."""
    out: dict = {}
    for item in items or []:
        target, eq, values = item.partition("=")
        method, sep, name = target.rpartition(":")  # a method name may hold ':' (sklearn:)
        if not (sep and eq and method and name and values):
            raise ValueError(f"--param {item!r}: expected METHOD:NAME=V1[,V2...] or "
                             "METHOD:A+B=A1+B1,A2+B2, e.g. --param softmax:C=0.1,1")
        names = name.split("+")
        given = out.setdefault(method, {})
        clash = [k for k in given if k != name and set(k.split("+")) & set(names)]
        if clash:
            raise ValueError(f"--param {item!r}: {method} parameter(s) "
                             f"{', '.join(sorted(set(clash[0].split('+')) & set(names)))} "
                             f"already swept in {method}:{clash[0]}=...; give each name in one "
                             "--param")
        if len(names) == 1:
            given[name] = given.get(name, []) + [parse_value(v) for v in _split(values)]
            continue
        combos = [tuple(parse_value(x) for x in v.split("+")) for v in _split(values)]
        if any(len(c) != len(names) for c in combos):
            raise ValueError(f"--param {item!r}: each value needs {len(names)} parts joined "
                             f"by '+' (one per name in {name!r})")
        given[name] = given.get(name, []) + combos
    return out


def _unzip(params: dict) -> dict:
    """{"k+depth": (50, 8)} -> {"k": 50, "depth": 8}; other entries unchanged."""
    out = {}
    for key, value in params.items():
        out.update(zip(key.split("+"), value) if "+" in key else [(key, value)])
    return out


def _dedupe(values: list) -> list:
    """``values`` with equal ones (``1`` and ``1.0``) kept once, as first spelt."""
    first: dict = {}
    for v in values:
        first.setdefault(canonical_value(v), v)
    return list(first.values())


#: the largest seed: numpy's RandomState (and scikit-learn's ``random_state``) takes
#: integers in [0, 2**32 - 1]
MAX_SEED = 2 ** 32 - 1


def seed_problem(seed) -> str | None:
    """Why ``seed`` cannot seed a run (negative, or above ``MAX_SEED``), or None."""
    if seed < 0:
        return f"{seed} is negative (numpy seeds cannot be negative)"
    if seed > MAX_SEED:
        return (f"{seed} is above 2**32 - 1 = {MAX_SEED}, the largest seed numpy's "
                "RandomState and a method's random_state accept")
    return None


def expand_plan(methods, datasets, seeds=(0,), param_overrides=None,
                require_installed: bool = True) -> list[Cell]:
    """All cells: for each method its param grid (overrides replace grid entries), x datasets x seeds.

    ``param_overrides`` maps method name to {param: [values]}. Unknown methods or parameters
    raise KeyError/ValueError listing what is valid; with ``require_installed``, a method
    whose optional library is not installed raises MethodUnavailable (a ValueError) with its
    install command (a plan that is only read, as a suite's report reads it, passes False).
    Equal values (``1`` and ``1.0``) give one cell. A plan of more than ``MAX_PLAN_CELLS``
    cells is refused (ValueError) before any cell is listed.
    """
    from ..contract.plugins import get_method_spec

    from ..contract.availability import check_available

    param_overrides = param_overrides or {}
    specs = {name: get_method_spec(name) for name in dict.fromkeys(methods)}
    if require_installed:  # a missing optional library: refused before any cell runs
        check_available(specs.values())
    unknown = sorted(set(param_overrides) - set(methods))
    if unknown:
        from ..suggest import did_you_mean

        raise ValueError("parameters given for method(s) not in the plan: " + ", ".join(
            f"{name!r}{did_you_mean(name, methods)}" for name in unknown)
            + f"; the plan's methods: {', '.join(dict.fromkeys(methods))}")
    grids = {name: _method_grids(spec, param_overrides.get(name, {}))
             for name, spec in specs.items()}
    n_cells, n_measurements = plan_size(grids, datasets, seeds)
    if n_cells > MAX_PLAN_CELLS:
        raise ValueError(f"the plan has {n_cells:,} cells ({n_measurements:,} measurements), "
                         f"more than the {MAX_PLAN_CELLS:,} one plan may hold: sweep fewer "
                         "values, or split the grid into several runs or suites")
    cells = []
    for name, (grid, query_grid) in grids.items():
        queries = tuple(tuple(sorted(q.items())) for q in ParameterGrid(query_grid or [{}]))
        for params in map(_unzip, ParameterGrid(grid or [{}])):
            for dataset in dict.fromkeys(datasets):
                for seed in dict.fromkeys(int(s) for s in seeds):
                    cells.append(Cell(name, tuple(sorted(params.items())), dataset, seed,
                                      queries))
    return cells


#: the most cells one plan may hold: a larger grid is refused before it is expanded
#: (200 values of 4 parameters would need gigabytes just to list its cells)
MAX_PLAN_CELLS = 100_000


def _method_grids(spec, overrides: dict) -> tuple[dict, dict]:
    """(build grid, query grid) of the method of ``spec`` with ``overrides`` replacing its
    own grid entries; ValueError for unknown parameters or zipped query parameters."""
    name = spec.name
    check_param_names(spec, [part for key in overrides for part in key.split("+")])
    zipped = [key for key in overrides if "+" in key]
    if any(part in spec.query_params for key in zipped for part in key.split("+")):
        raise ValueError(f"query parameters of {name!r} cannot be swept together with '+'")
    grid = {**{k: _dedupe(v) for k, v in spec.param_grid.items()},
            **{k: _dedupe(v) for k, v in overrides.items() if k not in spec.query_params}}
    query_grid = {k: _dedupe(overrides.get(k, v)) for k, v in spec.query_params.items()}
    return grid, query_grid


def plan_size(grids: dict, datasets, seeds) -> tuple[int, int]:
    """(cells, measurements) of a plan of ``grids`` (method -> (build grid, query grid)),
    counted without listing them."""
    runs = len(dict.fromkeys(datasets)) * len(dict.fromkeys(int(s) for s in seeds))
    cells = measurements = 0
    for grid, query_grid in grids.values():
        n = len(ParameterGrid(grid or [{}])) * runs
        cells += n
        measurements += n * len(ParameterGrid(query_grid or [{}]))
    return cells, measurements


def check_param_names(spec, names) -> None:
    """ValueError naming each of ``names`` that ``spec``'s method does not take, with the
    valid names close to it ("did you mean") and all the valid ones."""
    from ..suggest import did_you_mean

    valid = spec.valid_params()
    unknown = [n for n in dict.fromkeys(names) if n not in valid]
    if unknown:
        raise ValueError(
            f"unknown parameter(s) for method {spec.name!r}: "
            + ", ".join(f"{n!r}{did_you_mean(n, valid)}" for n in unknown)
            + f"; valid parameters: {', '.join(valid)} (see `xcbench describe {spec.name}`)")


def cell_method_params(cell: Cell, valid_params) -> dict:
    """The constructor params of ``cell``'s method: its build params, plus ``random_state``
    (the cell's seed) when the method takes one and the params do not set it."""
    params = cell.params_dict
    if "random_state" in valid_params:
        params.setdefault("random_state", cell.seed)
    return params


def validate_cells(cells: list[Cell]) -> None:
    """Build each cell's method with each of its query combinations and check the values
    with scikit-learn's ``_validate_params`` where the method declares
    ``_parameter_constraints``; raise ValueError naming every bad cell, before any work."""
    from ..contract.plugins import get_method_spec

    problems = []
    for cell in dict.fromkeys((c.method, c.params, c.queries) for c in cells):
        name, params, queries = cell
        spec = get_method_spec(name)
        base = cell_method_params(Cell(name, params, "", 0, queries), spec.valid_params())
        for query in queries:
            values = {**base, **dict(query)}
            try:
                method = spec.make(**values)
                if getattr(method, "_parameter_constraints", None):
                    method._validate_params()
            except (TypeError, ValueError) as exc:
                shown = {k: v for k, v in values.items() if k != "random_state"}
                problems.append(f"{name} {shown}: {exc}")
    if problems:
        raise ValueError("invalid parameter values (nothing was run):\n  "
                         + "\n  ".join(dict.fromkeys(problems)))
