"""``xcbench export``: the newest record of each measurement as flat rows, in CSV or JSON.

One row per stored measurement (the newest record of each, any status). Nested
sections become dotted columns: ``param.<name>`` (the record's params, build and
query-time), ``metric.<name>``, ``summary.<name>`` (latency percentiles, fit time,
throughput), ``stats.<name>``, ``memory.<name>``, ``path_cost.<name>``, ``dataset.<name>``
(the dataset's statistics), ``option.<name>`` (run options), ``code.<name>`` (commit,
dirty, changes: the code that made the record) and ``env.<name>`` (versions,
CPU). Lists (every timing repeat, warnings) are left out: they stay in ``results.jsonl``.
JSON output is the same rows as a list of objects, not the records themselves.
"""
from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

from .atomic import write_text_atomically

FORMATS = ("csv", "json")
#: record fields copied as they are, in this order
BASE_FIELDS = ("key", "method", "family", "plugin", "dataset", "dataset_checksum", "seed",
               "status", "error", "started_at", "wall_seconds")
#: (record section, column prefix); scalar entries only
SECTIONS = (("metrics", "metric"), ("summary", "summary"), ("stats", "stats"),
            ("memory", "memory"), ("path_cost", "path_cost"), ("dataset_stats", "dataset"),
            ("run_options", "option"), ("code", "code"))
ENV_FIELDS = ("xcbench", "git_commit", "python", "numpy", "scipy", "sklearn", "cpu",
              "blas", "llvm_cpu", "cpu_count", "machine", "platform", "threads")


def stored_records(out, purpose: str = "export") -> list[dict]:
    """The newest record of each key in the results folder ``out`` (or a results.jsonl
    path); ValueError naming the folder when it holds no results, or none that can be read
    (``purpose``: what there is then nothing to do)."""
    from .results import RESULTS_FILE, ResultStore

    store = ResultStore(out)
    if not store.path.is_file():
        raise ValueError(f"{out}: no {RESULTS_FILE} there; give the --out folder of an "
                         f"`xcbench run`")
    records = store.latest()
    if not records:
        raise ValueError(f"{store.path}: no readable record (empty, or every line was "
                         f"skipped: see the warnings above); nothing to {purpose}")
    return records


def _scalar(value) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def flatten_record(record: dict) -> dict:
    """One record as a flat dict of scalars (columns named as in the module docstring);
    ``params`` holds the params as one JSON string too, ``error`` its first line."""
    row = {name: record.get(name) for name in BASE_FIELDS}
    row["error"] = next(iter((record.get("error") or "").splitlines()), None)
    params = record.get("params") or {}
    row["params"] = json.dumps(params, sort_keys=True)
    row.update({f"param.{k}": v if _scalar(v) else json.dumps(v) for k, v in params.items()})
    for section, prefix in SECTIONS:
        row.update({f"{prefix}.{k}": v for k, v in (record.get(section) or {}).items()
                    if _scalar(v)})
    env = record.get("environment") or {}
    row.update({f"env.{k}": env.get(k) for k in ENV_FIELDS if k in env})
    return row


def export_rows(records: list[dict]) -> list[dict]:
    """The flat rows of ``records``, sorted by method, dataset, params and seed."""
    order = sorted(records, key=lambda r: (r["method"], r["dataset"],
                                           json.dumps(r.get("params"), sort_keys=True),
                                           r["seed"]))
    return [flatten_record(r) for r in order]


def _columns(rows: list[dict]) -> list[str]:
    """Every column of ``rows``: the record fields, then each prefix's columns together
    (param, metric, summary, ... env), each group in order of first appearance."""
    groups = ["", "param", *(prefix for _, prefix in SECTIONS), "env"]
    names = dict.fromkeys(name for row in rows for name in row)

    def group(name):
        prefix = name.split(".", 1)[0] if "." in name else ""
        return groups.index(prefix) if prefix in groups else len(groups)

    return sorted(names, key=group)  # stable: first appearance within a group


def rows_to_csv(rows: list[dict], columns=None) -> str:
    """``rows`` as CSV text with one header line of ``columns`` (default: every column of
    the rows, see ``_columns``); a column a row lacks is empty."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns or _columns(rows), restval="",
                            lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def rows_to_json(rows: list[dict]) -> str:
    """``rows`` as a JSON list of objects (one per row)."""
    return json.dumps(rows, indent=1, sort_keys=False) + "\n"


def export_text(out, fmt: str) -> tuple[str, int]:
    """(text, number of rows) of the export of results folder ``out`` in format ``fmt``."""
    if fmt not in FORMATS:
        raise ValueError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    rows = export_rows(stored_records(out))
    return (rows_to_csv if fmt == "csv" else rows_to_json)(rows), len(rows)


def write_output(text: str, output: str | None) -> None:
    """Write ``text`` to the file ``output``, or to stdout when it is None or ``-``."""
    if output in (None, "-"):
        sys.stdout.write(text)
        return
    write_text_atomically(check_output_file(output, "results.csv"), text)


def check_output_file(output: str, example: str) -> Path:
    """``--output``'s path, once it can be written: ValueError when it is a folder or its
    folder does not exist (``example``: a file name to suggest)."""
    path = Path(output)
    if path.is_dir():
        raise ValueError(f"--output {output} is a folder; name a file, e.g. "
                         f"--output {path / example}")
    if not path.parent.is_dir():
        raise ValueError(f"--output {output}: the folder {path.parent} does not exist; "
                         "create it first or name a file in an existing folder")
    return path


def cmd_export(args) -> int:
    text, n = export_text(args.out, args.format)
    write_output(text, args.output)
    if args.output not in (None, "-"):
        print(f"exported {n} row(s) to {args.output}", file=sys.stderr)
    return 0


def add_parser(subparsers, add_common) -> None:
    """Register ``xcbench export``."""
    p = subparsers.add_parser(
        "export", help="export stored results as CSV or JSON rows",
        description="Write the newest record of each measurement in OUT/results.jsonl as one "
                    "flat row: key, method, params (param.NAME), dataset, seed, status, "
                    "metrics (metric.NAME), latency and fit time (summary.NAME), model "
                    "statistics, memory, path cost, dataset statistics, run options and "
                    "environment (env.NAME: versions, CPU). --format json writes the same "
                    "rows as a list of objects.")
    add_output_options(p, FORMATS)
    add_common(p, data=False)
    p.set_defaults(func=cmd_export)


def add_output_options(p, formats, help_format: str = "") -> None:
    """``--format`` (one of ``formats``, the first by default) and ``--output FILE``."""
    p.add_argument("--format", choices=formats, default=formats[0],
                   help=help_format or f"{' or '.join(formats)} (default: {formats[0]})")
    p.add_argument("--output", "-o", default=None, metavar="FILE",
                   help="file to write (default: standard output)")
