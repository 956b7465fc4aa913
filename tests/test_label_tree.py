"""label_tree and label_embedding_tree: contract, structure balance and determinism, and the
tree loss's shared slack (one step follows the most violated sibling pair only)."""
import numpy as np
import pytest
import scipy.sparse as sp

from xcbench.kernels import kernel_input
from xcbench.testing import check_method, gaussian_problem
from xcbench_label_tree import kernels
from xcbench_label_tree.structure import (balanced_kmeans, build_structure, class_embedding,
                                          confusion_affinity, random_splitter,
                                          spectral_splitter, spherical_seeds, structure_size)


# the paper's model: the tree loss trained by SGD over a balanced k-means tree, greedy
SGD = {"solver": "sgd", "loss": "tree", "structure": "kmeans", "branching": "sqrt"}


@pytest.mark.parametrize("method, params", [
    ("label_tree", {}),
    ("label_tree", SGD),
    ("label_tree", {"n_trees": 2, "beam": 3}),
    ("label_tree", {"structure": "confusion", "loss": "independent", "confusion_iter": 5}),
    ("label_tree", {"structure": "random", "bits": 16}),
    ("label_embedding_tree", {"embedding_dim": 8}),
    ("label_tree", {"loss": "softmax"}),
    ("label_embedding_tree", {"embedding_dim": 8, "loss": "softmax"}),
    ("label_tree", {"solver": "liblinear", "loss": "independent", "bits": "csr"}),
    ("label_tree", {"solver": "liblinear", "loss": "softmax", "bits": 18, "branching": 3}),
])
def test_contract(method, params):
    check_method(method, params)


def _tree_sizes(tree):
    return [np.diff(tree.child_ptr)[v] for v in range(tree.n_nodes) if tree.node_label[v] < 0]


def test_structure_is_a_balanced_partition_of_the_classes():
    tree = build_structure(103, 4, random_splitter(np.random.default_rng(0)))
    leaves = np.sort(tree.node_label[tree.node_label >= 0])
    assert np.array_equal(leaves, np.arange(103))
    assert max(_tree_sizes(tree)) <= 4
    # every class's path ends at its own leaf
    for c in (0, 50, 102):
        last = tree.path_node[tree.path_ptr[c + 1] - 1]
        assert tree.node_label[last] == c


def test_spectral_split_is_balanced_and_follows_confusions():
    rng = np.random.default_rng(0)
    # 12 classes in 3 confusion blocks of 4 (no confusions across blocks)
    true, pred = [], []
    for block in range(3):
        members = np.arange(4) + 4 * block
        for a in members:
            for b in members:
                if a != b:
                    true += [a] * 5
                    pred += [b] * 5
    A = confusion_affinity(np.array(true), np.array(pred), 12)
    embedding = rng.normal(size=(12, 5))
    parts = spectral_splitter(A, embedding, rng)(np.arange(12), 3)
    assert sorted(len(p) for p in parts) == [4, 4, 4]
    assert sorted(tuple(sorted(p // 4)) for p in parts) == [(0,) * 4, (1,) * 4, (2,) * 4]


def test_balanced_kmeans_sizes_differ_by_at_most_one():
    points = np.random.default_rng(1).normal(size=(50, 3))
    points[:40] += 10  # one big cluster that plain k-means would keep together
    sizes = [len(g) for g in balanced_kmeans(points, 4, np.random.default_rng(0))]
    assert max(sizes) - min(sizes) <= 1 and sum(sizes) == 50


def test_structure_is_deterministic_under_a_seed():
    X, y, _, _ = gaussian_problem()
    from xcbench import make_method

    trees = [make_method("label_tree", structure=s, random_state=3).fit(X, y).tree_
             for s in ("kmeans", "kmeans", "confusion", "confusion")]
    assert np.array_equal(trees[0].children, trees[1].children)
    assert np.array_equal(trees[0].node_label, trees[1].node_label)
    assert np.array_equal(trees[2].node_label, trees[3].node_label)


def _three_label_problem():
    """Root -> {node 1: leaf of class 0, node 2: {node 3: class 1, node 4: class 2}}; one
    example of class 2 at x = [1]; scores f_s = b_s (weights zero) set so that the depth-1
    pair (2 vs 1) is violated by 0.5 and the depth-2 pair (4 vs 3) by 1.5."""
    child_ptr = np.array([0, 2, 2, 4, 4, 4])
    children = np.array([1, 2, 3, 4])
    parent = np.array([-1, 0, 0, 2, 2])
    path_ptr = np.array([0, 1, 3, 5])
    path_node = np.array([1, 2, 3, 2, 4])
    bias = np.array([0.0, 0.5, 1.0, 0.5, 0.0])  # f2 - f1 = 0.5; f4 - f3 = -0.5
    return child_ptr, children, parent, path_ptr, path_node, bias


@pytest.mark.parametrize("tree_loss", [True, False])
def test_tree_loss_shares_one_slack_across_depths(tree_loss):
    child_ptr, children, parent, path_ptr, path_node, bias = _three_label_problem()
    X = np.array([[1.0]])
    Xd, indptr, indices, data, dense = kernel_input(X)
    table, acc = np.zeros(5), np.full(5, 1e-8)
    bias_acc = np.full(5, 1e-8)
    before = bias.copy()
    loss = kernels.train_epoch(np.array([0]), np.array([2]), child_ptr, children, parent,
                               path_ptr, path_node, table, acc, bias, bias_acc, 1, -1, Xd,
                               indptr, indices, data, dense, 0.1, tree_loss, np.zeros((1, 1)),
                               np.zeros(1), False, 2)
    changed = set(np.flatnonzero(bias != before))
    if tree_loss:
        # the slack is the max violation (1.5, at depth 2), and only that pair moves
        assert loss == pytest.approx(1.5)
        assert changed == {3, 4}
        assert bias[4] > before[4] and bias[3] < before[3]
    else:
        # independent hinges: 1 - f2 = 0 at depth 1 ... every violated node moves
        hinges = (1 - 1.0) + (1 + 0.5) + (1 + 0.5) + (1 - 0.0)
        assert loss == pytest.approx(hinges)
        assert changed == {1, 3, 4}


def test_tree_loss_beats_independent_and_learned_beats_random():
    from xcbench import load_dataset, make_method

    ds = load_dataset("synthetic-small")
    errors = {}
    for name, params in {"tree": {}, "independent": {"loss": "independent"},
                         "random": {"structure": "random"}}.items():
        m = make_method("label_tree", epochs=3, random_state=0, **{**SGD, **params})
        m.fit(ds.X_train, ds.y_train, n_classes=ds.n_classes)
        errors[name] = np.mean(m.predict(ds.X_test) != ds.y_test)
    assert errors["tree"] <= errors["independent"] and errors["tree"] < errors["random"]


def test_dense_and_csr_give_the_same_model():
    from xcbench import make_method

    X, y, Xt, _ = gaussian_problem()
    a = make_method("label_embedding_tree", embedding_dim=6, random_state=0).fit(X, y)
    b = make_method("label_embedding_tree", embedding_dim=6, random_state=0).fit(
        sp.csr_matrix(X), y)
    la, sa = a.predict_topk(Xt, 3)
    lb, sb = b.predict_topk(sp.csr_matrix(Xt), 3)
    assert np.array_equal(la, lb) and np.allclose(sa, sb)


def test_class_embedding_projects_wide_dense_data_and_keeps_sparse_means_sparse():
    rng = np.random.default_rng(0)
    dense = rng.normal(size=(200, 100))
    y = rng.integers(0, 20, 200)
    assert class_embedding(dense, y, 20, rng).shape == (20, 64)
    assert class_embedding(sp.csr_matrix(dense), y, 20, rng).shape == (20, 64)
    X = sp.random(200, 5000, density=0.002, random_state=0, format="csr")
    for Xin in (X, X.toarray()):  # sparse data, whatever the container
        emb = class_embedding(Xin, y, 20, rng)
        assert sp.issparse(emb) and emb.shape == (20, 5000) and emb.nnz <= X.nnz
    means = np.stack([X[y == c].toarray().mean(axis=0) for c in range(20)])
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    np.testing.assert_allclose(emb.toarray(), means, atol=1e-12)


def test_spherical_kmeans_is_balanced_and_separates_sparse_groups():
    """Two groups of sparse unit rows on disjoint features: the two clusters are the
    groups, and sizes differ by at most one; all-zero rows (classes without training rows)
    are never drawn as seeds while other rows remain."""
    from sklearn.preprocessing import normalize

    rng = np.random.default_rng(0)
    a = sp.random(20, 50, density=0.2, random_state=1, format="csr")
    b = sp.random(20, 50, density=0.2, random_state=2, format="csr")
    points = normalize(sp.vstack([sp.hstack([a, sp.csr_matrix((20, 50))]),
                                  sp.hstack([sp.csr_matrix((20, 50)), b])]).tocsr())
    for seed in range(5):
        groups = balanced_kmeans(points, 2, np.random.default_rng(seed))
        assert sorted(len(g) for g in groups) == [20, 20]
        assert all(len(set(g < 20)) == 1 for g in groups)
    groups = balanced_kmeans(points, 3, rng)  # sizes still differ by at most one
    assert sorted(len(g) for g in groups) == [13, 13, 14]
    with_zeros = sp.vstack([points, sp.csr_matrix((5, 100))]).tocsr()
    for seed in range(5):
        assert (spherical_seeds(with_zeros, 2, np.random.default_rng(seed)) < 40).all()


def test_hashed_weights_at_ten_thousand_classes_stay_small():
    """At K = 1e4 and D = 1e5 a dense nodes x D table would be ~8 GB: the auto layout
    hashes (at most 2^26 slots a table), and the estimate stays far below that."""
    from xcbench import make_method

    m = make_method("label_tree", epochs=1, random_state=0, **SGD)
    assert m.estimate_memory(20_000, 100_000, 20_000 * 16, 10_000) < 2 << 30
    rng = np.random.default_rng(0)
    X = sp.random(500, 100_000, density=16 / 100_000, random_state=0, format="csr")
    m.fit(X, rng.integers(0, 10_000, 500), n_classes=10_000)
    assert m.stats()["hashed_weights"] and m.stats()["bytes"] < 1 << 30


def test_single_class_and_two_classes():
    from xcbench import make_method

    X = np.random.default_rng(0).normal(size=(20, 3))
    for K in (1, 2):
        m = make_method("label_tree", random_state=0).fit(X, np.arange(20) % K)
        labels, _ = m.predict_topk(X, 3)
        assert (labels[:, 0] >= 0).all() and (labels[:, 0] < K).all()
        assert (labels[:, K:] == -1).all()


def test_top1_of_every_list_is_the_greedy_descent_and_path_cost_is_its_work():
    from xcbench import load_dataset, make_method

    ds = load_dataset("synthetic-small")
    m = make_method("label_tree", epochs=2, random_state=0, **{**SGD, "branching": 3})
    m.fit(ds.X_train, ds.y_train, n_classes=ds.n_classes)
    greedy = m.predict_topk(ds.X_test, 1)[0][:, 0]
    top5, scores = m.predict_topk(ds.X_test, 5)
    assert np.array_equal(top5[:, 0], greedy)
    assert (np.diff(scores, axis=1) <= 1e-12).all()  # sorted
    t = m.tree_
    arity = np.diff(t.child_ptr)
    expected = [arity[t.parent[t.path_node[t.path_ptr[c]:t.path_ptr[c + 1]]]].sum()
                for c in greedy]
    assert np.array_equal(m.path_cost(ds.X_test), expected)


@pytest.mark.parametrize("method", ["label_tree", "label_embedding_tree"])
def test_softmax_loss_is_a_probability_model_and_top1_score_is_its_log_proba(method):
    from xcbench import load_dataset, make_method

    ds = load_dataset("synthetic-small")
    m = make_method(method, loss="softmax", epochs=2, random_state=0)
    m.fit(ds.X_train, ds.y_train, n_classes=ds.n_classes)
    X = ds.X_test[:4]
    total = sum(np.exp(m.log_proba(X, np.full(4, c))) for c in range(ds.n_classes))
    np.testing.assert_allclose(total, 1.0, rtol=1e-9)
    labels, scores = m.predict_topk(X, 3)
    np.testing.assert_allclose(scores[:, 0], m.log_proba(X, labels[:, 0]), rtol=1e-9)
    assert np.all(np.diff(scores, axis=1) <= 1e-12)
    assert np.mean(m.predict(ds.X_test) != ds.y_test) < 0.3  # it learns (hinge: ~0.10)


def test_hinge_losses_have_no_probability_model():
    from xcbench import load_dataset, make_method

    ds = load_dataset("synthetic-small")
    for params in (SGD, {}):
        m = make_method("label_tree", epochs=1, random_state=0, **params)
        m.fit(ds.X_train, ds.y_train)
        with pytest.raises(NotImplementedError, match="loss='softmax'"):
            m.log_proba(ds.X_test[:2], ds.y_test[:2])


def _node_fit_problem():
    """Sparse binary rows of 30 classes, each class a few fixed features plus noise."""
    rng = np.random.default_rng(0)
    centers = sp.random(30, 300, density=0.04, random_state=1, format="csr")
    y = rng.integers(0, 30, 1500)
    X = (centers[y] + sp.random(1500, 300, density=0.01, random_state=2)).tocsr()
    X.data[:] = 1.0
    return X[:1000], y[:1000], X[1000:], y[1000:]


def test_liblinear_root_is_sklearns_crammer_singer_svm_on_its_children():
    """solver="liblinear", loss="independent": the root's children scores are LinearSVC's
    Crammer-Singer decision values fitted on every row, with each child's group as target."""
    from sklearn.svm import LinearSVC

    from xcbench import make_method

    X, y, Xt, _ = _node_fit_problem()
    m = make_method("label_tree", structure="kmeans", solver="liblinear", loss="independent",
                    bits=None, C=0.5, prune=0.0, branching=4, random_state=0)
    m.fit(X, y, n_classes=30)
    t = m.tree_
    kids = t.children[t.child_ptr[0]:t.child_ptr[1]]
    group = np.full(30, -1)
    for q, child in enumerate(kids):  # the classes under each root child
        stack = [child]
        while stack:
            v = stack.pop()
            if t.node_label[v] >= 0:
                group[t.node_label[v]] = q
            stack.extend(t.children[t.child_ptr[v]:t.child_ptr[v + 1]])
    Xn = X.toarray()
    active = np.flatnonzero(np.abs(Xn).sum(axis=0))  # node problems use active columns
    ref = LinearSVC(multi_class="crammer_singer", dual=True, C=0.5, max_iter=1000,
                    random_state=0).fit(Xn[:, active], group[y])
    W = m.table_[:t.n_nodes * X.shape[1]].reshape(t.n_nodes, -1)[kids]
    ours = Xt.toarray() @ W.T + m.bias_[kids]
    # the same problem up to row order (ours are sorted by class), so equal to the solver's
    # tolerance
    np.testing.assert_allclose(ours, ref.decision_function(Xt.toarray()[:, active]), atol=1e-3)


@pytest.mark.parametrize("loss", ["independent", "softmax"])
def test_liblinear_exact_store_matches_the_direct_table_and_learns(loss):
    """bits="csr" keeps the same weights as the direct table (same predictions and scores,
    dense or CSR input), and node-by-node training learns the task."""
    from xcbench import make_method

    X, y, Xt, yt = _node_fit_problem()
    fits = {bits: make_method("label_tree", structure="kmeans", solver="liblinear", loss=loss,
                              bits=bits, branching=4, random_state=0).fit(X, y, n_classes=30)
            for bits in (None, "csr")}
    assert fits["csr"].stats()["weight_layout"] == "csr"
    la, sa = fits[None].predict_topk(Xt, 3)
    for Xin in (Xt, Xt.toarray()):
        lb, sb = fits["csr"].predict_topk(Xin, 3)
        assert np.array_equal(la, lb) and np.allclose(sa, sb)
    assert np.mean(la[:, 0] != yt) < 0.15
    if loss == "softmax":
        np.testing.assert_allclose(fits["csr"].log_proba(Xt, yt),
                                   fits[None].log_proba(Xt, yt), atol=1e-9)


def test_liblinear_pruning_keeps_fewer_weights():
    from xcbench import make_method

    X, y, _, _ = _node_fit_problem()
    kept = [make_method("label_tree", structure="kmeans", solver="liblinear", loss="independent",
                        bits="csr", prune=prune, random_state=0).fit(X, y, n_classes=30)
            .stats()["n_params"]
            for prune in (0.0, 0.1)]
    assert kept[1] < kept[0]


@pytest.mark.parametrize("params, message", [
    ({"solver": "liblinear", "loss": "tree"}, "no node-by-node"),
    ({"bits": "csr", "solver": "sgd"}, "solver='liblinear'"),
    ({"solver": "sgd", "loss": "hinge"}, "solver='liblinear'"),
])
def test_liblinear_refuses_what_it_cannot_train(params, message):
    from xcbench import make_method

    X, y, _, _ = _node_fit_problem()
    with pytest.raises(ValueError, match=message):
        make_method("label_tree", **params).fit(X, y)


@pytest.mark.parametrize("K, branching", [(1, 2), (3, 2), (17, 4), (1000, 32), (10000, 64)])
def test_structure_size_counts_the_nodes_and_depth_build_structure_makes(K, branching):
    tree = build_structure(K, branching, random_splitter(np.random.default_rng(0)))
    assert structure_size(K, branching) == (tree.n_nodes, tree.depth)


@pytest.mark.parametrize("K, leaf_size", [(1000, 100), (10000, 100), (50, 100), (257, 64)])
def test_leaf_size_makes_parabel_trees(K, leaf_size):
    """branching=2 with leaf_size: binary splits until a node holds at most leaf_size
    classes, whose children are then its classes; structure_size counts the same tree."""
    tree = build_structure(K, 2, random_splitter(np.random.default_rng(0)), leaf_size=leaf_size)
    arity = np.diff(tree.child_ptr)
    internal = tree.node_label < 0
    last = internal & np.array([np.all(tree.node_label[tree.children[tree.child_ptr[v]:
                                                                     tree.child_ptr[v + 1]]] >= 0)
                                for v in range(tree.n_nodes)])
    assert np.all(arity[internal & ~last] == 2)
    assert np.all(arity[last] <= leaf_size)
    assert arity[last].max() > leaf_size // 2 or K <= leaf_size
    assert sorted(tree.node_label[tree.node_label >= 0]) == list(range(K))
    assert structure_size(K, 2, leaf_size) == (tree.n_nodes, tree.depth)
    with pytest.raises(ValueError, match="leaf_size"):
        build_structure(K, 2, random_splitter(np.random.default_rng(0)), leaf_size=1)


@pytest.mark.parametrize("params", [{"loss": "softmax"}, {"loss": "independent", "prune": 0.01},
                                    {"loss": "hinge"}])
def test_liblinear_memory_estimate_covers_the_weights_kept(params):
    """The estimate counts 32 bytes per kept weight (collected, then packed): it must cover
    what a fit keeps, for logistic nodes (dense on a node's features) and pruned hinge
    nodes alike."""
    from xcbench import make_method

    X, y, _, _ = _node_fit_problem()
    m = make_method("label_tree", structure="kmeans", solver="liblinear", bits="csr", branching=4,
                    random_state=0, **params).fit(X, y, n_classes=30)
    kept = m.stats()["n_params"] - m.bias_.size
    assert m.estimate_memory(X.shape[0], X.shape[1], X.nnz, 30) > 32 * kept


def test_exact_store_is_refused_where_it_cannot_be_filled():
    from sklearn.utils._param_validation import InvalidParameterError

    from xcbench import make_method

    with pytest.raises(ValueError, match="solver='liblinear'"):
        make_method("label_tree", bits="csr", solver="sgd").estimate_memory(100, 10, 100, 5)
    with pytest.raises(InvalidParameterError, match="bits"):
        make_method("label_embedding_tree", bits="csr").fit(np.eye(3), [0, 1, 2])
