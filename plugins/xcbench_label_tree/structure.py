"""Label-tree structures: a disjoint tree over the classes, built by recursive balanced
partitioning of label sets, stored as flat arrays.

Node 0 is the root and holds every class; each internal node's children partition its label
set into at most ``branching`` parts of near-equal size (sizes differ by at most one); a leaf
holds one class. Arrays: ``child_ptr`` / ``children`` (CSR list of each node's children),
``parent`` (-1 at the root), ``node_label`` (the class of a leaf, -1 for internal nodes), and
``path_ptr`` / ``path_node``: class c's root-to-leaf path without the root.

How a label set is split is the structure's choice (Bengio, Weston & Grangier 2010):
- ``random``: a random balanced partition (the paper's control);
- ``kmeans``: balanced k-means of the classes' mean feature vectors (cheap, no extra model;
  sparse data, at most 10% nonzeros: balanced spherical k-means of the exact, sparse,
  unit-normalised means);
- ``confusion``: the paper's Algorithm 2: a one-vs-rest model's confusion matrix C on held-out
  rows, affinity A = (C + C^T) / 2, and at each node a spectral embedding of A restricted to
  the node's classes, split by balanced k-means (the paper allows enforcing balance in the
  k-means step; spectral clustering alone can give very unbalanced children).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np
import scipy.sparse as sp

from xcbench.contract.data_shape import mostly_zeros, nonzeros

EMBED_DIM = 64  # class means of wider dense data are randomly projected to this many dimensions
LAST_LEVEL_CAP = 4  # a node at the depth limit has at most this many x branching children


@dataclass
class LabelTreeStructure:
    """A disjoint label tree in flat arrays (see the module docstring)."""

    child_ptr: np.ndarray
    children: np.ndarray
    parent: np.ndarray
    node_label: np.ndarray
    path_ptr: np.ndarray
    path_node: np.ndarray
    # set once here: every predict call reads them, and np.diff over 1e5 nodes costs ~25 us
    depth: int = field(init=False)
    max_arity: int = field(init=False)

    def __post_init__(self):
        self.depth = int(np.diff(self.path_ptr).max()) if len(self.path_ptr) > 1 else 0
        self.max_arity = int(np.diff(self.child_ptr).max()) if len(self.parent) else 0

    def __setstate__(self, state):  # models pickled before these fields existed
        self.__dict__.update(state)
        self.__post_init__()

    @property
    def n_nodes(self) -> int:
        return len(self.parent)

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.child_ptr, self.children, self.parent,
                                      self.node_label, self.path_ptr, self.path_node))


def widest_node(branching: int, leaf_size: int | None = None) -> int:
    """The most classes a node has as its children instead of being split: ``branching``,
    or ``leaf_size`` when that is larger (Parabel's leaves)."""
    return max(branching, leaf_size or 0)


def build_structure(n_classes: int, branching: int, split, max_depth: int | None = None,
                    leaf_size: int | None = None) -> LabelTreeStructure:
    """Split the root's classes recursively with ``split(labels, n_parts) -> list of arrays``
    until every label set is a single class; children of a node with at most
    max(``branching``, ``leaf_size``) classes (Parabel's leaves: a binary tree whose last
    nodes hold up to ``leaf_size`` classes), or at depth ``max_depth - 1`` (root: depth 0),
    are its classes' leaves, so no
    leaf is deeper than ``max_depth`` unless a node there holds more than
    ``LAST_LEVEL_CAP`` x ``branching`` classes: it is split further, so that no node's
    children (and its node model: children x active features) grow with K. A split into
    fewer than two parts falls back to a random balanced one (so every split makes
    progress)."""
    if branching < 2:
        raise ValueError(f"branching must be >= 2, got {branching}")
    if max_depth is not None and max_depth < 1:
        raise ValueError(f"max_depth must be >= 1, got {max_depth}")
    if leaf_size is not None and leaf_size < 2:
        raise ValueError(f"leaf_size must be >= 2, got {leaf_size}")
    whole = widest_node(branching, leaf_size)  # a node of at most this many classes ends
    sets = [np.arange(n_classes, dtype=np.int64)]
    parent, kids, depth = [-1], [[]], [0]
    fallback = np.random.default_rng(0)
    node = 0
    while node < len(sets):  # breadth-first: sets grows as nodes are split
        labels = sets[node]
        if len(labels) > 1:
            last = (max_depth is not None and depth[node] >= max_depth - 1
                    and len(labels) <= LAST_LEVEL_CAP * branching)
            if len(labels) <= whole or last:
                parts = [labels[i:i + 1] for i in range(len(labels))]
            else:
                parts = [p for p in split(labels, branching) if len(p)]
                if len(parts) < 2:
                    parts = np.array_split(fallback.permutation(labels), branching)
            for part in parts:
                kids[node].append(len(sets))
                sets.append(np.asarray(part, dtype=np.int64))
                parent.append(node)
                kids.append([])
                depth.append(depth[node] + 1)
        node += 1
    n = len(sets)
    child_ptr = np.zeros(n + 1, dtype=np.int64)
    child_ptr[1:] = np.cumsum([len(k) for k in kids])
    children = np.array([c for k in kids for c in k], dtype=np.int64)
    node_label = np.array([s[0] if len(s) == 1 else -1 for s in sets], dtype=np.int64)
    parent = np.array(parent, dtype=np.int64)
    leaf_of = np.full(n_classes, -1, dtype=np.int64)
    leaf_of[node_label[node_label >= 0]] = np.flatnonzero(node_label >= 0)
    paths = []
    for c in range(n_classes):
        path, v = [], leaf_of[c]
        while v > 0:
            path.append(v)
            v = parent[v]
        paths.append(path[::-1])
    path_ptr = np.zeros(n_classes + 1, dtype=np.int64)
    path_ptr[1:] = np.cumsum([len(p) for p in paths])
    path_node = np.array([v for p in paths for v in p], dtype=np.int64)
    return LabelTreeStructure(child_ptr, children, parent, node_label, path_ptr, path_node)


def structure_size(n_classes: int, branching: int, leaf_size: int | None = None,
                   ) -> tuple[int, int]:
    """(nodes, depth) of the tree ``build_structure`` makes with a balanced split (parts of
    near-equal size, as every splitter here gives), counted without building it."""
    from functools import lru_cache

    whole = widest_node(branching, leaf_size)

    @lru_cache(maxsize=None)
    def size(n):
        if n <= 1:
            return 1, 0
        if n <= whole:
            return 1 + n, 1
        big, n_big = n // branching + 1, n % branching
        nodes_big, depth_big = size(big) if n_big else (0, 0)
        nodes_small, depth_small = size(n // branching)
        return (1 + n_big * nodes_big + (branching - n_big) * nodes_small,
                1 + max(depth_big, depth_small))

    return size(int(n_classes))


def balanced_assign(distances: np.ndarray) -> np.ndarray:
    """Assign each row to a column (cluster) so cluster sizes differ by at most one, greedily
    by increasing distance; returns the cluster of each row."""
    n, b = distances.shape
    capacity = np.full(b, n // b, dtype=np.int64)
    capacity[: n % b] += 1
    order = np.argsort(distances, axis=None, kind="stable").astype(np.int64)
    return _greedy_fill(order, b, capacity, n)


@numba.njit(cache=True)
def _greedy_fill(order, b, capacity, n):
    assign = np.full(n, -1, dtype=np.int64)
    left = n
    for flat in order:
        i, j = flat // b, flat % b
        if assign[i] < 0 and capacity[j] > 0:
            assign[i] = j
            capacity[j] -= 1
            left -= 1
            if left == 0:
                break
    return assign


def balanced_kmeans(points, n_parts: int, rng, n_iter: int = 5) -> list:
    """Split the rows of ``points`` into ``n_parts`` groups of near-equal size. Dense points:
    k-means++ centres, then alternating balanced assignment and centre updates. Sparse
    (CSR, unit rows): ``balanced_spherical_kmeans``."""
    n = points.shape[0]
    if n <= n_parts:
        return [np.array([i]) for i in range(n)]
    if sp.issparse(points):
        return balanced_spherical_kmeans(points, n_parts, rng, n_iter)
    from sklearn.cluster import kmeans_plusplus

    centres, _ = kmeans_plusplus(points, n_parts, random_state=int(rng.integers(2**31)))
    sq = (points ** 2).sum(axis=1)[:, None]
    for _ in range(n_iter):
        dist = sq - 2 * points @ centres.T + (centres ** 2).sum(axis=1)[None, :]
        assign = balanced_assign(dist)
        centres = np.stack([points[assign == j].mean(axis=0) for j in range(n_parts)])
    return [np.flatnonzero(assign == j) for j in range(n_parts)]


def balanced_spherical_kmeans(points: sp.csr_matrix, n_parts: int, rng,
                              n_iter: int = 5) -> list:
    """Balanced spherical k-means of sparse unit rows, kept sparse throughout (Parabel's and
    napkinXC's clustering of label vectors, with ``n_parts`` clusters instead of 2): centres
    start at ``spherical_seeds``; each round assigns rows to centres by cosine similarity
    under the size balance (``balanced_assign``), then sets each centre to its rows' summed
    vector, unit-normalised. Centres are sparse (at most the rows' nonzeros), so nothing is
    n_parts x D dense; the similarities are n x n_parts."""
    from sklearn.preprocessing import normalize

    n = points.shape[0]
    centres = points[spherical_seeds(points, n_parts, rng)]
    assign = np.zeros(n, dtype=np.int64)
    for _ in range(n_iter):
        similarity = (points @ centres.T).toarray()
        assign = balanced_assign(-similarity)
        member = sp.csr_matrix((np.ones(n), (assign, np.arange(n))), shape=(n_parts, n))
        centres = normalize(member @ points)
    return [np.flatnonzero(assign == j) for j in range(n_parts)]


def is_sparse_data(X) -> bool:
    """X counts as sparse by its share of nonzeros (``data_shape.mostly_zeros``, whatever
    its container, so the same data stored dense or CSR gets the same tree)."""
    return mostly_zeros(nonzeros(X), *X.shape)


def spherical_seeds(points: sp.csr_matrix, n_parts: int, rng) -> np.ndarray:
    """k-means++ seeding under the cosine distance 1 - cos (unit rows): the first seed at
    random, each next one drawn with probability proportional to its distance from the
    nearest seed so far; distinct rows, one sparse product per seed. All-zero rows (classes
    without training rows) are as far from everything as can be, so they are not drawn
    while other rows remain."""
    n = points.shape[0]
    zero = np.diff(points.indptr) == 0
    candidates = np.flatnonzero(~zero) if (~zero).any() else np.arange(n)
    seeds = [int(rng.choice(candidates))]
    distance = np.full(n, np.inf)
    for _ in range(1, n_parts):
        cos = (points @ points[seeds[-1]].T).toarray().ravel()
        distance = np.minimum(distance, np.maximum(1.0 - cos, 0.0))
        weight = np.where(zero, 0.0, distance)
        weight[seeds] = 0.0
        if weight.sum() <= 0:  # every other row duplicates a seed: any unused row
            weight = np.ones(n)
            weight[seeds] = 0.0
        seeds.append(int(rng.choice(n, p=weight / weight.sum())))
    return np.array(seeds)


def class_embedding(X, y, n_classes: int, rng):
    """Unit-normalised class-mean vectors, one row per class. Sparse data
    (``is_sparse_data``): the exact means, sparse (CSR, at most nnz(X) entries), for
    spherical k-means. Dense data: (K, <= EMBED_DIM) dense, wider data first projected by a
    sparse random projection."""
    from sklearn.preprocessing import normalize

    onehot = sp.csr_matrix((np.ones(len(y)), (y, np.arange(len(y)))), shape=(n_classes, len(y)))
    if is_sparse_data(X):
        return normalize(sp.csr_matrix(onehot @ sp.csr_matrix(X)))
    counts = np.maximum(np.asarray(onehot.sum(axis=1)).ravel(), 1.0)
    if X.shape[1] > EMBED_DIM:
        from sklearn.random_projection import SparseRandomProjection

        proj = SparseRandomProjection(EMBED_DIM, random_state=int(rng.integers(2**31)))
        X = proj.fit_transform(X)
    means = onehot @ X
    means = np.asarray(means.todense() if sp.issparse(means) else means) / counts[:, None]
    return normalize(means)


def spherical_kmeans(points: sp.csr_matrix, n_parts: int, rng, max_iter: int = 20,
                     eps: float = 1e-4, min_size: int = 2) -> list:
    """Unbalanced spherical k-means of sparse unit rows (Bonsai's clustering of label
    vectors): centres start at ``n_parts`` random distinct rows; rows go to their most
    similar centre (cosine), centres become their rows' normalised sums, until the mean
    similarity gains less than ``eps`` (or ``max_iter`` rounds). Clusters smaller than
    ``min_size`` are then dissolved, their rows moved to their next most similar cluster,
    smallest first. Returns the non-empty clusters (row indices); sizes follow the data."""
    from sklearn.preprocessing import normalize

    n = points.shape[0]
    if n <= n_parts:
        return [np.array([i]) for i in range(n)]
    centres = points[rng.choice(n, n_parts, replace=False)]
    previous = -2.0
    similarity = None
    for _ in range(max_iter):
        similarity = (points @ centres.T).toarray()
        assign = similarity.argmax(axis=1)
        mean = float(similarity[np.arange(n), assign].mean())
        if mean - previous < eps:
            break
        previous = mean
        member = sp.csr_matrix((np.ones(n), (assign, np.arange(n))), shape=(n_parts, n))
        centres = normalize(member @ points)
    sizes = np.bincount(assign, minlength=n_parts)
    while True:
        live = np.flatnonzero(sizes > 0)
        small = live[np.argmin(sizes[live])]
        if sizes[small] >= min_size or sizes[small] == n:
            break
        similarity[:, small] = -np.inf
        moved = np.flatnonzero(assign == small)
        assign[moved] = similarity[moved].argmax(axis=1)
        sizes = np.bincount(assign, minlength=n_parts)
    return [np.flatnonzero(assign == j) for j in range(n_parts) if sizes[j]]


def unbalanced_kmeans_splitter(embedding, rng):
    """``split``: unbalanced spherical k-means of the classes' sparse unit mean vectors
    (``spherical_kmeans``): wide nodes whose children's sizes follow the data (Bonsai).
    Classes without training rows (all-zero means) say nothing about where they belong:
    they are dealt out evenly over the clusters of the others, instead of all landing in
    the first cluster (which made one node with nearly every class as children)."""
    embedding = sp.csr_matrix(embedding)
    empty = np.diff(embedding.indptr) == 0

    def split(labels, n_parts):
        known, unknown = labels[~empty[labels]], rng.permutation(labels[empty[labels]])
        if len(known) < 2:
            return np.array_split(rng.permutation(labels), n_parts)
        parts = [known[g] for g in spherical_kmeans(embedding[known], n_parts, rng)]
        for j, extra in enumerate(np.array_split(unknown, len(parts))):
            parts[j] = np.concatenate([parts[j], extra])
        return parts
    return split


def random_splitter(rng):
    """``split`` for build_structure: a random balanced partition."""
    def split(labels, n_parts):
        return np.array_split(rng.permutation(labels), n_parts)
    return split


def kmeans_splitter(embedding: np.ndarray, rng):
    """``split``: balanced k-means of the classes' embedding rows."""
    def split(labels, n_parts):
        return [labels[g] for g in balanced_kmeans(embedding[labels], n_parts, rng)]
    return split


def confusion_affinity(true, predicted, n_classes: int) -> sp.csr_matrix:
    """Sparse A = (C + C^T) / 2 of the confusion counts C[true, predicted], diagonal dropped
    (only confusions between different classes say which classes belong together)."""
    C = sp.csr_matrix((np.ones(len(true)), (true, predicted)), shape=(n_classes, n_classes))
    A = ((C + C.T) * 0.5).tocsr()
    A.setdiag(0)
    A.eliminate_zeros()
    return A


def spectral_splitter(affinity: sp.csr_matrix, embedding: np.ndarray, rng, n_neighbors=10):
    """``split``: spectral embedding (normalised Laplacian, Ng-Jordan-Weiss row scaling) of the
    affinity restricted to the node's classes, then balanced k-means. A weak k-nearest-
    neighbour graph of the class means is added so classes never confused still connect."""
    from sklearn.manifold import spectral_embedding
    from sklearn.neighbors import kneighbors_graph
    from sklearn.preprocessing import normalize

    def split(labels, n_parts):
        sub = affinity[labels][:, labels]
        k = min(n_neighbors, len(labels) - 1)
        knn = kneighbors_graph(embedding[labels], k, include_self=False)
        weak = 1e-3 * (sub.data.mean() if sub.nnz else 1.0)
        graph = (sub + weak * (knn + knn.T)).tocsr()
        dims = min(n_parts, len(labels) - 1)
        coords = spectral_embedding(graph, n_components=dims, drop_first=False,
                                    random_state=int(rng.integers(2**31)))
        return [labels[g] for g in balanced_kmeans(normalize(coords), n_parts, rng)]
    return split


def path_arity_sums(tree: LabelTreeStructure) -> np.ndarray:
    """For each class, the children scored on the way down to it (sum over its path of the
    arity of each step's parent): the greedy descent's cost when it predicts that class."""
    if len(tree.path_node) == 0:  # a single class: the root is its leaf, nothing is scored
        return np.zeros(len(tree.path_ptr) - 1)
    arity = np.diff(tree.child_ptr)
    per_step = arity[tree.parent[tree.path_node]]
    sums = np.add.reduceat(per_step, tree.path_ptr[:-1]) if len(per_step) else per_step
    sums[np.diff(tree.path_ptr) == 0] = 0
    return sums.astype(np.float64)
