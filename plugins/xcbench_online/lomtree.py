"""LOMtree: a logarithmic-depth tree grown online by the LOM objective (Choromanska and
Langford 2015), with the recycling (swap) of small leaves. See ALGORITHMS.md section 4.

Choices, as parameters: ``max_internal`` T (default K-1, VW's fixed value), swap
resistance ``swap_resistance`` RS (default 4, VW's), node regressors trained online with
VW's own adaptive, normalized, importance-invariant update of rate ``lr`` (``update="vw"``,
the default, ``xcbench.tree.vw_update``; ``normalize`` is then ignored; on aloi27d it
took top-1 error from 65% to 48%) or AdaGrad steps of size ``lr`` (``update="adagrad"``),
on the ``loss`` ``"absolute"`` (median regression, VW's forced choice) or ``"squared"``,
``passes`` over the data shuffled each pass, or ``"auto"`` (the default): VW's holdout
regime of ``xcbench.tree.passes``, as the VW peers train (mean top-1 error over seeds 0-2,
passes=5 vs "auto": letter 45.8 vs 43.7%, leaves100 34.1 vs 25.2%, aloi27d-438 54.3 vs
51.1%, aloi27d 40.4 vs 36.0%; vw-lomtree 42.5, 25.3, 52.9, 37.6%), and with ``normalize`` (AdaGrad only) each
feature divided by its largest training magnitude (the scale-invariance VW's normalized
updates give; measured on aloi27d-438, whose histogram bins span 1e-6..1, it is the
difference between near-chance routing and VW-level accuracy). As VW's gd does
under log_multi, each node regressor has its own normalizer state and takes its step at its
output clipped to the label range [-1, 1] (so an output already past its target is left
alone), and its output is computed again after the step (measured on aloi27d, 12 passes,
seeds 0-3: 44.2% -> 36.3% mean top-1 error; VW 36.9 and 39.4% for seeds 0 and 1). Differences
from VW's log_multi, on purpose: a recycled node starts with a fresh (zero) regressor (VW
reuses stale weights); a swap whose smallest leaf hangs under the root is skipped (VW
leaves it unhandled).

Probabilities (an xcbench addition: the paper and VW predict a label only): the label
frequencies of the leaf an example reaches, backed off along its path to the root
(``xcbench.tree.backoff``: each node's frequencies mixed with its parent's smoothed
distribution at weight ``smoothing``, a uniform distribution over the K classes above the
root, then a share ``smoothing_floor`` spread over all K classes), so every class has a
positive probability. ``"auto"`` (both) chooses the pair by log-likelihood on the rows
``passes="auto"`` holds out, from ``backoff.WEIGHT_GRID`` x ``backoff.FLOOR_GRID``; where
that regime holds none out (a fixed number of passes, or a million rows or more) every
tenth row, at most ``SMOOTHING_ROWS``, is kept out of training for it (``keep_out`` of
``xcbench.tree.passes``); on fewer than 20 rows the pair is ``SMOOTHING_FALLBACK`` and
``FLOOR_FALLBACK``. Both 0 give the unsmoothed leaf frequency
(a leaf that never saw data uses its nearest ancestor's counts; labels it never saw get
probability 0, reported as uncovered). ``predict_topk`` ranks by the same probabilities.
"""
from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from xcbench.contract.data_shape import mostly_zeros, nonzeros, stored_values
from xcbench.contract.method import Method, check_k, check_labels, check_X
from xcbench.tree import backoff
from xcbench.tree.descent import descend
from xcbench.tree.label_stats import LabelStats, entry_bytes, pairs_allowance
from xcbench.tree.linear import choose_layout, layout_bytes, new_table, weights_only
from xcbench.tree.passes import PassSchedule
from xcbench.tree.vw_update import new_vw_table

from . import lomtree_kernels as kernels
from .defaults import (FLOOR_FALLBACK, SMOOTHING_FALLBACK, SMOOTHING_ROWS, DataShape,
                       resolve_lomtree)
from .inputs import feature_scale, holdout_bytes, input_bytes, input_rows, kernel_input

LOSSES = {"squared": 0, "absolute": 1}
_STORED_TOPK = 10
_NODE_BYTES = 104  # per node: 5 int64 arrays (tree, C, row ids), E and VW state (2 floats each),
# stats heads


class LOMTree(Method):
    """Online logarithmic-time multiclass tree (LOMtree).

    Storage, for K classes, D features, T internal nodes (2T + 1 node slots), N rows with
    nnz stored values: node regressors in one flat table (``xcbench.tree.linear``) of S
    slots, S = (2T + 1)(D + 1) (direct) when that is <= 32M slots, else 2^bits hashed slots
    (``bits="auto"``: about 4 slots per (node, feature) pair an input touches, at most 2^26;
    colliding pairs share a weight, see ``xcbench.tree.weights``); label statistics only
    for the (node, label) pairs seen, E of them, estimated as N (ceil(L / 2) + 2) with
    L = ceil(log2 K) (``xcbench.tree.label_stats.pairs_allowance``: >= 4x what was measured).

    Fitted model bytes: 8 S + 44 E' (E' the pairs left at the end) + 104 (2T + 1) + 160
    (2T + 1) (leaf tables). Peak of ``fit`` beyond X (``estimate_memory``): 16 S (weights
    and AdaGrad sums; 24 S with ``update="vw"``, which adds a normalizer) + 3 x 44 E (a
    doubling of the statistics) + 104 (2T + 1) + 240 (2T + 1) (leaf tables and each node's
    top labels, their candidates) + 16 nnz + 16 N (CSR copies
    for the compiled kernels, the row order; a tenth more for the held-out rows' copy with
    ``passes="auto"``, or for the rows kept out to choose the smoothing on). No O(K x D) or
    O(K^2) array.
    """

    _parameter_constraints = {
        "max_internal": [Interval(Integral, 1, None, closed="left"), None, StrOptions({"auto"})],
        "swap_resistance": [Interval(Real, 0, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "loss": [StrOptions(set(LOSSES))],
        "passes": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "normalize": ["boolean"],
        "update": [StrOptions({"adagrad", "vw"})],
        "bits": [StrOptions({"auto"}), Interval(Integral, 16, 30, closed="both")],
        "smoothing": [Interval(Real, 0, 1, closed="left"), StrOptions({"auto"})],
        "smoothing_floor": [Interval(Real, 0, 1, closed="left"), StrOptions({"auto"})],
        "random_state": ["random_state"],
    }

    def __init__(self, max_internal="auto", swap_resistance=4.0, lr="auto", loss="absolute",
                 passes="auto", normalize=True, update="vw", bits="auto", smoothing="auto",
                 smoothing_floor="auto", random_state=None):
        self.max_internal = max_internal
        self.swap_resistance = swap_resistance
        self.lr = lr
        self.loss = loss
        self.passes = passes
        self.normalize = normalize
        self.update = update
        self.bits = bits
        self.smoothing = smoothing
        self.smoothing_floor = smoothing_floor
        self.random_state = random_state

    def _n_internal(self, n_classes):
        shape = DataShape(0, 0, 0, n_classes, False)  # the rule reads K only
        return int(resolve_lomtree(self.get_params(), shape).get("max_internal",
                                                                 self.max_internal))

    def _layout(self, n_nodes, n_features, nnz, n_classes):
        touched = nnz * math.ceil(math.log2(max(n_classes, 2)))
        return choose_layout(n_nodes, n_features, self.bits, touched_pairs=touched)

    def estimate_memory(self, n_samples, n_features, nnz, n_classes):
        """Upper estimate of fit's peak bytes beyond X (formula in the class docstring)."""
        self._validate_params()
        nodes = 2 * self._n_internal(n_classes) + 1
        pairs = pairs_allowance(n_samples, math.ceil(math.log2(max(n_classes, 2))))
        touched = nnz * math.ceil(math.log2(max(n_classes, 2)))
        columns = 3 if self.update == "vw" else 2
        return int(layout_bytes(nodes, n_features, self.bits, touched, columns=columns)
                   + 3 * entry_bytes(2) * pairs + (_NODE_BYTES + 24 * _STORED_TOPK) * nodes
                   + input_bytes(n_samples, nnz)
                   + holdout_bytes(self.passes, n_samples, nnz, self._keep_out()))

    def _keep_out(self) -> int:
        """Rows to hold out of training to choose the smoothing on when the pass regime
        holds none out: ``SMOOTHING_ROWS`` while a smoothing weight is "auto", else 0."""
        auto = "auto" in (self.smoothing, self.smoothing_floor)
        return SMOOTHING_ROWS if auto else 0

    def fit(self, X, y, n_classes=None):
        self._validate_params()
        X = check_X(X)
        y, K = check_labels(y, X.shape[0], n_classes)
        self.n_classes_, self.n_features_in_ = K, X.shape[1]
        T = self._n_internal(K)
        cap, D = 2 * T + 1, X.shape[1]
        nnz = X.nnz if hasattr(X, "nnz") else X.size
        size, self.mask_ = self._layout(cap, D, nnz, K)
        self.n_cols_ = D + 1
        wa = new_vw_table(size)[0] if self.update == "vw" else new_table(size)
        gd = np.zeros((cap, 2))  # VW's update: each node regressor's own normalizer state
        left = np.full(cap, -1, dtype=np.int64)
        right = np.full(cap, -1, dtype=np.int64)
        parent = np.full(cap, -1, dtype=np.int64)
        C = np.zeros(cap, dtype=np.int64)
        E = np.zeros((cap, 2))
        row_of = np.arange(cap, dtype=np.int64)
        stats = LabelStats(cap, n_aux=2, capacity=min(4 * X.shape[0] + 64, 1 << 16))
        # internal nodes, nodes used, swaps, deepest leaf, next fresh row id
        state = np.array([0, 1, 0, 0, cap], dtype=np.int64)
        rng = np.random.default_rng(self.random_state)
        scale = self.normalize and self.update == "adagrad"  # VW's update normalizes itself
        self.feature_scale_ = feature_scale(X) if scale else np.ones(D)
        Xd, indptr, indices, data, dense = kernel_input(X)
        schedule = PassSchedule(X.shape[0], self.passes, rng, keep_out=self._keep_out())
        rules = resolve_lomtree(self.get_params(), _rule_shape(X, K))
        lr = float(rules.get("lr", self.lr))
        held_leaf = None  # the leaf of each held-out row after the latest pass
        for order in schedule:
            t = 0
            while t < len(order):
                t = kernels.train_pass(order, t, y, state, left, right, parent, C, stats.parts,
                                       E, row_of, wa, self.n_cols_, self.mask_,
                                       self.feature_scale_, Xd, indptr, indices, data, dense,
                                       T, float(self.swap_resistance), lr,
                                       LOSSES[self.loss], gd)
                if t < len(order):
                    stats.grow(int(state[3]) + 3)
            if schedule.holdout is not None:
                rows = schedule.holdout
                sub = input_rows(Xd, indptr, indices, data, dense, rows)
                leaf = np.empty(len(rows), dtype=np.int64)
                descend(left, right, row_of, wa[:, 0], self.n_cols_, self.mask_,
                        self.feature_scale_, *sub, dense, len(rows), leaf,
                        np.empty(len(rows), dtype=np.int64))
                top1 = np.empty(len(rows), dtype=np.int64)
                kernels.leaf_top1(stats.parts, parent, leaf, top1)
                schedule.report(float(np.mean(top1 != y[rows])))
                held_leaf = leaf
        self.passes_done_ = schedule.passes_done
        used = int(state[1])
        self.n_internal_, self.n_swaps_ = int(state[0]), int(state[2])
        self.left_, self.right_, self.parent_ = left[:used], right[:used], parent[:used]
        self.row_of_ = row_of[:used]
        self.weights_ = weights_only(wa)  # AdaGrad sums are dropped
        stats.shrink()
        self.label_stats_ = stats
        self.path_cap_ = int(backoff.max_path_length(self.parent_))
        self.smoothing_, self.smoothing_floor_, self.smoothing_scores_ = \
            self._choose_smoothing(y, schedule.holdout, held_leaf)
        self.resolved_params_ = self._resolved(rules, schedule.passes_done)
        self._leaf_tables()
        return self

    def _choose_smoothing(self, y, holdout, held_leaf):
        """(parent weight, floor, {"weight/floor": held-out mean log-likelihood}): the
        parameters' values; an "auto" one the best of its grid on the held-out rows
        ``holdout``, whose leaves in the fitted tree are ``held_leaf`` (beside the other's
        value), or its fallback when there are none."""
        weights = backoff.WEIGHT_GRID if self.smoothing == "auto" else (self.smoothing,)
        floors = backoff.FLOOR_GRID if self.smoothing_floor == "auto" else (
            self.smoothing_floor,)
        if len(weights) * len(floors) == 1:
            return float(weights[0]), float(floors[0]), {}
        if holdout is None or not len(holdout):
            return (SMOOTHING_FALLBACK if len(weights) > 1 else float(weights[0]),
                    FLOOR_FALLBACK if len(floors) > 1 else float(floors[0]), {})
        return backoff.choose_weights(self.label_stats_.parts, self.parent_, held_leaf,
                                      y[holdout], self.n_classes_, self.path_cap_, weights,
                                      floors)

    def _resolved(self, rules, passes_done) -> dict:
        """The value of every ``"auto"`` parameter (``None`` for max_internal) in this fit:
        the shape ``rules``' (``resolve_lomtree``), and the passes made and the weight store
        chosen while training (bits: an int for a hashed table, "direct" for one row per
        node)."""
        out = dict(rules)
        if self.passes == "auto":
            out["passes"] = int(passes_done)
        if self.bits == "auto":
            out["bits"] = "direct" if self.mask_ < 0 else int(self.mask_).bit_length()
        if self.smoothing == "auto":
            out["smoothing"] = self.smoothing_
        if self.smoothing_floor == "auto":
            out["smoothing_floor"] = self.smoothing_floor_
        return out

    def _leaf_tables(self):
        """Per leaf: its top labels by smoothed probability and their log probabilities;
        per node: how many labels it (or its nearest ancestor with data) saw, and how many
        classes have a positive probability there."""
        nodes = np.arange(len(self.left_), dtype=np.int64)
        k = min(_STORED_TOPK, self.n_classes_)
        self.top_labels_ = np.full((len(nodes), k), -1, dtype=np.int64)
        self.top_logp_ = np.full((len(nodes), k), -np.inf)
        leaves = nodes[self.left_ < 0]  # rows reach leaves only; internal rows stay padding
        self.top_labels_[leaves], self.top_logp_[leaves] = self._ranked(leaves, k)
        # the labels seen at the deepest node with data on the path
        distinct, totals = self.label_stats_.distinct(), self.label_stats_.totals()
        self.seen_ = distinct.copy()
        for j in self._top_down():  # recycling reuses ids, so walk from the root
            if totals[j] == 0 and self.parent_[j] >= 0:
                self.seen_[j] = self.seen_[self.parent_[j]]
        self.support_ = (np.full(len(nodes), self.n_classes_, dtype=np.int64)
                         if self.smoothing_ > 0 or self.smoothing_floor_ > 0 else self.seen_)

    def _ranked(self, nodes, k):
        """(labels, log p), each (len(nodes), k): the k most probable labels at each node."""
        labels = np.full((len(nodes), k), -1, dtype=np.int64)
        logp = np.full((len(nodes), k), -np.inf)
        parts = self.label_stats_.parts
        candidates = backoff.node_top_labels(parts, len(self.parent_), k)
        backoff.top_tables(parts, self.parent_, nodes, candidates, self.smoothing_,
                           self.smoothing_floor_, self.n_classes_, self.path_cap_, labels,
                           logp)
        return labels, logp

    def _top_down(self) -> list[int]:
        """Node ids with every parent before its children (depth-first from the root)."""
        order, queue = [], [0]
        while queue:
            j = queue.pop()
            order.append(j)
            if self.left_[j] >= 0:
                queue += [int(self.left_[j]), int(self.right_[j])]
        return order

    def _descend(self, X):
        """(leaf, depth) of each row: pure, the model is not changed."""
        X = check_X(X, self.n_features_in_)
        Xd, indptr, indices, data, dense = kernel_input(X)
        leaf = np.empty(X.shape[0], dtype=np.int64)
        depth = np.empty(X.shape[0], dtype=np.int64)
        descend(self.left_, self.right_, self.row_of_, self.weights_, self.n_cols_, self.mask_,
                self.feature_scale_, Xd, indptr, indices, data, dense, X.shape[0], leaf, depth)
        return leaf, depth

    def apply(self, X):
        """Leaf node id each row reaches, (n,) int64."""
        return self._descend(X)[0]

    def path_cost(self, X):
        """Regressors evaluated per row (its leaf's depth) + 1 leaf table read, (n,) float."""
        return self._descend(X)[1].astype(np.float64) + 1.0

    def predict_topk(self, X, k=1):
        k = check_k(k)
        leaf = self.apply(X)
        n = len(leaf)
        labels = np.full((n, k), -1, dtype=np.int64)
        scores = np.full((n, k), -np.inf)
        kk = min(k, self.top_labels_.shape[1])
        labels[:, :kk] = self.top_labels_[leaf, :kk]
        scores[:, :kk] = self.top_logp_[leaf, :kk]
        if k > kk:  # rarely needed: rank more labels than the stored tables hold
            kk = min(k, self.n_classes_)
            labels[:, :kk], scores[:, :kk] = self._ranked(leaf, kk)
        return labels, scores

    def log_proba(self, X, y):
        leaf = self.apply(X)
        y, _ = check_labels(y, len(leaf), self.n_classes_)
        out = np.empty(len(leaf))
        backoff.log_probs(self.label_stats_.parts, self.parent_, leaf, y, self.smoothing_,
                          self.smoothing_floor_, self.n_classes_, self.path_cap_, out)
        return out

    def support_size(self, X):
        return np.maximum(self.support_[self.apply(X)], 1)

    def stats(self):
        leaves = np.nonzero(self.left_ < 0)[0]
        depth = np.zeros(len(self.left_), dtype=np.int64)
        for j in self._top_down():
            if self.parent_[j] >= 0:
                depth[j] = depth[self.parent_[j]] + 1
        n_weights = int(np.count_nonzero(self.weights_))
        return {
            "n_params": n_weights + self.label_stats_.n_entries,
            "bytes": int(self.weights_.nbytes + self.label_stats_.nbytes
                         + self.top_labels_.nbytes + self.top_logp_.nbytes
                         + 5 * self.left_.nbytes),
            "weight_bits": 0 if self.mask_ < 0 else int(self.mask_).bit_length(),  # 0: direct
            "depth": int(depth[leaves].max()) if leaves.size else 0,
            "depth_mean": float(depth[leaves].mean()) if leaves.size else 0.0,
            "leaves": int(leaves.size),
            "internal_nodes": int(self.n_internal_),
            "passes": int(self.passes_done_),  # training passes made ("auto": holdout stop)
            "swaps": int(self.n_swaps_),
            "label_pairs": int(self.label_stats_.n_entries),
            "classes_per_leaf_mean": float(self.seen_[leaves].mean()) if leaves.size else 0.0,
            "classes_per_leaf_max": int(self.seen_[leaves].max()) if leaves.size else 0,
            "smoothing": float(self.smoothing_),  # back-off weight on the parent used
            "smoothing_floor": float(self.smoothing_floor_),  # share spread over all K
            # "auto": held-out mean log-likelihood per "weight/floor" pair tried
            "smoothing_scores": dict(self.smoothing_scores_),
        }


def _rule_shape(X, n_classes) -> DataShape:
    """The shape the rules read, sparse by its share of nonzeros whatever the container
    (``data_shape.mostly_zeros``: a CSR and a dense copy of the same data fit the same
    model)."""
    n, d = X.shape
    return DataShape(n, d, stored_values(X), int(n_classes), mostly_zeros(nonzeros(X), n, d))
