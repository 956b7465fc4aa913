"""``C="auto"`` of hsm's LIBLINEAR nodes: the regularisation chosen on held-out rows.

The good C of an L2 logistic regression depends on the scale of the features (a feature
scaled by s needs C scaled by 1 / s^2 for the same model) and on how many rows each class
has against how many features, neither of which one constant serves: at C = 30 (the
rule's constant) hsm is 10 points worse than at C = 3,000 on ALOI (27 colour features with
mean ||x||^2 = 0.8) and 4 points worse on leaves100 (mean ||x||^2 = 0.12), and 10 points
worse than at C = 0.03 on the dense synthetic set (30 rows per class in 128 dimensions).

So when the labels are about equally frequent, ``fit`` fits the whole model, with every
other setting as resolved, on a sample of the training classes and scores it on other
training rows of the same classes: classes are taken in a random order until their rows
reach ``FIT_ROWS + HELD_ROWS`` (all of them on small data), so the probe's problem keeps
the data's rows per class and features, and a fifth of those rows (at most ``HELD_ROWS``)
is held out. C walks the decade ``LADDER`` from the rule's constant: both neighbours are
tried, then steps go on in the better one's direction while held-out accuracy rises (3 to
6 fits on the data measured). The rule's constant is kept unless the most accurate C tried
is better by more than two standard errors of the paired difference
(``xcbench.stats.keep_unless_beaten``). Skewed labels (next-word data)
are not probed: a class sample of Zipf-distributed data is mostly rare classes, unlike the
data, and the constant there (3) was measured on the data itself. The probe draws from its
own random generator, so the fit that follows takes the same draws as with a fixed C.
Measurements: docs/methods/hsm.md ("C chosen on the data").
"""
from __future__ import annotations

import numpy as np

from xcbench.stats import keep_unless_beaten

#: the values of C the probe may try, a decade apart; it starts at the rule's constant
LADDER = (0.003, 0.03, 0.3, 3.0, 30.0, 300.0, 3000.0, 30000.0, 300000.0)
FIT_ROWS, HELD_ROWS = 20_000, 5_000  # the probe's sample: rows fitted on, rows scored on
HELD_SHARE = 0.2  # the share of the sampled rows held out (at most HELD_ROWS)
MIN_ROWS = 500  # below this many training rows the held-out score is too coarse to choose


def sample_classes(y, n_classes, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(fit rows, held-out rows, the sampled classes): classes with training rows in a
    random order, as many as keep their rows within ``FIT_ROWS + HELD_ROWS`` (at least
    two), their rows split at random with ``HELD_SHARE`` (at most ``HELD_ROWS``) held out."""
    counts = np.bincount(y, minlength=n_classes)
    order = rng.permutation(np.flatnonzero(counts))
    within = np.cumsum(counts[order]) <= FIT_ROWS + HELD_ROWS
    classes = np.sort(order[:max(int(within.sum()), 2)])
    rows = rng.permutation(np.flatnonzero(np.isin(y, classes)))
    n_held = min(HELD_ROWS, int(round(HELD_SHARE * rows.size)))
    return np.sort(rows[n_held:n_held + FIT_ROWS]), np.sort(rows[:n_held]), classes


def choose_C(X, y, n_classes, fit_model, random_state, start=30.0,
             ladder=LADDER) -> tuple[float | None, dict]:
    """(the chosen C, {C tried: held-out top-1 accuracy}); (None, {}) when the data has
    fewer than ``MIN_ROWS`` rows or two classes (the caller keeps its constant).
    ``fit_model(C, X, y, n_classes)`` returns a fitted model with ``predict_topk``; it is
    called on the sampled classes renumbered 0..k-1. ``start`` (a value of ``ladder``) is
    the rule's constant, tried first and kept unless clearly beaten."""
    if X.shape[0] < MIN_ROWS or np.count_nonzero(np.bincount(y, minlength=n_classes)) < 2:
        return None, {}
    rng = np.random.default_rng(random_state)
    fit, held, classes = sample_classes(y, n_classes, rng)
    local = np.full(n_classes, -1, dtype=np.int64)
    local[classes] = np.arange(classes.size)
    X_fit, y_fit = X[fit], local[y[fit]]
    X_held, y_held = X[held], local[y[held]]
    right = {}

    def score(i):
        model = fit_model(float(ladder[i]), X_fit, y_fit, int(classes.size))
        right[float(ladder[i])] = correct = model.predict_topk(X_held, 1)[0][:, 0] == y_held
        return int(correct.sum())

    here = ladder.index(start)
    best = score(here)
    steps = [i for i in (here + 1, here - 1) if 0 <= i < len(ladder)]
    gains = {i: score(i) for i in steps}
    step = max(steps, key=gains.get, default=None)
    if step is not None and gains[step] > best:
        direction, here, best = step - here, step, gains[step]
        while 0 <= here + direction < len(ladder):
            after = score(here + direction)
            if after <= best:
                break
            here, best = here + direction, after
    return keep_unless_beaten(right), {C: float(r.mean()) for C, r in right.items()}
