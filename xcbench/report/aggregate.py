"""Group run records into rows: one per (dataset, method, params, machine), over seeds."""
from __future__ import annotations

import json

import numpy as np

from ..store.compile_share import fit_includes_compile
from ..store.provenance import record_code, short_commit
from .columns import COLUMNS
from .machines import machine_labeller
from .params import common_values
from .params import params_label  # noqa: F401 - re-exported for older imports

#: the spread of single-example latency drawn as error bars (percentiles of all calls)
LATENCY_SPREAD_PERCENTILES = (25, 75)


def _number(value) -> float:
    if value is None or isinstance(value, str):
        return np.nan if value in (None, "nan") else float(value)
    return float(value)


def _mean_std(values: np.ndarray) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if len(finite) == 0:  # all NaN, or an infinity (e.g. perplexity without coverage)
        return (np.nan, np.nan) if np.isnan(values).all() else (float(values[0]), 0.0)
    return float(finite.mean()), float(finite.std(ddof=1)) if len(finite) > 1 else 0.0


def latency_spread(runs: list[dict]) -> tuple[float, float] | None:
    """The 25th and 75th percentile (ms) of every timed single-example call of ``runs``
    (``timings.latency_seconds``), or None when no run kept its calls."""
    calls = [t for r in runs for t in ((r.get("timings") or {}).get("latency_seconds") or [])]
    if not calls:
        return None
    lo, hi = np.percentile(np.asarray(calls, dtype=float) * 1e3, LATENCY_SPREAD_PERCENTILES)
    return float(lo), float(hi)


def group_rows(records: list[dict]) -> list[dict]:
    """Rows of successful runs, sorted: dataset, method, params, machine, n_seeds, values
    {column name: (mean, std) over seeds in display units}, latency_spread and
    fit_includes_compile (whether a run's fit time includes numba's JIT)."""
    groups: dict[tuple, list[dict]] = {}
    machine_label = machine_labeller(records)
    for r in records:
        if r["status"] != "ok":
            continue
        ident = (r["dataset"], r["method"], json.dumps(r["params"], sort_keys=True),
                 machine_label(r))
        groups.setdefault(ident, []).append(r)
    rows = []
    for (dataset, method, params, machine), runs in sorted(groups.items()):
        values = {}
        for col in COLUMNS:
            mean, std = _mean_std(np.array([_number(col.raw(r)) for r in runs]))
            values[col.name] = (mean * col.scale, std * col.scale)
        rows.append({"dataset": dataset, "method": method, "params": json.loads(params),
                     "effective_params": common_values([r.get("effective_params")
                                                        for r in runs]),
                     "machine": machine, "n_seeds": len(runs), "values": values,
                     "commits": sorted({short_commit(record_code(r)) for r in runs}),
                     "latency_spread": latency_spread(runs),
                     "fit_includes_compile": any(fit_includes_compile(r) for r in runs)})
    return rows
