"""Recall Tree: routers trained online toward the entropy-reducing child, a candidate set
of frequent labels per node, an empirical-Bernstein recall bound that stops the descent
early, and one-against-some scorers made node-specific by path parameters. It follows
Vowpal Wabbit's recall_tree.cc with VW's defaults: max_candidates = min(K, 4 ceil(log2 K)),
max_depth = ceil(log2 K), bern_hyper = 1, and VW's multi-pass regime: ``passes="auto"``
(``xcbench.tree.passes``: every 10th row held out, passes until its error stops improving
for 3 passes, at most 80; one pass from 10^6 rows), as the VW peers train.

Learners: AdaGrad steps (``update="adagrad"``, the default) of size ``lr`` (default 0.5) for
the scorers and ``router_lr / (1 + sum_f rms(x_f))`` for the routers (``router_lr`` default
2; rms over the training rows of the features as the learner sees them), on the logistic
(default) or squared loss, with ``normalize`` dividing each feature by its largest training
magnitude (the scale-invariance VW's normalized update gives). An AdaGrad step moves a
router's output by about lr sum_f rms(x_f) / sqrt(t), so without the divisor the routers of
rows with many active features (leaves100: 1 + sum rms = 44, letter 7.8, aloi27d 3.2)
flip-flop, same-class rows scatter over leaves and recall drops (leaves100 test recall
0.86-0.91 -> 0.97, top-1 error 14.9% -> 4.6% over seeds 0-4; VW 8.0%); VW's update divides
by sqrt(mean sum (x_f / max|x_f|)^2) for the same reason. Or VW's
adaptive, normalized, importance-invariant update (``update="vw"``, ``lr`` default 1;
``xcbench.tree.vw_update``; a scorer's class row and path rows move as one linear model).
Measured top-1 error (one run
each, busy 2-core machine), AdaGrad with 3 passes / AdaGrad "auto" / VW update "auto":
letter 32.8 / 23.2 / 25.0%, leaves100 18.3 / 20.5 / 9.0%, aloi27d-438 44.4 / 28.0 / 61.8%,
aloi27d 45.2 / see reports/online-trees-vs-vw / 66.9%; the VW update also trained 5-15x
slower (measured before the AdaGrad scorer step got its own one-pass kernel, which widened
the gap), so AdaGrad with "auto" passes is the default.

Differences from VW, on purpose: the path features. VW adds each node on the path above the
stop node as an indicator feature (recall_tree.cc ``add_node_id_feature``: value 1, no
interaction), so its scorer is w_y . x + b_y + a per-(class, node) bias for each path node;
xcbench crosses the path with x (a whole weight row per (class, path node)), which was better
under AdaGrad on letter (25.4% vs 33.3% top-1 error with biases only, one experiment) but
makes each candidate read d + 1 rows, so a prediction's work grows like log^2 K, and a
training step does about 8x VW's weight updates on aloi27d (see
reports/online-trees-vs-vw: ``node_only=True``, the class row plus the stop node's row,
trains faster than VW but is 7-8 points less accurate on the ALOI sets; it is the default
on sparse input only, ``node_only="auto"``, see ``defaults.py``). Every ``"auto"`` parameter
is resolved at fit into ``resolved_params_`` (docs/methods/online-trees.md). An empty
candidate set falls back to the parent's (VW would answer the invalid label 0). Scores are
margins, not probabilities: ``log_proba`` raises NotImplementedError, so no perplexity is
reported.
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from xcbench.contract.method import Method, check_k, check_labels, check_X
from xcbench.tree.label_stats import LabelStats, entry_bytes, pairs_allowance
from xcbench.tree.linear import choose_layout, new_table, weights_only
from xcbench.tree.weights import DIRECT
from xcbench.tree.passes import PassSchedule
from xcbench.tree.vw_update import new_vw_table

from . import recall_tree_kernels as kernels
from .defaults import DataShape, resolve_recall_tree
from .inputs import feature_scale, holdout_bytes, input_bytes, input_rows, kernel_input

LOSSES = {"squared": 0, "logistic": 1}
AUTO_BITS = 24  # "auto" hashes each table into at most 2^24 slots (256 MB while training)
# With AdaGrad the scorer and path tables (weights and sums) are float32, as VW stores its
# weights: they are most of the memory a training step touches (aloi27d: 11 rows of 28
# weights per candidate, 40 candidates per example), and halving them made the step 1.6x
# faster on rows out of cache (micro-benchmark, 60,000 rows of 28) and a pass on aloi27d
# 1.2x faster (3.1 -> 2.6 s, same 3-pass error). Routers stay float64: their signs build the
# tree.
SCORER_DTYPE = np.float32

_AUTO = StrOptions({"auto"})
_NO_STORE = (np.zeros((0, 0)), np.zeros(0))  # no compact candidate store: score from tables

def _sum_rms(X, scale) -> float:
    """sum_f sqrt(mean over rows of (x_f scale_f)^2), zeros included; no copy of a sparse X."""
    if X.shape[0] == 0:
        return 0.0
    if hasattr(X, "tocsr"):
        X = X.tocsr()
        sq = np.bincount(X.indices, weights=(X.data * scale[X.indices]) ** 2,
                         minlength=X.shape[1])
    else:
        sq = np.einsum("ij,ij->j", X, X) * scale ** 2
    return float(np.sum(np.sqrt(sq / X.shape[0])))


def _grow_keeping_ids(stats, need, shrink=False):
    """Grow (or, with ``shrink``, re-pack tight) the label counts. Entry ids index the path
    rows; re-packing keeps them because Recall Tree never clears a node (every entry is
    live, so each is copied to its own position)."""
    used = int(stats.meta[0])
    if int(stats.meta[1]) != used:
        raise AssertionError("Recall Tree label counts lost an entry: path rows would move")
    stats.shrink() if shrink else stats.grow(need)


class _PathRows:
    """Rows of a direct-layout path table (one per label-count entry), grown by doubling;
    a hashed table (``rows=None``) has no row limit."""

    def __init__(self, n_cols, rows):
        self.n_cols = n_cols
        self.cap = int(rows) if rows is not None else np.iinfo(np.int64).max // 2

    @property
    def size(self):
        return self.cap * self.n_cols

    def grow(self, table, rows_needed):
        """A copy of ``table`` with room for at least ``rows_needed`` rows (doubling)."""
        while self.cap < rows_needed:
            self.cap *= 2
        bigger = np.zeros((self.size, table.shape[1]), dtype=table.dtype)
        bigger[:table.shape[0]] = table  # new rows start zeroed, like every table
        return bigger


class RecallTree(Method):
    """Logarithmic-time one-against-some classification (Recall Tree).

    Storage, for K classes, D features, depth d (n = 2^(d+1) - 1 nodes), M candidates, N
    rows with nnz stored values: three flat tables (``xcbench.tree.linear``) with S_r slots
    for the 2^d - 1 routers, S_s for the K class scorers (each (rows)(D + 1) direct when
    that is <= 32M slots, else hashed into 2^bits slots, ``bits="auto"``: about 4 per
    touched pair and at most 2^24) and S_p for the path parameters: one row per (node, label)
    pair seen, indexed by its label-count entry, direct (E' (D + 1) slots for E' >= E rows,
    doubling as E grows) while 2 E_a (D + 1) <= 32M slots, else hashed (row key
    y x n + m); colliding
    pairs share a weight (see ``xcbench.tree.weights``); per node its M candidates and their
    counts; label counts only for the (node, label) pairs seen, E, estimated as
    E_a = N (ceil(d / 2) + 2) (``xcbench.tree.label_stats.pairs_allowance``).

    Fitted model bytes: 8 S_r + b (S_s + S_p) + 28 E + n (4 M + 56) (S_p = E (D + 1) when
    direct; b = 4 with AdaGrad, whose scorer and path tables are float32, 8 with VW's
    update). Peak of ``fit`` beyond X (``estimate_memory``): 24 (S_r + S_s + S_p) (weights,
    AdaGrad sums and VW's normalizers) with ``update="vw"``, 16 S_r + 8 (S_s + S_p) with
    AdaGrad (a direct S_p taken as 1.5 x 2 E_a (D + 1), the doubling) + 3 x 28 E (a doubling
    of the counts) + n (12 M + 64)
    + 16 nnz + 16 N (+ a tenth of that for the held-out rows' copy with ``passes="auto"``). No
    O(K x D) or O(K^2) array.

    Prediction reads, with ``candidate_store="auto"``, a compact store built after training
    when it is no larger than the scorer and path tables it replaces: for each node, each
    candidate's whole scorer (class row plus path rows, summed) as one contiguous row of D + 1
    values, C (D + 1) x 8 bytes for C = the candidates over all nodes (at most n M). Scoring a
    candidate is then one dense dot product instead of one hashed row per node on its path
    (the cache misses that made single-example prediction slow). ``"hashed"`` keeps the
    tables. Both give the same scores up to rounding.
    """

    _parameter_constraints = {
        "max_candidates": [Interval(Integral, 1, None, closed="left"), None, _AUTO],
        "max_depth": [Interval(Integral, 1, 30, closed="both"), None, _AUTO],
        "bern_hyper": [Interval(Real, 0, None, closed="left")],
        "randomized_routing": ["boolean"],
        "node_only": ["boolean", _AUTO],
        "lr": [Interval(Real, 0, None, closed="neither"), None, _AUTO],
        "router_lr": [Interval(Real, 0, None, closed="neither"), None, _AUTO],
        "update": [StrOptions({"adagrad", "vw"})],
        "loss": [StrOptions(set(LOSSES))],
        "passes": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "bits": [StrOptions({"auto"}), Interval(Integral, 16, 30, closed="both")],
        "normalize": ["boolean"],
        "candidate_store": [StrOptions({"auto", "hashed"})],
        "random_state": ["random_state"],
    }

    def __init__(self, max_candidates="auto", max_depth="auto", bern_hyper=1.0,
                 randomized_routing=False, node_only="auto", lr="auto", router_lr="auto",
                 loss="logistic", update="adagrad", passes="auto", bits="auto", normalize=True,
                 candidate_store="auto", random_state=None):
        self.max_candidates = max_candidates
        self.max_depth = max_depth
        self.bern_hyper = bern_hyper
        self.randomized_routing = randomized_routing
        self.node_only = node_only
        self.lr = lr
        self.router_lr = router_lr
        self.update = update
        self.loss = loss
        self.passes = passes
        self.bits = bits
        self.normalize = normalize
        self.candidate_store = candidate_store
        self.random_state = random_state

    def _shape(self, n_classes):
        """(max_candidates, max_depth) with VW's defaults filled in."""
        p = self._resolve(DataShape(0, 0, 0, n_classes, False))  # these rules read K only
        return int(p["max_candidates"]), int(p["max_depth"])

    def _resolve(self, shape: DataShape) -> dict:
        """Every parameter's value for data of ``shape``: ``"auto"`` ones by the rule."""
        return {**self.get_params(), **resolve_recall_tree(self.get_params(), shape)}

    def _layouts(self, n_samples, n_features, nnz, n_classes):
        """(size, mask) of the router, scorer and path tables. The path table has a row per
        (node, label) entry of the label counts (the kernels' module docstring): direct
        while twice their allowance fits the toolkit's direct limit (its rows then grow
        with the entries, doubling), else hashed. A direct row is contiguous: on aloi27d
        training ran 2.6x faster per pass than with the rows hashed into 2^24 slots."""
        M, d = self._shape(n_classes)
        routers = choose_layout(2 ** d - 1, n_features, self.bits, touched_pairs=nnz * d,
                                max_auto_bits=AUTO_BITS)
        scorers = choose_layout(n_classes, n_features, self.bits, touched_pairs=nnz * M,
                                max_auto_bits=AUTO_BITS)
        path = choose_layout(2 * pairs_allowance(n_samples, d), n_features, self.bits,
                             touched_pairs=nnz * d, max_auto_bits=AUTO_BITS)
        return routers, scorers, path

    def estimate_memory(self, n_samples, n_features, nnz, n_classes):
        """Upper estimate of fit's peak bytes beyond X (formula in the class docstring)."""
        self._validate_params()
        M, d = self._shape(n_classes)
        n_nodes = 2 ** (d + 1) - 1
        (s_r, _), (s_s, _), (s_p, m_p) = self._layouts(n_samples, n_features, nnz, n_classes)
        if m_p == DIRECT:
            s_p = 1.5 * s_p  # the old and the doubled table while the rows grow
        if self.update == "vw":
            tables = 24 * (s_r + s_s + s_p)
        else:
            tables = 16 * s_r + 2 * np.dtype(SCORER_DTYPE).itemsize * (s_s + s_p)
        return int(tables
                   + 3 * entry_bytes(0) * pairs_allowance(n_samples, d)
                   + n_nodes * (12 * M + 64) + input_bytes(n_samples, nnz)
                   + holdout_bytes(self.passes, n_samples, nnz))

    def fit(self, X, y, n_classes=None):
        self._validate_params()
        X = check_X(X)
        y, K = check_labels(y, X.shape[0], n_classes)
        self.n_classes_, self.n_features_in_ = K, X.shape[1]
        self.resolved_params_ = resolve_recall_tree(self.get_params(), DataShape.of(X, K))
        p = {**self.get_params(), **self.resolved_params_}
        self.max_candidates_, self.max_depth_ = int(p["max_candidates"]), int(p["max_depth"])
        self.node_only_, self.lr_ = bool(p["node_only"]), float(p["lr"])
        M, d = self.max_candidates_, self.max_depth_
        self.n_nodes_ = n_nodes = 2 ** (d + 1) - 1
        self.n_internal_ = 2 ** d - 1
        nnz = X.nnz if hasattr(X, "nnz") else X.size
        (s_r, m_r), (s_s, m_s), (s_p, m_p) = self._layouts(X.shape[0], X.shape[1], nnz, K)
        n_cols = X.shape[1] + 1
        self.layout_ = np.array([n_cols, m_r, m_s, m_p], dtype=np.int64)
        stats = LabelStats(n_nodes, n_aux=0, capacity=min(4 * X.shape[0] + 64, 1 << 16))
        path = _PathRows(n_cols, stats.capacity if m_p == DIRECT else None)
        if self.update == "vw":
            tables = [new_vw_table(size)[0]
                      for size in (s_r, s_s, path.size if m_p == DIRECT else s_p)]
        else:  # float32 scorer and path tables: SCORER_DTYPE
            tables = [new_table(s_r), new_table(s_s, SCORER_DTYPE),
                      new_table(path.size if m_p == DIRECT else s_p, SCORER_DTYPE)]
        gd_router, gd_scorer = np.zeros(2), np.zeros(2)  # VW's per-learner state
        S = np.zeros(n_nodes)
        self.cand_ = np.full((n_nodes, M), -1, dtype=np.int32)
        cand_cnt = np.zeros((n_nodes, M))
        self.cand_n_ = np.zeros(n_nodes, dtype=np.int64)
        self.topsum_ = np.zeros(n_nodes)
        rng = np.random.default_rng(self.random_state)
        scale = self.normalize and self.update == "adagrad"  # VW's update normalizes itself
        self.feature_scale_ = feature_scale(X) if scale else np.ones(X.shape[1])
        Xd, indptr, indices, data, dense = kernel_input(X)
        self.router_lr_ = self._router_lr(X, float(p["router_lr"]))
        schedule = PassSchedule(X.shape[0], self.passes, rng)
        for order in schedule:
            t = 0
            seed = int(rng.integers(2**31))  # one per pass: growing tables leave no trace
            while t < len(order):
                t = kernels.train_pass(
                    order, t, y, self.n_internal_, stats.parts, S, self.cand_,
                    cand_cnt, self.cand_n_, self.topsum_, tuple(tables), path.cap,
                    self.layout_, self.feature_scale_, Xd, indptr, indices, data, dense,
                    float(self.bern_hyper), bool(self.randomized_routing),
                    self.node_only_, self.lr_, LOSSES[self.loss], d,
                    seed, gd_router, gd_scorer, self.router_lr_)
                if t < len(order):
                    need = int(stats.meta[0]) + d + 3
                    if need > stats.capacity:
                        _grow_keeping_ids(stats, d + 3)
                    if need > path.cap:
                        tables[2] = path.grow(tables[2], need)
            if schedule.holdout is not None:
                schedule.report(self._holdout_error(schedule.holdout, y, stats, tables, Xd,
                                                    indptr, indices, data, dense))
        self.passes_done_ = schedule.passes_done
        if self.passes == "auto":
            self.resolved_params_["passes"] = int(schedule.passes_done)
        if self.bits == "auto":
            self.resolved_params_["bits"] = {
                name: "direct" if mask == DIRECT else int(mask).bit_length()
                for name, mask in zip(("routers", "scorers", "path"), (m_r, m_s, m_p))}
        _grow_keeping_ids(stats, 0, shrink=True)
        self.label_stats_ = stats  # per-node label counts; entry ids index the path rows
        self.total_ = stats.node_f  # column 0: examples counted at each node
        if m_p == DIRECT:  # keep the rows of the entries only
            tables[2] = tables[2][:stats.n_entries * n_cols].copy()
        self.router_w_, self.scorer_w_, self.path_w_ = (weights_only(t) for t in tables)
        del tables
        self.cand_start_ = np.concatenate(([0], np.cumsum(self.cand_n_)[:-1])).astype(np.int64)
        self.cand_w_ = self.cand_b_ = None
        if self._use_candidate_store():
            self._build_candidate_store()
        return self

    def _router_lr(self, X, base: float) -> float:
        """The routers' step size: with AdaGrad ``router_lr`` (default 2) / (1 + sum over
        features of the rms of x_f * feature_scale_f), which keeps a router's output step per
        example about the same whatever the number and scale of active features; with VW's
        update (normalized itself) ``router_lr`` (default ``lr``)."""
        if self.update == "vw":
            return base
        return base / (1.0 + _sum_rms(X, self.feature_scale_))

    def _holdout_error(self, rows, y, stats, tables, Xd, indptr, indices, data, dense):
        """Top-1 error of the model being trained on the held-out ``rows``."""
        n = len(rows)
        sub = input_rows(Xd, indptr, indices, data, dense, rows)
        labels = np.full((n, 1), -1, dtype=np.int64)
        kernels.predict(1, self.n_internal_, stats.parts, stats.node_f, self.topsum_,
                        self.cand_, self.cand_n_, tables[0][:, 0], tables[1][:, 0],
                        tables[2][:, 0], np.zeros(0, dtype=np.int64), *_NO_STORE, self.layout_,
                        self.feature_scale_, *sub, dense,
                        float(self.bern_hyper), self.node_only_, labels,
                        np.empty((n, 1)), np.empty(n))
        return float(np.mean(labels[:, 0] != y[rows]))

    def _store_dtype(self):
        """The compact store keeps the precision of the tables it is summed from."""
        return np.dtype(SCORER_DTYPE if self.update == "adagrad" else np.float64)

    def _candidate_store_bytes(self) -> int:
        return self._store_dtype().itemsize * int(self.cand_n_.sum()) * (self.n_features_in_ + 1)

    def _use_candidate_store(self) -> bool:
        replaced = self.scorer_w_.nbytes + self.path_w_.nbytes
        return self.candidate_store == "auto" and self._candidate_store_bytes() <= replaced

    def _build_candidate_store(self):
        """Fill ``cand_w_``/``cand_b_`` and drop the scorer and path tables they replace."""
        rows = int(self.cand_n_.sum())
        self.cand_w_ = np.zeros((rows, self.n_features_in_), dtype=self._store_dtype())
        self.cand_b_ = np.zeros(rows, dtype=self._store_dtype())
        kernels.build_candidate_store(self.cand_, self.cand_n_, self.cand_start_,
                                      self.label_stats_.parts,
                                      self.scorer_w_, self.path_w_, self.layout_,
                                      self.feature_scale_, self.node_only_, self.cand_w_,
                                      self.cand_b_)
        self.scorer_w_ = self.path_w_ = np.zeros(0)

    def _input(self, X):
        X = check_X(X, self.n_features_in_)
        return X.shape[0], kernel_input(X)

    def _predict(self, X, k):
        n, (Xd, indptr, indices, data, dense) = self._input(X)
        labels = np.full((n, k), -1, dtype=np.int64)
        scores = np.full((n, k), -np.inf)
        cost = np.empty(n)
        store = (self.cand_w_, self.cand_b_) if self.cand_w_ is not None else _NO_STORE
        kernels.predict(int(k), self.n_internal_, self.label_stats_.parts, self.total_,
                        self.topsum_,
                        self.cand_, self.cand_n_, self.router_w_, self.scorer_w_, self.path_w_,
                        self.cand_start_, *store, self.layout_, self.feature_scale_, Xd,
                        indptr, indices, data, dense, float(self.bern_hyper),
                        self.node_only_, labels, scores, cost)
        return labels, scores, cost

    def predict_topk(self, X, k=1):
        k = check_k(k)
        return self._predict(X, k)[:2]

    def path_cost(self, X):
        """Routers evaluated + candidates scored per row, (n,) float; pure."""
        return self._predict(X, 1)[2]

    def stop_nodes(self, X):
        """Node where each row's descent stops (after the empty-set fallback), (n,) int64."""
        n, (Xd, indptr, indices, data, dense) = self._input(X)
        out = np.empty(n, dtype=np.int64)
        kernels.stop_nodes(self.n_internal_, self.total_, self.topsum_, self.cand_n_,
                           self.router_w_, self.layout_, self.feature_scale_, Xd, indptr,
                           indices, data, dense, float(self.bern_hyper), out)
        return out

    def log_proba(self, X, y):
        raise NotImplementedError("Recall Tree scores are margins, not probabilities")

    def stats(self):
        used = self.total_[:, 0] > 0
        weights = (self.router_w_, self.scorer_w_, self.path_w_)
        if self.cand_w_ is not None:
            weights += (self.cand_w_, self.cand_b_)
        return {
            "n_params": int(sum(np.count_nonzero(w) for w in weights)),
            "bytes": int(sum(w.nbytes for w in weights) + self.cand_.nbytes
                         + self.cand_n_.nbytes + self.topsum_.nbytes + self.label_stats_.nbytes),
            "depth": int(self.max_depth_),
            "leaves": int(self.n_internal_ + 1),
            "nodes_used": int(used.sum()),
            "label_pairs": int(self.label_stats_.n_entries),
            "classes_per_leaf_mean": float(self.cand_n_[used].mean()) if used.any() else 0.0,
            "classes_per_leaf_max": int(self.max_candidates_),
            "candidate_store": "compact" if self.cand_w_ is not None else "hashed",
            "passes": int(self.passes_done_),  # training passes made ("auto": holdout stop)
        }
