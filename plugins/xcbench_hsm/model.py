"""Hierarchical softmax: a label tree whose internal nodes are linear softmax (binary:
sigmoid) classifiers; p(y | x) is the product of the edge probabilities on y's path."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from xcbench.kernels import kernel_input
from xcbench.method import Method, check_labels, check_X

from . import kernels
from .tree import balanced_tree, huffman_tree, kmeans_tree

TREES = ("huffman", "balanced", "kmeans")
DECODERS = ("exact", "greedy", "topk")
_CHUNK_CELLS = 1 << 22  # rows x edges scored at once by the exact decoder (~32 MB)

class HierarchicalSoftmax(Method):
    """Hierarchical softmax over a Huffman (or balanced, or k-means) label tree.

    Build parameters: ``tree`` (``"huffman"`` on training class counts + 1, ``"balanced"``
    random, or ``"kmeans"`` of class means), ``arity`` (children per node), ``epochs`` of
    SGD (batch 1) with learning rate ``lr`` multiplied by ``lr_decay`` after each epoch,
    ``momentum`` and ``l2`` (acting on the coordinates an example touches), ``random_state``.

    Defaults: 5 epochs, lr 0.002 decayed x0.9 per epoch, no momentum. The softmax-tree
    paper's setting (lr 0.005, momentum 0.9, x0.995 "after each step") diverges on the PTB
    GloVe features here (mean ||x||^2 = 79, so a stable step needs lr * ||x||^2 well
    below 2; measured: 3 epochs at lr 0.005 + momentum 0.9 end at a training NLL above the
    untrained model's, while lr 0.002 without momentum reaches test perplexity 373).

    Query parameters (change with ``set_params`` after fitting, no refit):
    ``decoder``: ``"exact"`` (every class's probability from all K-1 node scores, computed
    as one BLAS matrix product, then the top k: the paper's "HSM", O(K D)), ``"greedy"`` (beam search of width ``beam`` or k, so top-1 is the greedy
    descent to the more probable child: the paper's "HSM-approx"), or ``"topk"`` (exact
    top k by best-first search over partial log-probabilities).
    """

    def __init__(self, tree="huffman", arity=2, epochs=5, lr=0.002, lr_decay=0.9,
                 momentum=0.0, l2=0.0, decoder="exact", beam=None, random_state=None):
        self.tree = tree
        self.arity = arity
        self.epochs = epochs
        self.lr = lr
        self.lr_decay = lr_decay
        self.momentum = momentum
        self.l2 = l2
        self.decoder = decoder
        self.beam = beam
        self.random_state = random_state

    def _build_tree(self, X, y, counts, rng):
        if self.tree == "huffman":
            return huffman_tree(counts, self.arity)
        if self.tree == "balanced":
            return balanced_tree(self.n_classes_, self.arity, seed=int(rng.integers(2**31)))
        if self.tree == "kmeans":
            onehot = sp.csr_matrix((np.ones(len(y)), (y, np.arange(len(y)))),
                                   shape=(self.n_classes_, len(y)))
            sums = onehot @ X
            means = (sums.toarray() if sp.issparse(sums) else np.asarray(sums)) \
                / np.maximum(counts, 1)[:, None]
            return kmeans_tree(means, self.arity, seed=int(rng.integers(2**31)))
        raise ValueError(f"tree must be one of {TREES}, got {self.tree!r}")

    def fit(self, X, y, n_classes=None):
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        if self.decoder not in DECODERS:
            raise ValueError(f"decoder must be one of {DECODERS}, got {self.decoder!r}")
        rng = np.random.default_rng(self.random_state)
        self.n_features_in_ = X.shape[1]
        self.class_counts_ = np.bincount(y, minlength=self.n_classes_)
        self.tree_ = self._build_tree(X, y, self.class_counts_, rng)
        self._prepare()
        self.coef_ = np.zeros((self.tree_.n_rows, X.shape[1]))
        self.intercept_ = np.zeros(self.tree_.n_rows)
        velocity_w, velocity_b = np.zeros_like(self.coef_), np.zeros_like(self.intercept_)
        Xd, indptr, indices, data, dense = kernel_input(X)
        lr, self.loss_curve_ = float(self.lr), []
        for _ in range(int(self.epochs)):
            order = rng.permutation(X.shape[0]).astype(np.int64)
            loss = kernels.train_epoch(order, y, self.path_ptr_, self.path_node_, self.path_pos_,
                                       self.tree_.child_ptr, self.tree_.edge_row, self.coef_,
                                       self.intercept_, velocity_w, velocity_b, Xd, indptr,
                                       indices, data, dense, lr, float(self.momentum),
                                       float(self.l2), self.max_arity_)
            self.loss_curve_.append(float(loss))
            lr *= float(self.lr_decay)
        return self

    def _prepare(self):
        """Derived arrays the kernels need (paths, arity), from ``tree_``."""
        self.path_ptr_, self.path_node_, self.path_pos_ = self.tree_.paths()
        self.max_arity_ = int(np.diff(self.tree_.child_ptr).max())

    def _tree_args(self):
        t = self.tree_
        return t.child_ptr, t.children, t.edge_row, self.coef_, self.intercept_

    def predict_topk(self, X, k=1):
        X = check_X(X, self.n_features_in_)
        n, kk = X.shape[0], min(int(k), self.n_classes_)
        labels = np.full((n, k), -1, dtype=np.int64)
        scores = np.full((n, k), -np.inf)
        Xd, indptr, indices, data, dense = kernel_input(X)
        child_ptr, children, edge_row, W, b = self._tree_args()
        out_l, out_s = labels[:, :kk], scores[:, :kk]
        if self.decoder == "exact":  # all node scores by one matrix product per chunk
            step = max(1, _CHUNK_CELLS // max(W.shape[0], 1))
            for start in range(0, n, step):
                S = np.ascontiguousarray(np.asarray(X[start:start + step] @ W.T) + b)
                kernels.decode_exact(kk, self.n_classes_, child_ptr, children, edge_row, S,
                                     self.max_arity_, self.tree_.n_nodes, out_l, out_s, start)
            evaluated = n * self.tree_.n_nodes
        elif self.decoder == "topk":
            evaluated = kernels.decode_best_first(kk, child_ptr, children, edge_row, W, b, Xd,
                                                  indptr, indices, data, dense,
                                                  self.max_arity_, len(children), out_l, out_s)
        elif self.decoder == "greedy":
            width = max(kk, int(self.beam or 1))
            evaluated = kernels.decode_beam(kk, width, child_ptr, children, edge_row, W, b, Xd,
                                            indptr, indices, data, dense, self.max_arity_,
                                            out_l, out_s)
        else:
            raise ValueError(f"decoder must be one of {DECODERS}, got {self.decoder!r}")
        self.nodes_evaluated_per_example_ = evaluated / max(n, 1)
        return labels, scores

    def log_proba(self, X, y):
        X = check_X(X, self.n_features_in_)
        y, _ = check_labels(y, X.shape[0], self.n_classes_)
        Xd, indptr, indices, data, dense = kernel_input(X)
        child_ptr, _, edge_row, W, b = self._tree_args()
        return kernels.path_log_proba(y, self.path_ptr_, self.path_node_, self.path_pos_,
                                      child_ptr, edge_row, W, b, Xd, indptr, indices, data,
                                      dense, self.max_arity_)

    def stats(self):
        depths = np.diff(self.path_ptr_)
        freq = self.class_counts_ / max(self.class_counts_.sum(), 1)
        return {
            "n_params": int(self.coef_.size + self.intercept_.size),
            "nonzero_params": int(np.count_nonzero(self.coef_) + np.count_nonzero(self.intercept_)),
            "bytes": int(self.coef_.nbytes + self.intercept_.nbytes + self.tree_.child_ptr.nbytes
                         + self.tree_.children.nbytes + self.tree_.edge_row.nbytes),
            "depth": int(depths.max()),
            "depth_mean": float(depths.mean()),
            "depth_expected_train": float(freq @ depths),
            "leaves": int(self.n_classes_),
            "internal_nodes": int(self.tree_.n_nodes),
            "classes_per_leaf_mean": 1.0,
            "classes_per_leaf_max": 1,
            "nodes_per_prediction": float(getattr(self, "nodes_evaluated_per_example_",
                                                  self.tree_.n_nodes)),
        }
