"""The end-of-run summary: one line per measurement with its status, its top-1 error in
percent (as in the report tables) and, for failures, why."""
from __future__ import annotations

from .numbers import percent
from .params import shown_params


def _reason(record: dict) -> str:
    lines = (record.get("error") or "").strip().splitlines()
    return lines[0][:160] if lines else ""


def _top1(record: dict) -> str:
    error = (record.get("metrics") or {}).get("top1_error")
    return percent(error) if record["status"] == "ok" and error is not None else ""


def run_summary(records: list[dict], reused: list[dict] = ()) -> str:
    """A plain-text table of every measurement of a run: method, parameter values, dataset,
    seed, status (``stored`` marks one kept from an earlier run), top-1 error (%) and the
    reason of a failure."""
    rows = [(r, "") for r in records] + [(r, " (stored)") for r in reused]
    if not rows:
        return "no runs"
    table = [("method", "params", "dataset", "seed", "status", "top-1 err", "reason")]
    for r, note in rows:
        table.append((r["method"], shown_params(r["params"], r.get("effective_params")),
                      r["dataset"],
                      str(r["seed"]), r["status"] + note, _top1(r),
                      "" if r["status"] == "ok" else _reason(r)))
    widths = [max(len(row[i]) for row in table) for i in range(6)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row[:6], widths)) + "  " + row[6]
             for row in table]
    return "\n".join(line.rstrip() for line in lines)
