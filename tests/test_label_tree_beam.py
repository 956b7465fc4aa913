"""Beam search decoding, ensembles, Bonsai-style wide unbalanced trees, one-vs-rest node
classifiers and the defaults by rule of label_tree / label_embedding_tree."""
import copy
import dataclasses
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from xcbench import make_method
from xcbench.tree.beam import beam_search, exhaustive_search, keep_best
from xcbench_label_tree import defaults, kernels
from xcbench_label_tree.nodes import squared_hinge_node
from xcbench_label_tree.structure import (build_structure, random_splitter, spherical_kmeans,
                                          unbalanced_kmeans_splitter)


def _random_tree(rng, n_classes, branching):
    """A random label tree (random balanced splits) with random edge scores."""
    tree = build_structure(n_classes, branching, random_splitter(rng))
    return tree, rng.normal(size=len(tree.children))


@pytest.mark.parametrize("seed", range(5))
def test_beam_as_wide_as_the_tree_is_exhaustive_search(seed):
    rng = np.random.default_rng(seed)
    tree, score = _random_tree(rng, int(rng.integers(2, 40)), int(rng.integers(2, 5)))
    n_leaves = int((tree.node_label >= 0).sum())
    leaves, scores = beam_search(n_leaves, tree.child_ptr, tree.children, tree.node_label,
                                 score)
    ref_leaves, ref_scores = exhaustive_search(tree.child_ptr, tree.children,
                                               tree.node_label, score)
    assert np.array_equal(leaves, ref_leaves)
    np.testing.assert_allclose(scores, ref_scores)


def test_beam_of_one_is_the_greedy_descent():
    rng = np.random.default_rng(0)
    tree, score = _random_tree(rng, 50, 3)
    v = 0
    while tree.node_label[v] < 0:
        edges = np.arange(tree.child_ptr[v], tree.child_ptr[v + 1])
        v = tree.children[edges[np.argmax(score[edges])]]
    leaves, _ = beam_search(1, tree.child_ptr, tree.children, tree.node_label, score)
    assert leaves[0] == v


def test_keep_best_sorts_and_breaks_ties_by_arrival():
    nodes = np.arange(6, dtype=np.int64)
    scores = np.array([0.5, 2.0, 0.5, -1.0, 2.0, 0.5])
    out_n, out_s = np.empty(4, dtype=np.int64), np.empty(4)
    width = keep_best(nodes, scores, 6, 4, out_n, out_s)
    assert width == 4
    assert list(out_n) == [1, 4, 0, 2] and list(out_s) == [2.0, 2.0, 0.5, 0.5]
    assert keep_best(nodes, scores, 2, 4, out_n, out_s) == 2 and list(out_n[:2]) == [1, 0]


def _sparse_problem(K=24, n=1200, d=400, seed=0):
    """Sparse rows: each class a few fixed features plus noise."""
    rng = np.random.default_rng(seed)
    centers = sp.random(K, d, density=0.03, random_state=seed + 1, format="csr")
    y = rng.integers(0, K, n)
    X = (centers[y] + sp.random(n, d, density=0.01, random_state=seed + 2)).tocsr()
    X.data[:] = 1.0
    cut = int(0.8 * n)
    return X[:cut], y[:cut], X[cut:], y[cut:]


def _edge_scores(model, member, x):
    """Every edge's transformed score for one row x (dense), from a direct weight table."""
    t = member.tree
    D = model.n_features_in_
    W = member.table[:t.n_nodes * D].reshape(t.n_nodes, D)
    if model._p("normalize"):
        x = x / np.linalg.norm(x)
    out = np.empty(len(t.children))
    for v in range(t.n_nodes):
        s0, s1 = t.child_ptr[v], t.child_ptr[v + 1]
        if s1 > s0:
            kids = t.children[s0:s1]
            scores = W[kids] @ x + member.bias[kids]
            kernels.transform_scores(scores, s1 - s0, model._score_code)
            out[s0:s1] = scores
    return out


@pytest.mark.parametrize("loss", ["hinge", "logistic", "softmax", "independent"])
def test_model_beam_as_wide_as_the_tree_is_exhaustive_search(loss):
    """On fitted small models: a beam of width K finds every class with its exhaustive path
    score, in the same order (top-1 = the best path)."""
    X, y, Xt, _ = _sparse_problem()
    K = 24
    m = make_method("label_tree", loss=loss, bits=None, branching=3, structure="kmeans",
                    beam=K, random_state=0).fit(X, y, n_classes=K)
    labels, scores = m.predict_topk(Xt[:10], K)
    t = m.tree_
    for i in range(10):
        leaves, ref = exhaustive_search(t.child_ptr, t.children, t.node_label,
                                        _edge_scores(m, m.trees_[0], Xt[i].toarray()[0]))
        np.testing.assert_allclose(scores[i], ref, atol=1e-9)
        assert labels[i, 0] == t.node_label[leaves[0]]
        assert sorted(labels[i]) == list(range(K))


def test_beam_is_a_query_parameter_and_top1_does_not_depend_on_k():
    X, y, Xt, yt = _sparse_problem(K=60, n=3000)
    m = make_method("label_tree", beam=1, branching=4, structure="kmeans", random_state=0)
    m.fit(X, y, n_classes=60)
    store, greedy_cost = m.trees_[0].table, m.path_cost(Xt)
    m.set_params(beam=5)  # no refit: the same model decodes with a wider beam
    wide = m.predict(Xt)
    assert m.trees_[0].table is store and (m.path_cost(Xt) > greedy_cost).all()
    for k in (1, 3, 5, 8):
        labels, scores = m.predict_topk(Xt, k)
        assert np.array_equal(labels[:, 0], wide)
        assert (np.diff(scores, axis=1) <= 1e-12).all()
    from xcbench.contract.plugins import get_method_spec

    assert "beam" in get_method_spec("label_tree").query_params
    assert "beam" in get_method_spec("label_embedding_tree").query_params


@pytest.mark.parametrize("method, params", [
    ("label_tree", {}),
    ("label_tree", {"loss": "softmax", "structure": "kmeans", "branching": 4}),
    ("label_tree", {"solver": "sgd", "loss": "tree", "epochs": 1}),
    ("label_embedding_tree", {"embedding_dim": 8, "loss": "softmax", "epochs": 1}),
])
def test_an_ensemble_of_identical_trees_is_one_tree(method, params):
    X, y, Xt, yt = _sparse_problem()
    one = make_method(method, random_state=0, n_trees=1, beam=3, **params).fit(X, y)
    many = make_method(method, random_state=0, n_trees=1, beam=3, **params).fit(X, y)
    many.trees_ = [copy.copy(one.trees_[0]) for _ in range(3)]
    for forest in (False, True):  # decoded tree by tree, then in one call when it can be
        if forest:
            many._build_forest()
        for k in (1, 3, 5):
            la, sa = one.predict_topk(Xt, k)
            lb, sb = many.predict_topk(Xt, k)
            assert np.array_equal(la, lb)
            np.testing.assert_allclose(sa, sb, atol=1e-12)
        if one._p("loss") == "softmax":
            np.testing.assert_allclose(one.log_proba(Xt, yt), many.log_proba(Xt, yt),
                                       atol=1e-12)
    if "forest_" in many.__dict__:  # the weights are held once, in the forest
        assert many.stats()["n_params"] == 3 * one.stats()["n_params"]
        assert many.stats()["bytes"] < 3.5 * one.stats()["bytes"]
        again = pickle.loads(pickle.dumps(many))
        assert np.array_equal(again.predict_topk(Xt, 5)[0], many.predict_topk(Xt, 5)[0])
    else:
        assert many.stats()["bytes"] == 3 * one.stats()["bytes"]


def test_ensemble_trees_differ_and_average_their_scores():
    X, y, Xt, _ = _sparse_problem()
    m = make_method("label_tree", n_trees=3, beam=24, branching=4, random_state=0).fit(X, y)
    assert len(m.trees_) == 3
    assert not all(np.array_equal(m.trees_[0].tree.children, t.tree.children)
                   for t in m.trees_[1:])
    _assert_scores_average_the_trees(m, Xt[:5], 24)


def _assert_scores_average_the_trees(model, X, width):
    """Each of the ensemble's top-``width`` scores is the log of the mean over its trees of
    exp(the tree's path score), a tree whose beam missed the label adding 0."""
    labels, scores = model.predict_topk(X, width)
    n = X.shape[0]
    parts = [model._member_topk(t, model._inputs(X), n, width, width) for t in model.trees_]
    for i in range(n):
        for j in range(width):
            mean = np.mean([np.exp(p[1][i][p[0][i] == labels[i, j]]).sum() for p in parts])
            assert scores[i, j] == pytest.approx(np.log(mean))


def test_unbalanced_kmeans_follows_the_data_and_dissolves_singletons():
    """Two groups of 30 and 6 unit rows on disjoint features: two clusters of those sizes
    (no balance); a third centre left with one row is dissolved into its next cluster."""
    a = sp.random(30, 40, density=0.3, random_state=1, format="csr")
    b = sp.random(6, 40, density=0.3, random_state=2, format="csr")
    points = normalize(sp.vstack([sp.hstack([a, sp.csr_matrix((30, 40))]),
                                  sp.hstack([sp.csr_matrix((6, 40)), b])]).tocsr())
    for seed in range(5):
        groups = spherical_kmeans(points, 2, np.random.default_rng(seed))
        sizes = sorted(len(g) for g in groups)
        if sizes == [6, 30]:
            break
    assert sizes == [6, 30]
    assert all(len(set(g < 30)) == 1 for g in groups)
    for seed in range(5):
        groups = spherical_kmeans(points, 8, np.random.default_rng(seed))
        assert min(len(g) for g in groups) >= 2
        assert sum(len(g) for g in groups) == 36


@pytest.mark.parametrize("max_depth", [1, 2, 3])
def test_max_depth_bounds_the_tree(max_depth):
    rng = np.random.default_rng(0)
    emb = normalize(sp.random(500, 60, density=0.1, random_state=0, format="csr"))
    tree = build_structure(500, 200, unbalanced_kmeans_splitter(emb, rng), max_depth=max_depth)
    assert tree.depth <= max_depth
    assert np.array_equal(np.sort(tree.node_label[tree.node_label >= 0]), np.arange(500))
    # past the depth limit only to keep nodes narrow: at most 4 x branching children
    tree = build_structure(500, 4, unbalanced_kmeans_splitter(emb, rng), max_depth=max_depth)
    assert np.diff(tree.child_ptr).max() <= 16
    assert np.array_equal(np.sort(tree.node_label[tree.node_label >= 0]), np.arange(500))


def test_classes_without_rows_are_dealt_out_over_the_clusters():
    """Most classes without training rows (zero means): no node gets nearly all of them."""
    rng = np.random.default_rng(0)
    emb = sp.vstack([normalize(sp.random(40, 60, density=0.1, random_state=0, format="csr")),
                     sp.csr_matrix((960, 60))]).tocsr()
    tree = build_structure(1000, 10, unbalanced_kmeans_splitter(emb, rng), max_depth=3)
    assert np.diff(tree.child_ptr).max() <= 40
    assert np.array_equal(np.sort(tree.node_label[tree.node_label >= 0]), np.arange(1000))


def test_squared_hinge_node_is_one_binary_svm_per_child(monkeypatch):
    from sklearn.svm import LinearSVC

    from xcbench_label_tree import nodes

    monkeypatch.setattr(nodes, "LIBLINEAR_DUAL_TOL", 1e-8)  # both solved to the optimum
    X, y, _, _ = _sparse_problem()
    target = y % 3
    coef, intercept = squared_hinge_node(X, target, 4, 1.0, 1000, 0)
    for q in range(3):
        ref = LinearSVC(C=1.0, tol=1e-8, max_iter=1000, random_state=0).fit(X, target == q)
        np.testing.assert_allclose(X @ coef[q] + intercept[q], ref.decision_function(X),
                                   atol=1e-4)
    assert not coef[3].any() and intercept[3] < intercept[:3].min()


SPARSE_BIG = defaults.DataShape(1_000_000, 848_632, 16.0, 100_000, True, 3.0)
SPARSE_SMALL = defaults.DataShape(10_000, 8_880, 16.0, 1_000, True, 2.0)
DENSE = defaults.DataShape(20_000, 16, 16.0, 26, False, 1.1)
AUTO_LT = {name: "auto" for name in ("structure", "branching", "max_depth", "loss", "solver",
                                     "C", "prune", "bits", "normalize", "n_trees", "beam")}


def test_defaults_on_sparse_data_pick_bonsai_shaped_trees():
    big = defaults.resolve(SPARSE_BIG, AUTO_LT)
    assert big == {"structure": "kmeans_unbalanced", "branching": 100, "max_depth": 3,
                   "loss": "hinge", "solver": "liblinear", "C": 8.0, "prune": 0.1,
                   "bits": "csr",
                   "normalize": True, "n_trees": 3, "beam": 2}
    small = defaults.resolve(SPARSE_SMALL, AUTO_LT)
    assert small["max_depth"] == 2 and small["n_trees"] == 1 and small["beam"] == 2
    # the levels a balanced tree of width 100 needs, at least 2: 1e4 -> 2, 1e4 + 1 -> 3
    for k, depth in ((10, 2), (10_000, 2), (10_001, 3), (1_000_000, 3)):
        shape = defaults.DataShape(100_000, 50_000, 16.0, k, True, 1.0)
        assert defaults.resolve(shape, AUTO_LT)["max_depth"] == depth


# ptb-sparse's shape: 803,522 rows, D = 30,000, 3 nonzeros per row, K = 1e4, Zipf labels
SPARSE_SKEWED = defaults.DataShape(803_522, 30_000, 3.0, 10_000, True, 4165.0, 0.72)


def test_defaults_on_sparse_skewed_labels_pick_parabel_shaped_trees():
    """Next-word data (label entropy under 0.8): balanced binary 2-means down to nodes of
    at most 100 classes, Parabel's beam of 10; balanced labels keep Bonsai's shape."""
    params = {**AUTO_LT, "leaf_size": "auto", "bonsai_trees": "auto"}
    skewed = defaults.resolve(SPARSE_SKEWED, params)
    assert skewed["structure"] == "kmeans" and skewed["branching"] == 2
    assert skewed["leaf_size"] == 100 and skewed["max_depth"] is None
    assert skewed["solver"] == "liblinear" and skewed["loss"] == "hinge"
    assert skewed["beam"] == 10 and skewed["n_trees"] == 3
    assert skewed["bonsai_trees"] == 3  # the mixed ensemble: as many Bonsai-shaped trees
    balanced = defaults.resolve(dataclasses.replace(SPARSE_SKEWED, label_entropy=0.95), params)
    assert balanced["structure"] == "kmeans_unbalanced" and balanced["branching"] == 100
    assert balanced["leaf_size"] is None and balanced["beam"] == 2
    assert balanced["bonsai_trees"] == 0
    assert defaults.resolve(SPARSE_BIG, params)["leaf_size"] is None
    assert defaults.resolve(SPARSE_BIG, params)["bonsai_trees"] == 0
    # given parameters win: a chosen structure keeps its own shape and the beam of 2
    chosen = defaults.resolve(SPARSE_SKEWED, {**params, "structure": "kmeans_unbalanced"})
    assert chosen["branching"] == 100 and chosen["leaf_size"] is None and chosen["beam"] == 2
    assert chosen["bonsai_trees"] == 0
    assert defaults.resolve(SPARSE_SKEWED, {**params, "n_trees": 2})["bonsai_trees"] == 2
    # dense skewed data (ptb) trains by SGD: no Parabel shape
    dense = defaults.resolve(dataclasses.replace(SPARSE_SKEWED, sparse=False,
                                                 n_features=150, nnz_per_row=150.0), params)
    assert dense["solver"] == "sgd" and dense["leaf_size"] is None
    assert dense["bonsai_trees"] == 0
    assert defaults.binary_depth(10_000, 100) == 8 and defaults.binary_depth(50, 100) == 1


def _zipf_problem(n=4000, K=300, seed=0):
    """Sparse rows with next-word-like labels (a few frequent classes)."""
    rng = np.random.default_rng(seed)
    y = np.minimum(rng.zipf(1.3, n) - 1, K - 1)
    X = sp.random(n, 400, density=0.01, random_state=seed, format="csr")
    X = (X + sp.csr_matrix((np.ones(n), (np.arange(n), y % 400)), shape=(n, 400))).tocsr()
    return X, y, K


def test_a_parabel_shaped_model_fits_and_decodes_with_a_beam_of_ten():
    X, y, K = _zipf_problem()
    m = make_method("label_tree", random_state=0, bonsai_trees=0).fit(X, y, n_classes=K)
    assert m.resolved_params_["structure"] == "kmeans" and m.resolved_params_["leaf_size"] == 100
    stats = m.stats()
    assert stats["beam"] == 10 and stats["arity_max"] <= 100 and stats["depth"] >= 3
    assert (m.predict(X) == y).mean() > 0.5


def test_a_mixed_ensemble_adds_bonsai_shaped_trees_and_averages_all_of_them():
    X, y, K = _zipf_problem()
    params = dict(structure="kmeans", branching=2, leaf_size=100, n_trees=2, beam=10,
                  random_state=0)
    mixed = make_method("label_tree", bonsai_trees=2, **params).fit(X, y, n_classes=K)
    alone = make_method("label_tree", bonsai_trees=0, **params).fit(X, y, n_classes=K)
    assert len(mixed.trees_) == 4 and len(alone.trees_) == 2
    arities = [int(np.diff(t.tree.child_ptr)[0]) for t in mixed.trees_]
    assert arities[:2] == [2, 2] and min(arities[2:]) > 2  # Parabel's roots, then Bonsai's
    assert mixed.stats()["bonsai_trees"] == 2 and mixed.stats()["n_trees"] == 4
    assert set(mixed.stats()["node_C"]) == {"own", "bonsai"}
    own, bonsai = mixed.stats()["shapes"]  # each shape's trees: their deepest and widest
    assert (own["shape"], own["n_trees"], own["branching"], own["leaf_size"]) == \
        ("own", 2, 2, 100)
    assert (bonsai["shape"], bonsai["n_trees"]) == ("bonsai", 2)
    for shape, trees in ((own, mixed.trees_[:2]), (bonsai, mixed.trees_[2:])):
        assert shape["depth"] == max(np.diff(t.tree.path_ptr).max() for t in trees)
        assert shape["arity_max"] == max(np.diff(t.tree.child_ptr)[t.tree.node_label < 0].max()
                                         for t in trees)
    assert bonsai["depth"] < own["depth"]
    assert alone.stats()["shapes"] == [own]  # the same trees
    # the Parabel-shaped trees are the ones fitted without the Bonsai trees (same draws)
    inputs = mixed._inputs(X[:50])
    for a, b in zip(mixed.trees_[:2], alone.trees_):
        assert np.array_equal(a.tree.children, b.tree.children)
        assert np.array_equal(mixed._member_topk(a, inputs, 50, 5, 10)[0],
                              alone._member_topk(b, inputs, 50, 5, 10)[0])
    _assert_scores_average_the_trees(mixed, X[:5], 10)  # all four trees
    # memory: the Bonsai trees' stores are counted
    sizes = (X.shape[0], X.shape[1], X.nnz, K)
    assert mixed.estimate_memory(*sizes) > alone.estimate_memory(*sizes)


def test_defaults_on_dense_data_and_for_the_papers_losses():
    narrow = defaults.resolve(DENSE, AUTO_LT)  # 16 dense features: the paper's SGD tree
    assert narrow["solver"] == "sgd" and narrow["loss"] == "tree"
    assert narrow["structure"] == "kmeans" and narrow["branching"] == "sqrt"
    assert narrow["beam"] == 1 and narrow["n_trees"] == 1
    wide = defaults.resolve(defaults.DataShape(30_000, 128, 128.0, 1000, False, 1.0), AUTO_LT)
    assert wide["solver"] == "liblinear" and wide["loss"] == "hinge"
    assert wide["structure"] == "kmeans" and wide["max_depth"] is None
    tree = defaults.resolve(SPARSE_BIG, {**AUTO_LT, "loss": "tree"})
    assert tree["solver"] == "sgd" and tree["bits"] == "auto" and tree["beam"] == 1
    assert tree["structure"] == "kmeans" and tree["prune"] == 0.0 and tree["C"] == 1.0
    cs = defaults.resolve(SPARSE_BIG, {**AUTO_LT, "loss": "independent"})
    assert cs["solver"] == "liblinear" and cs["C"] == 0.1 and cs["prune"] == 0.01
    given = defaults.resolve(SPARSE_BIG, {**AUTO_LT, "branching": 16, "n_trees": 2})
    assert given["branching"] == 16 and given["n_trees"] == 2 and given["max_depth"] == 5
    assert given["beam"] == 2  # every one-vs-rest tree decodes with a beam of 2


def test_defaults_of_the_embedding_tree():
    params = {k: v for k, v in AUTO_LT.items() if k not in ("solver", "loss", "bits")}
    out = defaults.resolve(SPARSE_BIG, {**params, "solver": "auto", "loss": "tree"},
                           embedding=True)
    assert out["solver"] == "sgd" and out["structure"] == "kmeans" and out["n_trees"] == 1
    assert out["beam"] == 1
    soft = defaults.resolve(SPARSE_BIG, {**params, "loss": "softmax"}, embedding=True)
    assert soft["beam"] == 2


def test_data_shape_measures_the_data():
    X = sp.csr_matrix(np.array([[1.0, 0, 0, 0], [0, 2.0, 3.0, 0], [0, 0, 0, 0]]))
    shape = defaults.data_shape(X, np.array([0, 0, 1]), 3)
    assert (shape.n_samples, shape.n_features, shape.n_classes) == (3, 4, 3)
    assert shape.nnz_per_row == 1.0 and not shape.sparse
    assert shape.skew == pytest.approx(2 / 1.0)
    assert defaults.data_shape(X.toarray(), np.array([0, 0, 1]), 3) == shape


@pytest.mark.parametrize("method", ["label_tree", "label_embedding_tree"])
def test_resolved_params_hold_every_auto_parameter(method):
    X, y, _, _ = _sparse_problem()
    m = make_method(method, random_state=0, epochs=1).fit(X, y)
    autos = {k for k, v in m.get_params().items() if v == "auto"}
    assert autos and set(m.resolved_params_) == autos
    assert all(v != "auto" for k, v in m.resolved_params_.items() if k != "bits")
    assert m.stats()["resolved_params"] == m.resolved_params_
    given = make_method(method, random_state=0, epochs=1, beam=2).fit(X, y)
    assert "beam" not in given.resolved_params_


def test_embedding_tree_step_size_rule_tells_sparse_from_dense():
    auto = {"lr": "auto"}
    assert defaults.resolve(SPARSE_SMALL, auto, embedding=True)["lr"] == 0.02
    assert defaults.resolve(SPARSE_BIG, auto, embedding=True)["lr"] == 0.02
    assert defaults.resolve(DENSE, auto, embedding=True)["lr"] == 0.1
    assert defaults.resolve(SPARSE_SMALL, {"lr": 0.5}, embedding=True)["lr"] == 0.5


def test_ensemble_size_keeps_the_fit_in_budget():
    """Three trees where their estimated fit stays within 30 minutes on one core (K = 1e4:
    1.6e6 stored values; K = 1e5: 1.6e7 values in depth-3 trees, 578 s each by the
    estimate), two for half again as many rows, one below K = 1e4 and for data too large
    for even two."""
    ten_k = defaults.DataShape(100_000, 89_232, 16.0, 10_000, True, 2.0)
    assert defaults.resolve(ten_k, AUTO_LT)["n_trees"] == 3
    assert defaults.resolve(SPARSE_BIG, AUTO_LT)["n_trees"] == 3
    one = defaults.tree_fit_seconds(SPARSE_BIG, 3)
    assert 3 * one <= defaults.FIT_BUDGET_SECONDS < 4 * one
    larger = defaults.DataShape(1_500_000, 848_632, 16.0, 100_000, True, 3.0)
    assert defaults.resolve(larger, AUTO_LT)["n_trees"] == 2
    huge = defaults.DataShape(10_000_000, 848_632, 16.0, 100_000, True, 3.0)
    assert defaults.resolve(huge, AUTO_LT)["n_trees"] == 1
    assert defaults.resolve(SPARSE_SMALL, AUTO_LT)["n_trees"] == 1
