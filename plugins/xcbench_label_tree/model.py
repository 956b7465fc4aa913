"""Label trees (Bengio, Weston & Grangier, NIPS 2010): ``label_tree`` and
``label_embedding_tree``. Algorithm notes: docs/methods/label-trees.md."""
from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import Interval, StrOptions

from xcbench.kernels import kernel_input
from xcbench.contract.method import Method, check_labels, check_X
from xcbench.tree.csr_weights import sorted_kernel_input
from xcbench.tree.node_fit import (ExactRows, as_fit_tree, check_exact_store, fit_nodes,
                                   logistic_node, multiclass_hinge_node, table_writer)
from xcbench.tree.weights import DIRECT, table_bytes, table_layout

from . import kernels
from .structure import (build_structure, class_embedding, confusion_affinity, kmeans_splitter,
                        path_arity_sums, random_splitter, spectral_splitter, structure_size)

STRUCTURES = ("confusion", "kmeans", "random")
LOSS_CODES = {"independent": kernels.INDEPENDENT, "tree": kernels.TREE,
              "softmax": kernels.SOFTMAX}
SOLVERS = ("sgd", "liblinear")
# solver="liblinear": each node's model, by loss (the tree loss couples every depth in one
# slack, so it has no node-by-node solver)
NODE_FITTERS = {"independent": multiclass_hinge_node, "softmax": logistic_node}
_NO_TABLE = np.zeros(1)  # the embedding map's place in the kernels' arguments, when unused


def kept_weights_estimate(pairs, nnz, depth, branching, prune, loss):
    """Weights ``bits="csr"`` keeps, estimated. ``pairs`` is the bound (each input nonzero
    feeds at most ``branching`` child rows per level) and is the estimate for the softmax
    loss (logistic weights are dense on a node's active features) and without pruning.
    Crammer-Singer nodes with ``prune`` > 0 keep far fewer: measured on synthetic-sparse-1k
    / 10k (64 children, C = 0.1) 1.2 / 1.0 per input nonzero and level at prune = 0.01, 0.4
    at 0.03, i.e. ~0.012 / prune; twice that, as a margin (the runner's memory cap turns an
    underestimate into an error record)."""
    if loss != "independent" or prune <= 0:
        return pairs
    return min(pairs, float(nnz) * depth * min(float(branching), 2 * 0.012 / prune))


class LabelTree(Method):
    """Disjoint label tree with one linear scorer per node, greedy descent (beam for top-k).

    Parameters
    ----------
    structure : "kmeans" (balanced k-means of class means, spherical and sparse for sparse X;
        default: cheap at any K),
        "confusion" (the paper's Algorithm 2: one-vs-rest confusion + spectral clustering;
        O(K x D) for the surrogate model, so for moderate K only) or "random" (control).
    branching : children per node, or "sqrt" for ceil(sqrt(K)) (a depth-2 tree as in the
        paper's experiments).
    loss : "tree" (Relaxation 2: shared slack over all depths, the paper's proposal),
        "independent" (Relaxation 1: a hinge per node) or "softmax" (not in the paper: the
        cross-entropy of each path node against its siblings; a probability model, so
        ``log_proba`` and perplexity exist, and the multiclass hinge's collapse on data where
        no label has p(y|x) > 1/2, such as next-word prediction, is avoided).
    epochs, lr : SGD passes and AdaGrad step size (regularisation is by the number of passes).
    solver : "sgd" (the default: AdaGrad SGD on ``loss`` over the whole tree) or "liblinear":
        every internal node fitted once, to convergence, on the rows whose class is under it
        (``xcbench.tree.node_fit``; napkinXC also trains, prunes and stores its label trees
        node by node, with a binary logistic classifier per child):
        ``loss="independent"`` with LIBLINEAR's Crammer-Singer multiclass SVM (a multiclass
        form of the paper's Relaxation 1: one hinge over a node's children, where the SGD
        solver uses a binary hinge per child), ``loss="softmax"`` with a multinomial
        logistic regression; ``C`` (larger regularises less) and ``max_iter`` apply,
        weights below ``prune`` in magnitude are dropped. ``loss="tree"`` has no
        node-by-node solver.
    bits : the node weight table's layout (``xcbench.tree.weights``): "auto" (dense rows when
        nodes x D x 8 bytes <= 256 MB, else hashed into 2^b slots), an int b (hashed), None,
        or "csr" (``solver="liblinear"`` only: the weights kept exactly, grouped by node,
        ``xcbench.tree.node_major``: no collisions, 16 bytes per weight kept).
    holdout, confusion_iter : share of training rows held out for the confusion matrix and
        L-BFGS iterations of its one-vs-rest model (structure="confusion" only).

    Memory (fit, bytes): weight table 2 x 8 x S (weights + AdaGrad sums; S = nodes x D when
    direct, 2^bits when hashed) + 16 x nodes + structure O(K); with "confusion" also the
    one-vs-rest surrogate's K x D weights and its fit. ``solver="liblinear"``: one table
    8 x S, or 32 x P with ``bits="csr"`` (P the weights kept, at most nnz x branching x
    depth; ``kept_weights_estimate``), + 56 nnz + 40 N (X sorted by leaf order and the
    node problems' copies) + the widest node's solver state (Crammer-Singer: 16 x N x
    branching for its dual variables).
    No O(K x D) array otherwise.
    """

    _parameter_constraints = {
        "structure": [StrOptions(set(STRUCTURES))],
        "branching": [Interval(Integral, 2, None, closed="left"), StrOptions({"sqrt"})],
        "loss": [StrOptions(set(LOSS_CODES))],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "solver": [StrOptions(set(SOLVERS))],
        "C": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "prune": [Interval(Real, 0, None, closed="left")],
        "bits": [Interval(Integral, 16, 30, closed="both"), StrOptions({"auto", "csr"}), None],
        "holdout": [Interval(Real, 0, 1, closed="neither")],
        "confusion_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }
    embedding_dim = 0  # d_e: 0 for plain label trees

    def __init__(self, structure="kmeans", branching="sqrt", loss="tree", epochs=5, lr=0.1,
                 solver="sgd", C=1.0, max_iter=1000, prune=0.0, bits="auto", holdout=0.2,
                 confusion_iter=50, random_state=None):
        self.structure = structure
        self.branching = branching
        self.loss = loss
        self.epochs = epochs
        self.lr = lr
        self.solver = solver
        self.C = C
        self.max_iter = max_iter
        self.prune = prune
        self.bits = bits
        self.holdout = holdout
        self.confusion_iter = confusion_iter
        self.random_state = random_state

    # -- structure ---------------------------------------------------------------------
    def _branching(self, n_classes):
        if self.branching == "sqrt":
            return max(2, math.ceil(math.sqrt(n_classes)))
        return int(self.branching)

    def _split(self, X, y, n_classes, rng):
        if self.structure == "random":
            return random_splitter(rng)
        embedding = class_embedding(X, y, n_classes, rng)
        if self.structure == "kmeans":
            return kmeans_splitter(embedding, rng)
        return spectral_splitter(self._confusion(X, y, n_classes, rng), embedding, rng)

    def _confusion(self, X, y, n_classes, rng):
        """Affinity from a one-vs-rest model's confusions on held-out training rows."""
        from xcbench.api import make_method

        order = rng.permutation(X.shape[0])
        n_held = max(1, int(round(self.holdout * X.shape[0])))
        held, rest = order[:n_held], order[n_held:]
        ova = make_method("ova", max_iter=int(self.confusion_iter))
        ova.fit(X[rest], y[rest], n_classes=n_classes)
        predicted = ova.predict(X[held])
        return confusion_affinity(y[held], predicted, n_classes)

    # -- fit ---------------------------------------------------------------------------
    def fit(self, X, y, n_classes=None):
        self._validate_params()
        self._check_solver()
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        if X.shape[0] == 0:
            raise ValueError("X has no rows: label trees need training examples")
        rng = np.random.default_rng(self.random_state)
        self.n_features_in_ = X.shape[1]
        self.branching_ = self._branching(self.n_classes_)
        self.tree_ = build_structure(self.n_classes_, self.branching_,
                                     self._split(X, y, self.n_classes_, rng))
        self._path_cost_by_class = path_arity_sums(self.tree_) + self.embedding_dim
        if self.solver == "liblinear":
            return self._fit_nodes(X, y, rng)
        n_rows = self.embedding_dim or self.tree_.n_nodes
        size, self.mask_ = table_layout(n_rows, X.shape[1], self.bits,
                                        touched_pairs=self._touched_pairs(X))
        self.table_ = self._initial_table(size, rng)
        self.bias_ = np.zeros(self.tree_.n_nodes)
        self.V_ = self._initial_embeddings(rng)
        acc, bias_acc = np.full(size, 1e-8), np.full(self.tree_.n_nodes, 1e-8)
        V_acc = np.full(self.V_.shape[0], 1e-8)
        Xd, indptr, indices, data, dense = kernel_input(X)
        t = self.tree_
        self.loss_curve_ = []
        for _ in range(int(self.epochs)):
            order = rng.permutation(X.shape[0]).astype(np.int64)
            loss = kernels.train_epoch(
                order, y, t.child_ptr, t.children, t.parent, t.path_ptr, t.path_node,
                self.table_, acc, self.bias_, bias_acc, X.shape[1], self.mask_, Xd, indptr,
                indices, data, dense, float(self.lr), LOSS_CODES[self.loss], self.V_, V_acc,
                self.embedding_dim > 0, t.max_arity)
            self.loss_curve_.append(float(loss))
        return self

    def _check_solver(self):
        if self.solver == "liblinear" and self.loss not in NODE_FITTERS:
            raise ValueError(f"solver='liblinear' fits each node on its own; loss={self.loss!r} "
                             "couples every depth in one slack and has no node-by-node "
                             "solver: use loss='independent' (the multiclass hinge per node) "
                             "or loss='softmax'")
        check_exact_store(self.bits, self.solver)

    def _fit_nodes(self, X, y, rng):
        """``solver="liblinear"``: every internal node fitted once on the rows reaching it
        (``xcbench.tree.node_fit.fit_nodes``), into an exact store or a toolkit table."""
        t = self.tree_
        X = sp.csr_matrix(X, dtype=np.float64)
        self.bias_ = np.zeros(t.n_nodes)
        self.V_ = np.zeros((1, 1))
        self.loss_curve_ = []
        if self.bits == "csr":
            store = ExactRows()
            write = store.write
            self.mask_ = DIRECT
        else:
            size, self.mask_ = table_layout(t.n_nodes, X.shape[1], self.bits,
                                            touched_pairs=self._touched_pairs(X))
            self.table_ = np.zeros(size)
            write = table_writer(self.table_, X.shape[1], self.mask_)
        fit_nodes(as_fit_tree(t.child_ptr, t.children, t.node_label, self.n_classes_), X, y,
                  write, self.bias_, C=float(self.C), max_iter=int(self.max_iter),
                  seed=int(rng.integers(2**31)), threshold=float(self.prune),
                  fit_node=NODE_FITTERS[self.loss])
        if self.bits == "csr":
            self.table_ = store.node_major(t.child_ptr, t.children)
        return self

    @property
    def _exact(self):
        """True when the weights are the exact node-major store (``bits="csr"``)."""
        return isinstance(self.table_, tuple)

    def _kernel_args(self, X):
        """(node store, embedding map, input parts) of checked X for the decoding kernels."""
        W = _NO_TABLE if self._exact else self.table_
        inputs = sorted_kernel_input(X) if self._exact else kernel_input(X)
        return self.table_, W, inputs

    def _touched_pairs(self, X):
        """(row, feature) pairs training can touch: each example reaches about
        branching x depth node rows (or d_e rows) with its nonzeros."""
        nnz = X.nnz if sp.issparse(X) else X.size
        rows = self.embedding_dim or self.branching_ * max(self.tree_.depth, 1)
        return min(float(nnz) * rows, float(self.tree_.n_nodes) * X.shape[1])

    def _initial_table(self, size, rng):
        return np.zeros(size)

    def _initial_embeddings(self, rng):
        return np.zeros((1, 1))

    # -- predict -----------------------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "tree_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")

    def predict_topk(self, X, k=1):
        self._check_fitted()
        X = check_X(X, self.n_features_in_)
        weights, W, (Xd, indptr, indices, data, dense) = self._kernel_args(X)
        t = self.tree_
        return kernels.beam_topk(int(k), t.child_ptr, t.children, t.node_label, weights, W,
                                 self.bias_, self.n_features_in_, self.mask_, Xd, indptr,
                                 indices, data, dense, X.shape[0], self.V_,
                                 self.embedding_dim > 0, t.max_arity, self.loss == "softmax")

    def log_proba(self, X, y):
        """log p(y | x): the product of the sibling softmaxes along y's path (loss="softmax"
        only; the hinge losses' scores are margins, not probabilities)."""
        if self.loss != "softmax":
            raise NotImplementedError(
                f"{type(self).__name__} with loss={self.loss!r} scores are hinge-loss margins, "
                "not probabilities: no perplexity is reported (loss='softmax' defines one)")
        self._check_fitted()
        X = check_X(X, self.n_features_in_)
        y, _ = check_labels(y, X.shape[0], self.n_classes_)
        weights, W, (Xd, indptr, indices, data, dense) = self._kernel_args(X)
        t = self.tree_
        return kernels.path_log_proba(y, t.path_ptr, t.path_node, t.parent, t.child_ptr,
                                      t.children, weights, W, self.bias_, self.n_features_in_,
                                      self.mask_, Xd, indptr, indices, data, dense, self.V_,
                                      self.embedding_dim > 0, t.max_arity)

    def path_cost(self, X):
        """Vectors one greedy prediction evaluates: the children scored at each step of the
        path it takes (plus d_e rows of W for the embedding tree)."""
        labels, _ = self.predict_topk(X, 1)
        return self._path_cost_by_class[labels[:, 0]]

    def estimate_memory(self, n_samples, n_features, nnz, n_classes):
        self._validate_params()
        self._check_solver()
        branching = self._branching(n_classes)
        n_nodes, depth = structure_size(n_classes, branching)
        depth = max(depth, 1)
        rows = self.embedding_dim or n_nodes
        pairs = min(float(nnz) * (self.embedding_dim or branching * depth),
                    float(n_nodes) * n_features)
        if self.solver == "liblinear":
            total = self._node_fit_bytes(n_samples, n_features, nnz, n_nodes, branching,
                                         depth, pairs)
        else:
            total = table_bytes(rows, n_features, self.bits, pairs, copies=2)
        total += 64 * n_nodes + 16 * n_classes + 8 * n_samples  # structure, order
        total += 2 * 8 * n_nodes * max(self.embedding_dim, 1)  # V and its sums
        if self.structure != "random":
            # class means (dense data: projected to 64 dims; sparse: CSR, <= nnz entries, and
            # the centres); the root split's K x b similarities, their sort and copy
            total += max(8 * n_classes * 64 * 3, 48 * nnz) + 3 * 8 * n_classes * branching
        if self.structure == "confusion":
            from xcbench.api import make_method

            ova = make_method("ova", max_iter=int(self.confusion_iter))
            total += ova.estimate_memory(n_samples, n_features, nnz, n_classes) or \
                8 * n_classes * n_features * 4
        return int(total)

    def _node_fit_bytes(self, n_samples, n_features, nnz, n_nodes, branching, depth, pairs):
        """``solver="liblinear"``'s weights and node problems (class docstring)."""
        if self.bits == "csr":  # collected per row, then packed by node: 16 bytes each
            total = 2 * 16 * kept_weights_estimate(pairs, nnz, depth, branching, self.prune,
                                                   self.loss)
        else:
            total = table_bytes(n_nodes, n_features, self.bits, pairs)
        total += 56 * nnz + 40 * n_samples
        # the root's coefficients: LIBLINEAR's and scikit-learn's m x (active features)
        total += 2 * 8 * branching * min(nnz, n_features)
        if self.loss == "independent":  # Crammer-Singer: per (row, class) dual variables
            total += 16 * n_samples * branching
        else:  # multinomial L-BFGS: ~16 vectors over the root's classes x active features
            total += 8 * branching * (16 * min(nnz, n_features) + 4 * n_samples)
        return total

    def stats(self):
        self._check_fitted()
        t = self.tree_
        depths = np.diff(t.path_ptr)
        weights = self.table_[3] if self._exact else self.table_
        weight_bytes = sum(a.nbytes for a in self.table_) if self._exact else weights.nbytes
        return {
            "n_params": int(weights.size + self.bias_.size
                            + (self.V_.size if self.embedding_dim else 0)),
            "bytes": int(weight_bytes + self.bias_.nbytes + self.V_.nbytes + t.nbytes()),
            "depth": int(depths.max()),
            "depth_mean": float(depths.mean()),
            "leaves": int(self.n_classes_),
            "internal_nodes": int((t.node_label < 0).sum()),
            "branching": int(self.branching_),
            "hashed_weights": bool(self.mask_ != DIRECT),
            "weight_layout": ("csr" if self._exact else
                              "direct" if self.mask_ == DIRECT else "hashed"),
            "classes_per_leaf_mean": 1.0,
            "classes_per_leaf_max": 1,
            "train_loss_curve": self.loss_curve_,
        }


class LabelEmbeddingTree(LabelTree):
    """Label embedding tree: z = W x (d_e = ``embedding_dim``) computed once per example,
    node s scored by z . V_s; W and V trained jointly by SGD on the tree loss (Relaxation 2;
    or ``loss="softmax"``, see ``LabelTree``) with ||V_s|| <= 1. Same structures and
    parameters as ``LabelTree`` (``loss="independent"`` is a plain label tree's only).

    Memory (fit, bytes): W table 2 x 8 x S (S = d_e x D direct, or 2^bits hashed) + V and its
    sums 16 x nodes x d_e + structure O(K).
    """

    _parameter_constraints = {
        **LabelTree._parameter_constraints,
        "loss": [StrOptions({"tree", "softmax"})],
        "bits": [Interval(Integral, 16, 30, closed="both"), StrOptions({"auto"}), None],
        "embedding_dim": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, structure="kmeans", branching="sqrt", embedding_dim=100, loss="tree",
                 epochs=5, lr=0.1, bits="auto", holdout=0.2, confusion_iter=50,
                 random_state=None):
        super().__init__(structure=structure, branching=branching, loss=loss, epochs=epochs,
                         lr=lr, bits=bits, holdout=holdout, confusion_iter=confusion_iter,
                         random_state=random_state)
        self.embedding_dim = embedding_dim

    def _initial_table(self, size, rng):
        """W starts random (a zero W gives z = 0 and no gradient for V)."""
        return rng.normal(0.0, 1.0 / math.sqrt(max(self.n_features_in_, 1)), size)

    def _initial_embeddings(self, rng):
        V = rng.normal(size=(self.tree_.n_nodes, self.embedding_dim))
        return V / np.linalg.norm(V, axis=1, keepdims=True)
