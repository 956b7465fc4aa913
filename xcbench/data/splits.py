"""Seeded hold-out splits: stratified by class when possible, else uniformly at random."""
from __future__ import annotations

import numpy as np

from .fetch import DataError


def holdout_split(y: np.ndarray, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(kept rows, held-out rows), each sorted: ``fraction`` of the rows held out, seeded.

    Stratified by class when every class has at least 2 examples and both parts can hold
    one example of every class; otherwise uniformly at random (scikit-learn's
    ``train_test_split`` either way, so a given (y, fraction, seed) always gives one split).
    """
    from sklearn.model_selection import train_test_split

    y = np.asarray(y)
    n = len(y)
    if n < 2:
        raise DataError(f"{n} example(s) cannot be split in two; give more examples")
    _, counts = np.unique(y, return_counts=True)
    n_out = int(np.ceil(fraction * n))
    stratify = y if counts.min() >= 2 and min(n_out, n - n_out) >= len(counts) else None
    kept, held = train_test_split(np.arange(n), test_size=fraction, random_state=seed,
                                  stratify=stratify)
    return np.sort(kept), np.sort(held)
