"""How much of a record's fit was numba's JIT: records written before xcbench timed the JIT
apart (their ``fit_seconds`` include it), and records whose fit was mostly the JIT.

A record's ``summary.compile_seconds`` is the time numba compiled kernels or loaded them from
its on-disk cache during the fit; ``summary.fit_seconds`` leaves it out and
``summary.fit_wall_seconds`` includes it.
"""
from __future__ import annotations

import math

#: share of a fit's wall time spent in the JIT from which ``compare`` names the record
LARGE_COMPILE_SHARE = 0.5

#: the marker of a report cell whose fit time includes the JIT
INCLUDES_COMPILE_MARK = "†"

#: report columns computed from the fit time
FIT_TIME_COLUMNS = ("fit_seconds", "fit_cpu_seconds", "train_throughput")


def fit_includes_compile(record: dict) -> bool:
    """Whether an ``ok`` record's fit time includes the JIT: it was written before xcbench
    measured ``compile_seconds``."""
    summary = record.get("summary") or {}
    return (record.get("status") == "ok" and "fit_seconds" in summary
            and "compile_seconds" not in summary)


def compile_share(record: dict) -> float | None:
    """The share of the fit's wall time spent in the JIT (None when not measured)."""
    summary = record.get("summary") or {}
    jit, wall = summary.get("compile_seconds"), summary.get("fit_wall_seconds")
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in (jit, wall)) \
            or wall <= 0:
        return None
    return jit / wall


def includes_compile_footnote(n_rows: int) -> str:
    """The footnote under a table with ``n_rows`` rows marked as including the JIT."""
    rows = "row" if n_rows == 1 else f"{n_rows} rows"
    return (f"{INCLUDES_COMPILE_MARK} The fit times of the {rows} marked "
            f"{INCLUDES_COMPILE_MARK} include numba's JIT compilation: their records were "
            "written before xcbench timed it apart (`compile_seconds`), so the first runs "
            "after an install or a code change can be many times slower than the work. "
            "Re-run them to measure the work alone.")


def compare_compile_notes(cells) -> list[str]:
    """Markdown lines for ``compare``: which records' fit times include the JIT, and which
    records spent most of their fit in it (``cells``: CellComparison with ``a``/``b``)."""
    large, old = [], {"A": 0, "B": 0}
    for c in cells:
        for side, record in (("A", c.a), ("B", c.b)):
            if not record:
                continue
            old[side] += fit_includes_compile(record)
            share = compile_share(record)
            if share is not None and share >= LARGE_COMPILE_SHARE:
                large.append(f"{c.method} on {c.dataset} seed {c.seed} ({side}: {share:.0%} "
                             f"of {record['summary']['fit_wall_seconds']:.3g} s)")
    lines = []
    if large:
        lines += [f"Fit times leave out numba's JIT (`compile_seconds`); these records spent "
                  f"{LARGE_COMPILE_SHARE:.0%} or more of their fit in it (first runs after "
                  "an install or a code change): " + "; ".join(large) + ".", ""]
    if old["A"] or old["B"]:
        lines += [f"Fit times of records written before xcbench timed the JIT apart include "
                  f"it (A: {old['A']}, B: {old['B']}); fit time B/A compares them as "
                  "measured.", ""]
    return lines
