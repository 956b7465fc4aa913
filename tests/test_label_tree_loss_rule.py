"""The SGD label trees' loss="auto": the paper's tree hinge, or the sibling softmax when the
labels are skewed like next-word data (``defaults.resolve``)."""
import numpy as np
import pytest

from xcbench import make_method
from xcbench_label_tree import defaults


def _shape(n_features, sparse, entropy):
    nnz_per_row = 0.05 * n_features if sparse else float(n_features)
    return defaults.DataShape(10_000, n_features, nnz_per_row, 1000, sparse, 1.0, entropy)


@pytest.mark.parametrize("n_features, sparse, entropy, embedding, loss", [
    (150, False, 0.7, True, "softmax"),   # ptb: dense, skewed
    (5000, True, 0.7, True, "softmax"),   # ptb-sparse
    (150, False, 0.99, True, "tree"),     # balanced labels: the paper's loss
    (5000, True, None, True, "tree"),     # unknown skew (sizes only): not skewed
    (16, False, 0.7, False, "softmax"),   # a plain label tree on SGD (narrow dense), skewed
    (16, False, 0.99, False, "tree"),
    (5000, True, 0.7, False, "hinge"),    # LIBLINEAR nodes: one-vs-rest hinge, skewed or not
])
def test_the_rule(n_features, sparse, entropy, embedding, loss):
    shape = _shape(n_features, sparse, entropy)
    assert defaults.resolve(shape, {"loss": "auto", "solver": "auto"},
                            embedding=embedding)["loss"] == loss
    # a loss given is kept
    assert defaults.resolve(shape, {"loss": "tree", "solver": "sgd"},
                            embedding=embedding)["loss"] == "tree"


def test_the_softmax_on_skewed_labels_is_a_probability_model():
    rng = np.random.default_rng(0)
    K = 40
    y = np.where(rng.random(2000) < 0.6, 0, rng.integers(0, K, 2000))  # one class holds 60%
    X = rng.normal(size=(2000, 20)) + 2.0 * np.eye(K, 20)[y]
    model = make_method("label_embedding_tree", epochs=1, random_state=0)
    assert model.get_params()["loss"] == "auto"
    model.fit(X, y, n_classes=K)
    assert model.resolved_params_["loss"] == "softmax"
    log_p = model.log_proba(X[:50], y[:50])
    assert np.isfinite(log_p).all() and (log_p <= 0).all()
    balanced = make_method("label_embedding_tree", epochs=1, random_state=0).fit(
        X, np.arange(2000) % K, n_classes=K)
    assert balanced.resolved_params_["loss"] == "tree"


def test_dense_data_too_big_for_a_liblinear_tree_in_the_budget_trains_by_sgd():
    ptb = defaults.DataShape(887_521, 150, 150.0, 10_000, False, 600.0, 0.7)
    assert defaults.tree_fit_seconds(ptb, None) > defaults.FIT_BUDGET_SECONDS
    out = defaults.resolve(ptb, {k: "auto" for k in ("solver", "loss", "structure",
                                                     "branching", "max_depth", "beam",
                                                     "n_trees")})
    assert out["solver"] == "sgd" and out["loss"] == "softmax" and out["beam"] == 2
    assert out["structure"] == "kmeans" and out["n_trees"] == 1
    # a one-vs-rest loss given needs LIBLINEAR, however long
    assert defaults.resolve(ptb, {"solver": "auto", "loss": "hinge"})["solver"] == "liblinear"
    # the same rows on 30,000 rows fit the budget: LIBLINEAR
    small = defaults.DataShape(30_000, 150, 150.0, 10_000, False, 600.0, 0.7)
    assert defaults.resolve(small, {"solver": "auto", "loss": "auto"})["solver"] == "liblinear"
