"""hsm's C="auto": chosen on held-out training rows of a class sample (xcbench_hsm.c_probe)."""
import numpy as np
import pytest

from xcbench import make_method
from xcbench.contract import holdout
from xcbench.data.synthetic import make_hierarchical


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
        X, y = X[:holdout.MIN_ROWS - 1], y[:holdout.MIN_ROWS - 1]
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
