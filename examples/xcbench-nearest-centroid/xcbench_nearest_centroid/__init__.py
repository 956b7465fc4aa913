"""An example third-party xcbench plugin: the nearest-centroid classifier.

p(c | x) is proportional to exp(-||x - mu_c||^2 / (2 s^2)), with mu_c the class mean and
s^2 the pooled within-class variance per feature: the Bayes classifier for isotropic
Gaussian classes with equal priors.
"""
import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

import xcbench
from xcbench.contract.method import check_labels, check_X, topk_from_scores

__version__ = "0.1.0"


class NearestCentroid(xcbench.Method):
    """Nearest class mean; ``shrink`` pulls every centroid towards the overall mean."""

    def __init__(self, shrink=0.0):
        self.shrink = shrink

    def fit(self, X, y, n_classes=None):
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        self.n_features_in_ = X.shape[1]
        self.classes_ = np.unique(y)
        onehot = sp.csr_matrix((np.ones(len(y)), (np.searchsorted(self.classes_, y),
                                                  np.arange(len(y)))))
        counts = np.asarray(onehot.sum(axis=1))
        sums = onehot @ X
        centroids = (sums.toarray() if sp.issparse(sums) else sums) / counts
        overall = np.asarray(X.mean(axis=0)).ravel()
        self.centroids_ = (1 - self.shrink) * centroids + self.shrink * overall
        # sum_i ||x_i - m_c(i)||^2, expanded so that sparse X is never densified
        sum_sq = float(X.multiply(X).sum()) if sp.issparse(X) else float(np.square(X).sum())
        n_c = counts.ravel()
        residual = sum_sq - 2 * float(np.sum(n_c[:, None] * centroids * self.centroids_)) \
            + float(np.sum(n_c * (self.centroids_ ** 2).sum(1)))
        self.variance_ = max(residual / X.size if not sp.issparse(X) else
                             residual / (X.shape[0] * X.shape[1]), 1e-12)
        return self

    def _log_probs(self, X):
        sq = -2 * np.asarray(X @ self.centroids_.T) + (self.centroids_ ** 2).sum(1)
        logits = -sq / (2 * self.variance_)  # ||x||^2 is shared by all classes: dropped
        return logits - logsumexp(logits, axis=1, keepdims=True)

    def predict_topk(self, X, k=1):
        X = check_X(X, self.n_features_in_)
        idx, scores = topk_from_scores(self._log_probs(X), k)
        return np.where(idx >= 0, self.classes_[np.maximum(idx, 0)], -1), scores

    def log_proba(self, X, y):
        X = check_X(X, self.n_features_in_)
        y, _ = check_labels(y, X.shape[0], self.n_classes_)
        out = np.full(len(y), -np.inf)
        seen = np.isin(y, self.classes_)
        log_p = self._log_probs(X[seen])
        out[seen] = log_p[np.arange(len(log_p)), np.searchsorted(self.classes_, y[seen])]
        return out

    def support_size(self, X):
        return np.full(X.shape[0], len(self.classes_), dtype=np.int64)

    def stats(self):
        return {"n_params": int(self.centroids_.size + 1), "bytes": int(self.centroids_.nbytes),
                "depth": 0}


@xcbench.hookimpl
def register_methods(register):
    register(xcbench.MethodSpec(
        name="nearest-centroid", family="flat",
        description="nearest class mean with a shared isotropic Gaussian (example plugin)",
        factory=NearestCentroid, param_grid={"shrink": [0.0]}))
