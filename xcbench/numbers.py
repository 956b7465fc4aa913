"""Number formatting for reports: three significant digits, one convention everywhere."""
from __future__ import annotations

import math


def _decimals(value: float) -> int:
    """Decimal places that show ``value`` (already rounded) to three significant digits."""
    return max(0, 2 - math.floor(math.log10(abs(value))))


def sig3(value) -> str:
    """``value`` to three significant digits: ``0.133``, ``12.3``, ``1,080,000``,
    ``1.23e-05`` below 1e-4; ``n/a`` for None or NaN, ``inf`` for infinity."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    value = float(value)
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    rounded = float(f"{value:.3g}")
    if abs(rounded) >= 1000:
        return f"{rounded:,.0f}"
    if abs(rounded) >= 1e-4:
        return f"{rounded:.{_decimals(rounded)}f}"
    return f"{value:.2e}"


def format_gb(n_bytes: float) -> str:
    """``n_bytes`` as GB with 3 significant digits, e.g. ``'12.3 GB'``, and no exponent
    for large amounts (``'50,900 GB'``, not ``'5.09e+04 GB'``)."""
    gb = float(f"{n_bytes / 1e9:.3g}")
    return f"{gb:,.0f} GB" if gb >= 1000 else f"{gb:.3g} GB"


def mean_pm_std(mean, std=None) -> str:
    """``mean`` to three significant digits and, when ``std`` is non-zero, ``± std`` to the
    same decimal places (one significant digit if that would round it to zero)."""
    text = sig3(mean)
    if not std or not math.isfinite(std) or text in ("n/a", "inf", "-inf", "0"):
        return text
    rounded_mean = float(f"{float(mean):.3g}")
    if 1e-4 <= abs(rounded_mean) < 1000:
        places = _decimals(rounded_mean)
        spread = f"{std:.{places}f}"
        if float(spread) == 0:
            spread = f"{std:.1g}"
        return f"{text} ± {spread}"
    return f"{text} ± {sig3(std)}"


def percent(fraction) -> str:
    """A fraction (0.1234) as a percentage to three significant digits (``12.3%``)."""
    text = sig3(None if fraction is None else 100 * float(fraction))
    return text if text == "n/a" else text + "%"
