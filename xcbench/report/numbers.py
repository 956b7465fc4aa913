"""Number formatting for reports (kept in :mod:`xcbench.numbers`, below the store, so
``compare`` writes numbers the same way)."""
from ..numbers import mean_pm_std, percent, sig3

__all__ = ["mean_pm_std", "percent", "sig3"]
