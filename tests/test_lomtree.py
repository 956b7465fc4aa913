"""LOMtree (plugin xcbench_online)."""
import numpy as np

import xcbench
from xcbench.testing import check_method
from xcbench.tree import backoff
from xcbench_online.defaults import FLOOR_FALLBACK, SMOOTHING_FALLBACK, SMOOTHING_ROWS


def test_lomtree_conforms():
    check_method("lomtree")
    check_method("lomtree", params={"loss": "squared", "passes": 2})


def _fit(**params):
    ds = xcbench.load_dataset("synthetic-small")
    return ds, xcbench.make_method("lomtree", random_state=0, **params).fit(
        ds.X_train, ds.y_train, n_classes=ds.n_classes)


def test_respects_T_and_tree_is_consistent():
    for T in (5, 20, 49):
        _, m = _fit(max_internal=T, passes=2)
        internal = np.nonzero(m.left_ >= 0)[0]
        assert len(internal) == m.n_internal_ == T  # enough data to grow all T nodes
        assert len(m.left_) == 2 * T + 1
        for j in internal:  # children point back at their parent
            assert m.parent_[m.left_[j]] == j and m.parent_[m.right_[j]] == j


def test_never_splits_or_recycles_into_a_pure_node():
    _, m = _fit(max_internal=10, passes=5, swap_resistance=0.0)  # swaps happen freely
    assert m.n_swaps_ > 0
    internal = np.nonzero(m.left_ >= 0)[0]
    # a node becomes internal only after it has seen two distinct labels
    distinct = m.label_stats_.distinct()
    assert all(distinct[j] >= 2 for j in internal)


def test_more_passes_learn_more():
    ds, one = _fit(passes=1)
    _, many = _fit(passes=10)
    err = lambda m: float((m.predict(ds.X_test) != ds.y_test).mean())  # noqa: E731
    assert err(many) < err(one) and err(many) < 0.7  # 50 classes: chance is 0.98
    assert (one.stats()["passes"], many.stats()["passes"]) == (1, 10)  # shown in records


def test_log_proba_matches_the_ranked_scores():
    ds, m = _fit(passes=3)
    labels, scores = m.predict_topk(ds.X_test[:20], 3)
    np.testing.assert_allclose(m.log_proba(ds.X_test[:20], labels[:, 0]), scores[:, 0])


def test_unsmoothed_log_proba_is_the_leaf_frequency():
    ds, m = _fit(passes=3, smoothing=0, smoothing_floor=0)
    X, y = ds.X_test[:200], ds.y_test[:200]
    leaf = m.apply(X)
    counts = [m.label_stats_.labels_of(j) for j in leaf]  # leaves of this tree saw data
    expected = [np.log(c.get(label, 0) / sum(c.values())) if label in c else -np.inf
                for c, label in zip(counts, y)]
    np.testing.assert_allclose(m.log_proba(X, y), expected)
    np.testing.assert_array_equal(m.support_size(X), [len(c) for c in counts])


def test_smoothing_gives_every_class_a_probability_and_is_chosen_on_held_out_rows():
    ds, m = _fit()  # passes="auto" holds rows out
    assert m.smoothing_ in backoff.WEIGHT_GRID and m.smoothing_floor_ in backoff.FLOOR_GRID
    assert m.resolved_params_["smoothing"] == m.smoothing_
    assert m.resolved_params_["smoothing_floor"] == m.smoothing_floor_
    scores = m.stats()["smoothing_scores"]
    assert max(scores, key=scores.get) == f"{m.smoothing_:g}/{m.smoothing_floor_:g}"
    assert np.isfinite(m.log_proba(ds.X_test, ds.y_test)).all()
    assert (m.support_size(ds.X_test) == ds.n_classes).all()
    _, fixed = _fit(passes=2)  # a fixed number of passes: rows are kept out all the same
    assert fixed.stats()["smoothing_scores"] and fixed.smoothing_ in backoff.WEIGHT_GRID
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(9, 4)), np.arange(9) % 3
    tiny = xcbench.make_method("lomtree", random_state=0).fit(X, y)  # too few rows to hold out
    assert (tiny.smoothing_, tiny.smoothing_floor_) == (SMOOTHING_FALLBACK, FLOOR_FALLBACK)
    assert tiny.stats()["smoothing_scores"] == {}


def test_rows_are_kept_out_for_the_smoothing_only_while_it_is_chosen():
    ds, chosen = _fit(passes=2)
    _, given = _fit(passes=2, smoothing=0.3, smoothing_floor=0.01)
    n = ds.X_train.shape[0]
    assert chosen._keep_out() == SMOOTHING_ROWS and given._keep_out() == 0
    # the kept-out rows are not trained on: the root's counts are the other rows, per pass
    assert chosen.label_stats_.totals()[0] == 2 * (n - min(SMOOTHING_ROWS, n // 10))
    assert given.label_stats_.totals()[0] == 2 * n


def test_smoothing_leaves_top1_of_a_well_fitted_tree_nearly_unchanged():
    ds, raw = _fit(passes=3, smoothing=0, smoothing_floor=0)
    _, smooth = _fit(passes=3, smoothing=0.3, smoothing_floor=0.01)
    a = raw.predict_topk(ds.X_test, 1)[0][:, 0]
    b = smooth.predict_topk(ds.X_test, 1)[0][:, 0]
    assert np.mean(a == b) > 0.9


def test_depth_statistics_match_routing_after_recycling():
    ds, m = _fit(max_internal=20, passes=5, swap_resistance=0.0)
    assert m.n_swaps_ > 0  # node ids no longer follow the tree order
    stats = m.stats()
    cost = m.path_cost(ds.X_test)
    # a prediction evaluates one router per internal node on its path plus its leaf: at
    # least the root and a leaf, at most a full path
    assert 2 <= cost.min() and cost.max() <= stats["depth"] + 1


def test_vw_update_learns_better_than_adagrad_on_unscaled_features():
    ds = xcbench.load_dataset("synthetic-small")
    scale = np.logspace(-4, 3, ds.X_train.shape[1])  # features of very different scales
    err = {}
    for update in ("adagrad", "vw"):
        m = xcbench.make_method("lomtree", random_state=0, passes=3, normalize=False,
                                update=update).fit(ds.X_train * scale, ds.y_train)
        err[update] = float((m.predict(ds.X_test * scale) != ds.y_test).mean())
    assert err["vw"] < 0.5 and err["vw"] < err["adagrad"]


def test_vw_update_matches_vw_log_multi_accuracy_on_aloi27d(shared_data):
    """VW's log_multi steps each node at its output clipped to [-1, 1] with a normalizer per
    node; without those (median regression on the raw output, one shared normalizer) seed 0
    with 12 passes had 43.7% top-1 error on aloi27d, VW 36.9%; with them 38.1%."""
    import xcbench
    ds = xcbench.load_dataset("aloi27d", shared_data)
    model = xcbench.make_method("lomtree", passes=12, random_state=0)
    model.fit(ds.X_train, ds.y_train, ds.n_classes)
    error = np.mean(model.predict_topk(ds.X_test, 1)[0][:, 0] != ds.y_test)
    assert error < 0.40
