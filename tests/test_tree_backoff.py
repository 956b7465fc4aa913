"""Back-off smoothing of label distributions along a tree's paths (xcbench.tree.backoff)."""
import numpy as np
import pytest

from xcbench.tree import backoff
from xcbench.tree import label_stats as ls
from xcbench.tree.label_stats import LabelStats

K = 6
#        0
#      1   2
#         3  4   (node 4 never saw data)
PARENT = np.array([-1, 0, 0, 2, 2], dtype=np.int64)
PATHS = {1: [0, 1], 3: [0, 2, 3]}
ROWS = [(1, 0), (1, 0), (1, 1), (3, 2), (3, 2), (3, 3), (3, 0)]  # (leaf, label)


def _stats():
    stats = LabelStats(len(PARENT), capacity=64)
    for leaf, label in ROWS:  # every node on the path counts the label, as in LOMtree
        for node in PATHS[leaf]:
            ls.add(stats.parts, node, label, 1.0)
    return stats


def _all_log_probs(stats, node, lam, floor=0.0):
    out = np.empty(K)
    backoff.log_probs(stats.parts, PARENT, np.full(K, node, dtype=np.int64),
                      np.arange(K, dtype=np.int64), lam, floor, K, 8, out)
    return out


def test_zero_weight_is_the_frequency_of_the_deepest_node_with_data():
    stats = _stats()
    p3 = np.exp(_all_log_probs(stats, 3, 0.0))
    np.testing.assert_allclose(p3, [1 / 4, 0, 2 / 4, 1 / 4, 0, 0])
    # node 4 saw nothing: its parent 2 saw the same rows as node 3
    np.testing.assert_allclose(np.exp(_all_log_probs(stats, 4, 0.0)), p3)
    assert np.isneginf(_all_log_probs(stats, 1, 0.0)[2:]).all()


@pytest.mark.parametrize("lam,floor", [(0.02, 0.0), (0.3, 0.0), (0.9, 0.01), (0.0, 0.001)])
@pytest.mark.parametrize("node", [1, 3, 4])
def test_smoothed_distribution_is_positive_and_sums_to_one(node, lam, floor):
    p = np.exp(_all_log_probs(_stats(), node, lam, floor))
    assert (p > 0).all()
    assert p.sum() == pytest.approx(1.0)


def test_the_recursion_by_hand():
    lam = 0.25
    root = (1 - lam) * np.array([3, 1, 2, 1, 0, 0]) / 7 + lam / K
    leaf1 = (1 - lam) * np.array([2, 1, 0, 0, 0, 0]) / 3 + lam * root
    np.testing.assert_allclose(np.exp(_all_log_probs(_stats(), 1, lam)), leaf1)
    np.testing.assert_allclose(np.exp(_all_log_probs(_stats(), 1, lam, 0.1)),
                               0.9 * leaf1 + 0.1 / K)


@pytest.mark.parametrize("lam,floor", [(0.0, 0.0), (0.2, 0.0), (0.95, 0.0), (0.0, 0.01)])
def test_top_tables_rank_by_the_same_probabilities(lam, floor):
    stats = _stats()
    nodes = np.array([1, 3, 4], dtype=np.int64)
    k = 4
    labels = np.full((3, k), -1, dtype=np.int64)
    logp = np.full((3, k), -np.inf)
    candidates = backoff.node_top_labels(stats.parts, len(PARENT), k)
    backoff.top_tables(stats.parts, PARENT, nodes, candidates, lam, floor, K, 8, labels, logp)
    for r, node in enumerate(nodes):
        every = _all_log_probs(stats, node, lam, floor)
        got = labels[r][labels[r] >= 0]
        np.testing.assert_allclose(logp[r, :len(got)], every[got])
        assert np.all(np.diff(logp[r, :len(got)]) <= 0)  # best first
        # here every label that has probability is a candidate: the exact top-k
        best = np.argsort(-every, kind="stable")[:len(got)]
        np.testing.assert_allclose(np.sort(every[got]), np.sort(every[best]))
        if lam == 0.0:  # labels the leaf never saw are not listed: its ranking is kept
            seen = np.isfinite(_all_log_probs(stats, node, 0.0))
            assert len(got) == min(seen.sum(), k) and seen[got].all()


def test_choose_weights_takes_the_best_held_out_likelihood():
    stats = _stats()
    # held-out rows whose labels the leaves never saw: weight on the parents wins
    nodes, labels = np.array([1, 1, 3]), np.array([2, 3, 1])
    lam, floor, scores = backoff.choose_weights(stats.parts, PARENT, nodes, labels, K, 8)
    assert scores[f"{lam:g}/{floor:g}"] == max(scores.values())
    assert lam > 0 or floor > 0
    # held-out rows that look like training: no smoothing is best
    lam, floor, _ = backoff.choose_weights(stats.parts, PARENT, np.array([1, 1, 3, 3]),
                                           np.array([0, 0, 2, 2]), K, 8)
    assert (lam, floor) == (0.0, 0.0)
    # one grid fixed to one value: only the other is chosen
    lam, floor, scores = backoff.choose_weights(stats.parts, PARENT, nodes, labels, K, 8,
                                                weights=(0.2,))
    assert lam == 0.2 and len(scores) == len(backoff.FLOOR_GRID)


def test_max_path_length():
    assert backoff.max_path_length(PARENT) == 3
    assert backoff.max_path_length(np.array([-1], dtype=np.int64)) == 1
