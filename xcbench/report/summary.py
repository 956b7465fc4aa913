"""The end-of-run summary: one line per measurement with its status and its top-1 error in
percent (as in the report tables), a failure's reason on the line below it; no line is
wider than ``WIDTH`` columns."""
from __future__ import annotations

from .numbers import percent
from .params import clip, params_column

#: the widest line of the summary
WIDTH = 120
#: the params column is never cut below this many characters
MIN_PARAMS = 24
#: what starts the line giving a failure's reason
REASON = "  why: "
HEAD = ("method", "params", "dataset", "seed", "status", "top-1 err")
GAP = "  "


def _reason(record: dict) -> str:
    lines = (record.get("error") or "").strip().splitlines()
    return lines[0] if lines else ""


def _top1(record: dict) -> str:
    error = (record.get("metrics") or {}).get("top1_error")
    return percent(error) if record["status"] == "ok" and error is not None else ""


def _params(record: dict, limit: int | None = None) -> str:
    return params_column(record["params"], record.get("effective_params"),
                         record.get("resolved_params") or (), limit)


def run_summary(records: list[dict], reused: list[dict] = (), width: int = WIDTH) -> str:
    """A plain-text table of every measurement of a run: method, parameter values (those
    set, then the resolved ones in short form: :func:`~xcbench.report.params.params_column`),
    dataset, seed, status (``stored`` marks one kept from an earlier run) and top-1 error
    (%); below a failure, its reason. The params and reasons are cut so that no line is
    wider than ``width`` (``(+N more)`` says how many values were left out)."""
    rows = [(r, "") for r in records] + [(r, " (stored)") for r in reused]
    if not rows:
        return "no runs"
    table = [HEAD] + [(r["method"], _params(r), r["dataset"], str(r["seed"]),
                       r["status"] + note, _top1(r)) for r, note in rows]
    reasons = [""] + ["" if r["status"] == "ok" else _reason(r) for r, _ in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(HEAD))]
    others = sum(widths) - widths[1] + len(GAP) * (len(HEAD) - 1)
    widths[1] = min(widths[1], max(width - others, MIN_PARAMS))
    lines, cut_any = [], False
    for i, (row, reason) in enumerate(zip(table, reasons)):
        params = row[1] if i == 0 else _params(rows[i - 1][0], widths[1])
        cut_any = cut_any or params != row[1]
        cells = (row[0], params, *row[2:])
        lines.append(GAP.join(c.ljust(w) for c, w in zip(cells, widths)).rstrip())
        if reason:
            lines.append(REASON + clip(reason, width - len(REASON)))
    if cut_any:
        lines.append("(+N more): values left out here; the report and `xcbench export` "
                     "list them all")
    return "\n".join(lines)
