"""st's and ast's back-off probabilities (xcbench_st.smoothing): the paper's model when off,
a distribution over all K classes when on, top-k ranked by the same probabilities."""
import numpy as np
import pytest
import scipy.sparse as sp

from xcbench.tree import backoff
from xcbench.tree.csr_weights import sorted_kernel_input
from xcbench.tree.passes import kept_out_rows
from xcbench_st import AdaptiveSoftmaxTree, SoftmaxTree
from xcbench_st.smoothing import TABLE_WIDTH, leaf_nodes, refit_after_choice

K = 12
SMALL_ST = {"k": 3, "depth": 2, "n_iter": 3, "alpha": 0.05, "init": "random",
            "random_state": 0}


def problem(n=600, dim=5, seed=0):
    """Overlapping classes, so leaves see more labels than their k softmax classes."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=2.0, size=(K, dim))
    y = rng.integers(0, K, size=n)
    return centres[y] + rng.normal(size=(n, dim)), y


def all_class_probs(model, X):
    """(n, K) probabilities from log_proba, one class at a time."""
    n = X.shape[0]
    return np.stack([np.exp(model.log_proba(X, np.full(n, c))) for c in range(K)], axis=1)


def test_smoothing_off_is_the_leaf_softmax():
    X, y = problem()
    off = SoftmaxTree(**SMALL_ST, smoothing=0, smoothing_floor=0).fit(X, y, K)
    assert off.smoother_ is None and off.resolved_params_.get("smoothing") is None
    p = all_class_probs(off, X[:50])
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    # outside its leaf's classes a class has probability zero, and the support says so
    assert ((p > 0).sum(axis=1) == off.support_size(X[:50])).all()
    assert (off.support_size(X[:50]) <= SMALL_ST["k"]).all()


@pytest.mark.parametrize("sparse", [False, True])
def test_smoothed_probabilities_cover_every_class_and_sum_to_one(sparse):
    X, y = problem()
    X = sp.csr_matrix(X) if sparse else X
    model = SoftmaxTree(**SMALL_ST, smoothing=0.3, smoothing_floor=0.01).fit(X, y, K)
    p = all_class_probs(model, X[:40])
    assert (p > 0).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-9)
    assert (model.support_size(X[:40]) == K).all()


def test_topk_ranks_by_the_smoothed_probabilities():
    X, y = problem(seed=1)
    model = SoftmaxTree(**SMALL_ST, smoothing=0.5, smoothing_floor=0.0).fit(X, y, K)
    k = min(5, TABLE_WIDTH)
    labels, scores = model.predict_topk(X[:60], k)
    logp = np.log(all_class_probs(model, X[:60]))
    for i in range(60):
        np.testing.assert_allclose(scores[i], np.sort(logp[i])[::-1][:k], rtol=1e-9)
        np.testing.assert_allclose(logp[i, labels[i]], scores[i], rtol=1e-9)
    # the top-1 of the paper's model (the same tree without the back-off) stays, unless an
    # outside class outranks every class of the leaf
    smoother, model.smoother_ = model.smoother_, None
    paper = model.predict_topk(X[:60], 1)[0][:, 0]
    support = all_class_probs(model, X[:60]) > 0
    model.smoother_ = smoother
    inside = support[np.arange(60), labels[:, 0]]
    np.testing.assert_array_equal(labels[inside, 0], paper[inside])


def test_back_off_formula_on_one_row():
    """p = (1 - floor) p' + floor / K; p' = (1 - w) p_softmax on the leaf's classes S and
    w p_leaf(y) / p_leaf(not S) outside, p_leaf the back-off of the training label
    frequencies along the leaf's path."""
    X, y = problem(seed=2)
    w, floor = 0.4, 0.05
    on = SoftmaxTree(**SMALL_ST, smoothing=w, smoothing_floor=floor).fit(X, y, K)
    x = X[:1]
    smoother, on.smoother_ = on.smoother_, None  # the leaf softmax alone, same tree
    p_soft = all_class_probs(on, x)[0]
    on.smoother_ = smoother
    leaf = int(leaf_nodes(on.flat_, sorted_kernel_input(x))[0])
    p_leaf = np.empty(K)
    backoff.log_probs(smoother.stats.parts, smoother.parent, np.full(K, leaf),
                      np.arange(K), w, 0.0, K, smoother.path_cap, p_leaf)
    p_leaf = np.exp(p_leaf)
    inside = p_soft > 0
    assert 0 < inside.sum() < K
    p = np.where(inside, (1 - w) * p_soft, w * p_leaf / p_leaf[~inside].sum())
    np.testing.assert_allclose(all_class_probs(on, x)[0], (1 - floor) * p + floor / K,
                               rtol=1e-9)
    # the leaf's classes keep the softmax's order
    got = all_class_probs(on, x)[0]
    assert np.argmax(np.where(inside, got, -1)) == np.argmax(p_soft)


def test_auto_chooses_on_kept_out_rows_then_refits_small_data():
    X, y = problem(n=800)
    model = SoftmaxTree(**SMALL_ST).fit(X, y, K)  # smoothing "auto" by default
    chosen = model.resolved_params_
    assert chosen["smoothing"] in backoff.WEIGHT_GRID
    assert chosen["smoothing_floor"] in backoff.FLOOR_GRID
    assert len(model.stats()["smoothing_scores"]) == (len(backoff.WEIGHT_GRID)
                                                      * len(backoff.FLOOR_GRID))
    # 80 of 800 rows were kept out to choose on: the tree is then fitted on every row,
    # the same tree as one given the chosen values outright
    assert len(kept_out_rows(len(y), backoff.SMOOTHING_ROWS)) == 80
    given = SoftmaxTree(**SMALL_ST, smoothing=chosen["smoothing"],
                        smoothing_floor=chosen["smoothing_floor"]).fit(X, y, K)
    for a, b in zip(model.predict_topk(X, 3), given.predict_topk(X, 3)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(model.log_proba(X, y), given.log_proba(X, y))
    if model.smoother_ is not None:
        assert model.smoother_.stats.totals()[0] == len(y)


def test_refit_only_where_the_kept_out_rows_are_a_large_share():
    assert refit_after_choice(1_600, 16_000)  # letter: 10%
    assert refit_after_choice(10_000, 100_000)
    assert not refit_after_choice(10_000, 572_902)  # ptb: 1.7%
    assert not refit_after_choice(10_000, 1_000_000)


def test_fixed_weights_train_on_every_row():
    X, y = problem(n=400)
    model = SoftmaxTree(**SMALL_ST, smoothing=0.2, smoothing_floor=0.0).fit(X, y, K)
    assert model.smoother_.stats.totals()[0] == len(y)
    assert model.stats()["smoothing_scores"] == {}


def test_tiny_data_takes_the_fallback_weights():
    X, y = problem(n=15)
    model = SoftmaxTree(**SMALL_ST).fit(X, y, K)
    assert (model.smoothing_, model.smoothing_floor_) == (backoff.FALLBACK_WEIGHT,
                                                          backoff.FALLBACK_FLOOR)


def test_ast_smoothed_too():
    X, y = problem(n=500)
    model = AdaptiveSoftmaxTree(depth0=1, initial_iter=2, global_iter=1, max_stages=1,
                                expand_iter=1, alpha=0.05, smoothing=0.3,
                                smoothing_floor=0.01, random_state=0).fit(X, y, K)
    p = all_class_probs(model, X[:30])
    assert (p > 0).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-9)


def test_memory_estimate_counts_the_smoothing():
    on, off = SoftmaxTree(), SoftmaxTree(smoothing=0, smoothing_floor=0)
    args = (100_000, 50, 5_000_000, 1_000)
    assert on.estimate_memory(*args) > off.estimate_memory(*args) + 8 * 100_000 * 50 * 0.9
    # weights given outright: no rows kept out, so no copy of X, only the path counts
    given = SoftmaxTree(smoothing=0.3, smoothing_floor=0.01)
    copy = 8 * 100_000 * 50
    assert given.estimate_memory(*args) == on.estimate_memory(*args) - copy
    assert given.estimate_memory(*args) > off.estimate_memory(*args)


def test_kept_out_rows_rule():
    assert kept_out_rows(19, 10) is None and kept_out_rows(1000, 0) is None
    np.testing.assert_array_equal(kept_out_rows(35, 10), [9, 19, 29])
    assert len(kept_out_rows(10 ** 6, 10_000)) == 10_000


def test_deleted_back_off_equals_counting_without_the_row():
    from xcbench_st import kernels as st_kernels
    from xcbench_st import smoothing as sm
    X, y = problem(n=300, seed=4)
    model = SoftmaxTree(**SMALL_ST, smoothing=0.0, smoothing_floor=0.0).fit(X, y, K)
    flat, w = model.flat_, 0.3
    parent = sm.flat_parents(flat)
    cap = int(backoff.max_path_length(parent))
    stats = sm.count_paths(flat, sorted_kernel_input(X), y, len(parent))
    rows = np.array([0, 7, 123])
    nodes = leaf_nodes(flat, sorted_kernel_input(X[rows]))
    own, outside = np.empty(3), np.empty(3)
    st_kernels.deleted_backoff(stats.parts, parent, nodes, y[rows], flat.leaf_ptr,
                               flat.leaf_classes, flat.row[nodes], w, K, cap, own, outside)
    for t, i in enumerate(rows):
        rest = np.setdiff1d(np.arange(len(y)), [i])
        without = sm.count_paths(flat, sorted_kernel_input(X[rest]), y[rest], len(parent))
        logp = np.empty(1)
        backoff.log_probs(without.parts, parent, nodes[t:t + 1], y[i:i + 1], w, 0.0, K, cap,
                          logp)
        np.testing.assert_allclose(own[t], np.exp(logp[0]), rtol=1e-12)
        mass = sm.outside_masses(flat, without, parent, w, K, cap)[flat.row[nodes[t]]]
        np.testing.assert_allclose(outside[t], mass, rtol=1e-9, atol=1e-12)


def test_large_data_fits_once_on_every_row_and_chooses_in_sample(monkeypatch):
    """Above the refit share (500,000 rows; here forced) the tree is the paper's, fitted
    once on every row, and the weights are chosen on the sampled training rows."""
    from xcbench_st import smoothing as sm
    monkeypatch.setattr(sm, "REFIT_SHARE", 1.0)  # no share of kept-out rows is "large"
    X, y = problem(n=800, seed=5)
    model = SoftmaxTree(**SMALL_ST).fit(X, y, K)
    paper = SoftmaxTree(**SMALL_ST, smoothing=0.0, smoothing_floor=0.0).fit(X, y, K)
    np.testing.assert_array_equal(model.predict_topk(X, 1)[0], paper.predict_topk(X, 1)[0])
    assert "smoothing_choice_fit" not in model.fit_seconds_
    assert len(model.stats()["smoothing_scores"]) == (len(backoff.WEIGHT_GRID)
                                                      * len(backoff.FLOOR_GRID))
    if model.smoother_ is not None:
        assert model.smoother_.stats.totals()[0] == len(y)
