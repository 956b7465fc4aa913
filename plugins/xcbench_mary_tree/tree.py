"""The learned M-ary tree's structure: per-node label statistics, node ids that survive
rebuilds, and the flat arrays the kernels read.

Flat tree: the children of internal node n are ``children[child_ptr[n]:child_ptr[n + 1]]``
(a value >= 0 is an internal node id, < 0 the leaf of label ``-value - 1``), each child in
slot ``child_slot`` of n and scored by weight row ``child_row`` = n * M + slot. Label c's
path is steps ``path_ptr[c]:path_ptr[c + 1]`` of (``path_node``, ``path_pos``: index in the
node's child list, ``path_slot``). Labels >= K are dummies (padding of well-formed trees):
AssignLabels places them, but the flat tree leaves their leaves out and gives them empty
paths, so every child scored leads to a class and the K probabilities sum to one.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .assign import assign_node, padded_size


class NodeLabelStats:
    """SumProbas / Counts of the paper, sparse: only (node, label) pairs a training point has
    visited, as sorted int64 keys node * n_labels + label with an (n, M) sum and a count."""

    def __init__(self, n_labels: int, arity: int):
        self.n_labels, self.arity = n_labels, arity
        self.keys = np.zeros(0, dtype=np.int64)
        self.sums = np.zeros((0, arity))
        self.counts = np.zeros(0)

    def merge(self, keys, sums, counts):
        """Add new sums and counts (``keys`` unique among themselves)."""
        pos = np.searchsorted(self.keys, keys)
        pos_c = np.minimum(pos, max(len(self.keys) - 1, 0))
        known = (self.keys[pos_c] == keys) if len(self.keys) else np.zeros(len(keys), bool)
        self.sums[pos_c[known]] += sums[known]
        self.counts[pos_c[known]] += counts[known]
        if (~known).any():
            keys = np.concatenate([self.keys, keys[~known]])
            order = np.argsort(keys, kind="stable")
            self.keys = keys[order]
            self.sums = np.concatenate([self.sums, sums[~known]])[order]
            self.counts = np.concatenate([self.counts, counts[~known]])[order]

    def keep_nodes(self, nodes):
        """Forget the statistics of every node not in ``nodes`` (nodes that left the tree)."""
        keep = np.isin(self.keys // self.n_labels, np.fromiter(nodes, dtype=np.int64))
        self.keys, self.sums, self.counts = self.keys[keep], self.sums[keep], self.counts[keep]

    def lookup(self, node: int, labels: np.ndarray):
        """(p_cond (n, M), counts (n,)): mean child probabilities of each label at the node;
        labels never seen there get the node's average (uniform if the node saw nothing)."""
        keys = node * self.n_labels + labels
        pos = np.searchsorted(self.keys, keys)
        pos = np.minimum(pos, max(len(self.keys) - 1, 0))
        found = (self.keys[pos] == keys) if len(self.keys) else np.zeros(len(keys), bool)
        counts = np.where(found, self.counts[pos] if len(self.keys) else 0.0, 0.0)
        sums = np.where(found[:, None], self.sums[pos] if len(self.keys) else 0.0, 0.0)
        total = counts.sum()
        average = sums.sum(axis=0) / total if total > 0 else np.full(self.arity, 1 / self.arity)
        p_cond = np.where(found[:, None], sums / np.maximum(counts, 1)[:, None], average)
        return p_cond, counts


@dataclass
class FlatTree:
    """The arrays kernels read (see the module docstring)."""

    child_ptr: np.ndarray
    children: np.ndarray
    child_slot: np.ndarray
    child_row: np.ndarray  # weight row of each child: node * M + slot (compacted after fit)
    path_ptr: np.ndarray
    path_node: np.ndarray
    path_pos: np.ndarray
    path_slot: np.ndarray
    internal: np.ndarray  # ids of the internal nodes in use

    # set once here: every predict call reads them, and np.diff over many nodes is not free
    max_arity: int = field(init=False)
    depth: int = field(init=False)

    def __post_init__(self):
        self.max_arity = int(np.diff(self.child_ptr).max()) if len(self.child_ptr) > 1 else 1
        self.depth = int(np.diff(self.path_ptr).max()) if len(self.path_ptr) > 1 else 0

    def __setstate__(self, state):  # models pickled before these fields existed
        self.__dict__.update(state)
        self.__post_init__()

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.child_ptr, self.children, self.child_slot,
                                      self.child_row, self.path_ptr, self.path_node, self.path_pos,
                                      self.path_slot, self.internal))


class TreeBuilder:
    """Rebuilds the tree from statistics (AssignLabels), keeping node ids stable: the child
    in slot j of node n keeps its id (and so its weights and statistics) across rebuilds
    while both stay in the tree. A node new to the tree takes an id that the previous tree
    did not use; ``recycled`` lists those ids so the caller resets their weights.

    Every internal node has at least two non-empty children, so a tree has at most K' - 1
    internal nodes and the previous and the new tree together fit in ``max_nodes`` = 2K' + 2
    ids: a free id always exists.
    """

    def __init__(self, n_classes: int, arity: int, max_depth: int | None, rng):
        self.n_classes, self.arity, self.max_depth = n_classes, arity, max_depth
        self.n_labels = n_classes if max_depth is not None else padded_size(n_classes, arity)
        self.max_nodes = 2 * self.n_labels + 2
        self.rng = rng
        self.ids = {}  # (parent id, slot) -> node id, for the last tree
        self.last_ids = {0}
        self.recycled = []

    def build(self, stats: NodeLabelStats) -> FlatTree:
        """AssignLabels from the root down; returns the flat tree. Statistics of nodes that
        left the tree are dropped first, so a reused id starts with none."""
        M = self.arity
        stats.keep_nodes(self.last_ids)
        free = [v for v in range(self.max_nodes - 1, 0, -1) if v not in self.last_ids]
        new_ids, in_use, self.recycled = {}, {0}, []
        assigned = {}
        queue = [(0, np.arange(self.n_labels, dtype=np.int64), 0)]
        while queue:
            node, labels, depth = queue.pop()
            if len(labels) <= M:  # one label per slot
                slots = self.rng.permutation(M)[:len(labels)] if len(labels) < M else \
                    np.arange(M)
                assigned[node] = (labels, slots, depth)
                continue
            p_cond, counts = stats.lookup(node, labels)
            total = counts.sum()
            q = counts / total if total > 0 else np.full(len(labels), 1 / len(labels))
            p_cond = p_cond + 1e-9 * self.rng.random(p_cond.shape)  # random order among exact ties
            if self.max_depth is None:
                capacity = np.full(M, len(labels))
            else:  # at most M^(D - d) labels below depth d + 1, and never all in one child
                capacity = np.full(M, min(M ** max(self.max_depth - depth - 1, 0),
                                          len(labels) - 1))
            slot_of = assign_node(p_cond, q, capacity, self.max_depth is None)
            assigned[node] = (labels, slot_of, depth)
            for j in range(M):
                members = labels[slot_of == j]
                if len(members) > 1:
                    child = self.ids.get((node, j))
                    if child is None or child in in_use:
                        child = free.pop()
                        self.recycled.append(child)
                    new_ids[(node, j)] = child
                    in_use.add(child)
                    queue.append((child, members, depth + 1))
        self.ids, self.last_ids = new_ids, in_use
        return self._flatten(assigned)

    def fixed(self, nested) -> FlatTree:
        """The flat tree of a given nested tree (a list is an internal node of at most M
        children, child i in slot i; an int is a label), e.g. a Huffman tree; every label
        < ``n_labels`` must sit at exactly one leaf. Ids are given top-down from 0; the tree is
        meant to stay fixed (``build`` would start over from these ids)."""
        root = nested if isinstance(nested, list) else [nested]
        assigned, ids, next_id = {}, {}, 1
        stack = [(0, root, 0)]
        while stack:
            node, kids, depth = stack.pop()
            if not 1 <= len(kids) <= self.arity:
                raise ValueError(f"a node of the given tree has {len(kids)} children; "
                                 f"arity {self.arity} allows 1 to {self.arity}")
            labels, slots = [], []
            for slot, kid in enumerate(kids):
                below = _labels_of(kid)
                labels += below
                slots += [slot] * len(below)
                if isinstance(kid, list) and len(below) > 1:
                    ids[(node, slot)] = next_id
                    stack.append((next_id, kid, depth + 1))
                    next_id += 1
            assigned[node] = (np.array(labels, dtype=np.int64), np.array(slots, dtype=np.int64),
                              depth)
        if not np.array_equal(np.sort(assigned[0][0]), np.arange(self.n_labels)):
            raise ValueError(f"the given tree must hold each of the {self.n_labels} labels "
                             "at exactly one leaf")
        if next_id > self.max_nodes:
            raise ValueError(f"the given tree has {next_id} internal nodes, more than the "
                             f"{self.max_nodes} ids available; remove single-child chains")
        self.ids, self.last_ids, self.recycled = ids, set(assigned), []
        return self._flatten(assigned)

    def _flatten(self, assigned) -> FlatTree:
        """Flat arrays from {node: (labels, slot of each label, depth)}: every (node, label)
        entry is one step of that label's path; a (node, slot) group of one label is a leaf.

        Only real labels (< K) are scored: a child with no real label below it (a dummy's
        leaf, or a subtree of dummies) is left out of its node's children and dummies get
        empty paths, so the node softmaxes share all their mass among the K classes (a
        dummy leaf would take mass no class gets). A padded well-formed node keeps >= 2
        children: it has M, at most K' - K <= M - 2 of them dummy leaves, and an internal
        child holds >= M labels, so >= 2 real ones."""
        M, K = self.arity, self.n_classes
        nodes = np.array(sorted(assigned), dtype=np.int64)
        n_ids = int(nodes.max()) + 1
        e_node = np.concatenate([np.full(len(assigned[v][0]), v) for v in nodes])
        e_label = np.concatenate([assigned[v][0] for v in nodes]).astype(np.int64)
        e_slot = np.concatenate([assigned[v][1] for v in nodes]).astype(np.int64)
        e_depth = np.concatenate([np.full(len(assigned[v][0]), assigned[v][2]) for v in nodes])
        # leaf or internal is decided with the dummies (the builder's tree), then dropped
        groups, first, group_of, size = np.unique(e_node * M + e_slot, return_index=True,
                                                  return_inverse=True, return_counts=True)
        real = e_label < K
        kept = np.bincount(group_of[real], minlength=len(groups)) > 0
        first_label = e_label[first[kept]]  # a kept leaf's one label
        groups, size = groups[kept], size[kept]
        group_of = (np.cumsum(kept) - 1)[group_of]  # index among the kept groups
        e_node, e_label, e_slot, e_depth, group_of = (
            a[real] for a in (e_node, e_label, e_slot, e_depth, group_of))
        g_node, g_slot = groups // M, groups % M
        child = np.empty(len(groups), dtype=np.int64)
        leaf = size == 1
        child[leaf] = -first_label[leaf] - 1
        child[~leaf] = [self.ids[(int(v), int(j))] for v, j in zip(g_node[~leaf], g_slot[~leaf])]
        child_ptr = np.zeros(n_ids + 1, dtype=np.int64)
        np.add.at(child_ptr, g_node + 1, 1)
        child_ptr = np.cumsum(child_ptr)
        pos = np.arange(len(groups)) - child_ptr[g_node]  # rank of the slot within its node
        order = np.lexsort((e_depth, e_label))  # each label's steps, root first
        path_ptr = np.zeros(self.n_labels + 1, dtype=np.int64)
        path_ptr[1:] = np.cumsum(np.bincount(e_label, minlength=self.n_labels))
        return FlatTree(child_ptr, child, g_slot.astype(np.int64), groups.astype(np.int64),
                        path_ptr,
                        e_node[order].astype(np.int64), pos[group_of[order]].astype(np.int64),
                        e_slot[order], np.unique(g_node))

def _labels_of(nested) -> list:
    """The labels below a nested tree (a list is a node, an int a label)."""
    if not isinstance(nested, list):
        return [int(nested)]
    out, stack = [], [nested]
    while stack:
        for kid in stack.pop():
            if isinstance(kid, list):
                stack.append(kid)
            else:
                out.append(int(kid))
    return out
