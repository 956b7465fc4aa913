"""Parameter values as a report shows them: stored values, or the method's defaults."""
from __future__ import annotations

#: parameters that do not change what a method learns, left out of labels
NOT_SHOWN = frozenset({"random_state", "n_jobs", "threads", "n_threads", "verbose"})


def params_label(params: dict) -> str:
    """Compact, stable text for a params dict (random_state left out); ``defaults`` if
    nothing is left."""
    items = sorted((k, v) for k, v in params.items() if k != "random_state")
    return ", ".join(f"{k}={v!r}" if v == "" else f"{k}={v}" for k, v in items) or "defaults"


def _default_values(method: str) -> tuple | None:
    """(name, value) pairs of a registered method's defaults, or None if it is unknown."""
    from ..plugins import get_method_spec

    try:
        params = get_method_spec(method).make().get_params()
    except Exception:  # noqa: BLE001 - not registered here, or not constructible: no defaults
        return None
    return tuple(sorted((k, v) for k, v in params.items() if k not in NOT_SHOWN))


def shown_params(method: str, params: dict) -> str:
    """The parameter values of a row: the stored ``params`` when there are any, else the
    registered method's current default values, else ``defaults``."""
    if any(k != "random_state" for k in params):
        return params_label(params)
    defaults = _default_values(method)
    return params_label(dict(defaults)) if defaults else "defaults"
