"""The end-of-run summary: one line per measurement with its status and, for failures, why."""
from __future__ import annotations

from .aggregate import params_label


def _reason(record: dict) -> str:
    lines = (record.get("error") or "").strip().splitlines()
    return lines[0][:160] if lines else ""


def run_summary(records: list[dict], reused: list[dict] = ()) -> str:
    """A plain-text table of every measurement of a run: method, params, dataset, seed,
    status (``stored`` marks one kept from an earlier run) and the reason of a failure."""
    rows = [(r, "") for r in records] + [(r, " (stored)") for r in reused]
    if not rows:
        return "no runs"
    table = [("method", "params", "dataset", "seed", "status", "reason")]
    for r, note in rows:
        table.append((r["method"], params_label(r["params"]), r["dataset"], str(r["seed"]),
                      r["status"] + note, "" if r["status"] == "ok" else _reason(r)))
    widths = [max(len(row[i]) for row in table) for i in range(5)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row[:5], widths)) + "  " + row[5]
             for row in table]
    return "\n".join(line.rstrip() for line in lines)
