"""Memory of hierarchical softmax: the weight-table layout fit chooses, and the estimate of
fit's peak bytes (``HierarchicalSoftmax.estimate_memory``) computed from the same rule.

A tree over K classes has K - 1 weight rows (each node's children but the last own one), so
the weights are one table of ``xcbench.tree.weights``: direct (K - 1) x D when that is at
most ``DIRECT_LIMIT_BYTES``, else hashed into 2^bits slots.
"""
from __future__ import annotations

import math

from xcbench.tree.weights import MAX_BITS, auto_bits, table_layout

DIRECT_LIMIT_BYTES = 256 << 20  # a direct table up to 256 MB (dense data keeps BLAS speed)
AUTO_MAX_BITS = 26  # bits="auto" hashes into at most 2^26 slots (512 MiB a table), as the toolkit
HASH_LOAD = 4.0  # bits="auto": 2^bits >= 4 x the estimated (row, feature) pairs touched
_TREE_BYTES_PER_CLASS = 600  # tree arrays + the Huffman heap's Python objects (measured ~400)
_FIXED_BYTES = 4 << 20  # small per-fit buffers and kernel scratch
KMEANS_TREES = ("kmeans", "kmeans_balanced")  # trees built from the class means


def depth_bound(n_samples: int, n_classes: int, arity: int, tree: str) -> int:
    """Upper estimate of the deepest leaf: balanced ceil(log_a K); Huffman on counts + 1
    at most log_phi(N + K) + 2 (Fibonacci worst case); k-means assumed <= 4 x balanced."""
    k = max(int(n_classes), 2)
    balanced = math.ceil(math.log(k) / math.log(arity) - 1e-9)
    if tree == "balanced":
        return balanced
    if tree == "kmeans_balanced":  # the binary levels, then at most one wide node
        return balanced + 1
    if tree == "huffman":
        fib = math.ceil(math.log(max(n_samples + k, 2)) / math.log((1 + 5 ** 0.5) / 2)) + 2
        return min(k - 1, fib)
    return min(k - 1, 4 * balanced)


def touched_pairs(n_samples: int, n_features: int, nnz: int, n_classes: int,
                  arity: int) -> float:
    """Estimated (weight row, feature) pairs SGD touches: level l of a balanced tree has
    about a^l nodes, which together see every example once, so at most
    min(nnz, (a - 1) a^l D) pairs; summed over the ceil(log_a K) levels."""
    levels = math.ceil(math.log(max(n_classes, 2)) / math.log(arity) - 1e-9)
    total = sum(min(float(nnz) * (arity - 1), (arity - 1) * float(arity) ** l * n_features)
                for l in range(levels))
    return min(total, float(max(n_classes - 1, 1)) * n_features)


def weight_layout(n_samples: int, n_features: int, nnz: int, n_classes: int, arity: int,
                  bits) -> tuple[int, int]:
    """(table size, mask) fit uses: ``bits`` None = direct, an int = hashed 2^bits,
    ``"auto"`` = direct up to DIRECT_LIMIT_BYTES, else hashed with 2^bits about HASH_LOAD x
    ``touched_pairs`` (at most 2^AUTO_MAX_BITS)."""
    rows = max(n_classes - 1, 1)
    if bits == "auto" and rows * n_features * 8 > DIRECT_LIMIT_BYTES:
        pairs = touched_pairs(n_samples, n_features, nnz, n_classes, arity)
        bits = min(auto_bits(pairs, HASH_LOAD), AUTO_MAX_BITS, MAX_BITS)
    return table_layout(rows, n_features, bits, direct_limit_bytes=DIRECT_LIMIT_BYTES)


def fit_peak_bytes(n_samples: int, n_features: int, nnz: int, n_classes: int, *, arity: int,
                   bits, momentum: float, tree: str, solver: str = "sgd",
                   max_leaf: int = 1, prune: float = 0.0) -> int:
    """Upper estimate of fit's peak bytes beyond X and y (see the class docstring)."""
    copies = 2 if momentum > 0 else 1
    rows = max(n_classes - 1, 1)
    depth = depth_bound(n_samples, n_classes, arity, tree)
    if bits == "csr":  # exact weights: collected per row, then packed by node; 16 bytes each
        pairs = csr_pairs_bound(nnz, n_classes, n_features, arity, max_leaf, depth)
        total = 2 * 16 * pairs * pruned_share(prune)
    else:
        size, _ = weight_layout(n_samples, n_features, nnz, n_classes, arity, bits)
        total = 8 * size * copies  # weights (+ momentum)
    total += 8 * rows * copies  # biases (+ momentum)
    total += 16 * n_classes * depth + _TREE_BYTES_PER_CLASS * n_classes  # paths, tree
    total += 16 * nnz + 8 * (n_samples + 1)  # float64/int64 copy of X for the kernels
    total += 24 * n_samples  # labels (int64) and the shuffled order (+ its copy)
    if tree in KMEANS_TREES:  # class means (sparse <= nnz entries, else K x D), k-means copies
        total += 3 * min(16 * nnz, 8 * n_classes * n_features)
    if solver == "liblinear":
        total += liblinear_bytes(n_samples, n_features, nnz, n_classes, arity, max_leaf, tree)
    return int(total + _FIXED_BYTES)


def liblinear_bytes(n_samples: int, n_features: int, nnz: int, n_classes: int, arity: int,
                    max_leaf: int, tree: str) -> int:
    """Extra peak of ``solver="liblinear"``: X sorted by leaf order, the root's renumbered
    copy and LIBLINEAR's own copy of it (56 nnz + 40 N), and for a node of m > 2 children the
    multinomial L-BFGS state (~16 vectors of m x d_node, d_node its active features; a
    node is assumed to see about 1.5 x m x N / K rows, its classes' share)."""
    total = 56 * nnz + 40 * n_samples
    width = max(arity, max_leaf if tree in KMEANS_TREES else 1)
    if width > 2:
        rows = min(n_samples, 1.5 * width * n_samples / max(n_classes, 1))
        active = min(n_features, rows * nnz / max(n_samples, 1))
        total += 8 * width * (16 * active + 4 * rows)
    return int(total)


def pruned_share(prune: float) -> float:
    """Share of ``csr_pairs_bound`` that ``bits="csr"`` keeps after pruning weights below
    ``prune``: no bound holds here, so this is calibrated on measurements, with a 2x margin
    (the runner's memory cap turns an underestimate into an error record). Measured with
    liblinear nodes, kmeans_balanced, max_leaf=100, C=30: synthetic-sparse-10k keeps 44% of
    the bound unpruned, 7.1 / 3.3 / 1.9% at prune = 0.01 / 0.03 / 0.1, synthetic-sparse-100k
    4.0% at 0.03; 0.04 x (prune / 0.03)^-0.57 fits these."""
    if prune <= 0:
        return 1.0
    return min(1.0, 2 * 0.04 * (prune / 0.03) ** -0.57)


def csr_pairs_bound(nnz: int, n_classes: int, n_features: int, arity: int, max_leaf: int,
                    depth: int) -> float:
    """Upper bound on the weights ``bits="csr"`` keeps (no pruning): a node's rows use at
    most their own nonzeros as features, each example reaches one node per level (arity - 1
    rows each) and, below the k-means trees' clusters, one node of up to max_leaf
    children."""
    wide = max_leaf - 1 if max_leaf > arity else 0
    return min(float(max(n_classes - 1, 1)) * n_features,
               float(nnz) * ((arity - 1) * depth + wide))
