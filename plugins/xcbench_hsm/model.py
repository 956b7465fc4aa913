"""Hierarchical softmax: a label tree whose internal nodes are linear softmax (binary:
sigmoid) classifiers; p(y | x) is the product of the edge probabilities on y's path."""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from xcbench.kernels import kernel_input
from xcbench.contract.data_shape import nonzeros, skewed_labels
from xcbench.contract.holdout import HeldOut, accuracies, param_fitter
from xcbench.contract.method import Method, check_k, check_labels, check_X
from xcbench.stats import keep_unless_beaten
from xcbench.tree.csr_weights import sorted_kernel_input
from xcbench.tree.node_fit import ExactRows, check_exact_store, fit_nodes, table_writer
from xcbench.tree import node_major, node_pool
from xcbench.tree.weights import DIRECT

from . import c_probe, kernels
from .defaults import AUTO, DataShape, resolve
from .memory import fit_peak_bytes, weight_layout
from .tree import balanced_kmeans_tree, balanced_tree, class_means, huffman_tree, kmeans_tree

TREES = ("huffman", "balanced", "kmeans", "kmeans_balanced")
DECODERS = ("exact", "greedy", "topk", "beam")
SOLVERS = ("sgd", "liblinear")
_CHUNK_CELLS = 1 << 22  # rows x edges scored at once by the exact decoder (~32 MB)


class HierarchicalSoftmax(Method):
    """Hierarchical softmax over a Huffman (or balanced, or k-means) label tree.

    Build parameters: ``tree`` (``"huffman"`` on training class counts + 1, ``"balanced"``
    random, ``"kmeans"``: recursive k-means of class means, or ``"kmeans_balanced"``:
    recursive balanced spherical k-means of the normalised class means, the tree of Parabel
    and napkinXC, depth ceil(log_arity(K / max_leaf)) + 1), ``arity`` (children per node),
    ``max_leaf`` (the k-means trees only: a cluster of at most this many classes is not
    split further, its classes become the children of one node, napkinXC's
    ``max_leaves``), ``epochs`` of
    SGD (batch 1) with learning rate ``lr`` multiplied by ``lr_decay`` after each epoch,
    ``momentum`` and ``l2`` (acting on the coordinates an example touches), ``bits`` (the
    weight table, below), ``random_state``.

    ``solver``: ``"sgd"`` (the softmax-tree paper's training of the path NLL) or
    ``"liblinear"``: each node fitted once, to convergence, on the rows whose class is in
    its subtree, by scikit-learn's L2 logistic regression (LIBLINEAR at binary nodes,
    multinomial L-BFGS at wider ones; strength ``C``, at most ``max_iter`` iterations) on
    the node's active features, as napkinXC and Parabel train their nodes
    (``xcbench.tree.node_fit``); weights below ``prune`` in magnitude are dropped (napkinXC
    prunes at 0.1), so on a hashed table they take no slot. The SGD parameters are then unused.
    ``n_jobs`` (``solver="liblinear"``): node problems solved at once, in worker processes
    (``xcbench.tree.node_pool``); ``"auto"`` is the fit's thread limit (``xcbench run
    --fit-threads``), one job on small data; the model is the same whatever ``n_jobs``.

    Defaults by rule: ``tree``, ``max_leaf``, ``solver``, ``C``, ``prune``, ``bits`` and
    ``lr`` default to ``"auto"``, resolved at fit time from the training data's shape
    (``defaults.resolve``: LIBLINEAR nodes on a balanced k-means tree with up to 100 classes
    under a last node, the exact store when the direct table would pass 256 MB, pruning
    only as far as memory needs, C by label skew and then, with LIBLINEAR nodes and labels
    of about equal frequency, on held-out rows (``c_probe``; on dense rows with more classes
    than one last node holds, the tree too: the unbalanced ``"kmeans"`` tree replaces the
    balanced one when clearly better there), lr from the row norms); the resolved
    values are in ``resolved_params_`` after fit. SGD: 5 epochs, lr decayed x0.9 per
    epoch, no momentum. The softmax-tree paper's setting (lr 0.005, momentum 0.9, x0.995
    "after each step") diverges on the PTB GloVe features here (mean ||x||^2 = 79, so a
    stable step needs lr * ||x||^2 well below 2; measured: 3 epochs at lr 0.005 + momentum
    0.9 end at a training NLL above the untrained model's, while lr 0.002 without momentum
    reaches test perplexity 373); ``lr="auto"`` is 0.16 / mean ||x||^2 on dense rows.

    Weights: the K - 1 weight rows (each node's children but the last own one; a binary
    node has one) live in one flat table (``xcbench.tree.weights``). ``bits="auto"``: the
    direct (K - 1) x D layout when it takes at most 256 MB (dense data: the exact decoder
    is one BLAS product), else hashed into 2^b slots, 2^b ~ 4 x the (row, feature) pairs
    SGD is estimated to touch, at most 2^26. ``bits=b`` forces hashing, ``None`` the direct
    layout. When hashed, two (row, feature) pairs may share a slot (a collision) and then
    share one weight: noise for both, rarer the larger b; a forced b smaller than the
    touched pairs trades accuracy for memory, as VW's ``-b`` does. ``bits="csr"`` (with
    ``solver="liblinear"`` only: those weights are known once training ends) keeps every
    node's weights exactly, grouped by node and sorted by feature (``xcbench.tree.node_major``):
    no collisions, 16 bytes per weight kept (``prune`` drops small ones), and scoring a
    node's children costs one binary search per input feature in that node's weights.

    Memory (fit, bytes beyond X and y; ``estimate_memory``): 8 S c + 8 (K - 1) c (weights,
    biases; S = (K - 1) D direct or 2^b hashed; c = 2 with momentum, else 1: momentum
    needs a second table of the same layout) + 16 K depth + ~600 K (tree, paths) +
    16 nnz + 32 N (float64/int64 copy of X for the kernels, labels, shuffled order) [+ 3 x
    class means for the k-means trees: CSR for sparse X, K x D for dense X] [+ 56 nnz + 40 N
    for ``solver="liblinear"``: X sorted by leaf order, the root's renumbered copy and
    LIBLINEAR's own copy of it; + 8 m (16 d_m + 4 n_m) for nodes of m > 2 children, the
    multinomial L-BFGS state over their n_m rows and d_m active features,
    ``memory.liblinear_bytes``]; with ``bits="csr"`` the table's 8 S becomes 32 P, P the
    weights kept (at most nnz ((arity - 1) depth + max_leaf - 1) without pruning,
    ``memory.csr_pairs_bound``; with ``prune`` > 0 a measured share of that bound, with a 2x
    margin, ``memory.pruned_share``). The fitted
    model keeps the table, biases and tree. No (K x D) array unless direct was chosen.

    Query parameters (change with ``set_params`` after fitting, no refit):
    ``decoder``: ``"exact"`` (every class's probability from all K - 1 weight rows, then
    the top k: the paper's "HSM", O(K nnz) per row; dense batches in the direct layout
    use one BLAS product), ``"greedy"`` (beam search of width k, so top-1 is the greedy
    descent to the more probable child: the paper's "HSM-approx", O(nnz x depth) per
    row), ``"beam"`` (beam search of width max(k, ``beam``), Bonsai's and Parabel's
    decoder with their default ``beam=10``; the top k are the beam's best leaves), or
    ``"topk"`` (the default: exact top k by best-first search over partial
    log-probabilities; O(nnz) per node it expands). ``path_cost`` counts the weight rows
    each decoder scores per row.

    Input: feature values must be at most 1e100 in absolute value (larger ones would
    overflow the scores to NaN); scale such data first.
    """

    _parameter_constraints = {
        "tree": [StrOptions(set(TREES) | {AUTO})],
        "arity": [Interval(Integral, 2, None, closed="left")],
        "max_leaf": [Interval(Integral, 1, None, closed="left"), StrOptions({AUTO})],
        "epochs": [Interval(Integral, 0, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither"), StrOptions({AUTO})],
        "lr_decay": [Interval(Real, 0, None, closed="neither")],
        "momentum": [Interval(Real, 0, 1, closed="left")],
        "solver": [StrOptions(set(SOLVERS) | {AUTO})],
        "C": [Interval(Real, 0, None, closed="neither"), StrOptions({AUTO})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "prune": [Interval(Real, 0, None, closed="left"), StrOptions({AUTO})],
        "l2": [Interval(Real, 0, None, closed="left")],
        "bits": [Interval(Integral, 16, 30, closed="both"), StrOptions({"auto", "csr"}), None],
        "decoder": [StrOptions(set(DECODERS))],
        "beam": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Interval(Integral, 1, None, closed="left"), StrOptions({AUTO})],
    }

    def __init__(self, tree="auto", arity=2, max_leaf="auto", epochs=5, lr="auto",
                 lr_decay=0.9, momentum=0.0, l2=0.0, solver="auto", C="auto", max_iter=100,
                 prune="auto", bits="auto", decoder="topk", beam=10, random_state=None,
                 n_jobs=AUTO):
        self.tree = tree
        self.arity = arity
        self.max_leaf = max_leaf
        self.epochs = epochs
        self.lr = lr
        self.lr_decay = lr_decay
        self.momentum = momentum
        self.l2 = l2
        self.solver = solver
        self.C = C
        self.max_iter = max_iter
        self.prune = prune
        self.bits = bits
        self.decoder = decoder
        self.beam = beam
        self.random_state = random_state
        self.n_jobs = n_jobs

    # -- fit ---------------------------------------------------------------------------
    def _settings(self, shape: DataShape) -> dict:
        """Every build/training parameter with the ``"auto"`` ones resolved for data of this
        shape (``defaults.resolve``)."""
        params = self.get_params()
        return {**params, **resolve(params, shape)}

    def _build_tree(self, X, y, counts, rng, p):
        if p["tree"] == "huffman":
            return huffman_tree(counts, self.arity)
        if p["tree"] == "balanced":
            return balanced_tree(self.n_classes_, self.arity, seed=int(rng.integers(2**31)))
        means = class_means(X, y, self.n_classes_)
        build = kmeans_tree if p["tree"] == "kmeans" else balanced_kmeans_tree
        return build(means, self.arity, seed=int(rng.integers(2**31)),
                     max_leaf=int(p["max_leaf"]))

    def estimate_memory(self, n_samples, n_features, nnz, n_classes):
        """Upper estimate of fit's peak bytes beyond the data (formula in the class
        docstring), with the ``"auto"`` parameters resolved from the sizes alone; when fit
        may choose the tree (``_probes_tree``), the larger of the two trees' estimates."""
        self._validate_params()
        shape = DataShape.from_sizes(n_samples, n_features, nnz, n_classes)
        p = self._settings(shape)
        trees = c_probe.tree_candidates(p["tree"]) if self._probes_tree(shape, p) else [p["tree"]]
        return max(fit_peak_bytes(int(n_samples), int(n_features), int(nnz), int(n_classes),
                                  arity=int(self.arity), bits=p["bits"],
                                  momentum=float(self.momentum), tree=tree,
                                  solver=p["solver"], max_leaf=int(p["max_leaf"]),
                                  prune=float(p["prune"]))
                   for tree in trees)

    def fit(self, X, y, n_classes=None):
        self._validate_params()
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        shape = DataShape.of(X, y, self.n_classes_)
        self.resolved_params_ = resolve(self.get_params(), shape)
        p = {**self.get_params(), **self.resolved_params_}
        check_exact_store(p["bits"], p["solver"])
        self.C_probe_, self.tree_probe_ = {}, {}
        if self._probes_C(shape, p):
            self._choose_C_and_tree(X, y, shape, p)
        rng = np.random.default_rng(self.random_state)
        n, self.n_features_in_ = X.shape
        self.class_counts_ = np.bincount(y, minlength=self.n_classes_)
        self.tree_ = self._build_tree(X, y, self.class_counts_, rng, p)
        self._prepare()
        self.intercept_ = np.zeros(self.tree_.n_rows)
        if p["bits"] == "csr":  # LIBLINEAR weights kept exactly, grouped by node
            store = ExactRows()
            self._fit_nodes(X, y, store.write, rng, p)
            self.weights_ = node_major.compact(
                store.node_major(self.tree_.child_ptr, self.tree_.edge_row), self.n_features_in_)
            self.mask_ = DIRECT
            return self
        size, self.mask_ = weight_layout(n, self.n_features_in_, shape.nnz, self.n_classes_,
                                         int(self.arity), p["bits"])
        self.weights_ = np.zeros(size)
        if p["solver"] == "liblinear":
            self._fit_nodes(X, y, table_writer(self.weights_, self.n_features_in_, self.mask_),
                            rng, p)
            return self
        self._fit_sgd(X, y, size, rng, float(p["lr"]))
        return self

    def _probes_C(self, shape: DataShape, p: dict) -> bool:
        """Whether fit chooses C on held-out rows (``c_probe``): C left at "auto",
        LIBLINEAR nodes, labels of about equal frequency."""
        return (self.C == AUTO and p["solver"] == "liblinear"
                and not skewed_labels(shape.label_entropy))

    def _probes_tree(self, shape: DataShape, p: dict) -> bool:
        """Whether fit chooses the tree with C (``c_probe.tree_candidates``): also the
        tree left at "auto", on dense rows, with more classes than one last node holds."""
        return (self._probes_C(shape, p) and self.tree == AUTO and not shape.sparse
                and shape.n_classes > int(p["max_leaf"]))

    def _choose_C_and_tree(self, X, y, shape, p):
        """C, and on dense rows the tree, from held-out rows (``xcbench.contract.holdout``):
        on one sample of the classes, a walk along ``c_probe.LADDER`` from the rule's C
        for each candidate tree (the whole model, every other setting as resolved), each
        keeping its C unless clearly beaten; then the rule's tree unless another is
        clearly better at its kept C. Updates ``p`` and ``resolved_params_``; the rule's
        values stay when the data is too small to choose on."""
        held = HeldOut.draw(X, y, self.n_classes_, self.random_state)
        if held is None:
            return
        trees = [p["tree"]]
        # the trees differ only when the sample has more classes than one last node holds
        if self._probes_tree(shape, p) and held.n_classes > int(p["max_leaf"]):
            trees = c_probe.tree_candidates(p["tree"])
        kept = {}  # tree -> (the C its walk kept, {C tried: rows right})
        for tree in trees:
            fit_at = param_fitter(self, "C", {**p, "tree": tree, "decoder": "topk"})
            right = held.walk(fit_at, c_probe.LADDER, float(p["C"]))
            kept[tree] = (keep_unless_beaten(right), right)
        tree = keep_unless_beaten({t: right[C] for t, (C, right) in kept.items()})
        C, right = kept[tree]
        self.C_probe_ = accuracies(right)
        if len(trees) > 1:
            self.tree_probe_ = {t: float(r[c].mean()) for t, (c, r) in kept.items()}
            self.resolved_params_["tree"] = p["tree"] = tree
        self.resolved_params_["C"] = p["C"] = C

    def _fit_sgd(self, X, y, size, rng, lr0):
        """``solver="sgd"``: ``epochs`` passes of compiled SGD over the path NLL."""
        n = X.shape[0]
        momentum = float(self.momentum)
        # momentum buffers only when used (a second table of the weights' layout)
        vel = np.zeros(size if momentum > 0 else 0)
        vel_b = np.zeros(self.tree_.n_rows if momentum > 0 else 0)
        Xd, indptr, indices, data, dense = kernel_input(X)
        lr, self.loss_curve_ = lr0, []
        for epoch in range(int(self.epochs)):
            order = rng.permutation(n).astype(np.int64)
            loss = kernels.train_epoch(order, y, self.path_ptr_, self.path_node_,
                                       self.path_pos_, self.tree_.child_ptr,
                                       self.tree_.edge_row, self.weights_, self.intercept_,
                                       vel, vel_b, self.n_features_in_, self.mask_, Xd,
                                       indptr, indices, data, dense, lr, momentum,
                                       float(self.l2), self.max_arity_)
            if not np.isfinite(loss):
                raise ValueError(f"hsm training diverged in epoch {epoch + 1} (non-finite "
                                 f"loss): lower lr={lr0} or l2={self.l2}, or scale X")
            self.loss_curve_.append(float(loss))
            self.report_progress(epoch + 1, int(self.epochs), "epoch")
            lr *= float(self.lr_decay)
        if not (kernels.all_finite(self.weights_) and kernels.all_finite(self.intercept_)):
            raise ValueError(f"hsm training diverged (non-finite weights): lower lr={lr0} "
                             f"or l2={self.l2}, or scale X")

    def _fit_nodes(self, X, y, write, rng, p):
        """``solver="liblinear"``: every node fitted once (``node_fit.fit_nodes``)."""
        fit_nodes(self.tree_, X, y, write, self.intercept_, C=float(p["C"]),
                  max_iter=int(self.max_iter), seed=int(rng.integers(2**31)),
                  threshold=float(p["prune"]),
                  n_jobs=node_pool.resolve_jobs(self.n_jobs, nonzeros(X)))
        self.loss_curve_ = []

    @property
    def _csr(self):
        """True when the weights are exact and grouped by node (``bits="csr"``,
        ``xcbench.tree.node_major``), not a flat table."""
        return isinstance(self.weights_, tuple)

    def _kernel_input(self, X):
        """Kernel layout of X; the exact node-major store needs sorted CSR input indices."""
        return sorted_kernel_input(X) if self._csr else kernel_input(X)

    def _prepare(self):
        """Derived arrays the kernels need (paths, arity), from ``tree_``."""
        self.path_ptr_, self.path_node_, self.path_pos_ = self.tree_.paths()
        self.max_arity_ = int(np.diff(self.tree_.child_ptr).max())

    def _weight_args(self):
        return self.weights_, self.intercept_, self.n_features_in_, self.mask_

    # -- predict (pure: nothing is written to the model) -------------------------------
    def _decode(self, X, k):
        """(labels, scores, rows scored per row) of the current decoder."""
        if self.decoder not in DECODERS:
            raise ValueError(f"decoder must be one of {DECODERS}, got {self.decoder!r}")
        X = check_X(X, self.n_features_in_)
        n, kk = X.shape[0], min(int(k), self.n_classes_)
        labels = np.full((n, k), -1, dtype=np.int64)
        scores = np.full((n, k), -np.inf)
        cost = np.zeros(n, dtype=np.int64)
        t = self.tree_
        inputs = self._kernel_input(X)
        out_l, out_s = labels[:, :kk], scores[:, :kk]
        if self.decoder == "exact":
            self._decode_exact(inputs, kk, out_l, out_s)
            cost[:] = t.n_rows
        elif self.decoder == "topk":
            kernels.decode_best_first(kk, t.child_ptr, t.children, t.edge_row,
                                      *self._weight_args(), *inputs, self.max_arity_,
                                      len(t.children), out_l, out_s, cost)
        else:  # greedy: a beam of k (top-1 = the greedy descent); beam: of max(k, beam)
            width = kk if self.decoder == "greedy" else max(kk, int(self.beam))
            kernels.decode_beam(kk, width, t.child_ptr, t.children, t.edge_row,
                                *self._weight_args(), *inputs, self.max_arity_, out_l, out_s,
                                cost)
        return labels, scores, cost

    def _decode_exact(self, inputs, k, out_l, out_s):
        """All edge scores per chunk of rows (one BLAS product for dense rows in the direct
        layout, a compiled sparse/hashed loop otherwise), then every class's probability."""
        Xd, indptr, indices, data, dense = inputs
        t, n_rows = self.tree_, self.tree_.n_rows
        n = out_l.shape[0]
        step = max(1, _CHUNK_CELLS // max(n_rows, 1))
        blas = dense and self.mask_ < 0 and not self._csr
        if blas:
            # explicit width: a one-class tree has no weight row (reshape(0, -1) is ambiguous)
            W = self.weights_[:n_rows * self.n_features_in_].reshape(n_rows,
                                                                     self.n_features_in_)
        for start in range(0, n, step):
            stop = min(n, start + step)
            if blas:
                S = Xd[start:stop] @ W.T + self.intercept_
            else:
                S = np.empty((stop - start, n_rows))
                kernels.edge_scores(*self._weight_args(), t.child_ptr, t.edge_row,
                                    *inputs[:4], dense, start, S, self.max_arity_)
            kernels.decode_exact(k, self.n_classes_, t.child_ptr, t.children, t.edge_row,
                                 np.ascontiguousarray(S), self.max_arity_, t.n_nodes, out_l,
                                 out_s, start)

    def predict_topk(self, X, k=1):
        k = check_k(k)
        labels, scores, _ = self._decode(X, k)
        return labels, scores

    def path_cost(self, X, k=1):
        """Weight rows (vectors) the current decoder scores to predict the top ``k`` of each
        row: K - 1 for ``exact``, about depth x (arity - 1) for ``greedy``, the expanded
        nodes' rows for ``topk``."""
        return self._decode(X, k)[2].astype(np.float64)

    def log_proba(self, X, y):
        X = check_X(X, self.n_features_in_)
        y, _ = check_labels(y, X.shape[0], self.n_classes_)
        t = self.tree_
        return kernels.path_log_proba(y, self.path_ptr_, self.path_node_, self.path_pos_,
                                      t.child_ptr, t.edge_row, *self._weight_args(),
                                      *self._kernel_input(X), self.max_arity_)

    def stats(self):
        t = self.tree_
        depths = np.diff(self.path_ptr_)
        freq = self.class_counts_ / max(self.class_counts_.sum(), 1)
        values = self.weights_[3] if self._csr else self.weights_
        weight_bytes = sum(a.nbytes for a in self.weights_) if self._csr else values.nbytes
        return {
            "n_params": int(values.size + self.intercept_.size),
            "nonzero_params": int(np.count_nonzero(values) + np.count_nonzero(self.intercept_)),
            "bytes": int(weight_bytes + self.intercept_.nbytes + t.child_ptr.nbytes
                         + t.children.nbytes + t.edge_row.nbytes + self.path_ptr_.nbytes
                         + self.path_node_.nbytes + self.path_pos_.nbytes),
            "weight_layout": "csr" if self._csr else "direct" if self.mask_ < 0 else "hashed",
            "hash_bits": int(self.mask_).bit_length() if self.mask_ >= 0 else None,
            "depth": int(depths.max()),
            "depth_mean": float(depths.mean()),
            "depth_expected_train": float(freq @ depths),
            "leaves": int(self.n_classes_),
            "internal_nodes": int(t.n_nodes),
            "classes_per_leaf_mean": 1.0,
            "classes_per_leaf_max": 1,
            "resolved_params": dict(getattr(self, "resolved_params_", {})),
            # held-out top-1 accuracy of each C the fit tried ({} when C was not probed)
            "C_probe": {str(C): acc for C, acc in getattr(self, "C_probe_", {}).items()},
            # held-out top-1 accuracy of each candidate tree at the C its walk kept ({}
            # when the tree was not probed)
            "tree_probe": dict(getattr(self, "tree_probe_", {})),
        }

