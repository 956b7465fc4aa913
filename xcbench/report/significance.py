"""Which rows of a report's table are not distinguishable from its best row (lowest mean
top-1 error): McNemar's exact test on the same test rows, pooled over the seeds both rows
have, from the raw outputs the store keeps."""
from __future__ import annotations

import json

import numpy as np

from ..store.compare_stats import top1_correct
from ..stats import mcnemar_exact
from .machines import machine_labeller

#: the text of the ``vs best`` column for the best row and for rows without raw outputs
BEST, UNKNOWN = "best", "n/a"


def row_key(row: dict) -> tuple:
    """The identity of a ``group_rows`` row, as :func:`vs_best` keys its texts."""
    return (row["dataset"], row["method"], json.dumps(row["params"], sort_keys=True),
            row["machine"])


def row_identity(record: dict, label) -> tuple:
    """The table row of a record, as ``group_rows`` groups them."""
    return (record["dataset"], record["method"], json.dumps(record["params"], sort_keys=True),
            label(record))


def vs_best(rows: list[dict], records: list[dict], store) -> dict[tuple, str]:
    """{(dataset, method, params JSON, machine): text} for every row of ``rows`` (from
    ``group_rows``): ``best`` for each dataset's lowest mean top-1 error, else the McNemar
    p-value against it with ``≈`` when p >= 0.05 (not distinguishable), or ``n/a`` when the
    raw outputs of a shared seed are missing or the rows share no seed."""
    label = machine_labeller(records)
    by_row: dict[tuple, dict[int, dict]] = {}
    for r in records:
        if r["status"] == "ok":
            by_row.setdefault(row_identity(r, label), {})[int(r["seed"])] = r
    cache: dict = {}

    def correct(record):
        if record["key"] not in cache:
            cache[record["key"]] = top1_correct(store, record)
        return cache[record["key"]]

    out = {}
    for dataset in dict.fromkeys(row["dataset"] for row in rows):
        ds_rows = [row for row in rows if row["dataset"] == dataset]
        ident = [row_key(row) for row in ds_rows]
        errors = [row["values"]["top1_error"][0] for row in ds_rows]
        finite = [i for i, e in enumerate(errors) if e == e]
        if not finite:
            continue
        best = min(finite, key=lambda i: errors[i])
        out[ident[best]] = BEST
        best_runs = by_row.get(ident[best], {})
        for i in finite:
            if i == best:
                continue
            runs = by_row.get(ident[i], {})
            seeds = sorted(set(runs) & set(best_runs))
            out[ident[i]] = _pooled_p(seeds, best_runs, runs, correct)
    return out


def _pooled_p(seeds, best_runs, runs, correct) -> str:
    """The ``vs best`` text of one row: McNemar over the seeds' rows pooled."""
    parts_best, parts_row = [], []
    for seed in seeds:
        a, b = correct(best_runs[seed]), correct(runs[seed])
        if a is None or b is None or not np.array_equal(a[1], b[1]):
            return UNKNOWN
        parts_best.append(a[0])
        parts_row.append(b[0])
    if not parts_best:
        return UNKNOWN
    return p_text(mcnemar_exact(np.concatenate(parts_best), np.concatenate(parts_row)).pvalue)


def p_text(pvalue: float) -> str:
    """``≈ p 0.31`` (not distinguishable at 5%), ``p 0.012``, ``p < 0.001``."""
    if pvalue >= 0.05:
        return f"≈ p {pvalue:.2g}"
    return "p < 0.001" if pvalue < 0.001 else f"p {pvalue:.2g}"


VS_BEST_DOC = ("vs best: McNemar's exact test of the row's top-1 errors against the "
               "table's lowest-error row on the same test rows (seeds both rows have, "
               "pooled); `≈` marks rows not distinguishable from the best at the 5% level "
               "(no correction for the number of rows); n/a where the raw outputs are "
               "missing.")
