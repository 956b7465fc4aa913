"""Recall Tree: routers trained online toward the entropy-reducing child, a candidate set
of frequent labels per node, an empirical-Bernstein recall bound that stops the descent
early, and one-against-some scorers made node-specific by path parameters. It follows
Vowpal Wabbit's recall_tree.cc (ALGORITHMS.md section 3) with VW's defaults:
max_candidates = min(K, 4 ceil(log2 K)), max_depth = ceil(log2 K), bern_hyper = 1.

Differences from VW, on purpose: the learners are AdaGrad steps on logistic (default) or
squared loss rather than VW's normalised/invariant GD, with ``normalize`` dividing each
feature by its largest training magnitude for the scale-invariance VW's normalised
updates give; the path parameters are hashed into
2^``hash_bits`` entries of this model's own table; an empty candidate set falls back to
the parent's (VW would answer the invalid label 0). Scores are margins, not
probabilities: ``log_proba`` raises NotImplementedError, so no perplexity is reported.
"""
from __future__ import annotations

import math

import numpy as np

from xcbench.method import Method, check_labels, check_X

from . import recall_tree_kernels as kernels
from .inputs import feature_scale, kernel_input, scaled

LOSSES = {"squared": 0, "logistic": 1}


class RecallTree(Method):
    """Logarithmic-time one-against-some classification (Recall Tree)."""

    def __init__(self, max_candidates=None, max_depth=None, bern_hyper=1.0,
                 randomized_routing=False, node_only=False, lr=0.5, loss="logistic",
                 passes=3, hash_bits=22, normalize=True, random_state=None):
        self.max_candidates = max_candidates
        self.max_depth = max_depth
        self.bern_hyper = bern_hyper
        self.randomized_routing = randomized_routing
        self.node_only = node_only
        self.lr = lr
        self.loss = loss
        self.passes = passes
        self.hash_bits = hash_bits
        self.normalize = normalize
        self.random_state = random_state

    def fit(self, X, y, n_classes=None):
        X = check_X(X)
        y, K = check_labels(y, X.shape[0], n_classes)
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {sorted(LOSSES)}, got {self.loss!r}")
        self.n_classes_, self.n_features_in_ = K, X.shape[1]
        log2k = max(1, math.ceil(math.log2(max(K, 2))))
        self.max_candidates_ = int(self.max_candidates or min(K, 4 * log2k))
        self.max_depth_ = int(self.max_depth or log2k)
        n_nodes = 2 ** (self.max_depth_ + 1) - 1
        self.n_internal_ = 2 ** self.max_depth_ - 1
        D, M = X.shape[1], self.max_candidates_
        self.counts_ = np.zeros((n_nodes, K), dtype=np.int32)
        self.total_ = np.zeros(n_nodes, dtype=np.int64)
        S = np.zeros(n_nodes)
        self.cand_ = np.full((n_nodes, M), -1, dtype=np.int64)
        self.cand_n_ = np.zeros(n_nodes, dtype=np.int64)
        self.topsum_ = np.zeros(n_nodes, dtype=np.int64)
        self.router_coef_ = np.zeros((self.n_internal_, D))
        self.router_intercept_ = np.zeros(self.n_internal_)
        RG, RGb = np.zeros_like(self.router_coef_), np.zeros(self.n_internal_)
        self.scorer_coef_, self.scorer_intercept_ = np.zeros((K, D)), np.zeros(K)
        SG, SGb = np.zeros((K, D)), np.zeros(K)
        size = 2 ** int(self.hash_bits)
        self.path_u_, self.path_b_ = np.zeros(size), np.zeros(size)
        HG, HGb = np.zeros(size), np.zeros(size)
        rng = np.random.default_rng(self.random_state)
        self.feature_scale_ = feature_scale(X) if self.normalize else None
        Xd, indptr, indices, data, dense = kernel_input(scaled(X, self.feature_scale_))
        for _ in range(int(self.passes)):
            order = rng.permutation(X.shape[0]).astype(np.int64)
            kernels.train_pass(order, y, self.n_internal_, self.counts_, self.total_, S,
                               self.cand_, self.cand_n_, self.topsum_, self.router_coef_,
                               self.router_intercept_, RG, RGb, self.scorer_coef_,
                               self.scorer_intercept_, SG, SGb, self.path_u_, self.path_b_, HG,
                               HGb, size - 1, Xd, indptr, indices, data, dense,
                               float(self.bern_hyper), bool(self.randomized_routing),
                               bool(self.node_only), float(self.lr), LOSSES[self.loss],
                               int(rng.integers(2**31)))
        return self

    def predict_topk(self, X, k=1):
        X = check_X(X, self.n_features_in_)
        n = X.shape[0]
        labels = np.full((n, k), -1, dtype=np.int64)
        scores = np.full((n, k), -np.inf)
        stops = np.empty(n, dtype=np.int64)
        Xd, indptr, indices, data, dense = kernel_input(scaled(X, self.feature_scale_))
        kernels.predict(int(k), self.n_internal_, self.total_, self.topsum_, self.cand_,
                        self.cand_n_, self.router_coef_, self.router_intercept_,
                        self.scorer_coef_, self.scorer_intercept_, self.path_u_, self.path_b_,
                        len(self.path_u_) - 1, Xd, indptr, indices, data, dense,
                        float(self.bern_hyper), bool(self.node_only), labels, scores, stops)
        depth = np.floor(np.log2(stops + 1)).astype(np.int64)
        self.last_mean_depth_ = float(depth.mean()) if n else 0.0
        self.last_stop_nodes_ = stops
        return labels, scores

    def log_proba(self, X, y):
        raise NotImplementedError("Recall Tree scores are margins, not probabilities")

    def stats(self):
        used = self.total_ > 0
        return {
            "n_params": int(self.router_coef_.size + self.scorer_coef_.size
                            + np.count_nonzero(self.path_u_) + np.count_nonzero(self.path_b_)),
            "bytes": int(self.router_coef_.nbytes + self.scorer_coef_.nbytes
                         + 16 * (np.count_nonzero(self.path_u_) + np.count_nonzero(self.path_b_))
                         + self.cand_.nbytes),
            "depth": int(self.max_depth_),
            "leaves": int(self.n_internal_ + 1),
            "nodes_used": int(used.sum()),
            "classes_per_leaf_mean": float(self.cand_n_[used].mean()) if used.any() else 0.0,
            "classes_per_leaf_max": int(self.max_candidates_),
            "nodes_per_prediction": float(getattr(self, "last_mean_depth_", self.max_depth_)),
        }
