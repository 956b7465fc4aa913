"""LOMtree: a logarithmic-depth tree grown online by the LOM objective (Choromanska and
Langford 2015), with the recycling (swap) of small leaves. See ALGORITHMS.md section 4.

Choices, as parameters: ``max_internal`` T (default K-1, VW's fixed value), swap
resistance ``swap_resistance`` RS (default 4, VW's), node regressors trained online with
AdaGrad steps of size ``lr`` on the ``loss`` ``"absolute"`` (median regression, VW's
forced choice) or ``"squared"``, ``passes`` over the data shuffled each pass, and with
``normalize`` each feature divided by its largest training magnitude (the scale-invariance
VW's normalized updates give; measured on aloi27d-438, whose histogram bins span 1e-6..1,
it is the difference between near-chance routing and VW-level accuracy). Differences
from VW's log_multi, on purpose: a recycled node starts with a fresh (zero) regressor (VW
reuses stale weights); a swap whose smallest leaf hangs under the root is skipped (VW
leaves it unhandled).

Probabilities: ``log_proba`` returns the log of the label frequency at the leaf an example
reaches (a leaf that never saw data uses its nearest ancestor's counts); labels the leaf
never saw get probability 0 (-inf), which perplexity-with-coverage reports as uncovered.
"""
from __future__ import annotations

import numpy as np

from xcbench.method import Method, check_labels, check_X

from . import lomtree_kernels as kernels
from .inputs import feature_scale, kernel_input, scaled

LOSSES = {"squared": 0, "absolute": 1}
_STORED_TOPK = 10


class LOMTree(Method):
    """Online logarithmic-time multiclass tree (LOMtree)."""

    def __init__(self, max_internal=None, swap_resistance=4.0, lr=1.0, loss="absolute",
                 passes=5, normalize=True, random_state=None):
        self.max_internal = max_internal
        self.swap_resistance = swap_resistance
        self.lr = lr
        self.loss = loss
        self.passes = passes
        self.normalize = normalize
        self.random_state = random_state

    def fit(self, X, y, n_classes=None):
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {sorted(LOSSES)}, got {self.loss!r}")
        self.n_features_in_ = X.shape[1]
        T = int(self.max_internal) if self.max_internal is not None else max(self.n_classes_ - 1, 1)
        if T < 1:
            raise ValueError(f"max_internal must be >= 1, got {T}")
        cap, K, D = 2 * T + 1, self.n_classes_, X.shape[1]
        left = np.full(cap, -1, dtype=np.int64)
        right = np.full(cap, -1, dtype=np.int64)
        parent = np.full(cap, -1, dtype=np.int64)
        C = np.zeros(cap, dtype=np.int64)
        distinct = np.zeros(cap, dtype=np.int64)
        l = np.zeros((cap, K), dtype=np.int32)
        m = np.zeros((cap, K), dtype=np.float64)
        n = np.zeros((cap, K), dtype=np.int32)
        E_sum, E_cnt = np.zeros(cap), np.zeros(cap, dtype=np.int64)
        W, b = np.zeros((cap, D)), np.zeros(cap)
        G, Gb = np.zeros((cap, D)), np.zeros(cap)
        state = np.array([0, 1, 0], dtype=np.int64)  # internal nodes, nodes used, swaps
        rng = np.random.default_rng(self.random_state)
        self.feature_scale_ = feature_scale(X) if self.normalize else None
        Xd, indptr, indices, data, dense = kernel_input(scaled(X, self.feature_scale_))
        for _ in range(int(self.passes)):
            order = rng.permutation(X.shape[0]).astype(np.int64)
            kernels.train_pass(order, y, state, left, right, parent, C, distinct, l, m, n,
                               E_sum, E_cnt, W, b, G, Gb, Xd, indptr, indices, data, dense,
                               T, float(self.swap_resistance), float(self.lr),
                               LOSSES[self.loss])
        used = int(state[1])
        self.n_internal_, self.n_swaps_ = int(state[0]), int(state[2])
        self.left_, self.right_, self.parent_ = left[:used], right[:used], parent[:used]
        # fold the feature scaling into the weights: prediction reads raw X
        self.coef_ = W[:used] * (self.feature_scale_ if self.normalize else 1.0)
        self.intercept_ = b[:used]
        self._leaf_tables(l[:used])
        return self

    def _leaf_tables(self, counts):
        """Per node: label distribution used for prediction (own counts, or the nearest
        ancestor's when the node saw none), its top labels and support size."""
        source = np.arange(len(self.left_))
        for j in self._top_down():  # recycling reuses ids, so walk the tree from the root
            if counts[j].sum() == 0 and self.parent_[j] >= 0:
                source[j] = source[self.parent_[j]]
        dist = counts[source].astype(np.float64)
        totals = dist.sum(axis=1, keepdims=True)
        self.leaf_counts_ = counts[source]  # int32 counts, used for log_proba
        self.leaf_totals_ = np.maximum(totals.ravel(), 1.0)
        k = min(_STORED_TOPK, self.n_classes_)
        order = np.argsort(-dist, axis=1, kind="stable")[:, :k]
        top = np.take_along_axis(dist, order, axis=1)
        self.top_labels_ = np.where(top > 0, order, -1)
        with np.errstate(divide="ignore"):
            self.top_logp_ = np.log(top / self.leaf_totals_[:, None])
        self.support_ = np.count_nonzero(dist, axis=1)

    def _top_down(self) -> list[int]:
        """Node ids with every parent before its children (depth-first from the root)."""
        order, queue = [], [0]
        while queue:
            j = queue.pop()
            order.append(j)
            if self.left_[j] >= 0:
                queue += [int(self.left_[j]), int(self.right_[j])]
        return order

    def _route(self, X):
        X = check_X(X, self.n_features_in_)
        Xd, indptr, indices, data, dense = kernel_input(X)
        leaf = np.empty(X.shape[0], dtype=np.int64)
        depth = np.empty(X.shape[0], dtype=np.int64)
        kernels.route(self.left_, self.right_, self.coef_, self.intercept_, Xd, indptr,
                      indices, data, dense, X.shape[0], leaf, depth)
        self.last_mean_depth_ = float(depth.mean()) if len(depth) else 0.0
        return leaf

    def predict_topk(self, X, k=1):
        leaf = self._route(X)
        n = len(leaf)
        labels = np.full((n, k), -1, dtype=np.int64)
        scores = np.full((n, k), -np.inf)
        kk = min(k, self.top_labels_.shape[1])
        labels[:, :kk] = self.top_labels_[leaf, :kk]
        scores[:, :kk] = self.top_logp_[leaf, :kk]
        if k > kk:  # rarely needed: rank the rest of each leaf's labels on the fly
            for i, j in enumerate(leaf):
                counts = self.leaf_counts_[j]
                order = np.argsort(-counts, kind="stable")[:k]
                seen = order[counts[order] > 0]
                labels[i, :len(seen)] = seen
                scores[i, :len(seen)] = np.log(counts[seen] / self.leaf_totals_[j])
        return labels, scores

    def log_proba(self, X, y):
        leaf = self._route(X)
        y, _ = check_labels(y, len(leaf), self.n_classes_)
        with np.errstate(divide="ignore"):
            return np.log(self.leaf_counts_[leaf, y] / self.leaf_totals_[leaf])

    def support_size(self, X):
        return np.maximum(self.support_[self._route(X)], 1)

    def stats(self):
        leaves = np.nonzero(self.left_ < 0)[0]
        depth = np.zeros(len(self.left_), dtype=np.int64)
        for j in self._top_down():
            if self.parent_[j] >= 0:
                depth[j] = depth[self.parent_[j]] + 1
        internal = self.left_ >= 0
        return {
            "n_params": int(internal.sum() * (self.coef_.shape[1] + 1) + leaves.size),
            "bytes": int(internal.sum() * (self.coef_.shape[1] + 1) * 8 + leaves.size * 8
                         + self.left_.nbytes * 3),
            "depth": int(depth[leaves].max()) if leaves.size else 0,
            "depth_mean": float(depth[leaves].mean()) if leaves.size else 0.0,
            "leaves": int(leaves.size),
            "internal_nodes": int(self.n_internal_),
            "swaps": int(self.n_swaps_),
            "classes_per_leaf_mean": float(self.support_[leaves].mean()) if leaves.size else 0.0,
            "classes_per_leaf_max": int(self.support_[leaves].max()) if leaves.size else 0,
            "nodes_per_prediction": float(getattr(self, "last_mean_depth_", 0.0)),
        }
