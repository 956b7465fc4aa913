"""The label embedding tree's lr="auto" on dense rows: chosen on held-out training rows of a
class sample (LabelTree._choose_lr, xcbench.contract.holdout)."""
import numpy as np
import pytest
import scipy.sparse as sp

from held_out_choice import chosen_by_hand, record_held_out_rows
from xcbench import make_method
from xcbench.data.synthetic import make_hierarchical, make_sparse_hierarchical
from xcbench_label_tree import defaults


def _dense(scale=1.0):
    data = make_hierarchical(n_classes=60, n_features=16, n_train=3000, n_test=10, levels=2,
                             spread=6.0, noise=0.6, bayes_samples=10, seed=0)
    return data.X_train * scale, data.y_train


@pytest.mark.parametrize("scale, expected", [
    (1.0, defaults.SGD_LR),  # the other rates get fewer held-out rows right: kept
    (10.0, defaults.SGD_LR),  # 0.3 gets 6 more of 600 rows right, 66 differ (< 16.2): kept
    (0.1, 0.3)])  # small features: 0.3 gets 20 more of 600 rows right, 38 differ (> 12.3)
def test_dense_rows_get_the_rate_the_held_out_rows_prefer(monkeypatch, scale, expected):
    seen = record_held_out_rows(monkeypatch)
    X, y = _dense(scale)
    model = make_method("label_embedding_tree", epochs=2, random_state=0).fit(X, y,
                                                                               n_classes=60)
    tried = model.lr_probe_
    assert list(tried)[0] == defaults.SGD_LR and len(tried) >= 3  # the rule's, neighbours
    lr = model.resolved_params_["lr"]
    assert len(seen) == 1 and list(seen[0]) == list(tried)
    assert lr == chosen_by_hand(seen[0]) == expected
    assert model.stats()["lr_probe"] == {str(k): v for k, v in tried.items()}
    again = make_method("label_embedding_tree", epochs=2, random_state=0).fit(X, y,
                                                                               n_classes=60)
    assert again.lr_probe_ == tried and again.resolved_params_["lr"] == lr


@pytest.mark.parametrize("case", ["given", "sparse", "skewed", "plain_tree"])
def test_no_rate_probe_when_given_sparse_skewed_or_no_embedding(case):
    X, y = _dense()
    method, params = "label_embedding_tree", {"epochs": 1, "random_state": 0}
    if case == "given":
        params["lr"] = 0.1
    elif case == "sparse":
        data = make_sparse_hierarchical(n_classes=60, bayes_samples=10, seed=0)
        X, y = data.X_train, data.y_train
        assert sp.issparse(X)
    elif case == "skewed":  # three classes hold most rows
        y = np.where(np.arange(y.size) % 10 < 8, y % 3, y)
    else:
        method = "label_tree"
    model = make_method(method, **params).fit(X, y, n_classes=60)
    assert model.lr_probe_ == {}
