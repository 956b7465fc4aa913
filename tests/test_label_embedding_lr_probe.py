"""The label embedding tree's lr="auto" on dense rows: chosen on held-out training rows of a
class sample (LabelTree._choose_lr, xcbench.contract.holdout)."""
import numpy as np
import pytest
import scipy.sparse as sp

from xcbench import make_method
from xcbench.data.synthetic import make_hierarchical, make_sparse_hierarchical
from xcbench_label_tree import defaults


def _dense(scale=1.0):
    data = make_hierarchical(n_classes=60, n_features=16, n_train=3000, n_test=10, levels=2,
                             spread=6.0, noise=0.6, bayes_samples=10, seed=0)
    return data.X_train * scale, data.y_train


def test_dense_rows_get_the_rate_the_held_out_rows_prefer():
    X, y = _dense()
    model = make_method("label_embedding_tree", epochs=2, random_state=0).fit(X, y,
                                                                               n_classes=60)
    tried = model.lr_probe_
    assert defaults.SGD_LR in tried and len(tried) >= 3  # the rule's rate and its neighbours
    lr = model.resolved_params_["lr"]
    assert lr in defaults.LR_LADDER
    assert lr == defaults.SGD_LR or tried[lr] == max(tried.values())
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
