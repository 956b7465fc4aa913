"""A method's setting chosen on held-out training rows: a walk along a ladder of values,
each scored by fitting the whole model on a sample of the classes.

Used where the good value of a setting depends on more than the data's sizes say (the
features' scale, the rows per class against the features): ``hsm``'s C and tree, the label
embedding tree's SGD rate and ``ast``'s initial tree on dense rows (``choose_param``,
``HeldOut``). The sample keeps the data's rows per class: classes are taken in a random
order until their rows reach ``FIT_ROWS + HELD_ROWS`` (all of them on small data), a fifth
of those rows (at most ``HELD_ROWS``) is held out. The walk starts at the rule's value,
tries both neighbours on the ladder, then steps on in each direction whose neighbour beat
the start while held-out top-1 accuracy rises; the rule's value is kept unless the most
accurate value tried is better by more than two standard errors of the paired difference
(``xcbench.stats.keep_unless_beaten``). The probe draws from its own random generator, so
the caller's fit after it takes the same draws as without it.
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
    ``start``: both neighbours, then on in each direction whose neighbour beats the start,
    while it rises (both ways when both do: held-out accuracy may have a peak on each
    side)."""
    here = ladder.index(start)
    best = score(ladder[here])
    steps = [i for i in (here + 1, here - 1) if 0 <= i < len(ladder)]
    gains = {i: score(ladder[i]) for i in steps}
    for step in sorted((i for i in steps if gains[i] > best), key=gains.get, reverse=True):
        _walk_on(score, ladder, step, step - here, gains[step])


def _walk_on(score, ladder, here, direction, best) -> None:
    """Score on from ``here`` in ``direction`` while the score rises."""
    while 0 <= here + direction < len(ladder):
        after = score(ladder[here + direction])
        if after <= best:
            return
        here, best = here + direction, after


class HeldOut:
    """One class sample of the training data, drawn once (``sample_classes``), on which
    several settings (or several ladders) can be scored: ``X_fit, y_fit`` to fit on and
    ``X_held, y_held`` to score on, the sampled classes renumbered 0..``n_classes``-1."""

    def __init__(self, X_fit, y_fit, X_held, y_held, n_classes: int):
        self.X_fit, self.y_fit = X_fit, y_fit
        self.X_held, self.y_held = X_held, y_held
        self.n_classes = int(n_classes)

    @classmethod
    def draw(cls, X, y, n_classes, random_state) -> "HeldOut | None":
        """The sample of (X, y), or None when the data has fewer than ``MIN_ROWS`` rows or
        two classes (too little to choose on: the caller keeps its rule's value)."""
        if X.shape[0] < MIN_ROWS or np.count_nonzero(np.bincount(y, minlength=n_classes)) < 2:
            return None
        fit, held, classes = sample_classes(y, n_classes, np.random.default_rng(random_state))
        local = np.full(n_classes, -1, dtype=np.int64)
        local[classes] = np.arange(classes.size)
        return cls(X[fit], local[y[fit]], X[held], local[y[held]], classes.size)

    def right(self, model) -> np.ndarray:
        """One bool per held-out row: the fitted ``model``'s top-1 is its label."""
        return model.predict_topk(self.X_held, 1)[0][:, 0] == self.y_held

    def walk(self, fit_model, ladder, start) -> dict:
        """{value tried: bool per held-out row} of a ``walk_ladder`` from ``start``, the
        start first; ``fit_model(value, X, y, n_classes)`` returns a fitted model."""
        right = {}

        def score(value):
            model = fit_model(value, self.X_fit, self.y_fit, self.n_classes)
            right[value] = correct = self.right(model)
            return int(correct.sum())

        walk_ladder(score, list(ladder), start)
        return right


def accuracies(right: dict) -> dict:
    """{value: held-out top-1 accuracy} of ``HeldOut.walk``'s rows."""
    return {v: float(r.mean()) for v, r in right.items()}


def choose_on_held_out(X, y, n_classes, fit_model, random_state, ladder,
                       start) -> tuple[float | None, dict]:
    """(the chosen value, {value tried: held-out top-1 accuracy}); (None, {}) when the data
    has fewer than ``MIN_ROWS`` rows or two classes (the caller keeps its rule's value).
    ``fit_model(value, X, y, n_classes)`` returns a fitted model with ``predict_topk``; it
    is called on the sampled classes renumbered 0..k-1. ``start`` (a value of ``ladder``)
    is the rule's value, tried first and kept unless clearly beaten."""
    held = HeldOut.draw(X, y, n_classes, random_state)
    if held is None:
        return None, {}
    right = held.walk(fit_model, ladder, start)
    return keep_unless_beaten(right), accuracies(right)


def param_fitter(model, name, settings):
    """``fit_model`` for ``HeldOut.walk`` over the parameter ``name`` of the estimator
    ``model``: each value is a fresh ``type(model)(**settings, name=value)`` fitted on the
    sample. ``settings``: every other parameter as the probe's fits should use it (the
    caller's resolved values, a decoder, ...)."""
    def fit_at(value, X_sample, y_sample, n_sample_classes):
        return type(model)(**{**settings, name: value}).fit(X_sample, y_sample,
                                                             n_classes=n_sample_classes)

    return fit_at


def choose_param(model, name, settings, X, y, n_classes, ladder,
                 start) -> tuple[object | None, dict]:
    """``choose_on_held_out`` for the parameter ``name`` of the estimator ``model``
    (``param_fitter``), drawing from ``model.random_state``."""
    return choose_on_held_out(X, y, n_classes, param_fitter(model, name, settings),
                              model.random_state, ladder, start)
