"""The toolkit's sparse per-node label statistics and top-k heap, checked against plain
Python dictionaries and sorting."""
import numpy as np

from xcbench.tree import label_stats as ls
from xcbench.tree.label_stats import LabelStats
from xcbench.tree.topk import topk_of


def _fill(stats, pairs, ref):
    for node, label, w in pairs:
        if not ls.has_room(stats.parts, 1):
            stats.grow(1)
        ls.add(stats.parts, node, label, w)
        ref.setdefault(node, {}).setdefault(label, 0.0)
        ref[node][label] += w


def _check(stats, ref, n_nodes):
    for node in range(n_nodes):
        want = ref.get(node, {})
        assert stats.labels_of(node) == want
        assert stats.distinct()[node] == len(want)
        assert stats.totals()[node] == sum(want.values())
        assert stats.max_counts()[node] == max(want.values(), default=0.0)
        for label in list(want)[:5]:
            assert stats.count(node, label) == want[label]
    assert stats.count(0, 10**6) == 0.0
    assert stats.n_entries == sum(len(v) for v in ref.values())


def test_counts_match_a_dictionary_through_growth_and_clearing():
    rng = np.random.default_rng(0)
    n_nodes, ref = 50, {}
    stats = LabelStats(n_nodes, capacity=16)
    pairs = zip(rng.integers(0, n_nodes, 3000), rng.integers(0, 10**5, 3000) % 300,
                rng.integers(1, 4, 3000).astype(float))
    _fill(stats, pairs, ref)
    assert stats.capacity >= stats.n_entries > 16  # it grew
    _check(stats, ref, n_nodes)
    for node in (3, 17, 49):  # clearing keeps every other node's pairs findable
        ls.clear_node(stats.parts, node)
        ref.pop(node, None)
    _check(stats, ref, n_nodes)
    _fill(stats, [(3, 7, 1.0), (3, 7, 1.0), (17, 1, 5.0)], ref)
    _check(stats, ref, n_nodes)
    stats.shrink()  # re-packing drops the cleared entries
    assert stats.ent_i.shape[0] < 2 * stats.n_entries + 16
    _check(stats, ref, n_nodes)


def test_top_labels_are_sorted_by_count_then_label():
    stats = LabelStats(2)
    counts = {5: 3.0, 2: 7.0, 9: 3.0, 1: 1.0, 4: 7.0}
    for label, c in counts.items():
        ls.add(stats.parts, 1, label, c)
    labels, cnt = np.zeros(3, dtype=np.int64), np.zeros(3)
    assert ls.top_labels(stats.parts, 1, 3, labels, cnt) == 3
    assert labels.tolist() == [2, 4, 5] and cnt.tolist() == [7.0, 7.0, 3.0]
    assert ls.top_labels(stats.parts, 0, 3, labels, cnt) == 0  # an empty node


def test_topk_of_matches_a_full_sort():
    rng = np.random.default_rng(1)
    for m, k in ((30, 5), (7, 7), (4, 10), (1, 1)):
        s = rng.integers(0, 5, m).astype(float)  # many ties
        lab = rng.permutation(100)[:m].astype(np.int64)
        out_l, out_s = np.full(k, -1, dtype=np.int64), np.full(k, -np.inf)
        n = topk_of(s, lab, m, k, out_l, out_s)
        want = sorted(zip(-s, lab))[:k]
        assert n == min(m, k)
        assert out_l[:n].tolist() == [int(b) for _, b in want]
        assert out_s[:n].tolist() == [-a for a, _ in want]
        assert np.all(out_l[n:] == -1)
