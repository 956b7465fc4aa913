"""Initial trees for TAO: random oblique splits, or the paper's clustering (Algorithm 2)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans

from .columns import active_columns, select_columns
from .tree import Tree

INITS = ("random", "cluster")
INIT_FEATURES = 1024  # random init on sparse X: weights on the node's most frequent features
SKETCH_DIM = 256  # cluster init on sparse X: class means hashed to this many dimensions
# the paper's cluster init (k-means into L = 2^depth clusters, then pairwise merges) is used
# while L <= MERGE_MAX_CLUSTERS and L x K <= KMEANS_MAX_WORK; beyond, divisive_leaves
MERGE_MAX_CLUSTERS = 1024
KMEANS_MAX_WORK = 2 ** 24
# cluster init on CSR X: the count sketch's per-feature arrays (feature ids, buckets, signs
# and the D x SKETCH_DIM hashing matrix built from them); measured peak 96 MB = 48 bytes per
# feature at D = 2e6 (tests/test_softmax_tree.py), bounded here with a margin
SKETCH_BYTES_PER_FEATURE = 64


def init_memory(init: str, n_features: int, sparse: bool) -> int:
    """Bytes the initial tree needs beyond the fit's node problems: the cluster init's count
    sketch on CSR input (O(D)); nothing else of the init is larger than a node problem."""
    return SKETCH_BYTES_PER_FEATURE * int(n_features) if init == "cluster" and sparse else 0


def initial_tree(init: str, X, y, depth: int, n_classes: int, rng):
    """(tree, paths) for ``init`` "random" or "cluster"; paths (N, depth+1) are the first TAO
    pass's reduced sets (None: route the points through the tree)."""
    if init == "cluster":
        return cluster_tree(X, y, depth, n_classes, rng)
    if init == "random":
        return random_tree(X, depth, n_classes, rng), None
    raise ValueError(f"init must be one of {INITS}, got {init!r}")


def init_features(X, rows) -> np.ndarray:
    """Features a random decision weight uses: every column of dense X; for CSR X the (at
    most INIT_FEATURES most frequent) features of the node's rows, so the initial tree holds
    O(nodes x INIT_FEATURES) weights, not O(nodes x D)."""
    if not sp.issparse(X):
        return np.arange(X.shape[1], dtype=np.int64)
    Xr = X[rows]
    features = active_columns(Xr)
    if len(features) > INIT_FEATURES:
        counts = np.bincount(np.searchsorted(features, Xr.indices), minlength=len(features))
        features = np.sort(features[np.argsort(-counts, kind="stable")[:INIT_FEATURES]])
    return features


def random_tree(X, depth: int, n_classes: int, rng) -> Tree:
    """Complete tree; each decision weight ~ N(0, I) over ``init_features`` normalised to
    unit length. The bias puts the hyperplane through the mean of the training points reaching
    the node (the paper does not say; a bias of 0 sends almost everything one way on uncentred
    features like GloVe)."""
    tree = Tree.complete(depth, X.shape[1], n_classes)
    at = np.zeros(X.shape[0], dtype=np.int64)  # node each point has reached so far
    for node in range(2 ** depth - 1):  # heap order = breadth first
        rows = np.flatnonzero(at == node)
        features = init_features(X, rows)
        w = rng.standard_normal(len(features))
        w /= max(np.linalg.norm(w), 1e-300)
        proj = (np.asarray(select_columns(X[rows], features) @ w).ravel() if len(rows)
                else np.zeros(0))
        b = -float(proj.mean()) if len(rows) else 0.0
        tree.w[node], tree.b[node] = (features, w), b
        at[rows] = np.where(proj + b >= 0, tree.right[node], tree.left[node])
    return tree


def class_means(X, y, n_classes: int):
    """(K, D') mean of each class (zero for absent classes) and the class counts. For CSR X
    with D > SKETCH_DIM the means are hashed to D' = SKETCH_DIM signed buckets (a count
    sketch: distances are preserved in expectation), so the init costs O(nnz + K x D'), not
    O(K x D); dense X keeps its D columns."""
    counts = np.bincount(y, minlength=n_classes)
    onehot = sp.csr_matrix((np.ones(len(y)), (y, np.arange(len(y)))), shape=(n_classes, len(y)))
    sums = onehot @ X
    if sp.issparse(sums):
        D = sums.shape[1]
        if D > SKETCH_DIM:
            f = np.arange(D)
            bucket = (f * 2654435761) % SKETCH_DIM
            sign = np.where((f * 40503 >> 7) % 2 == 0, 1.0, -1.0)
            sums = sums @ sp.csr_matrix((sign, (f, bucket)), shape=(D, SKETCH_DIM))
        sums = sums.toarray()
    sums = np.asarray(sums)
    return sums / np.maximum(counts, 1)[:, None], counts


def merge_levels(means: np.ndarray, weights: np.ndarray) -> list[list[tuple[int, int]]]:
    """Balanced bottom-up hierarchy over a power-of-two number of clusters: at each level,
    repeatedly pair the two closest clusters not yet merged at that level (Euclidean distance
    of weighted means). Returns, per level from the bottom, the (left, right) index pairs into
    that level's cluster list; the parent of pair p is cluster p of the next level. Clusters
    with zero weight (padding) are paired last. One sort of a level's m(m-1)/2 distances
    gives the greedy order: O(m^2 log m) per level, O(m^2) memory (m <= MERGE_MAX_CLUSTERS)."""
    levels = []
    means, weights = means.copy(), weights.astype(np.float64).copy()
    while len(means) > 1:
        pairs = _closest_free_pairs(means, weights)
        parent_w = np.array([weights[a] + weights[b] for a, b in pairs])
        parent_m = np.array([(means[a] * weights[a] + means[b] * weights[b])
                             / max(weights[a] + weights[b], 1e-300) for a, b in pairs])
        levels.append(pairs)
        means, weights = parent_m, parent_w
    return levels


def _closest_free_pairs(means, weights) -> list[tuple[int, int]]:
    """m/2 disjoint pairs, greedily closest first among clusters of positive weight; the
    rest (padding, or one real cluster left with padding) paired in index order."""
    m = len(means)
    sq = (means ** 2).sum(1)  # |a-b|^2 without an (m, m, D) temporary
    a_idx, b_idx = np.triu_indices(m, 1)
    real = (weights[a_idx] > 0) & (weights[b_idx] > 0)
    a_idx, b_idx = a_idx[real], b_idx[real]
    dist = np.maximum(sq[a_idx] + sq[b_idx] - 2.0 * np.einsum("ij,ij->i", means[a_idx],
                                                              means[b_idx]), 0.0)
    free, pairs = np.ones(m, dtype=bool), []
    for q in np.argsort(dist, kind="stable"):  # row-major order breaks ties, as before
        a, b = a_idx[q], b_idx[q]
        if free[a] and free[b]:
            free[[a, b]] = False
            pairs.append((int(a), int(b)))
    left = np.flatnonzero(free)
    pairs += [(int(left[j]), int(left[j + 1])) for j in range(0, len(left), 2)]
    return pairs


def divisive_leaves(means, counts, depth: int, rng) -> np.ndarray:
    """Heap id of the leaf of each class (rows of ``means``; ``counts`` > 0 for present
    classes) for a complete tree of ``depth``: top-down, each node's classes are cut in two
    halves by count by a weighted balanced 2-means of their means (``_balanced_halves``), so
    similar classes share subtrees. O(K x D' x depth) time and
    O(K x D') memory: the init for trees too large for k-means into 2^depth clusters."""
    leaf = np.zeros(len(means), dtype=np.int64)
    groups = [(0, np.flatnonzero(counts > 0))]
    for _ in range(depth):
        nxt = []
        for node, members in groups:
            left, right = _balanced_halves(means[members], counts[members], rng)
            nxt += [(2 * node + 1, members[left]), (2 * node + 2, members[right])]
        groups = nxt
    for node, members in groups:
        leaf[members] = node
    return leaf


def _balanced_halves(points, weights, rng, steps: int = 10):
    """(left, right) index arrays splitting ``points`` into halves of equal size (left gets
    the extra one) by balanced 2-means: Lloyd steps whose assignment gives each centre half
    the points (exactly: sort by the projection on the centres' difference, cut in the
    middle), centres the weighted means of their halves, from two random members."""
    n = len(points)
    if n <= 1:
        return np.arange(n), np.arange(0)
    centres = points[rng.choice(n, 2, replace=False)].astype(np.float64)
    half = (n + 1) // 2
    order = np.arange(n)
    for _ in range(steps):
        previous = order[:half].copy()
        order = np.argsort(-(points @ (centres[0] - centres[1])), kind="stable")
        if _ and np.array_equal(np.sort(order[:half]), np.sort(previous)):
            break
        for c, rows in enumerate((order[:half], order[half:])):
            centres[c] = np.average(points[rows], axis=0, weights=weights[rows])
    return np.sort(order[:half]), np.sort(order[half:])


def cluster_tree(X, y, depth: int, n_classes: int, rng):
    """The paper's Algorithm 2 ("ST dagger"): k-means of the class means (weighted by class
    size) into L = 2^depth clusters, a balanced merge hierarchy over them, and each training
    point started at its class's leaf. Large trees or many classes (see MERGE_MAX_CLUSTERS,
    KMEANS_MAX_WORK) use ``divisive_leaves`` instead, the same idea top-down. Returns (tree, paths) where paths (N, depth+1) are the
    initial reduced sets for the first TAO pass (decision weights start at zero)."""
    tree = Tree.complete(depth, X.shape[1], n_classes)
    means, counts = class_means(X, y, n_classes)
    present = np.flatnonzero(counts)
    L = 2 ** depth
    if L > MERGE_MAX_CLUSTERS or L * len(present) > KMEANS_MAX_WORK:
        return tree, _paths_from_leaves(divisive_leaves(means, counts, depth, rng)[y], depth)
    n_clusters = min(L, len(present))
    km = KMeans(n_clusters=n_clusters, n_init=1, random_state=int(rng.integers(2**31)))
    label = km.fit_predict(means[present], sample_weight=counts[present])
    c_means = np.zeros((L, means.shape[1]))
    c_weight = np.zeros(L)
    for c in range(n_clusters):
        members = label == c
        c_weight[c] = counts[present][members].sum()
        c_means[c] = km.cluster_centers_[c]
    levels = merge_levels(c_means, c_weight)
    # top-down: the single top cluster is the root; pair p of a level hangs under cluster p
    heap_of = {0: 0}  # cluster index at the current level -> heap node id
    for pairs in reversed(levels):
        heap_of = {child: (2 * heap_of[p] + 1 + side)
                   for p, pair in enumerate(pairs) for side, child in enumerate(pair)}
    leaf_of_class = np.zeros(n_classes, dtype=np.int64)
    leaf_of_class[present] = [heap_of[c] for c in label]
    return tree, _paths_from_leaves(leaf_of_class[y], depth)


def _paths_from_leaves(leaf, depth: int) -> np.ndarray:
    """(N, depth+1) heap ids from the root to each point's leaf."""
    paths = np.empty((len(leaf), depth + 1), dtype=np.int64)
    paths[:, depth] = leaf
    for d in range(depth - 1, -1, -1):
        paths[:, d] = (paths[:, d + 1] - 1) // 2
    return paths
