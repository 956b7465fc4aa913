"""Learned M-ary tree (Jernite, Choromanska & Sontag, ICML 2017): the tree and its node
softmaxes learned together. Algorithm notes: docs/methods/mary-tree.md."""
from __future__ import annotations

import math
from numbers import Integral, Real
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import Interval, StrOptions

from xcbench.kernels import kernel_input
from xcbench.contract.method import Method, check_k, check_labels, check_X
from xcbench.tree.huffman import huffman_nested
from xcbench.tree.node_softmax import path_log_proba
from xcbench.tree.weights import DIRECT, gather_rows, table_bytes, table_layout

from . import kernels
from .defaults import AUTO, DataShape, resolve
from .represent import LearnedMap, map_bytes
from .tree import NodeLabelStats, TreeBuilder


class MaryTree(Method):
    """M-ary label tree whose internal nodes are softmaxes over their children, trained by
    AdaGrad ascent along each label's path while AssignLabels periodically rebuilds which
    labels sit under which child (from the statistics every node gathers).

    Parameters marked "auto" below are resolved at fit time from the training data
    (``defaults.resolve``; the values used are in ``resolved_params_``): a learned
    representation (word ids: "embedding"; sparse rows of at most 4 nonzeros: "linear") comes
    with a wide, shallow tree and the language-model schedule, the identity with the paper's
    classification setting.

    Parameters
    ----------
    arity : M, children per node (the paper: 5 or 20 for classification, 65 for LM); "auto":
        5 with the identity, ceil(sqrt(K)) with a learned representation.
    max_depth : "auto" (depth-constrained tree, D = ceil(log_M K) + 1 with the identity,
        ceil(log_M K) with a learned representation), an int D, or None
        (unconstrained well-formed tree, labels padded to K' = 1 mod (M - 1)).
    objective : "density" (ascend log p of the target child) or "classification" (ascend p).
    tree : "learned" (AssignLabels ``assign_per_epoch`` times per epoch's worth of rows while
        the tree is learned, ``tree_epochs``), "random" (the initial random tree kept: the
        paper's control) or "huffman" (kept fixed: the M-ary Huffman tree of the training
        label counts + 1, the paper's other control; ``max_depth=None`` pads it with
        zero-weight dummies so every node is full, "auto" does not cap its depth, an int D
        refuses a deeper Huffman tree).
    epochs, lr : passes and step size; "auto": 5 and 0.1 with the identity, 2 and 0.07
        with a learned representation.
    tree_epochs : how long the tree is learned (``tree="learned"``), in epochs: "auto" (with
        the identity the paper's first half of training, rounded up to whole epochs:
        ceil(epochs / 2); with a learned representation 0.25) or a number (e.g. 0.5: the
        first half of the first epoch); the rest trains on the fixed tree.
    learner : "adagrad" (the paper's language-model learner) or "sgd" (plain steps of ``lr``
        times the gradient, as fastText; usually with ``lr_decay="linear"``).
    lr_decay : "none" (``lr`` throughout) or "linear": after the tree is fixed (from the start
        for "random" and "huffman", after ``tree_epochs`` for "learned") the step size falls
        linearly to 0 at the end of training, as the paper's classification runs and fastText do.
    decoder : query-time: "exact" (best-first branch and bound, exact top-k), "greedy"
        (descent to the most probable child; one label) or "beam" (beam search of width
        max(k, ``beam``); top-k from the beam's leaves).
    beam : query-time width of the "beam" decoder (Bonsai's and Parabel's default, 10).
    representation : what the node softmaxes score: "identity" (x itself), "linear" (r = A x,
        A a learned d_r x D map) or "embedding" (X holds word ids, one column per context
        position, as ``ptb-words``; r = sum of learned position-tagged d_r-dim embeddings).
        Learned maps are trained jointly by backpropagating the path objective (same AdaGrad).
        "auto": "embedding" when X is at most 8 dense columns of non-negative integers
        reaching 16 or more, "linear" when X is sparse with at most 4 nonzeros per row on
        average, else "identity".
    d_r : width of a learned representation (ignored by "identity"); "auto": 200.
    bits : weight table layout (``xcbench.tree.weights``): "auto", an int, or None (dense);
        applies to the node weights and to a learned map's table.

    Memory (fit, bytes): 2 x 8 x S for the node weights and AdaGrad sums (S = (2K' + 2) x M x W
    when dense, 2^bits hashed; W = D, or d_r with a learned representation) + 2 x 8 x d_r x D
    for a linear map (d_r x C x V for embeddings of V words at C positions; hashed past 256 MB)
    + per-(node, label) statistics 8 x (M + 2) x ~4 K x depth + the tree O(K x depth) + the
    compacted direct copy of the final tree's rows (at most 256 MB) + a feature-major copy of a
    direct learned map (``LearnedMap.freeze``). No K x D array (D features, K classes).
    """

    _parameter_constraints = {
        "arity": [Interval(Integral, 2, None, closed="left"), StrOptions({AUTO})],
        "max_depth": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}), None],
        "objective": [StrOptions({"density", "classification"})],
        "tree": [StrOptions({"learned", "random", "huffman"})],
        "epochs": [Interval(Integral, 1, None, closed="left"), StrOptions({AUTO})],
        "lr": [Interval(Real, 0, None, closed="neither"), StrOptions({AUTO})],
        "lr_decay": [StrOptions({"none", "linear"})],
        "learner": [StrOptions({"adagrad", "sgd"})],
        "assign_per_epoch": [Interval(Integral, 1, None, closed="left")],
        "tree_epochs": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "decoder": [StrOptions({"exact", "greedy", "beam"})],
        "beam": [Interval(Integral, 1, None, closed="left")],
        "representation": [StrOptions({"identity", "linear", "embedding", AUTO})],
        "d_r": [Interval(Integral, 1, None, closed="left"), StrOptions({AUTO})],
        "bits": [Interval(Integral, 16, 30, closed="both"), StrOptions({"auto"}), None],
        "random_state": ["random_state"],
    }

    def __init__(self, arity="auto", max_depth="auto", objective="density", tree="learned",
                 epochs="auto", lr="auto", lr_decay="none", learner="adagrad",
                 assign_per_epoch=50, tree_epochs="auto", decoder="exact", beam=10,
                 representation="auto", d_r="auto", bits="auto", random_state=None):
        self.arity = arity
        self.max_depth = max_depth
        self.objective = objective
        self.tree = tree
        self.epochs = epochs
        self.lr = lr
        self.lr_decay = lr_decay
        self.learner = learner
        self.assign_per_epoch = assign_per_epoch
        self.tree_epochs = tree_epochs
        self.decoder = decoder
        self.beam = beam
        self.representation = representation
        self.d_r = d_r
        self.bits = bits
        self.random_state = random_state

    def _settings(self, shape: DataShape) -> SimpleNamespace:
        """Every parameter, the ``"auto"`` ones resolved for data of this shape
        (``defaults.resolve``)."""
        params = self.get_params()
        return SimpleNamespace(**{**params, **resolve(params, shape)})

    def fit(self, X, y, n_classes=None):
        self._validate_params()
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        if X.shape[0] == 0:
            raise ValueError("X has no rows: the tree needs training examples")
        self.resolved_params_ = resolve(self.get_params(),
                                       DataShape.of(X, self.n_classes_, y))
        s = SimpleNamespace(**{**self.get_params(), **self.resolved_params_})
        depth = s.max_depth
        if depth is not None and s.arity ** depth < self.n_classes_:
            raise ValueError(f"max_depth={depth} holds at most {s.arity ** depth} labels "
                             f"with arity {s.arity}, fewer than K={self.n_classes_}")
        rng = np.random.default_rng(self.random_state)
        M = self.M_ = int(s.arity)
        self.n_features_in_ = X.shape[1]
        builder = TreeBuilder(self.n_classes_, M, depth, rng)
        stats = NodeLabelStats(builder.n_labels, M)
        self.tree_ = self._initial_tree(builder, stats, y)
        rows = builder.max_nodes * M
        nnz = X.nnz if sp.issparse(X) else X.size
        if s.representation == "identity":
            self.rep_, width = None, X.shape[1]
            touched = float(nnz) * M * (self.tree_.depth + 1)
            Xd, indptr, indices, data, dense = kernel_input(X)
        else:
            self.rep_ = LearnedMap.create(s.representation, X, int(s.d_r), self.bits, rng)
            width = int(s.d_r)
            touched = float(rows) * width
            rep_acc = np.full(self.rep_.table.size, 1e-8)
            Xd, indptr, indices, data, dense = self.rep_.inputs(X)
        self.width_ = width
        size, self.mask_ = table_layout(rows, width, self.bits, touched_pairs=touched)
        self.table_, self.bias_ = np.zeros(size), np.zeros(rows)
        acc, bias_acc = np.full(size, 1e-8), np.full(rows, 1e-8)
        self.loss_curve_, self.rebuilds_ = [], 0
        n_rows = X.shape[0]
        learn_rows = self._learn_rows(n_rows, s)
        step_size = self._step_schedule(n_rows, learn_rows, s)
        adagrad = self.learner == "adagrad"
        done = 0
        for epoch in range(int(s.epochs)):
            order = rng.permutation(n_rows).astype(np.int64)
            nll = 0.0
            for chunk, rebuild in self._chunks(order, learn_rows - done):
                lr, lr_end = step_size(done), step_size(done + len(chunk))
                done += len(chunk)
                t = self.tree_
                step_sums = np.zeros((len(t.path_node), M))
                step_counts = np.zeros(len(t.path_node))
                tree_args = (chunk, y, t.child_ptr, t.child_slot, t.child_row, t.path_ptr,
                             t.path_node, t.path_pos, self.table_, acc, self.bias_, bias_acc,
                             width, self.mask_)
                if self.rep_ is None:
                    nll += kernels.train_chunk(
                        *tree_args, Xd, indptr, indices, data, dense, lr, lr_end, adagrad,
                        self.objective == "density", step_sums, step_counts, t.max_arity)
                else:
                    nll += kernels.train_chunk_rep(
                        *tree_args, self.rep_.table, rep_acc, self.rep_.mask, self.rep_.n_inputs,
                        Xd, indptr, indices, data, dense, lr, lr_end, adagrad,
                        self.objective == "density", step_sums, step_counts, t.max_arity)
                if rebuild:
                    self._rebuild(builder, stats, step_sums, step_counts, acc, bias_acc)
            self.loss_curve_.append(nll / n_rows)
            self.report_progress(epoch + 1, int(s.epochs), "epoch")
        self.n_labels_ = builder.n_labels
        self._compact()
        if self.rep_ is not None:
            self.rep_.freeze()
        return self

    _COMPACT_LIMIT = 256 << 20  # bytes of a compacted direct node table

    def _compact(self):
        """Training sizes the node table for every node id AssignLabels may use (2K' + 2
        nodes x M rows), so it is usually hashed; the final tree uses far fewer rows. Copy
        those into a direct table (exact: the trained values, collisions included) when it
        fits ``_COMPACT_LIMIT``, so prediction reads contiguous rows instead of one hashed
        place per (row block, feature): on ptb-words (82-ary, d_r = 200; 20k-row fit, 2000
        single-row calls) predict_topk's p50 went from 0.088 to 0.075 ms."""
        t = self.tree_
        used = np.unique(t.child_row[t.child_row >= 0])
        if used.size * self.width_ * 8 > self._COMPACT_LIMIT or (
                self.mask_ == DIRECT and used.size == self.bias_.size):
            return
        self.table_ = gather_rows(self.table_, self.mask_, self.width_, used).ravel()
        self.bias_, self.mask_ = self.bias_[used], DIRECT
        new_id = np.full(int(t.child_row.max()) + 1, -1, dtype=np.int64)
        new_id[used] = np.arange(used.size)
        t.child_row = np.where(t.child_row >= 0, new_id[t.child_row], -1)

    def _learn_rows(self, n_rows, s):
        """Training rows (counted over all epochs) during which the tree is learned
        (``s``: the resolved settings)."""
        if self.tree != "learned":
            return 0
        epochs = min(float(s.tree_epochs), float(s.epochs))
        return max(1, round(epochs * n_rows)) if epochs > 0 else 0  # a tiny share: >= 1 row

    def _chunks(self, order, learn_left):
        """(rows, rebuild after them) of one epoch: the first ``learn_left`` rows of
        ``order`` in chunks of about n / ``assign_per_epoch`` (their number rounded up),
        each followed by AssignLabels, then the rest in one chunk on the fixed tree."""
        n = order.shape[0]
        learn = min(max(int(learn_left), 0), n)
        if learn:
            n_parts = -(-int(self.assign_per_epoch) * learn // n)  # ceil, in integers
            for part in np.array_split(order[:learn], max(1, n_parts)):
                yield part, True
        if learn < n:
            yield order[learn:], False

    def _step_schedule(self, n_rows, learn_rows, s):
        """Step size after ``s`` examples: ``lr``, or with ``lr_decay="linear"`` falling
        linearly to 0 from the end of tree learning (``learn_rows``) to the end of training."""
        lr, total, start = float(s.lr), int(s.epochs) * n_rows, learn_rows
        if self.lr_decay == "none" or total <= start:
            return lambda s: lr
        return lambda s: lr if s <= start else lr * (total - s) / (total - start)

    def _initial_tree(self, builder, stats, y):
        """The starting tree: random (AssignLabels on no statistics) or Huffman, fixed."""
        if self.tree != "huffman":
            return builder.build(stats)
        counts = np.bincount(y, minlength=self.n_classes_) + 1.0
        weights = np.concatenate([counts, np.zeros(builder.n_labels - self.n_classes_)])
        tree = builder.fixed(huffman_nested(weights, self.M_))
        if isinstance(self.max_depth, Integral) and tree.depth > self.max_depth:
            raise ValueError(f"the Huffman tree of these label counts has depth {tree.depth} > "
                             f"max_depth={self.max_depth}; use max_depth='auto' or None (no "
                             "cap for tree='huffman') or a larger max_depth")
        return tree

    def _rebuild(self, builder, stats, step_sums, step_counts, acc, bias_acc):
        """Fold the chunk's statistics in, run AssignLabels, reset recycled nodes."""
        t = self.tree_
        labels = np.repeat(np.arange(builder.n_labels), np.diff(t.path_ptr))
        seen = step_counts > 0
        stats.merge(t.path_node[seen] * builder.n_labels + labels[seen], step_sums[seen],
                    step_counts[seen])
        self.tree_ = builder.build(stats)
        self.rebuilds_ += 1
        if builder.recycled:
            M = self.M_
            for node in builder.recycled:
                rows = np.arange(node * M, node * M + M)
                self.bias_[rows], bias_acc[rows] = 0.0, 1e-8
                if self.mask_ == DIRECT:
                    D = self.width_
                    for r in rows:
                        self.table_[r * D:(r + 1) * D], acc[r * D:(r + 1) * D] = 0.0, 1e-8

    # -- inference ---------------------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "tree_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")

    def _node_inputs(self, X):
        """What the nodes score, in chunks of rows: (start, stop, kernel_input parts of rows
        start:stop): X itself for the identity; with a learned map, the rows'
        representations, computed once per row and reused at every node."""
        if self.rep_ is None:
            yield 0, X.shape[0], kernel_input(X)
            return
        for start in range(0, X.shape[0], self._CHUNK):
            stop = min(start + self._CHUNK, X.shape[0])
            yield start, stop, kernel_input(self.rep_.transform(X[start:stop]))

    _CHUNK = 4096  # rows whose representations are held at once (8 x d_r bytes each)

    def _decode(self, X, k):
        self._check_fitted()
        X = check_X(X, self.n_features_in_)
        t = self.tree_
        n = X.shape[0]
        labels, scores = np.empty((n, int(k)), dtype=np.int64), np.empty((n, int(k)))
        cost = np.zeros(n)
        for start, stop, (Xd, indptr, indices, data, dense) in self._node_inputs(X):
            part = cost[start:stop]
            weights = (t.child_ptr, t.children, t.child_row, self.table_, self.bias_,
                       self.width_, self.mask_, Xd, indptr, indices, data, dense, stop - start,
                       t.max_arity)
            if self.decoder == "beam":
                width = max(int(k), int(self.beam))
                labels[start:stop], scores[start:stop] = kernels.decode_beam(
                    int(k), width, self.n_classes_, *weights, part)
            else:
                labels[start:stop], scores[start:stop] = kernels.decode_topk(
                    int(k), self.n_classes_, *weights, self.decoder == "greedy", part)
        if self.rep_ is not None:
            cost += self.rep_.cost
        return labels, scores, cost

    def predict_topk(self, X, k=1):
        k = check_k(k)
        labels, scores, _ = self._decode(X, k)
        return labels, scores

    def path_cost(self, X):
        """Children scored per top-1 prediction with the current decoder, plus the vectors
        computing a learned representation (``LearnedMap.cost``)."""
        return self._decode(X, 1)[2]

    def log_proba(self, X, y):
        self._check_fitted()
        X = check_X(X, self.n_features_in_)
        y, _ = check_labels(y, X.shape[0], self.n_classes_)
        t = self.tree_
        out = np.empty(X.shape[0])
        for start, stop, (Xd, indptr, indices, data, dense) in self._node_inputs(X):
            out[start:stop] = path_log_proba(
                y[start:stop], t.path_ptr, t.path_node, t.path_pos, t.child_ptr, t.child_row,
                self.table_, self.bias_, self.width_, self.mask_, Xd, indptr, indices, data,
                dense, t.max_arity)
        return out

    def estimate_memory(self, n_samples, n_features, nnz, n_classes):
        """Node weights and AdaGrad sums, a learned map's table (an embedding's vocabulary is
        at most the number of ids, nnz; "auto" hashes any table past 256 MB), statistics;
        the ``"auto"`` parameters resolved from the sizes alone."""
        self._validate_params()
        s = self._settings(DataShape.from_sizes(n_samples, n_features, nnz, n_classes))
        M = int(s.arity)
        depth = s.max_depth or max(1, math.ceil(math.log(max(n_classes, 2), M))) + 1
        rows = (2 * (n_classes + M) + 2) * M
        if s.representation == "identity":
            weights = table_bytes(rows, n_features, self.bits, float(nnz) * M * (depth + 1),
                                  copies=2)
        else:
            d_r = int(s.d_r)
            inputs = n_features * max(int(nnz), 1) if s.representation == "embedding" \
                else n_features
            weights = (table_bytes(rows, d_r, self.bits, float(rows) * d_r, copies=2)
                       + map_bytes(d_r, inputs, nnz, self.bits) * 3 // 2  # + freeze's copy
                       + 16 * int(nnz) + 8 * self._CHUNK * d_r)  # one-hot ids, a chunk's r
        weights += min(self._COMPACT_LIMIT, 8 * rows * (int(s.d_r) if s.representation
                                                        != "identity" else n_features))
        steps = n_classes * depth
        stats = 3 * 8 * (M + 2) * 4 * steps  # store (labels move: ~4 K x depth) + merge copies
        return int(weights + 16 * rows + stats + 64 * steps + 8 * n_samples)

    def stats(self):
        self._check_fitted()
        t = self.tree_
        depths = np.diff(t.path_ptr)[: self.n_classes_]
        rep = self.rep_.table if self.rep_ is not None else np.zeros(0)
        columns = self.rep_.columns if self.rep_ is not None else None
        return {
            "n_params": int(self.table_.size + self.bias_.size + rep.size),
            "bytes": int(self.table_.nbytes + self.bias_.nbytes + rep.nbytes + t.nbytes()
                         + (columns.nbytes if columns is not None else 0)),
            "depth": int(depths.max()),
            "depth_mean": float(depths.mean()),
            "leaves": int(self.n_classes_),
            "internal_nodes": int(len(t.internal)),
            "arity": int(self.M_),
            "rebuilds": int(self.rebuilds_),
            "hashed_weights": bool(self.mask_ != DIRECT),
            "representation_width": int(self.width_),
            "hashed_representation": bool(self.rep_ is not None and self.rep_.hashed),
            "classes_per_leaf_mean": 1.0,
            "classes_per_leaf_max": 1,
            "train_nll_curve": self.loss_curve_,
            "resolved_params": dict(getattr(self, "resolved_params_", {})),
        }
