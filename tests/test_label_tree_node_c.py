"""label_tree's C="auto" for one-vs-rest hinge nodes: chosen on the held-out accuracy of the
first tree's root (xcbench_label_tree.node_c)."""
import numpy as np
import pytest
from sklearn.preprocessing import normalize

from xcbench import make_method
from xcbench.data.synthetic import make_sparse_hierarchical
from xcbench_label_tree import node_c
from xcbench_label_tree.nodes import squared_hinge_node
from xcbench_label_tree.structure import build_structure, random_splitter


def _sparse_classes(seed, n_classes=300, noise=0.0):
    """The synthetic-sparse problem at K = ``n_classes`` (10 training rows per class, Bayes
    error about 10%); ``noise``: the share of training labels replaced by uniform draws."""
    data = make_sparse_hierarchical(n_classes=n_classes, bayes_samples=10, seed=seed)
    rng = np.random.default_rng(seed)
    y = data.y_train.copy()
    flip = rng.random(y.size) < noise
    y[flip] = rng.integers(n_classes, size=int(flip.sum()))
    return normalize(data.X_train), y


def test_root_targets_name_the_root_child_above_each_class():
    rng = np.random.default_rng(0)
    tree = build_structure(30, 4, random_splitter(rng))
    y = np.arange(30)
    target, n_children = node_c.root_targets(tree, y)
    assert n_children == 4 and set(target) == set(range(4))
    root_children = tree.children[tree.child_ptr[0]:tree.child_ptr[1]]
    for c in range(30):  # walking up from class c's leaf reaches the root via that child
        node = int(np.flatnonzero(tree.node_label == c)[0])
        while tree.parent[node] != 0:
            node = int(tree.parent[node])
        assert root_children[target[c]] == node


def _tree(n_classes=300):
    return build_structure(n_classes, 10, random_splitter(np.random.default_rng(0)))


def test_clean_labels_keep_weak_regularisation_and_noisy_labels_choose_c_1():
    clean = make_method("label_tree", random_state=0).fit(*_sparse_classes(0), n_classes=300)
    assert clean._p("C") == 8.0 and clean.C_probe_[8.0] > clean.C_probe_[1.0]
    X, y = _sparse_classes(0, noise=0.8)
    noisy = make_method("label_tree", random_state=0).fit(X, y, n_classes=300)
    assert noisy._p("C") == 1.0 and noisy.C_probe_[1.0] > noisy.C_probe_[8.0] + 0.01
    assert noisy.resolved_params_["C"] == 1.0


def test_another_c_must_be_clearly_better_and_small_data_keeps_the_rule():
    X, y = _sparse_classes(1)
    C, accuracy = node_c.choose_C(X, y, _tree(), squared_hinge_node, random_state=0,
                                  candidates=(4.0, 4.0 + 1e-12))
    assert C == 4.0 and len(accuracy) == 2
    small = slice(0, node_c.MIN_ROWS - 1)
    assert node_c.choose_C(X[small], y[small], _tree(), squared_hinge_node,
                           random_state=0) == (None, {})


def test_fit_records_the_choice_and_a_given_c_is_not_probed():
    X, y = _sparse_classes(0, noise=0.8)
    model = make_method("label_tree", random_state=0).fit(X, y, n_classes=300)
    assert set(model.C_probe_) == {8.0, 1.0}
    assert model.stats()["C_probe"] == {"8.0": model.C_probe_[8.0], "1.0": model.C_probe_[1.0]}
    again = make_method("label_tree", random_state=0).fit(X, y, n_classes=300)
    assert again.C_probe_ == model.C_probe_
    np.testing.assert_array_equal(again.predict(X[:200]), model.predict(X[:200]))
    given = make_method("label_tree", random_state=0, C=8.0).fit(X, y, n_classes=300)
    assert given.C_probe_ == {} and given._p("C") == 8.0 and "C" not in given.resolved_params_


@pytest.mark.parametrize("params", [{"loss": "tree"}, {"loss": "logistic"}])
def test_other_node_models_keep_their_rule(params):
    X, y = _sparse_classes(3, n_classes=50)
    model = make_method("label_tree", random_state=0, **params).fit(X, y, n_classes=50)
    assert model.C_probe_ == {}
