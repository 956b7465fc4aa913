"""Parameter values as xcbench shows them everywhere (report tables, plot legends, progress
lines, ``compare``): ``name=value`` pairs joined by ``, ``, each value spelt one way."""
from __future__ import annotations

from ..contract.method_params import params_text, value_text  # noqa: F401 - re-exported

#: parameters that do not change what a method learns, left out of labels
NOT_SHOWN = frozenset({"random_state", "n_jobs", "threads", "n_threads", "verbose"})


def params_label(params: dict) -> str:
    """Compact, stable text for a params dict (see :func:`params_text`)."""
    return params_text(params)


def shown_params(params: dict, effective: dict | None = None, limit: int | None = None) -> str:
    """The parameter values of a row: the stored ``params`` when there are any, else every
    value the run used (``effective_params`` of its record, left out: random_state and
    thread counts), else ``defaults`` (a record from before effective values were stored:
    today's defaults may differ from the ones it ran with). With ``limit``, cut at about that
    many characters with ``(+N more)``."""
    if any(k != "random_state" for k in params) or not effective:
        text = params_label(params)
    else:
        text = params_label({k: v for k, v in effective.items() if k not in NOT_SHOWN})
    return text if limit is None else cut(text, limit)


def cut(text: str, limit: int) -> str:
    """``a=1, b=2, c=3`` cut after the last pair that fits in about ``limit`` characters,
    with ``(+N more)`` for the pairs left out (the first pair is always kept)."""
    items = text.split(", ")
    for n in range(len(items), 0, -1):
        shown = ", ".join(items[:n]) + (f" (+{len(items) - n} more)" if n < len(items) else "")
        if len(shown) <= limit or n == 1:
            return shown
    return text
