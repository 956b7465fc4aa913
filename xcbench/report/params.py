"""Parameter values as xcbench shows them everywhere (report tables, plot legends, progress
lines, ``compare``): ``name=value`` pairs joined by ``, ``, each value spelt one way."""
from __future__ import annotations

from ..contract.method_params import canonical_value, params_text, value_text  # noqa: F401 - re-exported

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


#: a value the seeds of one row resolved differently
VARIES = "varies"


def common_values(dicts) -> dict | None:
    """The values the ``dicts`` (each run's effective values of one row) agree on, a name
    whose values differ (an ``auto`` value resolved per seed) mapped to ``VARIES``; None
    when any is None (a record from before effective values were stored)."""
    dicts = list(dicts)
    if not dicts or any(d is None for d in dicts):
        return None
    names = dict.fromkeys(k for d in dicts for k in d)
    return {k: dicts[0][k] if all(k in d and d[k] == dicts[0][k] for d in dicts) else VARIES
            for k in names}


#: significant digits of a resolved value in compact tables (``temperature=0.961``)
DIGITS = 3
#: longest text of one resolved value (strings, lists) before it is cut
VALUE_CHARS = 20


def short_value(value) -> str:
    """A resolved value in few characters: floats to ``DIGITS`` significant digits
    (``0.961``, ``0.00023``), long strings and lists cut with ``…``, a dict summarised
    (``{path,routers,scorers:direct}`` when its values agree, else ``{path:23,...}``, its
    keys or ``{N keys}``, the first that fits two values' room); other values as :func:`value_text` spells them."""
    value = canonical_value(value)
    if isinstance(value, float):
        return f"{value:.{DIGITS}g}"
    if isinstance(value, dict):
        return _short_dict(value)
    if isinstance(value, (list, tuple)):
        text = "[" + ",".join(short_value(v) for v in value) + "]"
    else:
        text = value_text(value)
    return clip(text, VALUE_CHARS)


def _short_dict(value: dict) -> str:
    keys = ",".join(str(k) for k in value)
    shown = [short_value(v) for v in value.values()]
    forms = [f"{{{keys}:{shown[0]}}}"] if len(set(shown)) == 1 else []
    forms += ["{" + ",".join(f"{k}:{v}" for k, v in zip(value, shown)) + "}", f"{{{keys}}}"]
    return next((f for f in forms if len(f) <= 2 * VALUE_CHARS), f"{{{len(value)} keys}}")


def _set_text(name: str, value, effective: dict) -> str:
    """``name=value`` as the run set it; ``beam=auto->1`` when the method resolved it."""
    text = f"{name}={value_text(value)}"
    used = effective.get(name, value)
    if canonical_value(used) != canonical_value(value):
        text += f"->{short_value(used)}"
    return text


def params_column(params: dict, effective: dict | None = None, resolved=(),
                  limit: int | None = None) -> str:
    """What a row ran with, saying which values were set and which resolved:
    ``set C=0.1; resolved max_iter=100, tol=0.0001``. Set values are spelt as given (an
    ``"auto"`` one with what it resolved to, ``beam=auto->1``); the resolved ones are every
    other value the run used (``effective``: defaults and the method's own choices, less
    random_state and thread counts), in :func:`short_value` form, those named in ``resolved``
    (chosen by the method) first. ``defaults`` when nothing is known (a record from before
    effective values were stored). With ``limit``, values are left out from the end until
    the text fits, with ``(+N more)``, and the text is :func:`clip`-ped if even one is too
    long."""
    effective = effective or {}
    set_items = [_set_text(k, v, effective) for k, v in sorted(params.items())
                 if k != "random_state"]
    others = sorted((k for k in effective if k not in params and k not in NOT_SHOWN),
                    key=lambda k: (k not in resolved, k))
    items = set_items + [f"{k}={short_value(effective[k])}" for k in others]
    n_set = len(set_items)
    if not items:
        return "defaults"
    for n in range(len(items), 0, -1):
        text = _joined(items[:min(n, n_set)], items[n_set:n], len(items) - n)
        if limit is None or len(text) <= limit:
            return text
    text = _joined(items[:1] if n_set else [], [] if n_set else items[:1], len(items) - 1)
    return clip(text, limit) if limit is not None else text


def _joined(set_items: list, resolved_items: list, more: int) -> str:
    parts = (["set " + ", ".join(set_items)] if set_items else []) \
        + (["resolved " + ", ".join(resolved_items)] if resolved_items else [])
    return ("; ".join(parts) or "defaults") + (f" (+{more} more)" if more else "")


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the last one ``…`` when cut."""
    return text if len(text) <= limit else text[:max(limit - 1, 0)] + "…"[:max(limit, 0)]
