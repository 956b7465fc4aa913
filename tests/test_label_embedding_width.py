"""The label embedding tree's embedding_dim="auto": d_e resolved at fit time by
``defaults.embedding_width`` (100 on sparse rows and skewed labels, max(100, D) capped at
256 on other dense rows)."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from xcbench import make_method
from xcbench.data.synthetic import make_hierarchical
from xcbench_label_tree import defaults, model as tree_model


def _shape(n_features, sparse, n_samples=1000, n_classes=50, entropy=1.0):
    nnz_per_row = 0.05 * n_features if sparse else float(n_features)
    return defaults.DataShape(n_samples, n_features, nnz_per_row, n_classes, sparse, 1.0,
                              entropy)


@pytest.mark.parametrize("n_features, sparse, width", [
    (5000, True, 100),  # sparse: the paper's 100, whatever D
    (50, True, 100),
    (16, False, 100),  # narrow dense (letter): max(100, D) = 100
    (128, False, 128),  # dense: D
    (192, False, 192),
    (400, False, 256),  # dense, wide: capped
])
def test_the_rule(n_features, sparse, width):
    shape = _shape(n_features, sparse)
    assert defaults.embedding_width(shape) == width
    resolved = defaults.resolve(shape, {"embedding_dim": "auto"}, embedding=True)
    assert resolved["embedding_dim"] == width
    assert defaults.resolve(shape, {"embedding_dim": 7}, embedding=True)["embedding_dim"] == 7
    # only the embedding tree resolves it
    assert defaults.resolve(shape, {"embedding_dim": "auto"})["embedding_dim"] == "auto"


def test_skewed_labels_keep_the_papers_width():
    """Next-word data (label entropy / log K under 0.8; ptb: dense GloVe rows, D = 150)
    keep 100: no rate probe runs there to re-tune the step for a wider W, and 150 was 1.2
    points worse on ptb. Unknown entropy (sizes only) counts as not skewed."""
    assert defaults.embedding_width(_shape(150, False, entropy=0.7)) == 100
    assert defaults.embedding_width(_shape(150, False, entropy=None)) == 150
    y = np.r_[np.zeros(900, dtype=np.int64), np.arange(100)]  # one class holds 90%
    X = np.random.default_rng(0).normal(size=(1000, 150))
    shape = defaults.data_shape(X, y, 100)
    assert shape.label_entropy < 0.8 and defaults.embedding_width(shape) == 100


def _dense(n_features=128, n_train=300, n_classes=12):
    data = make_hierarchical(n_classes=n_classes, n_features=n_features, n_train=n_train,
                             n_test=10, levels=2, bayes_samples=10, seed=0)
    return data.X_train, data.y_train, n_classes


def test_fit_resolves_the_width_and_keeps_auto():
    X, y, K = _dense()
    model = make_method("label_embedding_tree", epochs=1, random_state=0)
    assert model.get_params()["embedding_dim"] == "auto"
    model.fit(X, y, n_classes=K)
    assert model.resolved_params_["embedding_dim"] == 128
    assert model.stats()["resolved_params"]["embedding_dim"] == 128
    assert model.V_.shape == (model.tree_.n_nodes, 128)
    assert model._width == 128
    # the parameters still say "auto": a clone resolves again on its own data
    assert model.get_params()["embedding_dim"] == "auto"
    assert clone(model).get_params()["embedding_dim"] == "auto"
    # a fitted model pickles and predicts the same
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict_topk(X, 2)[0], model.predict_topk(X, 2)[0])
    np.testing.assert_array_equal(again.path_cost(X), model.path_cost(X))


def test_an_explicit_width_is_used_as_given():
    X, y, K = _dense()
    model = make_method("label_embedding_tree", embedding_dim=7, epochs=1,
                        random_state=0).fit(X, y, n_classes=K)
    assert "embedding_dim" not in model.resolved_params_
    assert model.V_.shape[1] == 7 and model._width == 7
    model.set_params(embedding_dim=5).fit(X, y, n_classes=K)
    assert model.V_.shape[1] == 5
    model.set_params(embedding_dim="auto").fit(X, y, n_classes=K)
    assert model.V_.shape[1] == 128 and model.resolved_params_["embedding_dim"] == 128
    with pytest.raises(ValueError):
        make_method("label_embedding_tree", embedding_dim=0).fit(X, y, n_classes=K)


def test_sparse_rows_keep_100():
    rng = np.random.default_rng(0)
    X = sp.random(200, 300, density=0.03, format="csr", random_state=0)
    y = rng.integers(0, 8, 200)
    model = make_method("label_embedding_tree", epochs=1, random_state=0).fit(X, y,
                                                                               n_classes=8)
    assert model.resolved_params_["embedding_dim"] == 100
    assert model.V_.shape[1] == 100


def test_the_lr_probe_fits_at_the_resolved_width(monkeypatch):
    seen = []
    original = tree_model.choose_param

    def spy(model, name, settings, *args, **kwargs):
        seen.append(dict(settings))
        return original(model, name, settings, *args, **kwargs)

    monkeypatch.setattr(tree_model, "choose_param", spy)
    X, y, K = _dense(n_features=16, n_train=1500, n_classes=20)
    model = make_method("label_embedding_tree", epochs=1, random_state=0).fit(X, y,
                                                                               n_classes=K)
    assert len(seen) == 1 and seen[0]["embedding_dim"] == 100
    assert model.resolved_params_["embedding_dim"] == 100


def test_estimate_memory_resolves_the_width():
    auto = make_method("label_embedding_tree")
    n, K = 10_000, 1000

    def estimate(model, d, sparse=False):
        nnz = n * (d // 20 if sparse else d)
        return model.estimate_memory(n, d, nnz, K)

    def given(width):
        return make_method("label_embedding_tree", embedding_dim=width)

    assert estimate(auto, 128) == estimate(given(128), 128)
    assert estimate(auto, 128) > estimate(given(100), 128)
    assert estimate(auto, 400) == estimate(given(256), 400)
    assert estimate(auto, 16) == estimate(given(100), 16)
    assert estimate(auto, 4000, sparse=True) == estimate(given(100), 4000, sparse=True)
    assert not hasattr(auto, "_resolved")  # the estimate leaves no resolution behind
    # after a fit, the estimate still follows the sizes asked about, not the fitted data
    X, y, _ = _dense(n_classes=K // 100)
    auto.set_params(epochs=1, random_state=0).fit(X, y, n_classes=K // 100)
    assert estimate(auto, 400) == estimate(given(256), 400)
    assert auto._resolved["embedding_dim"] == 128


def test_plain_label_tree_has_no_width():
    X, y, K = _dense()
    model = make_method("label_tree", random_state=0).fit(X, y, n_classes=K)
    assert "embedding_dim" not in model.resolved_params_
    assert "embedding_dim" not in model.get_params()
    assert model._width == 0 and not model._embeds
    with pytest.raises(ValueError, match="embedding_dim"):
        make_method("label_tree", embedding_dim=100)
