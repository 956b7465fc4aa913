"""A setting chosen on held-out rows of a class sample (xcbench.contract.holdout)."""
import numpy as np

from xcbench.contract import holdout

LADDER = (0.003, 0.03, 0.3, 3.0, 30.0, 300.0, 3000.0, 30000.0, 300000.0)


class _Fake:
    """A 'model' right on the held-out rows whose column 1 is below acc(C): column 0 holds
    the (renumbered) label, so the probe's accuracies are known in advance."""

    def __init__(self, accuracy):
        self.accuracy = accuracy

    def predict_topk(self, X, k):
        right = X[:, 1] < self.accuracy
        return np.where(right, X[:, 0], -1).astype(np.int64)[:, None], None


def _walk(peak_at, n=4000, n_classes=40):
    """The Cs the probe tries and picks when held-out accuracy peaks at ``peak_at``."""
    rng = np.random.default_rng(0)
    y = rng.integers(n_classes, size=n)
    X = np.column_stack([np.zeros(n), rng.random(n)])
    tried = []

    def fit_model(C, X_fit, y_fit, k):
        tried.append(C)
        return _Fake(0.9 - 0.1 * abs(np.log10(C) - np.log10(peak_at)))

    # column 0: the label renumbered as the probe renumbers its class sample (all classes)
    X[:, 0] = y
    C, accuracy = holdout.choose_on_held_out(X, y, n_classes, fit_model, 0, LADDER, 30.0)
    return C, tried, accuracy


def test_the_walk_follows_the_better_neighbour_and_stops_past_the_peak():
    C, tried, accuracy = _walk(peak_at=3000.0)
    assert tried == [30.0, 300.0, 3.0, 3000.0, 30000.0] and C == 3000.0
    C, tried, _ = _walk(peak_at=0.03)
    assert tried == [30.0, 300.0, 3.0, 0.3, 0.03, 0.003] and C == 0.03
    C, tried, _ = _walk(peak_at=30.0)  # both neighbours worse: three fits, the constant
    assert tried == [30.0, 300.0, 3.0] and C == 30.0
    assert set(accuracy) == {30.0, 300.0, 3.0, 3000.0, 30000.0}


def test_a_small_gain_keeps_the_rules_constant():
    rng = np.random.default_rng(0)
    n = 4000
    y = rng.integers(40, size=n)
    X = np.column_stack([y, rng.random(n)]).astype(float)
    # 300 is better than 30 by 0.1% of the held-out rows: not two standard errors
    C, accuracy = holdout.choose_on_held_out(
        X, y, 40, lambda C, *_: _Fake({30.0: 0.8, 300.0: 0.801}.get(C, 0.5)), 0, LADDER, 30.0)
    assert C == 30.0 and accuracy[300.0] >= accuracy[30.0]


def test_class_sample_keeps_whole_classes_within_the_row_budget(monkeypatch):
    monkeypatch.setattr(holdout, "FIT_ROWS", 800)
    monkeypatch.setattr(holdout, "HELD_ROWS", 200)
    y = np.repeat(np.arange(100), 30)  # 3,000 rows: 33 classes fit in 1,000
    fit, held, classes = holdout.sample_classes(y, 100, np.random.default_rng(0))
    assert classes.size == 33 and not np.intersect1d(fit, held).size
    assert np.array_equal(np.sort(np.concatenate([fit, held])),
                          np.flatnonzero(np.isin(y, classes)))
    assert held.size == round(0.2 * 990)


def test_the_walk_goes_both_ways_when_both_neighbours_beat_the_start():
    """Two peaks, one on each side of the start (hsm's C on the dense synthetic set with an
    unbalanced tree): both directions are walked, and the higher peak is chosen."""
    rng = np.random.default_rng(0)
    n = 4000
    y = rng.integers(40, size=n)
    X = np.column_stack([y, rng.random(n)]).astype(float)
    accuracy = {0.3: 0.5, 3.0: 0.7, 30.0: 0.6, 300.0: 0.65, 3000.0: 0.68, 30000.0: 0.66}
    tried = []

    def fit_model(C, *_):
        tried.append(C)
        return _Fake(accuracy.get(C, 0.1))

    C, _ = holdout.choose_on_held_out(X, y, 40, fit_model, 0, LADDER, 30.0)
    assert tried == [30.0, 300.0, 3.0, 0.3, 3000.0, 30000.0] and C == 3.0


def test_held_out_sample_scores_several_walks_on_the_same_rows():
    rng = np.random.default_rng(0)
    n = 4000
    y = rng.integers(40, size=n)
    X = np.column_stack([y, rng.random(n)]).astype(float)
    held = holdout.HeldOut.draw(X, y, 40, random_state=0)
    assert holdout.HeldOut.draw(X[:holdout.MIN_ROWS - 1], y[:holdout.MIN_ROWS - 1], 40,
                                0) is None
    a = held.walk(lambda C, *_: _Fake(0.8), LADDER, 30.0)
    b = held.walk(lambda C, *_: _Fake(0.8), LADDER, 30.0)
    assert list(a) == [30.0, 300.0, 3.0]
    assert all(np.array_equal(a[C], b[C]) for C in a)
    assert holdout.accuracies(a)[30.0] == a[30.0].mean()
