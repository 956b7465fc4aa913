"""Parameter values as xcbench shows them everywhere (report tables, plot legends, progress
lines, ``compare``): ``name=value`` pairs joined by ``, ``, each value spelt one way."""
from __future__ import annotations

from ..contract.method_params import params_text, value_text  # noqa: F401 - re-exported

#: parameters that do not change what a method learns, left out of labels
NOT_SHOWN = frozenset({"random_state", "n_jobs", "threads", "n_threads", "verbose"})


def params_label(params: dict) -> str:
    """Compact, stable text for a params dict (see :func:`params_text`)."""
    return params_text(params)


def shown_params(params: dict, effective: dict | None = None) -> str:
    """The parameter values of a row: the stored ``params`` when there are any, else every
    value the run used (``effective_params`` of its record, left out: random_state and
    thread counts), else ``defaults`` (a record from before effective values were stored:
    today's defaults may differ from the ones it ran with)."""
    if any(k != "random_state" for k in params) or not effective:
        return params_label(params)
    return params_label({k: v for k, v in effective.items() if k not in NOT_SHOWN})
