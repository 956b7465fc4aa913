"""mary_tree: defaults resolved from the data (``xcbench_mary_tree.defaults``) and the
query-time beam decoder."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import xcbench
from xcbench.kernels import kernel_input
from xcbench_mary_tree import MaryTree, kernels
from xcbench_mary_tree.defaults import DataShape, representation_rule, resolve
from xcbench_mary_tree.tree import NodeLabelStats, TreeBuilder

AUTO_PARAMS = {"representation", "arity", "max_depth", "d_r", "epochs", "lr", "tree_epochs"}


def _rules(shape, **given):
    return resolve({**MaryTree().get_params(), **given}, shape)


def test_dense_features_keep_the_papers_classification_setting():
    got = _rules(DataShape(16000, 16, 16000 * 16, 26, sparse=False, integer_ids=False))
    assert got == {"representation": "identity", "arity": 5, "max_depth": 4, "d_r": 200,
                   "epochs": 20, "lr": 0.1, "tree_epochs": 10}


@pytest.mark.parametrize("n, epochs", [(10_000, 20), (45_000, 20), (100_000, 10),
                                       (200_000, 5), (10**6, 5)])
def test_identity_epochs_give_small_data_more_passes(n, epochs):
    """About 10^6 example visits, 5 to 20 passes (letter 34.4 -> 30.9% top-1 error at 20,
    synthetic-sparse-1k 29.8 -> 26.2%, aloi27d 84.2 -> 74.6% at 15)."""
    got = _rules(DataShape(n, 1000, 16 * n, 1000, sparse=True))
    assert got["representation"] == "identity" and got["epochs"] == epochs
    assert got["tree_epochs"] == math.ceil(epochs / 2)


def test_sparse_rows_of_many_features_use_the_identity():
    """synthetic-sparse-100k's shape: ~16 nonzeros per row."""
    got = _rules(DataShape(10**6, 848632, 16 * 10**6, 10**5, sparse=True))
    assert got["representation"] == "identity" and got["arity"] == 5
    assert got["max_depth"] == math.ceil(math.log(10**5, 5)) + 1
    assert got["epochs"] == 5  # N = 10^6: fit time, not passes, is the limit there


def test_indicator_rows_get_a_wide_shallow_tree_and_a_learned_map():
    """ptb-sparse's shape: 3 one-hot context features per row, K = 10,000."""
    got = _rules(DataShape(803522, 30000, 3 * 803522, 10000, sparse=True))
    assert got == {"representation": "linear", "arity": 100, "max_depth": 2, "d_r": 200,
                   "epochs": 2, "lr": 0.07, "tree_epochs": 0.25}


def test_dense_rows_with_skewed_labels_get_a_learned_map():
    """ptb's shape (150 dense GloVe features) with Zipf-like next-word labels: the linear
    map and the wide shallow tree; the same rows with uniform labels keep the identity."""
    rng = np.random.default_rng(0)
    X, k = rng.normal(size=(4000, 150)), 6719
    zipf = np.minimum(rng.zipf(1.3, size=4000) - 1, k - 1)
    skewed = DataShape.of(X, k, zipf)
    assert skewed.label_entropy < 0.8 and representation_rule(skewed) == "linear"
    assert _rules(skewed)["arity"] == 82
    uniform = DataShape.of(X, k, rng.integers(0, k, size=4000))
    assert representation_rule(uniform) == "identity"
    assert representation_rule(DataShape.of(X, k)) == "identity"  # labels unknown


def test_memory_estimate_takes_the_costlier_guess_on_dense_sizes():
    """Sizes say nothing of the labels: dense data are estimated as skewed (the learned
    map's wide nodes), sparse data by their own rule."""
    dense = (572902, 150, 572902 * 150, 6719)
    assert MaryTree().estimate_memory(*dense) == \
        MaryTree(representation="linear").estimate_memory(*dense)
    assert MaryTree().estimate_memory(*dense) > \
        MaryTree(representation="identity").estimate_memory(*dense)
    sparse = (10**6, 848632, 16 * 10**6, 10**5)
    assert MaryTree().estimate_memory(*sparse) == \
        MaryTree(representation="identity").estimate_memory(*sparse)


def test_word_ids_get_embeddings():
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 10000, size=(500, 3)).astype(float)
    shape = DataShape.of(ids, 6719)
    assert shape.integer_ids and representation_rule(shape) == "embedding"
    got = _rules(shape)
    assert got["arity"] == 82 and got["max_depth"] == 2  # 82^2 = 6,724 >= K
    for not_ids in (ids + 0.5, np.hstack([ids] * 3), ids % 10, -ids):
        assert not DataShape.of(not_ids, 10).integer_ids


def test_given_values_are_kept_and_the_rest_follow_them():
    shape = DataShape(803522, 30000, 3 * 803522, 10000, sparse=True)
    got = _rules(shape, representation="identity", arity=20)
    assert not {"representation", "arity"} & set(got)
    assert got["max_depth"] == 5 and got["epochs"] == 5  # ceil(log_20 1e4) + 1; N > 2e5


def test_fit_records_every_resolved_value():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 5)), rng.integers(0, 7, size=300)
    m = MaryTree(random_state=0).fit(X, y)
    assert set(m.resolved_params_) == AUTO_PARAMS
    assert m.resolved_params_["representation"] == "identity" and m.rep_ is None
    assert m.stats()["resolved_params"] == m.resolved_params_  # into the run record
    Xs = sp.random(300, 400, density=0.005, format="csr", random_state=0)
    lin = MaryTree(random_state=0).fit(Xs, y)
    assert lin.resolved_params_["representation"] == "linear" and lin.rep_ is not None
    assert lin.M_ == 3 and lin.stats()["depth"] <= 2
    given = MaryTree(representation="identity", epochs=1, random_state=0).fit(Xs, y)
    assert given.rep_ is None and "epochs" not in given.resolved_params_


def _random_model(seed, K, M, D, max_depth):
    rng = np.random.default_rng(seed)
    builder = TreeBuilder(K, M, max_depth, rng)
    tree = builder.build(NodeLabelStats(builder.n_labels, M))
    rows = builder.max_nodes * M
    return tree, builder, rng.normal(size=rows * D) * 2, rng.normal(size=rows), rng


def _decode(tree, table, bias, X, K, k, width=None):
    D = X.shape[1]
    args = (tree.child_ptr, tree.children, tree.child_row, table, bias, D, -1,
            *kernel_input(X), X.shape[0], tree.max_arity)
    cost = np.zeros(X.shape[0])
    if width is None:
        return kernels.decode_topk(k, K, *args, False, cost)
    return kernels.decode_beam(k, width, K, *args, cost)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), K=st.integers(2, 40), M=st.integers(2, 6),
       k=st.integers(1, 6), depth_limited=st.booleans())
def test_a_beam_as_wide_as_the_tree_is_exhaustive_search(seed, K, M, k, depth_limited):
    """Wide enough to keep every leaf (dummies included when the tree is padded), the beam
    returns the exact top k, as the exhaustive branch and bound does."""
    max_depth = max(1, math.ceil(math.log(K) / math.log(M) - 1e-9)) + 1 if depth_limited \
        else None
    tree, builder, table, bias, rng = _random_model(seed, K, M, 3, max_depth)
    X = rng.normal(size=(6, 3))
    exact = _decode(tree, table, bias, X, K, k)
    beam = _decode(tree, table, bias, X, K, k, width=builder.n_labels)
    np.testing.assert_array_equal(beam[0], exact[0])
    np.testing.assert_allclose(beam[1], exact[1], rtol=1e-12, atol=1e-12)


def test_beam_of_one_is_greedy_and_never_answers_a_dummy():
    tree, builder, table, bias, rng = _random_model(3, 11, 4, 3, None)
    assert builder.n_labels == 13  # two dummies
    X = rng.normal(size=(300, 3)) * 5
    greedy = kernels.decode_topk(
        1, 11, tree.child_ptr, tree.children, tree.child_row, table, bias, 3, -1,
        *kernel_input(X), 300, tree.max_arity, True, np.zeros(300))
    one = _decode(tree, table, bias, X, 11, 1, width=1)
    np.testing.assert_array_equal(one[0], greedy[0])
    wide = _decode(tree, table, bias, X, 11, 3, width=5)
    assert ((wide[0] >= 0) & (wide[0] < 11)).all()
    assert np.all(wide[1][:, 0] >= greedy[1][:, 0] - 1e-12)


def test_beam_is_a_query_parameter_measured_without_refitting():
    spec = xcbench.get_method_spec("mary_tree")
    assert "beam" in spec.query_params["decoder"] and "beam" in spec.query_params
    ds = xcbench.load_dataset("synthetic-small")
    m = MaryTree(arity=3, epochs=1, random_state=0).fit(ds.X_train, ds.y_train)
    table = m.table_.copy()
    exact = m.predict_topk(ds.X_test, 3)
    labels, _ = m.set_params(decoder="beam", beam=10 ** 6).predict_topk(ds.X_test, 3)
    np.testing.assert_array_equal(labels, exact[0])
    narrow = m.set_params(beam=1).path_cost(ds.X_test)
    assert narrow.mean() < m.set_params(beam=8).path_cost(ds.X_test).mean()
    np.testing.assert_array_equal(m.table_, table)


@pytest.mark.parametrize("decoder", ["beam"])
def test_beam_decoder_conforms(decoder):
    from xcbench.testing import check_method

    check_method("mary_tree", {"decoder": decoder, "beam": 3})
