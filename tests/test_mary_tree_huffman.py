"""mary_tree's fixed Huffman-tree control (``tree="huffman"``): the tree's shape, that it
never changes during fit, the contract, and ``xcbench describe``."""
import numpy as np
import pytest

from xcbench import make_method
from xcbench.cli import main
from xcbench.testing import check_method
from xcbench.tree.huffman import huffman_nested
from xcbench_mary_tree.assign import padded_size
from xcbench_mary_tree.tree import TreeBuilder


@pytest.mark.parametrize("params", [
    {"tree": "huffman"},
    {"tree": "huffman", "arity": 3, "max_depth": None, "decoder": "greedy"},
    {"tree": "huffman", "representation": "linear", "d_r": 6},
])
def test_contract(params):
    check_method("mary_tree", params)


def _leaf_labels(tree):
    return np.sort(-tree.children[tree.children < 0] - 1)


@pytest.mark.parametrize("M", [2, 3, 5])
@pytest.mark.parametrize("padded", [False, True])
def test_huffman_tree_is_well_formed(M, padded):
    K = 30 if (30 - 1) % (M - 1) else 31  # a count that needs padding when padded
    counts = np.random.default_rng(M).integers(0, 50, K) + 1.0
    builder = TreeBuilder(K, M, None if padded else 4, np.random.default_rng(0))
    weights = np.concatenate([counts, np.zeros(builder.n_labels - K)])
    tree = builder.fixed(huffman_nested(weights, M))
    assert np.array_equal(_leaf_labels(tree), np.arange(K))  # one leaf each, no dummy's
    arity = np.diff(tree.child_ptr)[tree.internal]
    assert (arity <= M).all() and (arity >= 2).all()
    if padded:  # dummies fill the nodes (every node is full) but their leaves are not scored
        assert builder.n_labels == padded_size(K, M) and (builder.n_labels > K or M == 2)
        assert (M - arity).sum() == builder.n_labels - K
    # each path's steps really lead to the label: the child at (node, pos) of the last step
    for c in range(K):
        steps = slice(tree.path_ptr[c], tree.path_ptr[c + 1])
        node, pos = tree.path_node[steps][-1], tree.path_pos[steps][-1]
        assert tree.children[tree.child_ptr[node] + pos] == -c - 1


def _zipf_data(K=40, n=3000, seed=0):
    rng = np.random.default_rng(seed)
    p = 1 / np.arange(1, K + 1)
    y = rng.choice(K, n, p=p / p.sum())
    return rng.normal(size=(n, 6)), y


def test_frequent_labels_sit_no_deeper_than_rare_ones():
    X, y = _zipf_data()
    m = make_method("mary_tree", tree="huffman", arity=3, epochs=1, random_state=0)
    m.fit(X, y, n_classes=40)
    depth = np.diff(m.tree_.path_ptr)[:40]
    counts = np.bincount(y, minlength=40)
    heavier = counts[:, None] > counts[None, :]
    assert (depth[:, None] <= depth[None, :])[heavier].all()
    assert depth.min() < depth.max()  # skewed counts: not a balanced tree


def test_huffman_tree_never_changes_during_fit(monkeypatch):
    X, y = _zipf_data()
    counts = np.bincount(y, minlength=40) + 1.0
    expected = TreeBuilder(40, 3, 5, None).fixed(huffman_nested(counts, 3))

    def no_assign_labels(self, stats):
        raise AssertionError("AssignLabels ran on a fixed Huffman tree")

    monkeypatch.setattr(TreeBuilder, "build", no_assign_labels)
    m = make_method("mary_tree", tree="huffman", arity=3, epochs=3, assign_per_epoch=5,
                    random_state=0).fit(X, y, n_classes=40)
    assert m.stats()["rebuilds"] == 0
    for name in ("child_ptr", "children", "child_slot", "child_row", "path_ptr",
                 "path_node", "path_pos", "path_slot"):
        assert np.array_equal(getattr(m.tree_, name), getattr(expected, name)), name


def test_explicit_depth_below_the_huffman_depth_is_refused():
    X, y = _zipf_data()
    m = make_method("mary_tree", tree="huffman", arity=3, max_depth=4, random_state=0)
    with pytest.raises(ValueError, match="max_depth='auto' or None"):
        m.fit(X, y, n_classes=40)


def test_fixed_refuses_a_tree_missing_a_label():
    builder = TreeBuilder(4, 2, None, None)
    with pytest.raises(ValueError, match="exactly one leaf"):
        builder.fixed([[0, 1], 2])


def test_describe_lists_the_huffman_tree(capsys):
    assert main(["describe", "mary_tree"]) == 0
    out = capsys.readouterr().out
    tree_line = next(line for line in out.splitlines() if line.split()[:1] == ["tree"])
    assert "'huffman'" in tree_line and "'random'" in tree_line
