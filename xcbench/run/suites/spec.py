"""Read, check and plan a suite file (the format is described in ``xcbench.run.suites``)."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..reuse_from import resolve_folders

#: the suites shipped with xcbench, by name (files beside this module)
NAMED_SUITES = ("quick", "standard", "scaling")
#: run options a suite may set, with the ``xcbench run`` flag each stands for
RUN_OPTIONS = {"timeout": "--timeout", "threads": "--threads", "fit_threads": "--fit-threads",
               "latency_calls": "--latency-calls", "memory_limit": "--memory-limit"}
_TOP_KEYS = ("name", "description", "expected_wall", "out", "reuse_from", "datasets", "seeds",
             "options", "params", "query", "report", "runs")
_RUN_KEYS = ("name", "note", "methods", "datasets", "seeds", "params", "query", "options")
_REPORT_KEYS = ("title", "columns")


class SuiteError(ValueError):
    """A suite file that cannot be used; the message names the file and the place."""


@dataclass(frozen=True)
class SuiteRun:
    """One run of a suite: what one ``xcbench run`` command does. ``params`` maps a method
    to {name or "a+b": [values]} (build and query parameters, as ``--param`` gives them);
    ``options`` holds the run options this run sets (bytes for ``memory_limit``)."""

    label: str
    methods: tuple
    datasets: tuple
    seeds: tuple
    params: dict = field(default_factory=dict)
    query: dict = field(default_factory=dict)  # method -> names given under ``query``
    options: dict = field(default_factory=dict)

    def run_options(self, **overrides):
        """The RunOptions of this run (``overrides`` e.g. ``isolate=False`` win)."""
        from ..options import RunOptions

        return RunOptions(**{**self.options, **overrides})

    def cells(self) -> list:
        """The plan's cells (``xcbench.run.plan.expand_plan``): unknown methods or parameters
        raise ValueError/KeyError naming them. Methods whose library is not installed are
        planned (a report or ``--dry-run`` reads the plan); running them is refused
        (``execute_suite``)."""
        from ..plan import expand_plan

        return expand_plan(self.methods, self.datasets, self.seeds, self.params,
                           require_installed=False)


@dataclass(frozen=True)
class Suite:
    """A parsed suite file."""

    name: str
    description: str
    expected_wall: str | None
    runs: tuple
    path: Path | None = None
    out: Path | None = None  # default results folder (relative paths: from the file's folder)
    #: results folders whose records of this suite's measurements, made by the same code,
    #: ``--resume`` copies in instead of measuring (relative paths: from the file's folder)
    reuse_from: tuple = ()
    report: dict = field(default_factory=dict)  # title, columns of the report

    @property
    def methods(self) -> list[str]:
        return list(dict.fromkeys(m for r in self.runs for m in r.methods))

    @property
    def datasets(self) -> list[str]:
        return list(dict.fromkeys(d for r in self.runs for d in r.datasets))

    def only(self, names) -> "Suite":
        """The suite cut to the methods and datasets among ``names`` (a comma-separated
        string or a list): named methods keep only those methods, named datasets only those
        datasets. ValueError for a name the suite does not use."""
        from ...suggest import did_you_mean

        if isinstance(names, str):
            names = [n.strip() for n in names.split(",") if n.strip()]
        known = self.methods + self.datasets
        unknown = [n for n in names if n not in known]
        if unknown or not names:
            raise SuiteError(
                f"--only {','.join(names)!r}: " + "; ".join(
                    f"{n!r} is neither a method nor a dataset of suite {self.name!r}"
                    f"{did_you_mean(n, known)}" for n in unknown)
                + f" (its methods: {', '.join(self.methods)}; datasets: "
                  f"{', '.join(self.datasets)})")
        methods = set(names) & set(self.methods)
        datasets = set(names) & set(self.datasets)
        runs = []
        for run in self.runs:
            kept_m = tuple(m for m in run.methods if not methods or m in methods)
            kept_d = tuple(d for d in run.datasets if not datasets or d in datasets)
            if kept_m and kept_d:
                runs.append(replace(run, methods=kept_m, datasets=kept_d,
                                    params={m: p for m, p in run.params.items() if m in kept_m},
                                    query={m: q for m, q in run.query.items() if m in kept_m}))
        return replace(self, runs=tuple(runs))


def named_suite_path(name: str) -> Path:
    """The file of the named suite ``name``."""
    return Path(__file__).with_name(f"{name}.toml")


def load_suite(path_or_name) -> Suite:
    """The suite in file ``path_or_name``, or the named suite of that name (``quick``,
    ``standard``, ``scaling``). SuiteError (a ValueError) names what is wrong."""
    path = Path(path_or_name)
    if not path.is_file() and str(path_or_name) in NAMED_SUITES:
        path = named_suite_path(str(path_or_name))
    if not path.is_file():
        from ...suggest import did_you_mean

        raise SuiteError(f"--suite {path_or_name}: no such file, and not a named suite"
                         f"{did_you_mean(str(path_or_name), NAMED_SUITES)} (named suites: "
                         f"{', '.join(NAMED_SUITES)})")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"{path}: not valid TOML: {exc}") from None
    return parse_suite(data, path)


def parse_suite(data: dict, path: Path | None = None) -> Suite:
    """A Suite from the parsed TOML ``data`` (``path`` for messages and ``out``). Checks the
    file's shape and the run option values; method and parameter names are checked when
    the cells are planned (:func:`suite_cells`)."""
    where = str(path) if path else "suite"
    _check_keys(data, _TOP_KEYS, where)
    runs_data = data.get("runs")
    if not isinstance(runs_data, list) or not runs_data:
        raise SuiteError(f"{where}: needs at least one [[runs]] table (methods to run)")
    datasets = _names(data.get("datasets", []), f"{where}: datasets")
    seeds = _seeds(data.get("seeds", [0]), f"{where}: seeds")
    options = _options(data.get("options", {}), f"{where}: [options]")
    shared = _method_grids(data, where, methods=None)
    runs = tuple(_parse_run(run, i, where, datasets, seeds, options, shared)
                 for i, run in enumerate(runs_data, 1))
    report = data.get("report", {})
    _check_keys(report, _REPORT_KEYS, f"{where}: [report]")
    base = Path(path).parent if path else None
    out = data.get("out")
    if out is not None:
        out = resolve_folders([out], base)[0]
    reuse_from = resolve_folders(_names(data.get("reuse_from", []), f"{where}: reuse_from"),
                                 base)
    name = data.get("name") or (Path(path).stem if path else "suite")
    suite = Suite(name=str(name), description=str(data.get("description", "")),
                  expected_wall=data.get("expected_wall"), runs=runs,
                  path=Path(path) if path else None, out=out, reuse_from=tuple(reuse_from),
                  report=dict(report))
    unused = [m for m in shared[0] if m not in suite.methods]
    if unused:
        from ...suggest import did_you_mean

        raise SuiteError(f"{where}: top-level params/query of " + ", ".join(
            f"{m}{did_you_mean(m, suite.methods)}" for m in unused)
            + f", which no run lists among its methods ({', '.join(suite.methods)})")
    return suite


def _parse_run(run, index, where, datasets, seeds, options, shared) -> SuiteRun:
    label = f"{where}: runs[{index}]"
    if not isinstance(run, dict):
        raise SuiteError(f"{label}: expected a table")
    _check_keys(run, _RUN_KEYS, label)
    if run.get("name"):
        label = f"{label} ({run['name']})"
    methods = _names(run.get("methods"), f"{label}: methods")
    if not methods:
        raise SuiteError(f"{label}: names no methods (methods = [\"...\"])")
    run_datasets = _names(run["datasets"], f"{label}: datasets") if "datasets" in run \
        else datasets
    if not run_datasets:
        raise SuiteError(f"{label}: no datasets (set datasets here or at the top of the file)")
    run_seeds = _seeds(run["seeds"], f"{label}: seeds") if "seeds" in run else seeds
    params, query = _with_shared(_method_grids(run, label, methods), shared, methods)
    run_options = {**options, **_options(run.get("options", {}), f"{label}: options")}
    return SuiteRun(label=label, methods=tuple(methods), datasets=tuple(run_datasets),
                    seeds=tuple(run_seeds), params=params, query=query, options=run_options)


def _method_grids(table, label, methods) -> tuple[dict, dict]:
    """The ``params`` and ``query`` tables of a run (or of the file's top level, where
    ``methods`` is None: any method) as (method -> grid, method -> query names)."""
    params, query = {}, {}
    for section in ("params", "query"):
        sub = table.get(section, {})
        if not isinstance(sub, dict):
            raise SuiteError(f"{label}: {section} must be a table of methods")
        for method, grid in sub.items():
            if methods is not None and method not in methods:
                from ...suggest import did_you_mean

                raise SuiteError(f"{label}: {section}.{method} names a method not in this "
                                 f"run's methods{did_you_mean(method, methods)} "
                                 f"({', '.join(methods)})")
            grid = _grid(grid, f"{label}: {section}.{method}")
            clash = set(grid) & set(params.get(method, {}))
            if clash:
                raise SuiteError(f"{label}: {', '.join(sorted(clash))} of {method} given "
                                 "under both params and query")
            params.setdefault(method, {}).update(grid)
            if section == "query":
                query[method] = tuple(grid)
    return params, query


def _with_shared(own, shared, methods) -> tuple[dict, dict]:
    """A run's grids with the top-level ones of its methods added: a run's own value of a
    parameter (alone or inside an ``a+b`` key) replaces the top level's."""
    (params, query), (shared_params, shared_query) = own, shared
    merged_params, merged_query = {}, {}
    for method in methods:
        mine = params.get(method, {})
        taken = {part for key in mine for part in key.split("+")}
        inherited = {key: values for key, values in shared_params.get(method, {}).items()
                     if not taken & set(key.split("+"))}
        if inherited or mine:
            merged_params[method] = {**inherited, **mine}
        names = [n for n in shared_query.get(method, ()) if n in inherited] \
            + list(query.get(method, ()))
        if names:
            merged_query[method] = tuple(names)
    return merged_params, merged_query


def _check_keys(table, allowed, where) -> None:
    from ...suggest import did_you_mean

    if not isinstance(table, dict):
        raise SuiteError(f"{where}: expected a table")
    unknown = [k for k in table if k not in allowed]
    if unknown:
        raise SuiteError(f"{where}: unknown key(s) " + ", ".join(
            f"{k!r}{did_you_mean(k, allowed)}" for k in unknown)
            + f"; allowed: {', '.join(allowed)}")


def _names(value, where) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise SuiteError(f"{where}: expected a list of names, got {value!r}")
    return list(dict.fromkeys(value))


def _seeds(value, where) -> list[int]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value \
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise SuiteError(f"{where}: expected a list of integers, got {value!r}")
    from ..plan import seed_problem

    for seed in value:
        if seed_problem(seed):
            raise SuiteError(f"{where}: seed {seed_problem(seed)}")
    return list(dict.fromkeys(value))


def _value(value, where):
    """A TOML parameter value as the command line would give it: the strings ``none`` and
    ``null`` mean None (TOML has no null), other values are kept."""
    if isinstance(value, str) and value.lower() in ("none", "null"):
        return None
    if isinstance(value, (dict, list)):
        raise SuiteError(f"{where}: a parameter value cannot be a {type(value).__name__} "
                         f"({value!r})")
    if not isinstance(value, (str, int, float, bool)):  # TOML dates and times
        raise SuiteError(f"{where}: unsupported value {value!r}")
    return value


def _grid(table, where) -> dict:
    """{name: [values]} of one method; a single value stands for a one-value list, and a
    name ``a+b`` takes a list of [a, b] pairs (swept together, as ``--param``'s ``+``)."""
    if not isinstance(table, dict):
        raise SuiteError(f"{where}: expected a table of parameter = [values]")
    grid = {}
    for name, values in table.items():
        parts = name.split("+")
        at = f"{where}.{name}"
        if not all(parts):
            raise SuiteError(f"{at}: empty parameter name")
        values = values if isinstance(values, list) else [values]
        if not values:
            raise SuiteError(f"{at}: no values")
        if len(parts) == 1:
            grid[name] = [_value(v, at) for v in values]
            continue
        combos = []
        for combo in values:
            if not isinstance(combo, list) or len(combo) != len(parts):
                raise SuiteError(f"{at}: each value must be a list of {len(parts)} values "
                                 f"(one per name), got {combo!r}")
            combos.append(tuple(_value(v, at) for v in combo))
        grid[name] = combos
    return grid


def _options(table, where) -> dict:
    """Run option values checked as ``RunOptions`` checks them; ``memory_limit`` may be a
    size such as ``"4G"``, ``timeout`` a duration such as ``"15m"``."""
    from ..durations import parse_duration
    from ..memory import parse_size
    from ..options import RunOptions

    _check_keys(table, tuple(RUN_OPTIONS), where)
    options = dict(table)
    try:
        if options.get("memory_limit") is not None:
            options["memory_limit"] = parse_size(options["memory_limit"])
        if isinstance(options.get("timeout"), str):
            options["timeout"] = parse_duration(options["timeout"])
        RunOptions(**options)
    except (TypeError, ValueError) as exc:
        message = str(exc)
        for name in RUN_OPTIONS:
            message = message.replace(f"The '{name}' parameter of RunOptions", name)
        raise SuiteError(f"{where}: {message}") from None
    return options
