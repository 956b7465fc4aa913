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
    elif case == "skewed":  # the rule's scale-free strength: C * mean ||x||^2 = 3
        sq_norm = float(np.einsum("ij,ij->", X, X)) / X.shape[0]
        assert model.resolved_params_["C"] == pytest.approx(min(3 / sq_norm, 300000.0))
    else:  # the rule's constant
        assert model.resolved_params_["C"] == 30.0


def test_dense_classes_clustered_unevenly_get_the_unbalanced_tree():
    """On dense rows the probe compares the rule's balanced spherical k-means tree with the
    unbalanced Euclidean one, each at the C its own walk kept, on one class sample: here
    (hierarchical Gaussian classes, K above max_leaf) the unbalanced tree is clearly better
    on the held-out rows and is taken."""
    data = make_hierarchical(n_classes=110, n_features=16, n_train=2400, n_test=10, levels=3,
                             noise=0.5, bayes_samples=10, seed=0)
    model = make_method("hsm", random_state=0).fit(data.X_train, data.y_train, n_classes=110)
    probe = model.stats()["tree_probe"]
    assert model.resolved_params_["tree"] == "kmeans" and set(probe) == {"kmeans",
                                                                       "kmeans_balanced"}
    assert probe["kmeans"] > probe["kmeans_balanced"]
    # C_probe is the chosen tree's walk, and the kept C is its best-scored value
    assert probe["kmeans"] == model.C_probe_[model.resolved_params_["C"]]


def test_the_tree_is_probed_only_when_left_to_the_rule_on_dense_rows_with_many_classes():
    from xcbench_hsm.defaults import DataShape

    def probes(sparse=False, n_classes=1000, entropy=1.0, **params):
        shape = DataShape(30_000, 128, 30_000 * 128, n_classes, sparse, entropy, 1.0)
        model = make_method("hsm", **params)
        return model._probes_tree(shape, model._settings(shape))

    assert probes()  # dense, K = 1000 above the dense max_leaf (10)
    assert not probes(sparse=True)
    assert not probes(n_classes=100)  # K <= 100: one last node holds every class
    assert not probes(tree="kmeans_balanced") and not probes(C=30.0)
    assert not probes(solver="sgd") and not probes(entropy=0.5)  # skewed labels: no probe
    X, y = _scaled_synthetic(1.0)  # a fit with the tree given: C probed, the tree not
    model = make_method("hsm", tree="kmeans_balanced", random_state=0).fit(X, y, n_classes=60)
    assert model.tree_probe_ == {} and model.C_probe_ != {}


def test_candidates_and_memory_bound_cover_both_trees():
    from xcbench_hsm import c_probe

    assert c_probe.tree_candidates("kmeans_balanced") == ["kmeans_balanced", "kmeans"]
    assert c_probe.tree_candidates("kmeans") == ["kmeans"]
    sizes = (200_000, 2_000, 200_000 * 2_000, 50_000)  # dense, K > max_leaf: both trees
    auto = make_method("hsm").estimate_memory(*sizes)
    each = [make_method("hsm", tree=t).estimate_memory(*sizes)
            for t in ("kmeans_balanced", "kmeans")]
    assert auto == max(each)
