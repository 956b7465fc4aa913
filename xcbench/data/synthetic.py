"""A seedable many-class problem with hierarchical class structure and a known Bayes error.

Classes are the leaves of a tree of clusters: each level's centres scatter around their
parent's centre, with the spread shrinking level by level, so classes come in clusters of
clusters (the structure tree methods are meant to find). Each class is an isotropic
Gaussian around its centre with a shared noise level, so the Bayes-optimal classifier is
known in closed form and its error is estimated by Monte Carlo.
"""
from __future__ import annotations

import hashlib
import json
import math

import numpy as np
from scipy.special import logsumexp

from .dataset import Dataset


def _branching(n_classes: int, levels: int) -> list[int]:
    b = max(2, math.ceil(n_classes ** (1.0 / levels) - 1e-9))
    return [b] * levels


def class_means(n_classes, n_features, levels, spread, shrink, rng):
    """Centres of the K classes: leaves of a tree with ``levels`` levels of clusters."""
    centres = np.zeros((1, n_features))
    scale = spread
    for b in _branching(n_classes, levels):
        offsets = rng.normal(scale=scale / math.sqrt(n_features),
                             size=(centres.shape[0], b, n_features))
        centres = (centres[:, None, :] + offsets).reshape(-1, n_features)
        scale *= shrink
    return centres[:n_classes]


def class_priors(n_classes, imbalance, rng):
    """Class probabilities proportional to rank**-imbalance (0: uniform), in random order."""
    weights = np.arange(1, n_classes + 1, dtype=np.float64) ** -float(imbalance)
    return rng.permutation(weights / weights.sum())


def bayes_predict(X, means, priors, noise):
    """The Bayes-optimal label of each row of X (dense), for the Gaussian problem."""
    return _log_joint(X, means, np.log(priors), noise).argmax(axis=1)


def _log_joint(X, means, log_priors, noise):
    """log p(c) + log N(x; mu_c, noise^2 I) up to a constant shared by all classes, (n, K)."""
    sq = (X ** 2).sum(1)[:, None] - 2 * X @ means.T + (means ** 2).sum(1)[None, :]
    return log_priors[None, :] - sq / (2 * noise ** 2)


def bayes_error(means, priors, noise, n_samples, rng, chunk=4096):
    """Monte Carlo estimate of the Bayes error: (estimate, standard error).

    Uses E_x[1 - max_c p(c|x)] over fresh samples, which has lower variance than counting
    the Bayes rule's mistakes.
    """
    log_priors = np.log(priors)
    values = []
    for start in range(0, n_samples, chunk):
        m = min(chunk, n_samples - start)
        y = rng.choice(len(priors), size=m, p=priors)
        X = means[y] + rng.normal(scale=noise, size=(m, means.shape[1]))
        lj = _log_joint(X, means, log_priors, noise)
        values.append(1.0 - np.exp(lj.max(1) - logsumexp(lj, axis=1)))
    v = np.concatenate(values)
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(len(v)))


def make_hierarchical(n_classes=1000, n_features=128, n_train=30000, n_test=5000, levels=3,
                      spread=8.0, shrink=0.5, noise=0.7, imbalance=0.0, bayes_samples=20000,
                      seed=0, name="synthetic"):
    """Generate a hierarchical Gaussian problem; returns a ``Dataset`` with ``bayes_error``.

    ``spread`` is the typical distance (Euclidean norm) of top-level centres from the origin,
    ``shrink`` the factor by which each deeper level's spread shrinks, ``noise`` the standard
    deviation of each feature around the class centre; ``imbalance`` the Zipf exponent of
    class frequencies. The defaults give a Bayes error of about 12% at K=1000, D=128.
    """
    params = dict(n_classes=n_classes, n_features=n_features, n_train=n_train, n_test=n_test,
                  levels=levels, spread=spread, shrink=shrink, noise=noise,
                  imbalance=imbalance, bayes_samples=bayes_samples, seed=seed)
    rng = np.random.default_rng(seed)
    means = class_means(n_classes, n_features, levels, spread, shrink, rng)
    priors = class_priors(n_classes, imbalance, rng)
    noise_per_dim = noise

    def sample(n):
        y = rng.choice(n_classes, size=n, p=priors)
        X = means[y] + rng.normal(scale=noise_per_dim, size=(n, n_features))
        return X, y.astype(np.int64)

    X_train, y_train = sample(n_train)
    X_test, y_test = sample(n_test)
    err, se = bayes_error(means, priors, noise_per_dim, bayes_samples, rng)
    checksum = "params:" + hashlib.sha256(
        json.dumps(params, sort_keys=True).encode()).hexdigest()[:16]
    return Dataset(name=name, X_train=X_train, y_train=y_train, X_test=X_test, y_test=y_test,
                   n_classes=n_classes, checksum=checksum,
                   info={"bayes_error": err, "bayes_error_se": se, "generator": params,
                         "class_means": means, "class_priors": priors, "noise": noise_per_dim})


def _level_sizes(n_classes, levels):
    sizes, count = [], 1
    for b in _branching(n_classes, levels):
        count *= b
        sizes.append(count)
    return sizes


def _node_features(n_classes, levels, features_per_node, n_features, rng):
    """Signature features of each class: the features owned by every node on its path.

    Returns (K, levels * features_per_node) int array; no two nodes share a feature.
    """
    sizes = _level_sizes(n_classes, levels)
    total = sum(sizes) * features_per_node
    if total > n_features:
        raise ValueError(f"n_features={n_features} is too small: the cluster tree needs "
                         f"{total} distinct signature features")
    pool = rng.permutation(n_features)[:total]
    parts, offset, leaf_count = [], 0, sizes[-1]
    for size in sizes:
        owned = pool[offset: offset + size * features_per_node].reshape(size, features_per_node)
        offset += size * features_per_node
        leaf_node = np.arange(leaf_count) // (leaf_count // size)  # ancestor at this level
        parts.append(owned[leaf_node])
    return np.hstack(parts)[:n_classes]


def _bernoulli_rates(p_on, noise_nnz, n_features):
    p0 = 1.0 - math.exp(-noise_nnz / n_features)  # a non-signature feature is on
    p1 = p_on + (1.0 - p_on) * p0  # a signature feature is on
    return p0, p1


def _sample_sparse(y, signatures, p_on, noise_nnz, n_features, rng):
    import scipy.sparse as sp

    n, s = len(y), signatures.shape[1]
    on = rng.random((n, s)) < p_on
    sig_rows, sig_cols = np.nonzero(on)
    noise_counts = rng.poisson(noise_nnz, size=n)
    noise_rows = np.repeat(np.arange(n), noise_counts)
    noise_cols = rng.integers(0, n_features, size=noise_rows.size)
    rows = np.concatenate([sig_rows, noise_rows])
    cols = np.concatenate([signatures[y[sig_rows], sig_cols], noise_cols])
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n_features))
    X.sum_duplicates()
    X.data[:] = 1.0
    return X


def sparse_bayes_error(signatures, p_on, noise_nnz, n_features, n_samples, rng, chunk=256):
    """Monte Carlo Bayes error of the sparse problem under its Bernoulli model: (est, s.e.).

    With uniform priors and equal signature sizes, log p(c|x) = w * overlap(x, sig_c) + const,
    w = log(p1 (1-p0) / (p0 (1-p1))); classes with no overlap share one score.
    """
    import scipy.sparse as sp

    k, s = signatures.shape
    p0, p1 = _bernoulli_rates(p_on, noise_nnz, n_features)
    w = math.log(p1 * (1 - p0) / (p0 * (1 - p1)))
    S = sp.csr_matrix((np.ones(k * s), (np.repeat(np.arange(k), s), signatures.ravel())),
                      shape=(k, n_features))
    values = []
    for start in range(0, n_samples, chunk):
        m = min(chunk, n_samples - start)
        y = rng.integers(0, k, size=m)
        X = _sample_sparse(y, signatures, p_on, noise_nnz, n_features, rng)
        overlap = (X @ S.T).tocsr()
        for i in range(m):
            counts = overlap.data[overlap.indptr[i]:overlap.indptr[i + 1]]
            top = counts.max() if counts.size else 0
            # normaliser relative to the best class: sum_c exp(w (overlap_c - top))
            z = np.exp(w * (counts - top)).sum() + (k - counts.size) * math.exp(-w * top)
            values.append(1.0 - 1.0 / z)
    v = np.asarray(values)
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(len(v)))


def default_sparse_features(n_classes, levels=3, features_per_node=4) -> int:
    """Default D of the sparse problem: 5K, or twice the signature features if more."""
    needed = sum(_level_sizes(n_classes, levels)) * features_per_node
    return max(5 * n_classes, 2 * needed)


def make_sparse_hierarchical(n_classes=1000, n_features=None, n_train=None, n_test=None,
                             levels=3, features_per_node=4, p_on=0.5, noise_nnz=10.0,
                             bayes_samples=2000, seed=0, name="synthetic-sparse"):
    """A sparse binary many-class problem with hierarchical class structure and Bayes error.

    Every node of a cluster tree (``levels`` deep) owns ``features_per_node`` features; a
    class's signature is the features of the nodes on its path. An example of class c has
    each signature feature on with probability ``p_on`` plus about ``noise_nnz`` random
    features (Poisson), all with value 1. Siblings share all but their own features, so
    the class structure is a tree. Defaults: D = 5K (at least twice the signature features
    the tree needs), 10 training and (up to 10,000) 2 test examples per class, uniform
    classes.
    """
    import hashlib
    import json

    n_features = n_features or default_sparse_features(n_classes, levels, features_per_node)
    n_train = n_train or 10 * n_classes
    n_test = n_test or min(10000, 2 * n_classes)
    params = dict(n_classes=n_classes, n_features=n_features, n_train=n_train, n_test=n_test,
                  levels=levels, features_per_node=features_per_node, p_on=p_on,
                  noise_nnz=noise_nnz, bayes_samples=bayes_samples, seed=seed)
    rng = np.random.default_rng(seed)
    signatures = _node_features(n_classes, levels, features_per_node, n_features, rng)
    y_train = rng.integers(0, n_classes, size=n_train)
    y_test = rng.integers(0, n_classes, size=n_test)
    X_train = _sample_sparse(y_train, signatures, p_on, noise_nnz, n_features, rng)
    X_test = _sample_sparse(y_test, signatures, p_on, noise_nnz, n_features, rng)
    err, se = sparse_bayes_error(signatures, p_on, noise_nnz, n_features, bayes_samples, rng)
    checksum = "params:" + hashlib.sha256(
        json.dumps({"sparse": True, **params}, sort_keys=True).encode()).hexdigest()[:16]
    return Dataset(name=name, X_train=X_train, y_train=y_train.astype(np.int64), X_test=X_test,
                   y_test=y_test.astype(np.int64), n_classes=n_classes, checksum=checksum,
                   info={"bayes_error": err, "bayes_error_se": se, "generator": params,
                         "signatures": signatures})
