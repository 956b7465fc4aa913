"""Parameter values as a report shows them: stored values, or the method's defaults."""
from __future__ import annotations

#: parameters that do not change what a method learns, left out of labels
NOT_SHOWN = frozenset({"random_state", "n_jobs", "threads", "n_threads", "verbose"})


def params_label(params: dict) -> str:
    """Compact, stable text for a params dict (random_state left out); ``defaults`` if
    nothing is left."""
    items = sorted((k, v) for k, v in params.items() if k != "random_state")
    return ", ".join(f"{k}={v!r}" if v == "" else f"{k}={v}" for k, v in items) or "defaults"


def shown_params(params: dict, effective: dict | None = None) -> str:
    """The parameter values of a row: the stored ``params`` when there are any, else every
    value the run used (``effective_params`` of its record, left out: random_state and
    thread counts), else ``defaults`` (a record from before effective values were stored:
    today's defaults may differ from the ones it ran with)."""
    if any(k != "random_state" for k in params) or not effective:
        return params_label(params)
    return params_label({k: v for k, v in effective.items() if k not in NOT_SHOWN})
