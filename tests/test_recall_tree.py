"""Recall Tree (plugin xcbench_online)."""
import math

import numpy as np
import pytest

import xcbench
from xcbench.testing import check_method


def test_recall_tree_conforms():
    check_method("recall_tree", params={"bits": 16})


def _fit(**params):
    ds = xcbench.load_dataset("synthetic-small")
    m = xcbench.make_method("recall_tree", bits=16, random_state=0, **params)
    return ds, m.fit(ds.X_train, ds.y_train, n_classes=ds.n_classes)


def test_vw_defaults():
    _, m = _fit(passes=1)
    log2k = math.ceil(math.log2(50))
    assert m.max_candidates_ == min(50, 4 * log2k) and m.max_depth_ == log2k


def test_without_bernstein_bound_descent_reaches_a_leaf():
    ds, m = _fit(bern_hyper=0.0, passes=2)
    assert np.all(m.stop_nodes(ds.X_test) >= m.n_internal_)
    ds, m = _fit(bern_hyper=1.0, passes=2)
    assert np.any(m.stop_nodes(ds.X_test) < m.n_internal_)  # the bound stops some early


def test_candidate_sets_are_the_most_frequent_labels():
    _, m = _fit(passes=2)
    for node in np.nonzero(m.cand_n_)[0]:
        cand = m.cand_[node, :m.cand_n_[node]]
        seen = m.label_stats_.labels_of(node)
        counts = np.array([seen[c] for c in cand])
        assert np.all(np.diff(counts) <= 0)  # sorted by count
        others = np.array([v for c, v in seen.items() if c not in set(cand.tolist())])
        assert len(cand) < m.max_candidates_ or others.max(initial=0) <= counts.min()
        assert m.topsum_[node] == counts.sum()


def test_learns_and_has_no_probability_model():
    ds, m = _fit(passes=5)
    assert float((m.predict(ds.X_test) != ds.y_test).mean()) < 0.3
    with pytest.raises(NotImplementedError):
        m.log_proba(ds.X_test, ds.y_test)
