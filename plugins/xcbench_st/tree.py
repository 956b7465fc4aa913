"""The softmax tree as TAO edits it (nodes in lists and dicts), and its flat inference form.

Decision node i: (w_i, b_i), right child when w_i.x + b_i >= 0; w_i is stored sparse, as
(sorted feature ids, values). Leaf j: class list S_j with a softmax (W_j, b_j) over S_j, W_j
dense over the leaf's own feature list only (column compression: the features its training
points use), every other class has probability exactly zero. Nodes are numbered in creation
order; ``depth`` is stored per node so TAO can visit depths bottom-up. The flat form stores
every weight row as CSR (``xcbench.tree.csr_weights``): O(nonzeros), never O(nodes x D).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from xcbench.tree.csr_weights import CSRWeights

from . import kernels

EMPTY_ROW = (np.zeros(0, dtype=np.int64), np.zeros(0))  # a zero decision weight vector


@dataclass
class Leaf:
    classes: np.ndarray  # (m,) int64 global class ids
    features: np.ndarray  # (A,) sorted int64 feature ids the weights may use
    W: np.ndarray  # (m, A) dense over ``features``
    b: np.ndarray  # (m,)

    @property
    def l1(self) -> float:
        return float(np.abs(self.W).sum())

    def compact(self) -> "Leaf":
        """The same leaf without the feature columns whose weights are all zero."""
        used = np.any(self.W != 0, axis=0)
        if used.all():
            return self
        return Leaf(self.classes, self.features[used], np.ascontiguousarray(self.W[:, used]),
                    self.b)


def constant_leaf(cls: int) -> Leaf:
    """A leaf that gives class ``cls`` probability one."""
    return Leaf(np.array([cls], dtype=np.int64), EMPTY_ROW[0], np.zeros((1, 0)), np.zeros(1))


class Tree:
    """A binary tree with linear decision nodes and softmax leaves (see module docstring)."""

    def __init__(self, n_features: int, n_classes: int):
        self.n_features = n_features
        self.n_classes = n_classes
        self.left: list[int] = []
        self.right: list[int] = []
        self.parent: list[int] = []
        self.depth: list[int] = []
        self.w: dict[int, np.ndarray] = {}
        self.b: dict[int, float] = {}
        self.leaf: dict[int, Leaf] = {}
        self.leaf_k: dict[int, int] = {}  # per-leaf class budget (AST); default: TAO's k

    # ----- structure
    def add_node(self, parent: int) -> int:
        node = len(self.left)
        self.left.append(-1)
        self.right.append(-1)
        self.parent.append(parent)
        self.depth.append(0 if parent < 0 else self.depth[parent] + 1)
        self.leaf[node] = constant_leaf(0)
        return node

    def split(self, node: int) -> tuple[int, int]:
        """Turn leaf ``node`` into a decision node (w = 0, b = 0) with two new leaves."""
        left, right = self.add_node(node), self.add_node(node)
        self.left[node], self.right[node] = left, right
        del self.leaf[node]
        self.w[node] = EMPTY_ROW
        self.b[node] = 0.0
        return left, right

    @classmethod
    def complete(cls, depth: int, n_features: int, n_classes: int) -> "Tree":
        """A complete tree of the given depth; node ids are heap-ordered (children of i are
        2i+1 and 2i+2)."""
        tree = cls(n_features, n_classes)
        tree.add_node(-1)
        for node in range(2 ** depth - 1):
            tree.split(node)
        return tree

    def graft(self, node: int, sub: "Tree", leaf_k: int) -> None:
        """Replace leaf ``node`` by a copy of tree ``sub`` (whose leaves get budget leaf_k)."""
        stack = [(0, node)]
        while stack:
            src, dst = stack.pop()
            if sub.is_leaf(src):
                self.leaf[dst] = sub.leaf[src]
                self.leaf_k[dst] = leaf_k
                continue
            left, right = self.split(dst)
            self.leaf_k.pop(dst, None)
            self.w[dst], self.b[dst] = sub.w[src], sub.b[src]
            stack.extend(((sub.left[src], left), (sub.right[src], right)))

    def is_leaf(self, node: int) -> bool:
        return self.left[node] < 0

    def alive(self) -> list[int]:
        """Nodes reachable from the root (pruning leaves unreachable ids behind)."""
        out, stack = [], [0]
        while stack:
            node = stack.pop()
            out.append(node)
            if not self.is_leaf(node):
                stack.extend((self.right[node], self.left[node]))
        return out

    def max_depth(self) -> int:
        return max(self.depth[i] for i in self.alive())

    def leaves(self) -> list[int]:
        return [i for i in self.alive() if self.is_leaf(i)]

    def replace(self, node: int, by: int) -> None:
        """Put the subtree rooted at ``by`` where ``node`` is (``node``'s subtree is dropped)."""
        parent = self.parent[node]
        if parent < 0:  # ``by`` becomes the root: copy it into slot 0
            self._move_to_root(by)
            return
        if self.left[parent] == node:
            self.left[parent] = by
        else:
            self.right[parent] = by
        self.parent[by] = parent
        self._fix_depths(by)

    def _move_to_root(self, by: int) -> None:
        self.left[0], self.right[0] = self.left[by], self.right[by]
        self.w.pop(0, None), self.b.pop(0, None), self.leaf.pop(0, None)
        if by in self.leaf:
            self.leaf[0] = self.leaf[by]
        else:
            self.w[0], self.b[0] = self.w[by], self.b[by]
            self.parent[self.left[0]] = self.parent[self.right[0]] = 0
        self.left[by] = self.right[by] = -1
        self._fix_depths(0)

    def _fix_depths(self, top: int) -> None:
        stack = [top]
        while stack:
            node = stack.pop()
            p = self.parent[node]
            self.depth[node] = 0 if (p < 0 or node == 0) else self.depth[p] + 1
            if not self.is_leaf(node):
                stack.extend((self.left[node], self.right[node]))

    def l1(self) -> float:
        """Sum of |weights| over decision nodes and leaves (intercepts excluded)."""
        alive = self.alive()
        return (sum(float(np.abs(self.w[i][1]).sum()) for i in alive if not self.is_leaf(i))
                + sum(self.leaf[i].l1 for i in alive if self.is_leaf(i)))

    # ----- flat form
    def flatten(self) -> "FlatTree":
        """Renumber the reachable nodes breadth-first into the arrays the kernels read."""
        order, queue = [], [0]
        while queue:
            node = queue.pop(0)
            order.append(node)
            if not self.is_leaf(node):
                queue.extend((self.left[node], self.right[node]))
        new_id = {node: n for n, node in enumerate(order)}
        n = len(order)
        left = np.full(n, -1, dtype=np.int64)
        right = np.full(n, -1, dtype=np.int64)
        row = np.zeros(n, dtype=np.int64)
        dec, leaves = [], []
        for node in order:
            i = new_id[node]
            if self.is_leaf(node):
                row[i] = len(leaves)
                leaves.append(self.leaf[node])
            else:
                row[i] = len(dec)
                dec.append(node)
                left[i], right[i] = new_id[self.left[node]], new_id[self.right[node]]
        D = self.n_features
        dec_w = CSRWeights.from_blocks([self.w[i] for i in dec], D)
        dec_b = np.array([self.b[i] for i in dec], dtype=np.float64)
        leaf_w = CSRWeights.from_blocks([(leaf.features, leaf.W) for leaf in leaves], D)
        sizes = np.array([len(leaf.classes) for leaf in leaves], dtype=np.int64)
        leaf_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        index_of = np.full(len(self.left), -1, dtype=np.int64)
        index_of[order] = np.arange(n)
        return FlatTree(left, right, row, dec_w, dec_b, leaf_ptr,
                        np.concatenate([leaf.classes for leaf in leaves]).astype(np.int64),
                        leaf_w,
                        np.concatenate([leaf.b for leaf in leaves]).astype(np.float64),
                        node_of=np.array(order, dtype=np.int64), index_of=index_of)


@dataclass
class FlatTree:
    """Arrays of a tree in breadth-first order (root 0); ``node_of`` maps back to Tree ids."""
    left: np.ndarray
    right: np.ndarray
    row: np.ndarray
    dec_w: CSRWeights
    dec_b: np.ndarray
    leaf_ptr: np.ndarray
    leaf_classes: np.ndarray
    leaf_w: CSRWeights  # one row per (leaf, class) slot
    leaf_b: np.ndarray
    node_of: np.ndarray  # flat index -> Tree node id
    index_of: np.ndarray  # Tree node id -> flat index (-1 if not in the tree)

    @property
    def routing(self):
        return (self.left, self.right, self.row, *self.dec_w.arrays, self.dec_b)

    @property
    def leaf_arrays(self):
        return (self.leaf_ptr, self.leaf_classes, *self.leaf_w.arrays, self.leaf_b,
                self.max_leaf_size)

    @cached_property
    def max_leaf_size(self) -> int:
        """Most classes under one leaf, computed once (not per predict call: np.diff over
        every leaf added ~3 us to each single-example prediction)."""
        return int(np.diff(self.leaf_ptr).max())

    def depths(self) -> np.ndarray:
        """Depth of every node (root 0)."""
        depth = np.zeros(len(self.left), dtype=np.int64)
        for i in range(len(self.left)):  # breadth-first: parents come first
            if self.left[i] >= 0:
                depth[self.left[i]] = depth[self.right[i]] = depth[i] + 1
        return depth

    @property
    def nbytes(self) -> int:
        return (self.dec_w.nbytes + self.leaf_w.nbytes
                + sum(a.nbytes for a in (self.left, self.right, self.row, self.dec_b,
                                         self.leaf_ptr, self.leaf_classes, self.leaf_b)))

    def route_leaves(self, Xk, points=None, start=None):
        """Tree node id of the leaf each example ``points[p]`` reaches from Tree node
        ``start[p]`` (default: every example, from the root)."""
        Xd, indptr, indices, data, dense = Xk
        n = Xd.shape[0] if dense else len(indptr) - 1
        points = np.arange(n, dtype=np.int64) if points is None else points
        start = (np.zeros(len(points), dtype=np.int64) if start is None
                 else self.index_of[start])
        return self.node_of[kernels.route(points, start, *self.routing, *Xk)]

    def route_paths(self, Xk, max_depth: int) -> np.ndarray:
        """(n, max_depth + 1) Tree node ids visited at each depth, -1 below the leaf."""
        Xd, indptr, indices, data, dense = Xk
        n = Xd.shape[0] if dense else len(indptr) - 1
        flat = kernels.route_paths(*self.routing, *Xk, n, max_depth)
        return np.where(flat >= 0, self.node_of[np.maximum(flat, 0)], -1)
