"""Axis scales for plots: log only across a wide range, padded limits, readable ticks."""
from __future__ import annotations

import math

#: below this ratio of largest to smallest value an axis stays linear (a log axis would
#: stretch microsecond differences to the full width)
LOG_MIN_RATIO = 1.5


def choose_scale(low: float, high: float, spans_decades: bool = True) -> str:
    """``log`` for positive values of a quantity that ``spans_decades`` whose range
    ``high / low`` is at least LOG_MIN_RATIO, else ``linear``."""
    if not spans_decades or low <= 0 or not math.isfinite(high):
        return "linear"
    return "log" if high / low >= LOG_MIN_RATIO else "linear"


def padded_limits(low: float, high: float, scale: str) -> tuple[float, float]:
    """Axis limits a little beyond [low, high]: 8% of the range (of its log for ``log``);
    a range of one value gets ±10% of it (±1 around zero)."""
    if scale == "log":
        pad = (high / low) ** 0.08
        return low / pad, high * pad
    if high == low:
        pad = abs(low) * 0.1 or 1.0
        return low - pad, high + pad
    pad = 0.08 * (high - low)
    return low - pad, high + pad


def apply_scale(ax, which: str, low: float, high: float, spans_decades: bool = True) -> str:
    """Set the scale, limits and ticks of axis ``which`` (``x`` or ``y``) of ``ax`` to show
    [low, high]; returns the scale chosen. Log ticks are plain numbers at 1, 2, 5 x 10^n
    (every digit when the range is under 5x); linear ticks carry no offset."""
    import matplotlib.ticker as ticker

    scale = choose_scale(low, high, spans_decades)
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)(scale)
    (ax.set_xlim if which == "x" else ax.set_ylim)(*padded_limits(low, high, scale))
    if scale == "log":
        subs = (1.0, 2.0, 5.0) if high / low >= 5 else tuple(float(d) for d in range(1, 10))
        axis.set_major_locator(ticker.LogLocator(base=10, subs=subs))
        axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(ticker.NullFormatter())
    else:
        axis.set_major_formatter(ticker.ScalarFormatter(useOffset=False))
    return scale
