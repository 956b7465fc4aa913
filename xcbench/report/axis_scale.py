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


#: at most this many labelled ticks on a log axis (beyond, only powers of ten)
MAX_LOG_TICKS = 12


def log_ticks(low: float, high: float) -> list[float]:
    """The labelled ticks of a log axis over [low, high]: every digit x 10^n when the range
    is under 5x, else 1, 2 and 5 x 10^n (only 10^n when that makes over MAX_LOG_TICKS),
    from the last tick at or below ``low`` to the first at or above ``high``."""
    if high / low < 5:
        subs = tuple(float(d) for d in range(1, 10))
    else:
        subs = (1.0, 2.0, 5.0)
    ticks = _ticks_around(low, high, subs)
    if len(ticks) > MAX_LOG_TICKS:
        ticks = _ticks_around(low, high, (1.0,))
    return ticks


def _ticks_around(low: float, high: float, subs) -> list[float]:
    ticks = sorted(float(f"{s * 10.0 ** e:.12g}")
                   for e in range(math.floor(math.log10(low)) - 1,
                                  math.ceil(math.log10(high)) + 2) for s in subs)
    start = max(i for i, t in enumerate(ticks) if t <= low * (1 + 1e-9))
    stop = min(i for i, t in enumerate(ticks) if t >= high * (1 - 1e-9))
    return ticks[start:stop + 1]


def padded_limits(low: float, high: float, scale: str) -> tuple[float, float]:
    """Axis limits a little beyond [low, high]: 8% of the range (of its log for ``log``);
    a range of one value gets ±10% of it (±1 around zero). A log axis reaches at least the
    labelled ticks on either side of its values (see :func:`log_ticks`), so no point lies
    beyond the last labelled tick."""
    if scale == "log":
        pad = (high / low) ** 0.08
        ticks = log_ticks(low, high)
        return min(low / pad, ticks[0]), max(high * pad, ticks[-1])
    if high == low:
        pad = abs(low) * 0.1 or 1.0
        return low - pad, high + pad
    pad = 0.08 * (high - low)
    return low - pad, high + pad


def apply_scale(ax, which: str, low: float, high: float, spans_decades: bool = True) -> str:
    """Set the scale, limits and ticks of axis ``which`` (``x`` or ``y``) of ``ax`` to show
    [low, high]; returns the scale chosen. Log ticks are plain numbers (see
    :func:`log_ticks`); linear ticks carry no offset."""
    import matplotlib.ticker as ticker

    scale = choose_scale(low, high, spans_decades)
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)(scale)
    (ax.set_xlim if which == "x" else ax.set_ylim)(*padded_limits(low, high, scale))
    if scale == "log":
        axis.set_major_locator(ticker.FixedLocator(log_ticks(low, high)))
        axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(ticker.NullFormatter())
    else:
        axis.set_major_formatter(ticker.ScalarFormatter(useOffset=False))
    return scale


def thin_crowded_log_ticks(fig, ax) -> None:
    """Unlabel the ticks of ``ax``'s log axes whose labels would overlap another's (the 7, 8
    and 9 x 10^n of a narrow range crowd together: ``0.0070.0080.009``). Labels are kept
    powers of ten first, then 2 and 5 x 10^n, then the others, each only where it has room;
    an unlabelled tick keeps its grid line as a minor tick. Call it once the layout is final
    (after ``tight_layout``): it lays the figure out to measure the labels."""
    axes = [axis for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale()))
            if scale == "log"]
    if not axes:
        return
    import matplotlib.ticker as ticker

    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    for axis in axes:
        along = 0 if axis is ax.xaxis else 1
        labels = [(label.get_position()[along], label) for label in axis.get_majorticklabels()
                  if label.get_text()]
        kept, boxes = [], []
        for loc, label in sorted(labels, key=lambda pair: (_tick_rank(pair[0]), pair[0])):
            box = label.get_window_extent(renderer).padded(0.4 * label.get_fontsize())
            if not any(box.overlaps(other) for other in boxes):
                kept.append(loc)
                boxes.append(box)
        if len(kept) < len(labels):
            axis.set_major_locator(ticker.FixedLocator(sorted(kept)))
            axis.set_minor_locator(ticker.FixedLocator(
                sorted({loc for loc, _ in labels} - set(kept))))


def _tick_rank(value: float) -> int:
    """0 for a power of ten, 1 for 2 or 5 x 10^n, 2 for other ticks (which to label first)."""
    if value <= 0:
        return 2
    mantissa = round(value / 10.0 ** math.floor(math.log10(value) + 1e-9), 6)
    return 0 if mantissa == 1 else 1 if mantissa in (2, 5) else 2
