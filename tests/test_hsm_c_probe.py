"""hsm's C="auto": chosen on held-out training rows of a class sample (xcbench_hsm.c_probe)."""
import numpy as np
import pytest

from xcbench import make_method
from xcbench.data.synthetic import make_hierarchical
from xcbench_hsm import c_probe


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
    C, accuracy = c_probe.choose_C(X, y, n_classes, fit_model, random_state=0)
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
    C, accuracy = c_probe.choose_C(
        X, y, 40, lambda C, *_: _Fake({30.0: 0.8, 300.0: 0.801}.get(C, 0.5)), 0)
    assert C == 30.0 and accuracy[300.0] >= accuracy[30.0]


def test_class_sample_keeps_whole_classes_within_the_row_budget(monkeypatch):
    monkeypatch.setattr(c_probe, "FIT_ROWS", 800)
    monkeypatch.setattr(c_probe, "HELD_ROWS", 200)
    y = np.repeat(np.arange(100), 30)  # 3,000 rows: 33 classes fit in 1,000
    fit, held, classes = c_probe.sample_classes(y, 100, np.random.default_rng(0))
    assert classes.size == 33 and not np.intersect1d(fit, held).size
    assert np.array_equal(np.sort(np.concatenate([fit, held])),
                          np.flatnonzero(np.isin(y, classes)))
    assert held.size == round(0.2 * 990)


def _scaled_synthetic(scale):
    data = make_hierarchical(n_classes=60, n_features=16, n_train=3000, n_test=10, levels=2,
                             spread=6.0, noise=0.6, bayes_samples=10, seed=0)
    return data.X_train * scale, data.y_train


def test_features_scaled_down_move_c_up():
    """A feature scaled by s needs C scaled by 1 / s^2: at s = 0.01, C = 30 acts like 0.003
    on the unscaled data and regularises every node flat."""
    X, y = _scaled_synthetic(0.01)
    model = make_method("hsm", random_state=0).fit(X, y, n_classes=60)
    assert model.resolved_params_["C"] > 30.0
    assert model.stats()["C_probe"][str(model.resolved_params_["C"])] == max(
        model.C_probe_.values())
    again = make_method("hsm", random_state=0).fit(X, y, n_classes=60)
    assert again.C_probe_ == model.C_probe_  # deterministic for a seed


@pytest.mark.parametrize("case", ["given", "small", "skewed", "sgd"])
def test_no_probe_when_c_is_given_data_is_small_labels_skewed_or_nodes_sgd(case):
    X, y = _scaled_synthetic(0.01)
    params = {"random_state": 0}
    if case == "given":
        params["C"] = 30.0
    elif case == "small":
        X, y = X[:c_probe.MIN_ROWS - 1], y[:c_probe.MIN_ROWS - 1]
    elif case == "skewed":  # Zipf-like labels: three classes hold most rows
        y = np.where(np.arange(y.size) % 10 < 8, y % 3, y)
    else:
        params["solver"] = "sgd"
    model = make_method("hsm", **params).fit(X, y, n_classes=60)
    assert model.C_probe_ == {}
    if case == "given":
        assert "C" not in model.resolved_params_
    else:  # the rule's constant: 3 for skewed labels, else 30
        assert model.resolved_params_["C"] == (3.0 if case == "skewed" else 30.0)
