"""Markdown tables of run results."""
from __future__ import annotations

import math

from ..store.compile_share import (FIT_TIME_COLUMNS, INCLUDES_COMPILE_MARK,
                                   includes_compile_footnote)
from .aggregate import group_rows
from .columns import COLUMNS, select_columns
from .machines import machine_labeller, machines, mixed_machines_notice, short_machine_names
from .numbers import mean_pm_std, percent
from .params import params_column
from .provenance import provenance_line
from .ranking import ranking_lines
from .significance import BEST, UNKNOWN, VS_BEST_DOC, row_key as row_identity


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return lines + ["| " + " | ".join(_escape(c) for c in row) + " |" for row in rows]


def dataset_header(records: list[dict]) -> list[str]:
    """Lines describing the dataset of these records (size, checksum, Bayes error)."""
    r = records[0]
    st = r.get("dataset_stats") or {}
    lines = [f"## {r['dataset']}", ""]
    if r.get("dataset_description"):
        lines += [r["dataset_description"] + ".", ""]
    lines += [f"N_train={st.get('n_train')}, N_test={st.get('n_test')}, D={st.get('n_features')}, "
             f"K={st.get('n_classes')}; dataset version {r.get('dataset_version')}, "
             f"checksum `{r.get('dataset_checksum')}`."]
    if r.get("dataset_sources"):
        sources = sorted(r["dataset_sources"].items())
        lines.append("Source files (SHA-256): " + ", ".join(
            f"{role} `{digest[:16]}…`" for role, digest in sources) + ".")
    if st.get("bayes_error") is not None:
        lines.append(f"Bayes error (the floor any classifier can reach): "
                     f"{percent(st['bayes_error'])} ± {percent(st.get('bayes_error_se', 0))} "
                     "(Monte Carlo standard error).")
    if st.get("note"):
        lines.append(str(st["note"]))
    return lines + [""]


def _machine_lines(records: list[dict]) -> list[str]:
    names = machines(records)
    if len(names) > 1:
        return [f"Machines: {'; '.join(names)} (each table says which measured what).", ""]
    env = records[0].get("environment", {}) if records else {}
    if not env:
        return []
    host = f"{env['host']}, " if env.get("host") else ""
    return [f"Machine: {host}{env.get('cpu')} ({env.get('cpu_count')} CPUs), "
            f"{env.get('threads')} thread(s) per run; Python {env.get('python')}, "
            f"numpy {env.get('numpy')}, scikit-learn {env.get('sklearn')}, "
            f"xcbench {env.get('xcbench')}.", ""]


def column_glossary(columns) -> list[str]:
    """Markdown lines of the glossary closing a report: what each table column shows."""
    body = [["params", "set: the values the run was given (auto->V: what an auto value "
                       "resolved to); resolved: every other value it used, defaults and the "
                       "method's own choices, to 3 significant digits (defaults: a record "
                       "older than that)"],
            ["seeds", "runs averaged in the row"]]
    body += [[c.header, c.doc] for c in columns]
    lines = ["## Columns", "", "Mean ± std over seeds, three significant digits; n/a where a "
             "method does not measure a quantity.", ""] + _table(["column", "meaning"], body)
    hidden = [c.name for c in COLUMNS if c not in columns]
    if hidden:
        lines += ["", "More with `xcbench report --columns NAME,...` (or `--columns all`): "
                  + ", ".join(f"`{n}`" for n in hidden) + "."]
    return lines + [""]


def _shown_columns(rows: list[dict], columns, drop_empty: bool):
    """``columns``, less those no row has a value for when ``drop_empty``."""
    if not drop_empty:
        return columns
    return [c for c in columns
            if any(not math.isnan(r["values"][c.name][0]) for r in rows)] or columns


def results_table(rows: list[dict], columns, with_machine: bool,
                  vs_best: dict | None = None) -> list[str]:
    """Markdown lines of one table: one line per row of ``group_rows``; a ``commit`` column
    when the rows come from several commits, and a ``vs best`` column from ``vs_best``
    ({row identity: text}, see ``significance.vs_best``) when given. Fit times that include
    numba's JIT (records older than ``compile_seconds``) are marked, with a footnote."""
    with_commit = len({c for row in rows for c in row.get("commits", [])}) > 1
    if vs_best and not any(vs_best.get(row_identity(r)) not in (None, BEST, UNKNOWN)
                           for r in rows):
        vs_best = None  # no row could be tested (no raw outputs): no column of n/a
    head = ["method", "params"] + (["machine"] if with_machine else []) \
        + (["commit"] if with_commit else []) + ["seeds"] + (["vs best"] if vs_best else [])
    body, short = [], short_machine_names({row["machine"] for row in rows})
    for row in rows:
        cells = [row["method"], params_column(row["params"], row["effective_params"])]
        cells += [short[row["machine"]]] if with_machine else []
        cells += [", ".join(row.get("commits", []))] if with_commit else []
        cells.append(str(row["n_seeds"]))
        if vs_best:
            cells.append(vs_best.get(row_identity(row), UNKNOWN))
        for c in columns:
            mean, std = row["values"][c.name]
            cells.append(mean_pm_std(mean, std if row["n_seeds"] > 1 else None)
                         + _compile_mark(row, c))
        body.append(cells)
    lines = _table(head + [c.header for c in columns], body)
    marked = sum(any(_compile_mark(row, c) for c in columns) for row in rows)
    return lines + (["", includes_compile_footnote(marked)] if marked else [])


def _compile_mark(row: dict, column) -> str:
    """The marker of a fit-time cell whose runs' fit times include numba's JIT, else ''."""
    if column.name in FIT_TIME_COLUMNS and row.get("fit_includes_compile") \
            and not math.isnan(row["values"][column.name][0]):
        return " " + INCLUDES_COMPILE_MARK
    return ""


def failed_table(records: list[dict]) -> list[str]:
    """Markdown lines listing the runs of ``records`` that did not finish ok."""
    failed = [r for r in records if r["status"] != "ok"]
    if not failed:
        return []
    body = [[r["method"], params_column(r["params"], r.get("effective_params"),
                                        r.get("resolved_params") or ()),
             str(r["seed"]), r["status"],
             ((r.get("error") or "").strip().splitlines() or [""])[0]] for r in failed]
    return ["", "Runs that did not finish:", ""] + _table(
        ["method", "params", "seed", "status", "error"], body)


def markdown_report(records: list[dict], title="xcbench report", command=None,
                    plots: dict | None = None, family_plots: dict | None = None,
                    columns: str | None = None, vs_best: dict | None = None) -> str:
    """A markdown report: with several datasets a cross-dataset ranking first, then per
    dataset one row per method, params and machine, failed runs and the dataset's plots
    (``plots``: {dataset: [(caption, file name)]}); a glossary of the columns last.

    ``columns`` names the columns to show (comma-separated or ``all``, see
    ``xcbench.report.columns``); by default a short set, less columns no row measured.
    Under each dataset's heading a line names the commit(s) and machine(s) of its records;
    ``vs_best`` adds the ``vs best`` column (``significance.vs_best``).
    """
    selected = select_columns(columns)
    lines = [f"# {title}", ""]
    # the commands that produced the records (in order), then the one writing the report
    commands = [c for c in dict.fromkeys([*(r.get("command") for r in records), command]) if c]
    if commands:
        lines += ["Generated by:", "", "```", *commands, "```", ""]
    lines += _machine_lines(records)
    if vs_best and any(v not in (BEST, UNKNOWN) for v in vs_best.values()):
        lines += [VS_BEST_DOC, ""]
    rows = group_rows(records)
    lines += ranking_lines(rows)
    shown_columns = []
    for dataset in sorted({r["dataset"] for r in records}):
        ds_records = [r for r in records if r["dataset"] == dataset]
        ds_rows = [r for r in rows if r["dataset"] == dataset]
        lines += dataset_header(ds_records)
        lines += [provenance_line(ds_records, records), ""]
        notice = mixed_machines_notice([r for r in ds_records if r["status"] == "ok"],
                                       machine_labeller(records))
        if notice:
            lines += [notice, ""]
        if ds_rows:
            ds_columns = _shown_columns(ds_rows, selected, columns is None)
            shown_columns += [c for c in ds_columns if c not in shown_columns]
            lines += results_table(ds_rows, ds_columns, with_machine=notice is not None,
                                   vs_best=vs_best)
        lines += failed_table(ds_records)
        for caption, name in (plots or {}).get(dataset, []):
            lines += ["", f"![{caption}]({name})"]
        lines.append("")
    for family, name in sorted((family_plots or {}).items()):
        lines += [f"## Latency vs number of classes: {family}", "",
                  f"![single-example latency vs K on {family}]({name})", ""]
    lines += column_glossary([c for c in selected if c in shown_columns] or selected)
    return "\n".join(lines)

