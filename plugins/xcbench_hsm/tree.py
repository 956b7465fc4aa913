"""Label trees for hierarchical softmax, as flat arrays.

A tree has ``n_nodes`` internal nodes (node 0 is the root). The children of node n are
``children[child_ptr[n]:child_ptr[n + 1]]``: a value >= 0 is an internal node, a value
< 0 is the leaf of class ``-value - 1``. Every child but the last of each node owns a row
of the weight matrix (``edge_row``; -1 for the last child, whose score is fixed at 0), so a
binary node has exactly one weight vector: p(first child | x) = sigmoid(w . x + b).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from xcbench.tree.huffman import huffman_nested


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
        position ``path_pos`` (index within the node's children) at each. O(sum of depths)
        time and memory: nodes are numbered top-down, so a parent precedes its children.
        """
        arity = np.diff(self.child_ptr)
        edge_node = np.repeat(np.arange(self.n_nodes, dtype=np.int64), arity)
        edge_pos = np.arange(len(self.children), dtype=np.int64) - self.child_ptr[edge_node]
        internal = self.children >= 0
        parent = np.full(self.n_nodes, -1, dtype=np.int64)
        parent_pos = np.zeros(self.n_nodes, dtype=np.int64)
        parent[self.children[internal]] = edge_node[internal]
        parent_pos[self.children[internal]] = edge_pos[internal]
        leaf_node = np.full(self.n_classes, -1, dtype=np.int64)
        leaf_pos = np.zeros(self.n_classes, dtype=np.int64)
        classes = -self.children[~internal] - 1
        leaf_node[classes] = edge_node[~internal]
        leaf_pos[classes] = edge_pos[~internal]
        missing = np.flatnonzero(leaf_node < 0)
        if missing.size:
            raise ValueError(f"classes {missing[:5].tolist()} have no leaf in the tree")
        return _fill_paths(parent, parent_pos, leaf_node, leaf_pos)

    def depths(self) -> np.ndarray:
        """Depth (number of internal nodes on the path) of each class's leaf."""
        ptr, _, _ = self.paths()
        return np.diff(ptr)


@numba.njit(cache=True)
def _fill_paths(parent, parent_pos, leaf_node, leaf_pos):
    """Flat root-to-leaf paths from parent links (parents numbered before children)."""
    depth = np.zeros(parent.shape[0], dtype=np.int64)
    for n in range(1, parent.shape[0]):
        depth[n] = depth[parent[n]] + 1
    k = leaf_node.shape[0]
    ptr = np.zeros(k + 1, dtype=np.int64)
    for c in range(k):
        ptr[c + 1] = ptr[c] + depth[leaf_node[c]] + 1
    nodes = np.empty(ptr[k], dtype=np.int64)
    pos = np.empty(ptr[k], dtype=np.int64)
    for c in range(k):
        s = ptr[c + 1] - 1
        nodes[s], pos[s] = leaf_node[c], leaf_pos[c]
        while nodes[s] != 0:
            nodes[s - 1], pos[s - 1] = parent[nodes[s]], parent_pos[nodes[s]]
            s -= 1
    return ptr, nodes, pos


def _from_nested(root, n_classes: int) -> LabelTree:
    """Flatten a nested tree (ints are classes, lists are internal nodes), BFS order."""
    if not isinstance(root, list):  # one class: a root with that single leaf
        root = [root]
    child_ptr, children, edge_row = [0], [], []
    queue, next_id, row = deque([root]), 1, 0
    while queue:
        node = queue.popleft()
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
    """The Huffman tree of class counts (+1 each, so unseen classes get a leaf), built by the
    shared ``xcbench.tree.huffman.huffman_nested`` (deterministic; for arity > 2 the first
    merge takes just enough subtrees that every later merge is full)."""
    weights = np.asarray(counts, dtype=np.float64) + 1.0
    return _from_nested(huffman_nested(weights, arity), len(weights))


def balanced_tree(n_classes: int, arity: int = 2, seed: int = 0) -> LabelTree:
    """A complete tree over a random permutation of the classes."""
    rng = np.random.default_rng(seed)
    return _from_nested(_split(list(rng.permutation(n_classes)), arity), n_classes)


def _split(items: list, arity: int):
    if len(items) == 1:
        return int(items[0])
    parts = np.array_split(np.array(items), min(arity, len(items)))
    return [_split(list(p), arity) for p in parts]


def class_means(X, y, n_classes: int):
    """Mean input of each class (zero for an absent class): sparse CSR when X is sparse
    (nonzeros <= those of X, never K x D dense), dense (K, D) for dense X."""
    counts = np.maximum(np.bincount(y, minlength=n_classes), 1)
    onehot = sp.csr_matrix((np.ones(len(y)), (y, np.arange(len(y)))),
                           shape=(n_classes, len(y)))
    sums = onehot @ X
    if sp.issparse(sums):
        return sp.csr_matrix(sp.diags(1.0 / counts) @ sums)
    return np.asarray(sums) / counts[:, None]


def kmeans_tree(class_means: np.ndarray, arity: int = 2, seed: int = 0,
                max_leaf: int = 1) -> LabelTree:
    """A tree by recursive k-means (k = arity) of class mean vectors (dense or CSR rows;
    classes with similar inputs end up close). Degenerate splits fall back to an even
    split."""
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

    n_classes = class_means.shape[0]
    return _from_nested(build(np.arange(n_classes)), n_classes)


def balanced_kmeans_tree(class_means, arity: int = 2, seed: int = 0, max_leaf: int = 1,
                         n_iter: int = 20) -> LabelTree:
    """A tree by recursive *balanced* spherical k-means of the class means (Parabel's and
    napkinXC's tree): each cluster's classes are split into ``arity`` parts whose sizes
    differ by at most one, by cosine similarity to the parts' mean directions; a cluster of
    at most ``max_leaf`` classes becomes one node whose children are its classes. Depth is
    ceil(log_arity(K / max_leaf)) + 1 whatever the data. Each split works on the columns its
    classes use, so memory stays O(nonzeros of the means), never K x D."""
    rng = np.random.default_rng(seed)
    V = sp.csr_matrix(class_means, dtype=np.float64)
    norms = np.sqrt(np.asarray(V.multiply(V).sum(axis=1)).ravel())
    V = sp.csr_matrix(sp.diags(1.0 / np.maximum(norms, 1e-300)) @ V)

    def build(ids):
        if len(ids) <= max_leaf:
            return int(ids[0]) if len(ids) == 1 else [int(i) for i in ids]
        k = min(arity, len(ids))
        parts = _balanced_split(V[ids], k, rng, n_iter)
        return [build(ids[parts == j]) for j in range(k) if np.any(parts == j)]

    n_classes = V.shape[0]
    return _from_nested(build(np.arange(n_classes)), n_classes)


def _balanced_split(Vc, k, rng, n_iter):
    """Part (0..k-1) of each row of the unit-norm CSR rows ``Vc``: spherical k-means whose
    assignment step fills parts of equal capacity, most confident rows first."""
    n = Vc.shape[0]
    cols, local = np.unique(Vc.indices, return_inverse=True)
    Vc = sp.csr_matrix((Vc.data, local.reshape(-1), Vc.indptr), shape=(n, max(cols.size, 1)))
    cap = -(-n // k)  # ceil(n / k)
    parts = np.arange(n) % k  # a valid balanced start, replaced by the first assignment
    centers = Vc[rng.choice(n, size=k, replace=False)].toarray()
    for _ in range(n_iter):
        S = Vc @ centers.T  # (n, k) cosine similarities
        new = _assign_balanced(S, cap)
        if np.array_equal(new, parts):
            break
        parts = new
        for j in range(k):
            c = np.asarray(Vc[parts == j].sum(axis=0)).ravel()
            centers[j] = c / max(np.linalg.norm(c), 1e-300)
    return parts


def _assign_balanced(S, cap):
    """Each row to its most similar part that still has room (rows with the largest margin
    between their best and second-best part choose first). For two parts: the rows sorted
    by S[:, 0] - S[:, 1], the first half to part 0."""
    n, k = S.shape
    if k == 2:
        order = np.argsort(S[:, 1] - S[:, 0], kind="stable")
        parts = np.ones(n, dtype=np.int64)
        parts[order[:cap]] = 0
        return parts
    ranked = np.argsort(-S, axis=1)
    best = np.take_along_axis(S, ranked[:, :2], axis=1)
    order = np.argsort(best[:, 1] - best[:, 0], kind="stable")
    room = np.full(k, cap)
    parts = np.empty(n, dtype=np.int64)
    for i in order:
        for j in ranked[i]:
            if room[j]:
                parts[i] = j
                room[j] -= 1
                break
    return parts
