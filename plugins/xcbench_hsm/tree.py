"""Label trees for hierarchical softmax, as flat arrays.

A tree has ``n_nodes`` internal nodes (node 0 is the root). The children of node n are
``children[child_ptr[n]:child_ptr[n + 1]]``: a value >= 0 is an internal node, a value
< 0 is the leaf of class ``-value - 1``. Every child but the last of each node owns a row
of the weight matrix (``edge_row``; -1 for the last child, whose score is fixed at 0), so a
binary node has exactly one weight vector: p(first child | x) = sigmoid(w . x + b).
"""
from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass

import numpy as np


@dataclass
class LabelTree:
    """A label tree in flat arrays (see the module docstring)."""

    child_ptr: np.ndarray  # (n_nodes + 1,) int64
    children: np.ndarray  # (n_edges,) int64
    edge_row: np.ndarray  # (n_edges,) int64, -1 for each node's last child
    n_classes: int

    @property
    def n_nodes(self) -> int:
        return len(self.child_ptr) - 1

    @property
    def n_rows(self) -> int:
        return int(self.edge_row.max()) + 1 if len(self.edge_row) else 0

    def paths(self):
        """Root-to-leaf paths: (path_ptr (K+1,), path_node, path_pos) as int64 arrays.

        Class c's path is nodes ``path_node[path_ptr[c]:path_ptr[c+1]]`` taking child
        position ``path_pos`` (index within the node's children) at each.
        """
        per_class: list = [None] * self.n_classes
        stack = [(0, [])]
        while stack:
            node, prefix = stack.pop()
            start = self.child_ptr[node]
            for pos, child in enumerate(self.children[start:self.child_ptr[node + 1]]):
                step = prefix + [(node, pos)]
                if child < 0:
                    per_class[-child - 1] = step
                else:
                    stack.append((int(child), step))
        missing = [c for c, p in enumerate(per_class) if p is None]
        if missing:
            raise ValueError(f"classes {missing[:5]} have no leaf in the tree")
        lengths = np.array([len(p) for p in per_class])
        ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        flat = [s for p in per_class for s in p]
        return ptr, np.array([n for n, _ in flat], dtype=np.int64), \
            np.array([q for _, q in flat], dtype=np.int64)

    def depths(self) -> np.ndarray:
        """Depth (number of internal nodes on the path) of each class's leaf."""
        ptr, _, _ = self.paths()
        return np.diff(ptr)


def _from_nested(root, n_classes: int) -> LabelTree:
    """Flatten a nested tree (ints are classes, lists are internal nodes), BFS order."""
    if not isinstance(root, list):  # one class: a root with that single leaf
        root = [root]
    child_ptr, children, edge_row = [0], [], []
    queue, next_id, row = [root], 1, 0
    while queue:
        node = queue.pop(0)
        for pos, child in enumerate(node):
            if isinstance(child, list):
                children.append(next_id)
                next_id += 1
                queue.append(child)
            else:
                children.append(-int(child) - 1)
            last = pos == len(node) - 1
            edge_row.append(-1 if last else row)
            row += 0 if last else 1
        child_ptr.append(len(children))
    return LabelTree(np.array(child_ptr, dtype=np.int64), np.array(children, dtype=np.int64),
                     np.array(edge_row, dtype=np.int64), n_classes)


def huffman_tree(counts, arity: int = 2) -> LabelTree:
    """The Huffman tree of class counts (+1 each, so unseen classes get a leaf).

    Repeatedly merges the ``arity`` lightest subtrees (ties broken by creation order, so
    the tree is deterministic). For arity > 2 the first merge takes just enough subtrees
    that every later merge is full, which keeps the code optimal.
    """
    if arity < 2:
        raise ValueError(f"arity must be >= 2, got {arity}")
    weights = np.asarray(counts, dtype=np.float64) + 1.0
    k = len(weights)
    order = itertools.count()
    heap = [(w, next(order), c) for c, w in enumerate(weights)]
    heapq.heapify(heap)
    first = 2 + (k - 2) % (arity - 1) if k > arity else k
    take = first
    while len(heap) > 1:
        group = [heapq.heappop(heap) for _ in range(min(take, len(heap)))]
        heapq.heappush(heap, (sum(g[0] for g in group), next(order), [g[2] for g in group]))
        take = arity
    return _from_nested(heap[0][2], k)


def balanced_tree(n_classes: int, arity: int = 2, seed: int = 0) -> LabelTree:
    """A complete tree over a random permutation of the classes."""
    rng = np.random.default_rng(seed)
    return _from_nested(_split(list(rng.permutation(n_classes)), arity), n_classes)


def _split(items: list, arity: int):
    if len(items) == 1:
        return int(items[0])
    parts = np.array_split(np.array(items), min(arity, len(items)))
    return [_split(list(p), arity) for p in parts]


def kmeans_tree(class_means: np.ndarray, arity: int = 2, seed: int = 0,
                max_leaf: int = 1) -> LabelTree:
    """A tree by recursive k-means (k = arity) of class mean vectors (classes with similar
    inputs end up close). Degenerate splits fall back to an even split."""
    from sklearn.cluster import KMeans

    def build(ids):
        if len(ids) <= max_leaf:
            return int(ids[0]) if len(ids) == 1 else [int(i) for i in ids]
        k = min(arity, len(ids))
        labels = KMeans(n_clusters=k, n_init=1, random_state=seed).fit_predict(class_means[ids])
        groups = [ids[labels == j] for j in range(k) if np.any(labels == j)]
        if len(groups) < 2:
            groups = np.array_split(ids, k)
        return [build(g) for g in groups]

    return _from_nested(build(np.arange(len(class_means))), len(class_means))
