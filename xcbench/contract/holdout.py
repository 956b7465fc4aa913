"""A method's setting chosen on held-out training rows: a walk along a ladder of values,
each scored by fitting the whole model on a sample of the classes.

Used where the good value of a setting depends on more than the data's sizes say (the
features' scale, the rows per class against the features): ``hsm``'s C, the label
embedding tree's SGD rate and ``ast``'s initial tree on dense rows (``choose_param``). The sample keeps the data's rows per class:
classes are taken in a random order until their rows reach ``FIT_ROWS + HELD_ROWS`` (all of
them on small data), a fifth of those rows (at most ``HELD_ROWS``) is held out. The walk
starts at the rule's value, tries both neighbours on the ladder, then steps on in the
better one's direction while held-out top-1 accuracy rises; the rule's value is kept
unless the most accurate value tried is better by more than two standard errors of the
paired difference (``xcbench.stats.keep_unless_beaten``). The probe draws from its own
random generator, so the caller's fit after it takes the same draws as without it.
"""
from __future__ import annotations

import numpy as np

from xcbench.stats import keep_unless_beaten

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


def walk_ladder(score, ladder, start) -> None:
    """Call ``score(value)`` (held-out rows right, higher is better) along ``ladder`` from
    ``start``: both neighbours, then on in the better one's direction while it rises."""
    here = ladder.index(start)
    best = score(ladder[here])
    steps = [i for i in (here + 1, here - 1) if 0 <= i < len(ladder)]
    gains = {i: score(ladder[i]) for i in steps}
    step = max(steps, key=gains.get, default=None)
    if step is None or gains[step] <= best:
        return
    direction, here, best = step - here, step, gains[step]
    while 0 <= here + direction < len(ladder):
        after = score(ladder[here + direction])
        if after <= best:
            return
        here, best = here + direction, after


def choose_on_held_out(X, y, n_classes, fit_model, random_state, ladder,
                       start) -> tuple[float | None, dict]:
    """(the chosen value, {value tried: held-out top-1 accuracy}); (None, {}) when the data
    has fewer than ``MIN_ROWS`` rows or two classes (the caller keeps its rule's value).
    ``fit_model(value, X, y, n_classes)`` returns a fitted model with ``predict_topk``; it
    is called on the sampled classes renumbered 0..k-1. ``start`` (a value of ``ladder``)
    is the rule's value, tried first and kept unless clearly beaten."""
    if X.shape[0] < MIN_ROWS or np.count_nonzero(np.bincount(y, minlength=n_classes)) < 2:
        return None, {}
    rng = np.random.default_rng(random_state)
    fit, held, classes = sample_classes(y, n_classes, rng)
    local = np.full(n_classes, -1, dtype=np.int64)
    local[classes] = np.arange(classes.size)
    X_fit, y_fit = X[fit], local[y[fit]]
    X_held, y_held = X[held], local[y[held]]
    right = {}

    def score(value):
        model = fit_model(value, X_fit, y_fit, int(classes.size))
        right[value] = correct = model.predict_topk(X_held, 1)[0][:, 0] == y_held
        return int(correct.sum())

    walk_ladder(score, list(ladder), start)
    return keep_unless_beaten(right), {v: float(r.mean()) for v, r in right.items()}


def choose_param(model, name, settings, X, y, n_classes, ladder,
                 start) -> tuple[object | None, dict]:
    """``choose_on_held_out`` for the parameter ``name`` of the estimator ``model``: each
    value is scored by a fresh ``type(model)(**settings, name=value)`` fitted on the
    sample, drawing from ``model.random_state``. ``settings``: every other parameter as the
    probe's fits should use it (the caller's resolved values, a decoder, ...)."""
    def fit_at(value, X_sample, y_sample, n_sample_classes):
        return type(model)(**{**settings, name: value}).fit(X_sample, y_sample,
                                                             n_classes=n_sample_classes)

    return choose_on_held_out(X, y, n_classes, fit_at, model.random_state, ladder, start)
