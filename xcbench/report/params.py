"""Parameter values as xcbench shows them everywhere (report tables, plot legends, progress
lines, ``compare``): ``name=value`` pairs joined by ``, ``, each value spelt one way."""
from __future__ import annotations

import math

#: parameters that do not change what a method learns, left out of labels
NOT_SHOWN = frozenset({"random_state", "n_jobs", "threads", "n_threads", "verbose"})


def value_text(value) -> str:
    """One spelling of a parameter value, as typed after ``--param``: a float holding an
    integer without its ``.0`` (``C=1`` whether stored as 1 or 1.0), other floats as Python
    writes them (``0.1``, ``1e-05``), numpy scalars as Python numbers, lists as ``[a,b]``,
    the empty string as ``''``, anything else as ``str``."""
    if hasattr(value, "item") and not isinstance(value, (list, tuple, dict)):
        value = value.item()  # numpy scalar
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 2 ** 53:
            return str(int(value))
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(value_text(v) for v in value) + "]"
    if value == "":
        return "''"
    return str(value)


def params_text(params: dict, sort: bool = True) -> str:
    """``C=1, penalty=l2`` for ``params`` (sorted by name unless ``sort`` is False);
    ``random_state`` left out; ``defaults`` if nothing is left."""
    items = [(k, v) for k, v in params.items() if k != "random_state"]
    if sort:
        items.sort(key=lambda item: item[0])
    return ", ".join(f"{k}={value_text(v)}" for k, v in items) or "defaults"


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
