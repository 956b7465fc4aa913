"""Sampling a search space (``xcbench.contract.search_space``) with an Optuna trial. Sampled
floats are rounded to ``FLOAT_DIGITS`` significant digits, so the best values print as short
``--param`` values and run exactly as tried."""
from __future__ import annotations

from ..contract.search_space import is_active

#: significant digits a sampled float keeps
FLOAT_DIGITS = 3


def round_float(value: float, low: float, high: float) -> float:
    """``value`` to ``FLOAT_DIGITS`` significant digits, kept within [low, high]."""
    return min(max(float(f"{value:.{FLOAT_DIGITS}g}"), low), high)


def suggest(trial, space: dict) -> dict:
    """The parameters an Optuna ``trial`` proposes in ``space`` (entries whose ``when`` is
    not met are left out, so the method uses its defaults for them)."""
    params: dict = {}
    for name, entry in space.items():
        if not is_active(entry, params):
            continue
        if "choices" in entry:
            params[name] = trial.suggest_categorical(name, list(entry["choices"]))
        elif entry.get("int"):
            params[name] = trial.suggest_int(name, int(entry["low"]), int(entry["high"]),
                                             log=bool(entry.get("log")))
        else:
            value = trial.suggest_float(name, float(entry["low"]), float(entry["high"]),
                                        log=bool(entry.get("log")))
            params[name] = round_float(value, entry["low"], entry["high"])
    return params
