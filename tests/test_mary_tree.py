"""mary_tree: contract, AssignLabels' well-formed trees, the node objective's gradient, and
exact branch-and-bound top-k against exhaustive search."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcbench.kernels import kernel_input
from xcbench.testing import check_method
from xcbench.tree.node_softmax import path_log_proba
from xcbench_mary_tree import kernels
from xcbench_mary_tree.assign import node_objective, node_objective_grad, padded_size
from xcbench_mary_tree.defaults import DataShape
from xcbench_mary_tree.tree import NodeLabelStats, TreeBuilder

_DENSE = DataShape(100, 4, 400, 10, sparse=False, integer_ids=False)  # the identity's rules


def _s(m):
    """m's settings with "auto" resolved for small dense data (what fit would use)."""
    return m._settings(_DENSE)


@pytest.mark.parametrize("params", [
    {}, {"tree": "random", "decoder": "greedy"}, {"arity": 3, "max_depth": None},
    {"objective": "classification", "arity": 2, "max_depth": None},
    {"learner": "sgd", "lr_decay": "linear", "tree": "huffman"},
])
def test_contract(params):
    check_method("mary_tree", params)


def _random_stats(builder, rng, n_nodes=50):
    stats = NodeLabelStats(builder.n_labels, builder.arity)
    nodes = rng.integers(0, n_nodes, 400)
    labels = rng.integers(0, builder.n_labels, 400)
    stats.merge(nodes * builder.n_labels + labels, rng.dirichlet(np.ones(builder.arity), 400),
                rng.integers(1, 5, 400).astype(float))
    return stats


@pytest.mark.parametrize("M", [2, 3, 5, 20])
@pytest.mark.parametrize("K", [50, 101])
def test_assign_labels_builds_well_formed_trees(M, K):
    if (K - 1) % (M - 1) == 0 and M > 2:
        K += 1  # the case that needs padding
    rng = np.random.default_rng(M * K)
    builder = TreeBuilder(K, M, None, rng)
    assert builder.n_labels == padded_size(K, M) and (builder.n_labels - 1) % (M - 1) == 0
    for _ in range(3):  # a rebuild from statistics keeps the tree well formed
        tree = builder.build(_random_stats(builder, rng))
        # every node has M children; the dummies' leaves (K' - K of them) are not scored
        arity = np.diff(tree.child_ptr)[tree.internal]
        assert (arity >= 2).all() and (arity <= M).all()
        assert (M - arity).sum() == builder.n_labels - K
        leaves = np.sort(-tree.children[tree.children < 0] - 1)
        assert np.array_equal(leaves, np.arange(K))
        assert (np.diff(tree.path_ptr)[K:] == 0).all()  # dummies have no path


def test_depth_constrained_tree_respects_capacity():
    rng = np.random.default_rng(0)
    builder = TreeBuilder(60, 4, 3, rng)
    tree = builder.build(_random_stats(builder, rng))
    assert tree.depth <= 3
    assert np.diff(tree.child_ptr).max() <= 4
    leaves = np.sort(-tree.children[tree.children < 0] - 1)
    assert np.array_equal(leaves, np.arange(60))
    # every internal node splits its labels (at least two children): no useless chains
    assert (np.diff(tree.child_ptr)[tree.internal] >= 2).all()


@pytest.mark.parametrize("params", [{"arity": 3}, {"arity": 2, "max_depth": None}])
def test_many_rebuilds_keep_node_ids_consistent(params):
    """K=300 with 2 x 50 rebuilds: new nodes take ids the previous tree did not use."""
    from xcbench import make_method
    from xcbench.data.synthetic import make_hierarchical

    ds = make_hierarchical(n_classes=300, n_features=8, n_train=3000, n_test=10, levels=2,
                           bayes_samples=10, seed=0)
    m = make_method("mary_tree", epochs=2, assign_per_epoch=50, random_state=0, **params)
    m.fit(ds.X_train, ds.y_train, n_classes=300)
    t = m.tree_
    internal_children = t.children[t.children >= 0]
    assert len(np.unique(internal_children)) == len(internal_children)
    assert np.array_equal(np.sort(-t.children[t.children < 0] - 1), np.arange(m.n_classes_))
    assert np.isfinite(m.log_proba(ds.X_train[:50], ds.y_train[:50])).all()


def test_greedy_never_answers_a_dummy_label():
    """K=11, M=4 pads two dummies; greedy decoding must still name a real class."""
    tree, builder, table, bias, rng = _random_model(3, 11, 4, 3)
    assert builder.n_labels == 13
    X = rng.normal(size=(300, 3)) * 5
    Xd, indptr, indices, data, dense = kernel_input(X)
    labels, _ = kernels.decode_topk(1, 11, tree.child_ptr, tree.children, tree.child_row,
                                    table, bias, 3, -1, Xd, indptr, indices, data, dense, 300,
                                    tree.max_arity, True, np.zeros(300))
    assert (labels[:, 0] >= 0).all() and (labels[:, 0] < 11).all()


def test_path_cost_counts_children_scored():
    from xcbench.testing import gaussian_problem
    from xcbench import make_method

    X, y, Xt, _ = gaussian_problem()
    m = make_method("mary_tree", arity=3, decoder="greedy", random_state=0).fit(X, y)
    depths = np.diff(m.tree_.path_ptr)
    labels = m.predict(Xt)
    cost = m.path_cost(Xt)
    assert (cost >= 2 * depths[labels]).all() and (cost <= 3 * depths[labels]).all()


def test_node_objective_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    p_cond, q = rng.dirichlet(np.ones(4), 6), rng.dirichlet(np.ones(6))
    grad = node_objective_grad(p_cond, q)
    eps = 1e-7
    for i in range(6):
        for j in range(4):
            bumped = p_cond.copy()
            bumped[i, j] += eps
            fd = (node_objective(bumped, q) - node_objective(p_cond, q)) / eps
            assert fd == pytest.approx(grad[i, j], abs=1e-5)


def _random_model(seed, K, M, D):
    rng = np.random.default_rng(seed)
    builder = TreeBuilder(K, M, None, rng)
    tree = builder.build(NodeLabelStats(builder.n_labels, M))
    rows = builder.max_nodes * M
    return tree, builder, rng.normal(size=rows * D) * 2, rng.normal(size=rows), rng


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), K=st.integers(2, 40), M=st.integers(2, 6),
       k=st.integers(1, 8))
def test_branch_and_bound_top_k_is_exhaustive_top_k(seed, K, M, k):
    D = 3
    tree, builder, table, bias, rng = _random_model(seed, K, M, D)
    X = rng.normal(size=(4, D))
    Xd, indptr, indices, data, dense = kernel_input(X)
    labels, scores = kernels.decode_topk(k, K, tree.child_ptr, tree.children,
                                         tree.child_row, table, bias, D, -1, Xd, indptr,
                                         indices, data, dense, 4, tree.max_arity, False,
                                         np.zeros(4))
    all_logp = np.stack([path_log_proba(
        np.full(4, c), tree.path_ptr, tree.path_node, tree.path_pos, tree.child_ptr,
        tree.child_row, table, bias, D, -1, Xd, indptr, indices, data, dense, tree.max_arity)
        for c in range(K)], axis=1)
    kk = min(k, K)
    expected = -np.sort(-all_logp, axis=1)[:, :kk]
    assert np.allclose(scores[:, :kk], expected)
    assert np.allclose(np.take_along_axis(all_logp, labels[:, :kk], 1), expected)
    assert (labels[:, kk:] == -1).all()


def test_learned_tree_beats_random_tree_on_clustered_classes():
    from xcbench import load_dataset, make_method

    ds = load_dataset("synthetic-small")
    nll = {}
    for tree in ("learned", "random"):
        m = make_method("mary_tree", tree=tree, arity=3, epochs=4, random_state=0)
        m.fit(ds.X_train, ds.y_train, n_classes=ds.n_classes)
        nll[tree] = -np.mean(m.log_proba(ds.X_test, ds.y_test))
    assert nll["learned"] < nll["random"]


def test_sgd_learner_takes_plain_gradient_steps():
    """From zero weights every child of a path node has probability 1/m, so one SGD ascent
    step on log p moves the target child's row by lr (1 - 1/m) x and the others by -lr/m x."""
    from xcbench import make_method

    x = np.array([[0.5, -1.0, 2.0]])
    m = make_method("mary_tree", tree="random", arity=3, epochs=1, lr=0.5, learner="sgd",
                    bits=None, representation="identity", random_state=0)
    m.fit(x, [4], n_classes=9)
    t, table = m.tree_, m.table_.reshape(-1, 3)
    moved = set()
    for s in range(t.path_ptr[4], t.path_ptr[5]):
        start, stop = t.child_ptr[t.path_node[s]], t.child_ptr[t.path_node[s] + 1]
        for q in range(stop - start):
            want = (1.0 if q == t.path_pos[s] else 0.0) - 1.0 / (stop - start)
            assert np.allclose(table[t.child_row[start + q]], 0.5 * want * x[0])
            moved.add(t.child_row[start + q])
    others = np.setdiff1d(np.arange(table.shape[0]), sorted(moved))
    assert np.all(table[others] == 0.0)


def test_linear_lr_decay_starts_once_the_tree_is_fixed():
    from xcbench import make_method

    learned = make_method("mary_tree", epochs=4, lr=0.2, lr_decay="linear")
    step = learned._step_schedule(10, learned._learn_rows(10, _s(learned)), _s(learned))
    assert [step(s) for s in (0, 20, 30, 40)] == pytest.approx([0.2, 0.2, 0.1, 0.0])
    fixed = make_method("mary_tree", epochs=4, lr=0.2, lr_decay="linear", tree="random")
    assert fixed._learn_rows(10, _s(fixed)) == 0
    assert fixed._step_schedule(10, 0, _s(fixed))(10) == pytest.approx(0.15)
    constant = make_method("mary_tree", lr=0.2)
    assert constant._step_schedule(10, 20, _s(constant))(35) == 0.2


@pytest.mark.parametrize("tree_epochs, rebuilds, learn_rows", [
    ("auto", 2 * 5, 200), (0.5, 3, 50), (1.5, 5 + 3, 150), (0, 0, 0), (9, 3 * 5, 300)])
def test_tree_epochs_sets_how_long_assign_labels_runs(tree_epochs, rebuilds, learn_rows):
    """AssignLabels runs assign_per_epoch times per epoch's worth of rows for tree_epochs
    epochs ("auto": the first half, rounded up to whole epochs), then the tree is fixed."""
    from xcbench import load_dataset, make_method

    ds = load_dataset("synthetic-small")
    X, y = ds.X_train[:100], ds.y_train[:100]
    m = make_method("mary_tree", arity=3, epochs=3, assign_per_epoch=5,
                    tree_epochs=tree_epochs, random_state=0)
    assert m._learn_rows(100, _s(m)) == learn_rows
    m.fit(X, y, n_classes=ds.n_classes)
    assert m.rebuilds_ == rebuilds


def test_a_tiny_tree_epochs_still_learns_and_linear_decay_starts_after_it():
    from xcbench import make_method

    tiny = make_method("mary_tree", epochs=2, tree_epochs=1e-6)
    assert tiny._learn_rows(1000, _s(tiny)) == 1
    m = make_method("mary_tree", epochs=2, lr=0.2, lr_decay="linear", tree_epochs=0.5)
    step = m._step_schedule(10, m._learn_rows(10, _s(m)), _s(m))
    assert [step(s) for s in (0, 5, 10, 20)] == pytest.approx([0.2, 0.2, 0.2 * 10 / 15, 0.0])


def test_compacting_the_final_rows_changes_no_prediction(monkeypatch):
    """After fit the final tree's rows are copied from the (hashed) training table into a
    direct one: the same scores, fewer rows."""
    from xcbench import load_dataset, make_method
    from xcbench_mary_tree.model import MaryTree

    ds = load_dataset("synthetic-small")
    params = dict(arity=4, epochs=2, bits=18, random_state=0)
    compact = make_method("mary_tree", **params).fit(ds.X_train, ds.y_train)
    monkeypatch.setattr(MaryTree, "_COMPACT_LIMIT", 0)
    hashed = make_method("mary_tree", **params).fit(ds.X_train, ds.y_train)
    assert hashed.mask_ != -1 and compact.mask_ == -1
    assert compact.bias_.size < hashed.bias_.size
    np.testing.assert_allclose(compact.log_proba(ds.X_test, ds.y_test),
                               hashed.log_proba(ds.X_test, ds.y_test), rtol=1e-12)
    for decoder in ("exact", "greedy"):
        a = compact.set_params(decoder=decoder).predict_topk(ds.X_test, 3)
        b = hashed.set_params(decoder=decoder).predict_topk(ds.X_test, 3)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_allclose(a[1], b[1], rtol=1e-12)


@pytest.mark.parametrize("params, problem", [
    ({"arity": 3, "max_depth": None}, "gaussian"),
    ({"arity": 4, "max_depth": None, "tree": "huffman"}, "gaussian"),
    ({"representation": "embedding", "d_r": 8, "arity": 3, "max_depth": None, "bits": 16},
     "word_ids"),
])
def test_padded_tree_probabilities_sum_to_one_over_the_real_classes(params, problem):
    """K=12 padded to K' = 1 mod (M - 1): the dummy labels are not leaves of the scored tree,
    so no child takes mass that no class gets and sum_c p(c | x) = 1 over the K classes."""
    from xcbench import make_method
    from xcbench.testing import gaussian_problem, word_id_problem

    X, y, Xt, _ = (gaussian_problem if problem == "gaussian" else word_id_problem)()
    m = make_method("mary_tree", random_state=0, **params).fit(X, y, n_classes=12)
    assert m.n_labels_ > 12  # the case with dummies
    Xt = Xt[:20]
    total = sum(np.exp(m.log_proba(Xt, np.full(len(Xt), c))) for c in range(12))
    np.testing.assert_allclose(total, 1.0, atol=1e-6)
    t = m.tree_
    assert np.array_equal(np.sort(-t.children[t.children < 0] - 1), np.arange(12))
    assert (np.diff(t.child_ptr)[t.internal] >= 2).all()
