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
                   info={"bayes_error": err, "bayes_error_se": se, "generator": params})
