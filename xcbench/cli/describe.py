"""``xcbench describe NAME``: what a method takes (parameters, defaults, accepted values,
query-time parameters, how to sweep them) or what a dataset is (source, status, shape)."""
from __future__ import annotations

import inspect
from pathlib import Path

from ..contract.method_params import REQUIRED, method_parameters, value_text

KINDS = ("method", "dataset")
#: a generated dataset is built by ``describe`` to show its shape up to this many values
CHEAP_GENERATED_VALUES = 5_000_000


def doc_summary(obj) -> str:
    """The first paragraph of ``obj``'s docstring, on one line ('' without one)."""
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.strip().split("\n\n")[0].split())


def _example_value(default):
    """Two values to sweep around ``default`` for the --param example, or None."""
    if isinstance(default, bool) or not isinstance(default, (int, float)):
        return None
    if isinstance(default, int):
        return (default, default * 2 if default else 1)
    return (default / 10, default) if default else (0.1, 1.0)


def sweep_example(spec, params) -> str:
    """An ``xcbench run`` command sweeping one numeric parameter of ``spec`` (and its
    query-time parameters, which share one fit)."""
    args = []
    for p in params:
        values = _example_value(p.default) if not p.is_query else None
        if values and p.name != "random_state":
            args.append(f"--param {spec.name}:{p.name}={','.join(map(value_text, values))}")
            break
    for p in params:
        if p.is_query:
            values = ",".join(map(value_text, p.query_values))
            args.append(f"--param {spec.name}:{p.name}={values}")
    args = args or [f"--param {spec.name}:NAME=V1,V2"]
    return f"xcbench run --methods {spec.name} " + " ".join(args)


def describe_method(spec, full_doc: bool = False) -> str:
    """A readable page about the registered method ``spec`` (with its whole docstring
    when ``full_doc``, else the first paragraph)."""
    params = method_parameters(spec)
    lines = [f"method {spec.name}  ({spec.family}; plugin {spec.plugin or 'in-process'})",
             f"  {spec.description}"]
    if full_doc and inspect.getdoc(spec.factory):
        lines += ["", *("  " + line for line in inspect.getdoc(spec.factory).splitlines())]
    elif doc_summary(spec.factory):
        lines += ["", *_wrap(doc_summary(spec.factory), "  "),
                  f"  (the whole docstring: xcbench describe method {spec.name} --doc)"]
    lines += ["", "parameters (name, default, accepted values):"]
    width = max([len(p.name) for p in params] + [4])
    shown = [value_text(p.default) if p.default is not REQUIRED else REQUIRED for p in params]
    dwidth = max([len(s) for s in shown] + [7])
    for p, default in zip(params, shown):
        notes = []
        if p.is_query:
            notes.append("query-time: measured at " + ", ".join(map(value_text, p.query_values))
                         + " on one fit")
        if p.grid is not None:
            notes.append("swept by default: " + ", ".join(map(value_text, p.grid)))
        line = f"  {p.name:<{width}}  {default:<{dwidth}}  {p.constraint}"
        lines.append(line + "".join(f"  [{n}]" for n in notes))
    if not params:
        lines.append("  (none)")
    query = [p.name for p in params if p.is_query]
    lines += ["", "query-time parameters (changed on a fitted model, no refit): "
              + (", ".join(query) if query else "none")]
    lines += ["", "sweep with --param METHOD:NAME=V1,V2 (several --param are crossed; "
                  "A+B=a1+b1,a2+b2 sweeps A and B together):",
              f"  {sweep_example(spec, params)}"]
    return "\n".join(lines + _search_space_lines(spec))


def _search_space_lines(spec) -> list[str]:
    """What ``xcbench tune`` searches for ``spec``'s method (docs/tuning.md)."""
    from ..contract.search_space import entry_text

    if not spec.search_space:
        return ["", "search space of xcbench tune: none declared"]
    width = max(len(name) for name in spec.search_space) + 1
    return ["", f"search space of xcbench tune (xcbench tune {spec.name} --dataset D):",
            *(f"  {name + ':':<{width}}  {entry_text(entry)}"
              for name, entry in spec.search_space.items())]


def _wrap(text: str, indent: str, width: int = 92) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent)


def dataset_shape(spec, status: str, where: Path) -> str:
    """``N_train=..., N_test=..., D=..., K=...`` when the dataset is cached or cheap to
    generate, else why it is not shown."""
    size = spec.params.get("n_train", 0) * spec.params.get("n_features", 0)
    cheap = status == "generated" and 0 < size <= CHEAP_GENERATED_VALUES
    if status == "cached" or cheap:
        stats = spec.load(where).stats
        kind = (f"sparse, density {stats['density']:.3g}" if stats["sparse"] else "dense")
        return (f"N_train={stats['n_train']:,}  N_test={stats['n_test']:,}  "
                f"D={stats['n_features']:,}  K={stats['n_classes']:,}  ({kind})")
    return {"generated": "not computed (generated when a run loads it; see the description)",
            "your-files": "not computed (read from the files when a run loads them)",
            "local": "not built yet (its source files are here; a run builds it)",
            "downloadable": "not downloaded (a run downloads it)",
            "missing": "not downloaded, and some source has no URL: put the files in the "
                       "data directory"}.get(status, f"unknown ({status})")


def describe_dataset(spec, data_dir=None) -> str:
    """A readable page about the registered dataset ``spec``: description, status in the
    data directory, shape (when cheap), provenance and sources."""
    from ..data import data_dir as resolve
    from ..data.status import dataset_status

    where = resolve(data_dir)
    status = dataset_status(spec, where)
    lines = [f"dataset {spec.name}  ({spec.task}; plugin {spec.plugin or 'in-process'}; "
             f"version {spec.version})", f"  {spec.description}", "",
             f"status: {status}" + ("" if status == "your-files" else
                                    f"  (data directory: {where})"),
             f"shape:  {dataset_shape(spec, status, where)}"]
    for label, value in (("format", spec.format), ("split", spec.split),
                         ("preprocessing", spec.preprocessing), ("citation", spec.citation),
                         ("licence", spec.licence)):
        if value:
            lines += _wrap(f"{label}: {value}", "", 92)
    if spec.params:
        lines.append("parameters: " + ", ".join(f"{k}={value_text(v)}"
                                                for k, v in spec.params.items()))
    if spec.sources:
        lines.append("sources:")
    for source in spec.sources:
        lines += _source_lines(source, "  ")
    return "\n".join(lines)


def _source_lines(source, indent: str) -> list[str]:
    role = f" ({source.role})" if source.role else ""
    lines = [f"{indent}{source.filename}{role}",
             f"{indent}  url:    {source.url or '(none: place the file yourself)'}",
             f"{indent}  sha256: {source.sha256 or '(not pinned; recorded when used)'}"]
    if source.fallback is not None:
        lines.append(f"{indent}  or, when absent:")
        lines += _source_lines(source.fallback, indent + "    ")
    return lines


def describe(name: str, kind: str | None = None, data_dir=None,
             full_doc: bool = False) -> str:
    """The description of the method and/or dataset called ``name`` (``kind`` picks one
    when a name is both); KeyError with close names when there is neither."""
    from ..contract.plugins import dataset_specs, lookup, method_specs

    if name.startswith("file:") and kind != "method":  # the user's files (docs/own-data.md)
        from ..data import get_dataset_spec

        return describe_dataset(get_dataset_spec(name), data_dir)
    methods, datasets = method_specs(), dataset_specs()
    if name not in methods and kind != "dataset":  # a name a plugin resolves (sklearn:)
        from ..contract.plugins import get_plugin_manager

        resolved = get_plugin_manager().hook.resolve_method(name=name)
        if resolved is not None:
            methods = {**methods, name: resolved}
    if kind == "method":
        return describe_method(lookup(methods, name, "method"), full_doc)
    if kind == "dataset":
        return describe_dataset(lookup(datasets, name, "dataset"), data_dir)
    pages = ([describe_method(methods[name], full_doc)] if name in methods else []) \
        + ([describe_dataset(datasets[name], data_dir)] if name in datasets else [])
    if not pages:
        from ..suggest import did_you_mean

        raise KeyError(f"no method or dataset is called {name!r}"
                       f"{did_you_mean(name, [*methods, *datasets])}; see `xcbench list "
                       "methods` and `xcbench list datasets`")
    return "\n\n".join(pages)


def cmd_describe(args) -> int:
    words = args.words
    if len(words) == 2 and words[0] in KINDS:
        kind, name = words
    elif len(words) == 1:
        kind, name = None, words[0]
    else:
        raise ValueError(f"describe {' '.join(words)!r}: expected NAME, `method NAME` or "
                         "`dataset NAME`, e.g. xcbench describe st")
    print(describe(name, kind, args.data_dir, full_doc=args.doc))
    return 0


def add_parser(subparsers, add_common) -> None:
    """Register ``xcbench describe`` (``add_common`` adds the shared options)."""
    p = subparsers.add_parser(
        "describe", help="describe a method (parameters, defaults, accepted values) or a "
                         "dataset (source, status, shape)",
        usage="%(prog)s [-h] [--doc] [--debug] [--data-dir DATA_DIR] [method|dataset] NAME",
        description="Describe a registered method: its parameters with defaults, accepted "
                    "values and query-time parameters, and how to sweep them; or a dataset: "
                    "its description, status in the data directory, shape, and sources. Use "
                    "`describe method NAME` or `describe dataset NAME` when a name is both.")
    p.add_argument("words", nargs="+", metavar="[method|dataset] NAME")
    p.add_argument("--doc", action="store_true",
                   help="print a method's whole docstring, not only its first paragraph")
    add_common(p, out=False)
    p.set_defaults(func=cmd_describe)
