"""``xcbench compare OUT_A OUT_B``: the same cells measured twice (two versions, two
machines), side by side, with B/A ratios of top-1 error, p50 latency and fit time.

Cells are matched by what was measured (method, params, query params, dataset, seed), not by
record key, because the key includes the xcbench version. When one side holds several
records of a cell (other run options, or reruns), the newest (``started_at``) is compared.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

from ..contract.method_params import canonical_params, params_text
from ..numbers import sig3
from .compile_share import compare_compile_notes
from .compare_stats import (STATISTICS_COLUMNS, cell_statistics, side_differences,
                            statistics_columns, statistics_markdown)
from .export import add_output_options, rows_to_csv, stored_records, write_output
from .provenance import record_code, short_commit

FORMATS = ("markdown", "csv")


def cell_identity(record: dict) -> tuple:
    """What a record measured: (method, params, dataset, seed, query params), with the
    params in canonical JSON (``C=1`` and ``C=1.0`` match)."""
    def canonical(params):
        return json.dumps(canonical_params(params or {}), sort_keys=True, default=str)

    return (record["method"], canonical(record.get("params")), record["dataset"],
            int(record["seed"]), canonical(record.get("query_params")))


def newest_by_cell(records: list[dict]) -> dict:
    """{cell identity: the newest record of that cell}."""
    out: dict = {}
    for record in sorted(records, key=lambda r: r.get("started_at") or ""):
        out[cell_identity(record)] = record
    return out


def _number(record: dict | None, section: str, name: str) -> float | None:
    """A finite number from ``record[section][name]`` of an ``ok`` record, else None."""
    if not record or record.get("status") != "ok":
        return None
    value = (record.get(section) or {}).get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value):
        return None
    return float(value)


def ratio(a: float | None, b: float | None) -> float | None:
    """``b / a``; 1 when both are equal (also both 0); None when either is missing or
    ``a`` is not positive (no finite ratio)."""
    if a is None or b is None:
        return None
    if a == b:
        return 1.0
    return b / a if a > 0 else None


@dataclass
class CellComparison:
    """One cell and its record on each side (None on the side that lacks it)."""

    method: str
    params: dict
    dataset: str
    seed: int
    a: dict | None
    b: dict | None

    @property
    def side(self) -> str:
        """``both``, ``A`` (only in A) or ``B`` (only in B)."""
        return "both" if self.a and self.b else ("A" if self.a else "B")

    def value(self, which: str, section: str, name: str) -> float | None:
        return _number(self.a if which == "A" else self.b, section, name)

    def ratio(self, section: str, name: str) -> float | None:
        return ratio(self.value("A", section, name), self.value("B", section, name))

    @property
    def error_ratio(self):
        return self.ratio("metrics", "top1_error")

    @property
    def p50_ratio(self):
        return self.ratio("summary", "latency_p50_ms")

    @property
    def fit_ratio(self):
        return self.ratio("summary", "fit_seconds")


def match_cells(records_a: list[dict], records_b: list[dict]) -> list[CellComparison]:
    """Every cell of either side, sorted by method, dataset, params and seed."""
    a, b = newest_by_cell(records_a), newest_by_cell(records_b)
    cells = []
    for identity in sorted(set(a) | set(b), key=lambda i: (i[0], i[2], i[1], i[3], i[4])):
        record = a.get(identity) or b.get(identity)
        cells.append(CellComparison(record["method"], record.get("params") or {},
                                    record["dataset"], int(record["seed"]),
                                    a.get(identity), b.get(identity)))
    return cells


def geometric_mean(values) -> float | None:
    """The geometric mean of the positive finite ``values`` (None if there are none)."""
    logs = [math.log(v) for v in values if v is not None and math.isfinite(v) and v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else None


@dataclass
class MethodSummary:
    """Geometric-mean B/A ratios of one method over its cells measured ok on both sides."""

    method: str
    cells: int
    error_ratio: float | None
    p50_ratio: float | None
    fit_ratio: float | None


def method_summaries(cells: list[CellComparison]) -> list[MethodSummary]:
    """One MethodSummary per method with a cell on both sides."""
    out = []
    for method in dict.fromkeys(c.method for c in cells):
        both = [c for c in cells if c.method == method and c.side == "both"]
        if both:
            out.append(MethodSummary(method, len(both),
                                     geometric_mean(c.error_ratio for c in both),
                                     geometric_mean(c.p50_ratio for c in both),
                                     geometric_mean(c.fit_ratio for c in both)))
    return out


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def _params_label(params: dict) -> str:
    return params_text(params)


def _error_cell(cell: CellComparison, which: str) -> str:
    """The top-1 error of one side in percent, to three digits as the report tables show
    it (or the side's status)."""
    record = cell.a if which == "A" else cell.b
    if record.get("status") != "ok":
        return record.get("status", "?")
    value = cell.value(which, "metrics", "top1_error")
    return "–" if value is None else sig3(100 * value)


def side_label(out, records: list[dict]) -> str:
    """``OUT (N records; xcbench V at COMMIT; CPU, N CPUs)`` with every distinct
    version, commit (``+dirty`` with uncommitted changes) and machine of the records."""
    envs = dict.fromkeys(
        (e.get("xcbench"), short_commit(record_code(r)), e.get("cpu"), e.get("cpu_count"))
        for r, e in ((r, r.get("environment") or {}) for r in records))
    shown = "; ".join(f"xcbench {v}" + (f" at {c}" if c != "unknown commit" else "")
                      + f", {cpu}, {n} CPUs" for v, c, cpu, n in envs)
    return f"{out} ({len(records)} records; {shown})"


def comparison_markdown(cells: list[CellComparison], label_a: str, label_b: str,
                        notes: list[str] = ()) -> str:
    """The comparison as markdown: header (and ``notes``, e.g. warnings), per-cell table,
    per-method geometric means and the cells only one side has."""
    lines = ["# xcbench compare", "", f"- A: {label_a}", f"- B: {label_b}",
             "- ratios are B/A: below 1, B has the lower error, latency or fit time; "
             "– where a side did not finish ok", "", *notes]
    both = [c for c in cells if c.side == "both"]
    if not both:
        counts = {side: len({cell_identity(r) for r in records})
                  for side, records in (("A", [c.a for c in cells if c.a]),
                                        ("B", [c.b for c in cells if c.b]))}
        lines += [f"No cell was measured on both sides (A has {counts['A']} cells, B "
                  f"has {counts['B']}): cells match by method, parameter values, query "
                  "parameters, dataset and seed. Compare folders of the same plan, e.g. "
                  "the same `xcbench run` command on two versions or machines."]
    else:
        lines += ["| method | params | dataset | seed | top-1 error A (%) | "
                  "top-1 error B (%) | error B/A | p50 latency B/A | fit time B/A |",
                  "|---|---|---|---|---|---|---|---|---|"]
        lines += [f"| {c.method} | {_params_label(c.params)} | {c.dataset} | {c.seed} | "
                  f"{_error_cell(c, 'A')} | {_error_cell(c, 'B')} | {_fmt(c.error_ratio)} | "
                  f"{_fmt(c.p50_ratio)} | {_fmt(c.fit_ratio)} |" for c in both]
        lines += ["", "## Geometric mean of the ratios, per method (cells ok on both sides)",
                  "", "| method | cells | top-1 error B/A | p50 latency B/A | fit time B/A |",
                  "|---|---|---|---|---|"]
        lines += [f"| {s.method} | {s.cells} | {_fmt(s.error_ratio)} | {_fmt(s.p50_ratio)} | "
                  f"{_fmt(s.fit_ratio)} |" for s in method_summaries(cells)]
    for side in ("A", "B"):
        only = [c for c in cells if c.side == side]
        lines += ["", f"## Only in {side} ({len(only)})", ""]
        lines += [f"- {c.method} {_params_label(c.params)} on {c.dataset} seed {c.seed} "
                  f"({(c.a or c.b)['status']})" for c in only] or ["(none)"]
    return "\n".join(lines) + "\n"


CSV_COLUMNS = ["side", "method", "params", "dataset", "seed", "status_a", "status_b",
               "top1_error_a", "top1_error_b", "top1_error_ratio", "latency_p50_ms_a",
               "latency_p50_ms_b", "latency_p50_ms_ratio", "fit_seconds_a", "fit_seconds_b",
               "fit_seconds_ratio", "compile_seconds_a", "compile_seconds_b",
               "compile_seconds_ratio"]


def comparison_rows(cells: list[CellComparison], stats: dict | None = None) -> list[dict]:
    """One flat row per cell (``CSV_COLUMNS``; empty where a side lacks the value), with
    the paired statistics' columns when ``stats`` ({cell index: PairStatistics}) is given."""
    rows = []
    for i, c in enumerate(cells):
        row = {"side": c.side, "method": c.method,
               "params": json.dumps(c.params, sort_keys=True), "dataset": c.dataset,
               "seed": c.seed, "status_a": (c.a or {}).get("status"),
               "status_b": (c.b or {}).get("status")}
        for section, name, column in (("metrics", "top1_error", "top1_error"),
                                      ("summary", "latency_p50_ms", "latency_p50_ms"),
                                      ("summary", "fit_seconds", "fit_seconds"),
                                      ("summary", "compile_seconds", "compile_seconds")):
            row[f"{column}_a"] = c.value("A", section, name)
            row[f"{column}_b"] = c.value("B", section, name)
            row[f"{column}_ratio"] = c.ratio(section, name)
        if stats is not None:
            row.update(statistics_columns(stats.get(i)))
        rows.append(row)
    return rows


def comparison_csv(cells: list[CellComparison], stats: dict | None = None) -> str:
    """The per-cell comparison as CSV (cells of one side only included, ``side`` A/B)."""
    columns = CSV_COLUMNS + (STATISTICS_COLUMNS if stats is not None else [])
    return rows_to_csv(comparison_rows(cells, stats), columns)


def compare_outputs(out_a, out_b, fmt: str = "markdown", force: bool = False,
                    warn=None) -> str:
    """The comparison of results folders ``out_a`` and ``out_b`` in format ``fmt``, with
    paired statistics from their raw outputs. ValueError naming each difference when the
    two sides differ in measuring run options or dataset checksum, unless ``force`` (then
    the output opens with a warning, also passed to ``warn``)."""
    from .results import ResultStore

    if fmt not in FORMATS:
        raise ValueError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    records_a, records_b = stored_records(out_a, "compare"), stored_records(out_b, "compare")
    cells = match_cells(records_a, records_b)
    serious, other = side_differences([(c.a, c.b) for c in cells if c.side == "both"])
    if serious and not force:
        raise ValueError("A and B did not measure the same things, so their numbers are not "
                         "comparable:\n  " + "\n  ".join(serious) + "\n(re-run one side with "
                         "the other's options and data, or pass --force to compare anyway)")
    notes = []
    if serious:
        notes = ["**WARNING: A and B did not measure the same things; the ratios below mix "
                 "them (--force):**", "", *[f"- {d}" for d in serious], ""]
        if warn:
            warn("WARNING: compared anyway (--force); A and B differ in: "
                 + "; ".join(serious))
    if other:
        notes += ["Other differences (they do not change a finished measurement): "
                  + "; ".join(other) + ".", ""]
    notes += compare_compile_notes([c for c in cells if c.side == "both"])
    stats = cell_statistics(cells, ResultStore(out_a), ResultStore(out_b))
    if fmt == "csv":
        return comparison_csv(cells, stats)
    text = comparison_markdown(cells, side_label(out_a, records_a),
                               side_label(out_b, records_b), notes)
    if not any(c.side == "both" for c in cells):
        return text  # nothing to test: the sentence above says so
    return text + "\n".join(statistics_markdown(cells, stats, _params_label)) + "\n"


def cmd_compare(args) -> int:
    import sys

    write_output(compare_outputs(args.out_a, args.out_b, args.format, force=args.force,
                                 warn=lambda text: print(text, file=sys.stderr)), args.output)
    return 0


def add_parser(subparsers, add_common) -> None:
    """Register ``xcbench compare``."""
    p = subparsers.add_parser(
        "compare", help="compare two results folders cell by cell (B/A ratios)",
        description="Match the cells of two results folders by method, params, query "
                    "params, dataset and seed (not by key: keys include the xcbench "
                    "version) and print, per cell, the top-1 error of each side and the "
                    "B/A ratios of top-1 error, p50 latency and fit time; then the "
                    "geometric mean of each ratio per method, the cells only one side "
                    "has, and paired tests per cell (McNemar's exact test and a bootstrap "
                    "interval of the top-1 error difference on the same test rows, a "
                    "bootstrap interval of the p50 latency ratio). Refuses two sides that "
                    "differ in measuring run options or dataset checksum, naming the "
                    "difference, unless --force.")
    p.add_argument("out_a", metavar="OUT_A", help="the baseline results folder")
    p.add_argument("out_b", metavar="OUT_B", help="the results folder compared with it")
    add_output_options(p, FORMATS, "markdown (default) or csv (one row per cell)")
    p.add_argument("--force", action="store_true",
                   help="compare even when the sides differ in measuring run options or "
                        "dataset checksum (the output opens with a warning naming them)")
    add_common(p, out=False, data=False)
    p.set_defaults(func=cmd_compare)
