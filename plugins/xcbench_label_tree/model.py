"""Label trees (Bengio, Weston & Grangier, NIPS 2010): ``label_tree`` and
``label_embedding_tree``. Algorithm notes: docs/methods/label-trees.md."""
from __future__ import annotations

import math
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import Interval, StrOptions

from xcbench.kernels import kernel_input
from xcbench.contract.data_shape import mostly_zeros, skewed_labels
from xcbench.contract.holdout import choose_param
from xcbench.contract.method import Method, check_k, check_labels, check_X
from xcbench.tree.csr_weights import sorted_kernel_input
from xcbench.tree.node_fit import (ExactRows, as_fit_tree, check_exact_store, fit_nodes,
                                   logistic_node, multiclass_hinge_node, table_writer)
from xcbench.tree import node_major, node_pool
from xcbench.tree.weights import DIRECT, table_bytes, table_layout

from . import defaults, kernels, node_c
from .nodes import logistic_ovr_node, squared_hinge_node
from .structure import (build_structure, class_embedding, confusion_affinity, kmeans_splitter,
                        path_arity_sums, random_splitter, spectral_splitter, structure_size,
                        unbalanced_kmeans_splitter, widest_node)

STRUCTURES = ("confusion", "kmeans", "kmeans_unbalanced", "random")
LOSS_CODES = {"independent": kernels.INDEPENDENT, "tree": kernels.TREE,
              "softmax": kernels.SOFTMAX}
SOLVERS = ("sgd", "liblinear")
# solver="liblinear": each node's model, by loss (the tree loss couples every depth in one
# slack, so it has no node-by-node solver)
NODE_FITTERS = {"independent": multiclass_hinge_node, "softmax": logistic_node,
                "hinge": squared_hinge_node, "logistic": logistic_ovr_node}
# how the decoders turn a node's child scores into the scores a path sums
SCORE_CODES = {"tree": kernels.RAW, "independent": kernels.RAW,
               "softmax": kernels.LOG_SOFTMAX, "hinge": kernels.SQ_HINGE,
               "logistic": kernels.LOG_SIGMOID}
AUTO_PARAMS = ("structure", "branching", "max_depth", "leaf_size", "loss", "solver", "C",
               "prune", "bits", "normalize", "n_trees", "bonsai_trees", "beam", "lr",
               "embedding_dim")
# kept weights per input nonzero and level, times the pruning threshold (measured)
PRUNE_RATE = {"independent": 0.012, "hinge": 0.065, "logistic": 0.065}
# one-vs-rest nodes at prune = 0.1: kept weights per input nonzero over all levels (measured)
OVR_KEPT = {"hinge": 1.8, "logistic": 1.8}
_NO_TABLE = np.zeros(1)  # the embedding map's place in the kernels' arguments, when unused


def path_rows(branching, depth, leaf_size=None):
    """Node rows (children scored) on a root-to-leaf path of a tree of this branching and
    depth: branching per level, the last level up to ``leaf_size`` children."""
    depth = max(int(depth), 1)
    return branching * (depth - 1) + widest_node(branching, leaf_size)


def kept_weights_estimate(pairs, nnz, depth, branching, prune, loss):
    """Weights ``bits="csr"`` keeps, estimated. ``pairs`` is the bound (each input nonzero
    feeds at most ``branching`` child rows per level) and is the estimate for the softmax
    loss (logistic weights are dense on a node's active features) and without pruning.
    Pruned nodes keep far fewer (``PRUNE_RATE``): Crammer-Singer nodes (64 children, C =
    0.1) measured 1.2 / 1.0 per input nonzero and level on synthetic-sparse-1k / 10k at
    prune = 0.01, 0.4 at 0.03, i.e. ~0.012 / prune (twice that, as a margin: the runner's
    memory cap turns an underestimate into an error record); one-vs-rest squared-hinge
    nodes on unit rows at prune = 0.1 kept 1.8 weights per input nonzero in all (C = 8 on
    synthetic-sparse-1k, C = 4 on 10k; ``OVR_KEPT``), 1.5 times that is taken."""
    if prune <= 0 or loss not in PRUNE_RATE:
        return pairs
    if loss in OVR_KEPT:  # measured per input nonzero over all levels
        return min(pairs, float(nnz) * 1.5 * OVR_KEPT[loss] * 0.1 / prune)
    return min(pairs, float(nnz) * depth * min(float(branching), 2 * PRUNE_RATE[loss] / prune))


class TreeShape(NamedTuple):
    """What a tree of the ensemble is built with: its structure, children per node (an
    int), levels at most and ``leaf_size`` (``LabelTree`` parameters of those names)."""

    structure: str
    branching: int
    max_depth: int | None
    leaf_size: int | None


class Forest(NamedTuple):
    """The trees of an ensemble in one set of arrays (``LabelTree._build_forest``)."""

    roots: np.ndarray
    child_ptr: np.ndarray
    children: np.ndarray
    node_label: np.ndarray
    bias: np.ndarray
    store: tuple
    max_arity: int


class FittedTree:
    """One tree of a fitted model: its structure (``tree``), node weights (``table``: a
    toolkit table or the exact node-major store), biases, node embeddings ``V`` (embedding
    tree), table ``mask``, SGD loss curve and the greedy path cost of each class."""

    def __init__(self, tree, table, bias, V, mask, loss_curve, path_cost):
        self.tree, self.table, self.bias, self.V, self.mask = tree, table, bias, V, mask
        self.loss_curve, self.path_cost = loss_curve, path_cost

    @property
    def exact(self):
        return isinstance(self.table, tuple)


class LabelTree(Method):
    """Disjoint label tree with one linear scorer per node, decoded by beam search; one tree
    or an ensemble of independently clustered trees.

    Parameters ("auto": resolved at fit time from the data by ``defaults.resolve``; the
    values used are in ``resolved_params_``)
    ----------
    structure : "kmeans" (balanced k-means of class means, spherical and sparse for sparse X),
        "kmeans_unbalanced" (Bonsai's wide, shallow trees: unbalanced spherical k-means into
        ``branching`` clusters, at most ``max_depth`` levels), "confusion" (the paper's
        Algorithm 2: one-vs-rest confusion + spectral clustering; O(K x D) for the
        surrogate model, so for moderate K only) or "random" (control).
    branching : children per node, or "sqrt" for ceil(sqrt(K)) (a depth-2 tree as in the
        paper's experiments).
    max_depth : levels below the root at most (None: no limit); a node at the last level
        has its classes as children, however many.
    leaf_size : None, or a node with at most this many classes has them as children (one
        one-vs-rest node over them) instead of being split further: Parabel's shape is
        ``structure="kmeans", branching=2, leaf_size=100`` (binary splits down to nodes of
        at most 100 classes). "auto": 100 where the rule picks Parabel's shape (sparse
        data with skewed labels and LIBLINEAR nodes), else None.
    loss : "tree" (Relaxation 2: shared slack over all depths, the paper's proposal),
        "independent" (Relaxation 1: a hinge per node), "softmax" (not in the paper: the
        cross-entropy of each path node against its siblings; a probability model, so
        ``log_proba`` and perplexity exist), or, node by node only, "hinge" / "logistic":
        one binary squared-hinge SVM / logistic regression per child against its siblings
        (Bonsai's and Parabel's nodes; path scores sum -max(0, 1 - s)^2 / log sigmoid(s)).
        "auto" (``defaults.resolve``): "hinge" with LIBLINEAR nodes; with SGD "tree", or
        "softmax" when the labels are skewed (next-word data, where the hinge collapses
        towards the most frequent label).
    epochs, lr : SGD passes and AdaGrad step size (regularisation is by the number of passes);
        the embedding tree's ``lr="auto"`` is 0.02 on sparse data; on dense data it is
        chosen on held-out training rows from 0.1 up or down (``_choose_lr``; 0.1 when the
        labels are skewed or the data too small to choose on).
    solver : "sgd" (AdaGrad SGD on ``loss`` over the whole tree) or "liblinear": every
        internal node fitted once, to convergence, on the rows whose class is under it
        (``xcbench.tree.node_fit``): ``loss="independent"`` with LIBLINEAR's Crammer-Singer
        multiclass SVM, ``"softmax"`` with a multinomial logistic regression, ``"hinge"`` /
        ``"logistic"`` one-vs-rest (``nodes``); ``C`` (larger regularises less) and
        ``max_iter`` apply, weights below ``prune`` in magnitude are dropped.
    bits : the node weight table's layout (``xcbench.tree.weights``): "auto" (dense rows when
        nodes x D x 8 bytes <= 256 MB, else hashed into 2^b slots), an int b (hashed), None,
        or "csr" (``solver="liblinear"`` only: the weights kept exactly, grouped by node,
        ``xcbench.tree.node_major``: no collisions, 16 bytes per weight kept).
    normalize : scale every row of X to unit length before training and scoring (Omikuji's
        preprocessing; makes ``C`` and ``prune`` independent of the rows' scale).
    n_trees : trees in the ensemble, each clustered with its own random draws; a label's
        score is the log of its mean exp(path score) over the trees, a tree whose beam did
        not reach it adding 0. Memory and latency grow linearly with n_trees.
    bonsai_trees : trees of Bonsai's shape (``defaults.bonsai_shape``: unbalanced 100-way
        k-means, two or three levels) added to the ensemble beside the ``n_trees`` trees of
        the shape the other parameters give, each with its own C when C is chosen (a mixed
        ensemble; 0: none). "auto": as many as ``n_trees`` where the rule picks Parabel's
        shape (skewed labels), else 0.
    beam : the beam width of decoding (query-time: ``set_params(beam=...)`` changes it on a
        fitted model). 1 is the greedy descent; top-1 is the best leaf of the beam.
    holdout, confusion_iter : share of training rows held out for the confusion matrix and
        L-BFGS iterations of its one-vs-rest model (structure="confusion" only).
    n_jobs : ``solver="liblinear"``: node problems solved at once, in worker processes
        (``xcbench.tree.node_pool``); "auto" is the fit's thread limit (``xcbench run
        --fit-threads``), one job on small data. The model is the same whatever n_jobs.

    Memory (fit, bytes): weight table 2 x 8 x S (weights + AdaGrad sums; S = nodes x D when
    direct, 2^bits when hashed) + 16 x nodes + structure O(K); with "confusion" also the
    one-vs-rest surrogate's K x D weights and its fit. ``solver="liblinear"``: one table
    8 x S, or 32 x P with ``bits="csr"`` (P the weights kept, at most nnz x branching x
    depth; ``kept_weights_estimate``), + 56 nnz + 40 N (X sorted by leaf order and the
    node problems' copies) + the widest node's solver state. Ensembles keep n_trees models.
    No O(K x D) array otherwise.
    """

    _parameter_constraints = {
        "structure": [StrOptions(set(STRUCTURES) | {"auto"})],
        "branching": [Interval(Integral, 2, None, closed="left"), StrOptions({"sqrt", "auto"})],
        "max_depth": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}), None],
        "leaf_size": [Interval(Integral, 2, None, closed="left"), StrOptions({"auto"}), None],
        "loss": [StrOptions(set(LOSS_CODES) | set(defaults.OVR_LOSSES) | {"auto"})],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "solver": [StrOptions(set(SOLVERS) | {"auto"})],
        "C": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "prune": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "bits": [Interval(Integral, 16, 30, closed="both"), StrOptions({"auto", "csr"}), None],
        "normalize": ["boolean", StrOptions({"auto"})],
        "n_trees": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "bonsai_trees": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
        "beam": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "holdout": [Interval(Real, 0, 1, closed="neither")],
        "confusion_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    }
    _embeds = False  # the label embedding tree (z = W x, node scores z . V_s)

    def __init__(self, structure="auto", branching="auto", max_depth="auto", loss="auto",
                 epochs=5, lr=0.1, solver="auto", C="auto", max_iter=1000, prune="auto",
                 bits="auto", normalize="auto", n_trees="auto", beam="auto", holdout=0.2,
                 confusion_iter=50, random_state=None, leaf_size="auto", bonsai_trees="auto",
                 n_jobs="auto"):
        self.structure = structure
        self.branching = branching
        self.max_depth = max_depth
        self.leaf_size = leaf_size
        self.loss = loss
        self.epochs = epochs
        self.lr = lr
        self.solver = solver
        self.C = C
        self.max_iter = max_iter
        self.prune = prune
        self.bits = bits
        self.normalize = normalize
        self.n_trees = n_trees
        self.bonsai_trees = bonsai_trees
        self.beam = beam
        self.holdout = holdout
        self.confusion_iter = confusion_iter
        self.random_state = random_state
        self.n_jobs = n_jobs

    # -- defaults by rule ----------------------------------------------------------------
    def _resolve(self, shape):
        """Every parameter of ``AUTO_PARAMS`` with "auto" resolved for data of ``shape``."""
        params = {name: getattr(self, name) for name in AUTO_PARAMS if hasattr(self, name)}
        return defaults.resolve(shape, params, embedding=self._embeds)

    def _p(self, name):
        """A parameter's value in use: resolved at fit time when it was "auto"."""
        value = getattr(self, name)
        if value == "auto" and hasattr(self, "_resolved"):
            return self._resolved[name]
        return value

    @property
    def _width(self):
        """d_e, the embedding's width in use: 0 for plain label trees; ``embedding_dim``,
        resolved by the rule when "auto" (set during and after fit, and while
        ``estimate_memory`` runs)."""
        if not self._embeds:
            return 0
        width = self._p("embedding_dim")
        if width == "auto":
            # not NotFittedError: an AttributeError inside a property is replaced by
            # __getattr__'s "no attribute" message
            raise RuntimeError("embedding_dim='auto' is resolved from the data: call fit "
                               "(or estimate_memory) first")
        return int(width)

    # -- structure ---------------------------------------------------------------------
    def _branching(self, n_classes, branching=None):
        branching = self._p("branching") if branching is None else branching
        if branching == "sqrt":
            return max(2, math.ceil(math.sqrt(n_classes)))
        return int(branching)

    def _shapes(self, n_classes):
        """[(shape, number of trees)]: ``n_trees`` of the shape the parameters give, then
        ``bonsai_trees`` of Bonsai's (when there are any)."""
        own = TreeShape(self._p("structure"), self._branching(n_classes),
                        self._p("max_depth"), self._p("leaf_size"))
        shapes = [(own, int(self._p("n_trees")))]
        if int(self._p("bonsai_trees")):
            shapes.append((TreeShape(**defaults.bonsai_shape(n_classes)),
                           int(self._p("bonsai_trees"))))
        return shapes

    def _split(self, X, y, n_classes, rng, structure):
        if structure == "random":
            return random_splitter(rng)
        embedding = class_embedding(X, y, n_classes, rng)
        if structure == "kmeans":
            return kmeans_splitter(embedding, rng)
        if structure == "kmeans_unbalanced":
            return unbalanced_kmeans_splitter(embedding, rng)
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
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        if X.shape[0] == 0:
            raise ValueError("X has no rows: label trees need training examples")
        self.data_shape_ = defaults.data_shape(X, y, self.n_classes_)
        self._resolved = self._resolve(self.data_shape_)
        own = self.get_params(deep=False)
        self.resolved_params_ = {k: self._resolved[k] for k in AUTO_PARAMS
                                 if own.get(k) == "auto"}
        if own.get("n_jobs") == "auto":  # the node problems solved at once (node_pool)
            self.resolved_params_["n_jobs"] = self._jobs(X)
        self._check_solver()
        # lr="auto" of the embedding tree on dense rows: chosen on held-out training rows
        self.lr_probe_ = {}
        if self._chooses_lr():
            self._choose_lr(X, y)
        rng = np.random.default_rng(self.random_state)
        self.n_features_in_ = X.shape[1]
        shapes = self._shapes(self.n_classes_)
        own = shapes[0][0]
        self.branching_ = own.branching
        if self._p("normalize"):
            X = _unit_rows(X)
        # C="auto" with hinge nodes: chosen on the root of the first tree of each shape
        # (node_c), which then holds for that shape's trees; node_C_ keeps each shape's C,
        # C_probes_ the held-out accuracy of each candidate (empty when not chosen)
        self.node_C_, self.C_probes_ = {}, {}
        self.trees_ = [self._fit_tree(X, y, rng, shape)
                       for shape, count in shapes for _ in range(count)]
        self.C_probe_ = self.C_probes_.get(own, {})
        if self.C_probe_:
            self._resolved["C"] = self.resolved_params_["C"] = self.node_C_[own]
        self._build_forest()
        first = self.trees_[0]
        self.tree_, self.table_, self.bias_, self.V_, self.mask_ = (
            first.tree, first.table, first.bias, first.V, first.mask)
        self.loss_curve_ = first.loss_curve
        return self

    def _fit_tree(self, X, y, rng, shape):
        """One tree of this TreeShape: its structure from this rng's draws, then its node
        scorers."""
        split = self._split(X, y, self.n_classes_, rng, shape.structure)
        tree = build_structure(self.n_classes_, shape.branching, split,
                               max_depth=shape.max_depth, leaf_size=shape.leaf_size)
        path_cost = path_arity_sums(tree) + self._width
        if self._p("solver") == "liblinear":
            C = self._node_C(shape, X, y, tree)
            table, bias, mask = self._fit_nodes(tree, X, y, rng, shape, C)
            return FittedTree(tree, table, bias, np.zeros((1, 1)), mask, [], path_cost)
        bits = self._p("bits")
        n_rows = self._width or tree.n_nodes
        size, mask = table_layout(n_rows, X.shape[1], bits,
                                  touched_pairs=self._touched_pairs(X, tree, shape))
        table = self._initial_table(size, rng)
        bias = np.zeros(tree.n_nodes)
        V = self._initial_embeddings(tree, rng)
        acc, bias_acc = np.full(size, 1e-8), np.full(tree.n_nodes, 1e-8)
        V_acc = np.full(V.shape[0], 1e-8)
        Xd, indptr, indices, data, dense = kernel_input(X)
        t = tree
        loss_curve = []
        for _ in range(int(self.epochs)):
            order = rng.permutation(X.shape[0]).astype(np.int64)
            loss = kernels.train_epoch(
                order, y, t.child_ptr, t.children, t.parent, t.path_ptr, t.path_node,
                table, acc, bias, bias_acc, X.shape[1], mask, Xd, indptr,
                indices, data, dense, float(self._p("lr")), LOSS_CODES[self._p("loss")], V,
                V_acc, self._embeds, t.max_arity)
            loss_curve.append(float(loss))
            self.report_progress(len(loss_curve), int(self.epochs), "epoch")
        return FittedTree(tree, table, bias, V, mask, loss_curve, path_cost)

    def _build_forest(self):
        """An ensemble of plain trees with exact stores is decoded in one compiled call
        (``kernels.forest_topk``): their arrays are concatenated into ``forest_`` (tree t's
        root at ``roots[t]``), and each tree's store becomes a view into the forest's, so
        the weights are held once."""
        self.__dict__.pop("forest_", None)
        trees = self.trees_
        if len(trees) < 2 or self._embeds or not all(m.exact for m in trees):
            return
        node_off = np.cumsum([0] + [m.tree.n_nodes for m in trees])
        edge_off = np.cumsum([0] + [len(m.tree.children) for m in trees])
        weight_off = np.cumsum([0] + [int(m.table[0][-1]) for m in trees])
        cat = np.concatenate
        node_ptr = cat([m.table[0][:-1] + weight_off[t] for t, m in enumerate(trees)]
                       + [weight_off[-1:]])
        # filled tree by tree, each tree's own store released once copied: the weights are
        # held about once, not twice (np.empty's pages are only taken when written)
        n = int(weight_off[-1])
        feature, slot, value = (np.empty(n, np.result_type(*(m.table[k] for m in trees)))
                                for k in (1, 2, 3))
        for t, m in enumerate(trees):
            lo, hi = weight_off[t], weight_off[t + 1]
            feature[lo:hi], slot[lo:hi], value[lo:hi] = m.table[1], m.table[2], m.table[3]
            m.table = None
        store = (node_ptr, feature, slot, value, *node_major.skip_index(node_ptr, feature))
        self.forest_ = Forest(
            node_off[:-1].astype(np.int64),
            cat([m.tree.child_ptr[:-1] + edge_off[t] for t, m in enumerate(trees)]
                + [edge_off[-1:]]).astype(np.int64),
            cat([m.tree.children + node_off[t] for t, m in enumerate(trees)]).astype(np.int64),
            cat([m.tree.node_label for m in trees]), cat([m.bias for m in trees]), store,
            max(m.tree.max_arity for m in trees))
        self._forest_views()

    def _forest_views(self):
        """Each tree's store as a view into the forest's (node and skip pointers sliced)."""
        f = self.forest_
        node_ptr, feature, slot, value, skip_ptr, skip = f.store
        for t, m in enumerate(self.trees_):
            lo, hi = f.roots[t], f.roots[t] + m.tree.n_nodes + 1
            m.table = (node_ptr[lo:hi], feature, slot, value, skip_ptr[lo:hi], skip)

    def __getstate__(self):
        state = self.__dict__.copy()
        if "forest_" in state:  # the trees' stores are views of the forest's: pickled once
            state["trees_"] = [FittedTree(m.tree, None, m.bias, m.V, m.mask, m.loss_curve,
                                          m.path_cost) for m in state["trees_"]]
            state.pop("table_", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if "forest_" in state:
            self._forest_views()
            self.table_ = self.trees_[0].table

    def _chooses_lr(self):
        """Whether fit chooses the embedding tree's SGD rate on the data: left at "auto",
        on dense rows (sparse rows keep the measured 0.02) whose labels are not skewed (a
        class sample of next-word data is unlike the data)."""
        return (self._embeds and self.lr == "auto" and not self.data_shape_.sparse
                and not skewed_labels(self.data_shape_.label_entropy))

    def _choose_lr(self, X, y):
        """lr from held-out rows: the whole model, the other settings as resolved, fitted
        on a sample of the classes at each rate of a walk along ``defaults.LR_LADDER`` from
        the rule's rate (``xcbench.contract.holdout``), which is kept unless clearly
        beaten; the rule's rate stays on data too small to choose on."""
        settings = {**self.get_params(), **self.resolved_params_}
        lr, self.lr_probe_ = choose_param(self, "lr", settings, X, y, self.n_classes_,
                                          defaults.LR_LADDER, float(self._resolved["lr"]))
        if lr is not None:
            self._resolved["lr"] = self.resolved_params_["lr"] = lr

    def _chooses_C(self):
        """Whether fit chooses C on the data: left at "auto", with one-vs-rest hinge nodes."""
        return (self.C == "auto" and self._p("solver") == "liblinear"
                and self._p("loss") == "hinge")

    def _node_C(self, shape, X, y, tree):
        """The C of this shape's trees: when fit chooses it, from the held-out accuracy of
        the first such tree's root at each candidate (``node_c.choose_C``; the rule's
        constant stays when the data is too small), else the resolved C."""
        if shape not in self.node_C_:
            C = float(self._p("C"))
            if self._chooses_C():
                chosen, self.C_probes_[shape] = node_c.choose_C(
                    X, y, tree, NODE_FITTERS["hinge"], self.random_state,
                    max_iter=int(self.max_iter), n_jobs=self._jobs(X))
                C = C if chosen is None else chosen
            self.node_C_[shape] = C
        return self.node_C_[shape]

    def _check_solver(self):
        solver, loss = self._p("solver"), self._p("loss")
        if solver == "liblinear" and loss not in NODE_FITTERS:
            raise ValueError(f"solver='liblinear' fits each node on its own; loss={loss!r} "
                             "couples every depth in one slack and has no node-by-node "
                             "solver: use loss='hinge' or 'logistic' (one binary classifier "
                             "per child), 'independent' (the multiclass hinge per node) or "
                             "'softmax'")
        if solver == "sgd" and loss in defaults.OVR_LOSSES:
            raise ValueError(f"loss={loss!r} (one binary classifier per child) is trained node "
                             "by node: use solver='liblinear'")
        check_exact_store(self._p("bits"), solver)

    def _fit_nodes(self, tree, X, y, rng, shape, C):
        """``solver="liblinear"``: every internal node of this tree (of TreeShape ``shape``)
        fitted once with this C on the rows reaching it (``xcbench.tree.node_fit.fit_nodes``),
        into an exact store or a toolkit table. Returns (weights, biases, mask)."""
        t = tree
        X = sp.csr_matrix(X, dtype=np.float64)
        bias = np.zeros(t.n_nodes)
        bits = self._p("bits")
        if bits == "csr":
            store = ExactRows()
            write = store.write
            mask = DIRECT
        else:
            size, mask = table_layout(t.n_nodes, X.shape[1], bits,
                                      touched_pairs=self._touched_pairs(X, t, shape))
            table = np.zeros(size)
            write = table_writer(table, X.shape[1], mask)
        fit_nodes(as_fit_tree(t.child_ptr, t.children, t.node_label, self.n_classes_), X, y,
                  write, bias, C=float(C), max_iter=int(self.max_iter),
                  seed=int(rng.integers(2**31)), threshold=float(self._p("prune")),
                  fit_node=NODE_FITTERS[self._p("loss")],
                  n_jobs=self._jobs(X))
        if bits == "csr":
            table = node_major.compact(store.node_major(t.child_ptr, t.children), X.shape[1])
        return table, bias, mask

    def _jobs(self, X):
        """Node problems solved at once for a fit on X (``n_jobs`` resolved,
        ``xcbench.tree.node_pool.resolve_jobs``)."""
        return node_pool.resolve_jobs(self.n_jobs, X.nnz if sp.issparse(X) else X.size)

    def _inputs(self, X):
        """Kernel inputs of checked X (CSR indices sorted), unit rows when ``normalize``
        (shared by all trees)."""
        Xd, indptr, indices, data, dense = sorted_kernel_input(X)
        if self._p("normalize"):
            Xd, data = kernels.unit_rows(Xd, indptr, data, dense)
        return Xd, indptr, indices, data, dense

    def _touched_pairs(self, X, tree, shape):
        """(row, feature) pairs training can touch: each example reaches about
        branching x depth node rows (or d_e rows) with its nonzeros."""
        nnz = X.nnz if sp.issparse(X) else X.size
        rows = self._width or path_rows(shape.branching, tree.depth, shape.leaf_size)
        return min(float(nnz) * rows, float(tree.n_nodes) * X.shape[1])

    def _initial_table(self, size, rng):
        return np.zeros(size)

    def _initial_embeddings(self, tree, rng):
        return np.zeros((1, 1))

    # -- predict -----------------------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "trees_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")

    @property
    def _score_code(self):
        return SCORE_CODES[self._p("loss")]

    def _member_topk(self, member, inputs, n_rows, k, beam):
        """(labels, scores) (n, k) of one tree by beam search of width ``beam``."""
        Xd, indptr, indices, data, dense = inputs
        t = member.tree
        W = _NO_TABLE if member.exact else member.table
        return kernels.beam_topk(int(k), int(beam), t.child_ptr, t.children, t.node_label,
                                 member.table, W, member.bias, self.n_features_in_,
                                 member.mask, Xd, indptr, indices, data, dense, n_rows,
                                 member.V, self._embeds, t.max_arity,
                                 self._score_code)

    def predict_topk(self, X, k=1):
        k = check_k(k)
        self._check_fitted()
        X = check_X(X, self.n_features_in_)
        inputs = self._inputs(X)
        beam, n = int(self._p("beam")), X.shape[0]
        if len(self.trees_) == 1:
            return self._member_topk(self.trees_[0], inputs, n, k, beam)
        if "forest_" in self.__dict__:
            first = self._forest_topk(inputs, n, beam)
            if k <= beam:
                return first[0][:, :k], first[1][:, :k]
            return _first_then_rest(first, *self._forest_topk(inputs, n, k), k)
        # an ensemble: each tree's whole beam, averaged; top-1 from beams of width `beam`
        first = self._average(inputs, n, beam, beam)
        if k <= beam:
            return first[0][:, :k], first[1][:, :k]
        labels, scores = self._average(inputs, n, k, k)
        return _first_then_rest(first, labels, scores, k)

    def _forest_topk(self, inputs, n, k):
        """Top-k of the ensemble by beams of width k, decoded in one call (``forest_``)."""
        f = self.forest_
        Xd, indptr, indices, data, dense = inputs
        return kernels.forest_topk(int(k), f.roots, f.child_ptr, f.children, f.node_label,
                                   f.store, f.bias, self.n_features_in_, DIRECT, Xd, indptr,
                                   indices, data, dense, n, f.max_arity, self._score_code)

    def _average(self, inputs, n, width, k):
        """Top-k of the trees' averaged beams of ``width`` (``kernels.average_members``)."""
        parts = [self._member_topk(m, inputs, n, width, width) for m in self.trees_]
        return kernels.average_members(np.stack([p[0] for p in parts]),
                                       np.stack([p[1] for p in parts]), int(k))

    def log_proba(self, X, y):
        """log p(y | x): the product of the sibling softmaxes along y's path (loss="softmax"
        only; the hinge losses' scores are margins, not probabilities); an ensemble's is the
        log of the trees' mean probability."""
        if self._p("loss") != "softmax":
            raise NotImplementedError(
                f"{type(self).__name__} with loss={self._p('loss')!r} scores are margins or "
                "one-vs-rest scores, not probabilities over the classes: no perplexity is "
                "reported (loss='softmax' defines one)")
        self._check_fitted()
        X = check_X(X, self.n_features_in_)
        y, _ = check_labels(y, X.shape[0], self.n_classes_)
        Xd, indptr, indices, data, dense = self._inputs(X)
        per_tree = []
        for m in self.trees_:
            t = m.tree
            W = _NO_TABLE if m.exact else m.table
            per_tree.append(kernels.path_log_proba(
                y, t.path_ptr, t.path_node, t.parent, t.child_ptr, t.children, m.table, W,
                m.bias, self.n_features_in_, m.mask, Xd, indptr, indices, data, dense, m.V,
                self._embeds, t.max_arity))
        if len(per_tree) == 1:
            return per_tree[0]
        return logsumexp(np.stack(per_tree), axis=0) - math.log(len(per_tree))

    def path_cost(self, X):
        """Vectors one prediction evaluates: greedy (beam 1), the children scored at each
        step of the path it takes (plus d_e rows of W for the embedding tree), per tree; a
        wider beam scores the children of up to ``beam`` nodes per level, counted here."""
        self._check_fitted()
        X = check_X(X, self.n_features_in_)
        beam = int(self._p("beam"))
        if beam == 1:
            total = np.zeros(X.shape[0])
            for m in self.trees_:
                labels, _ = self._member_topk(m, self._inputs(X), X.shape[0], 1, 1)
                total += m.path_cost[labels[:, 0]]
            return total
        inputs = self._inputs(X)
        Xd, indptr, indices, data, dense = inputs
        total = np.zeros(X.shape[0])
        for m in self.trees_:
            t = m.tree
            W = _NO_TABLE if m.exact else m.table
            total += kernels.beam_cost(beam, t.child_ptr, t.children, t.node_label, m.table,
                                       W, m.bias, self.n_features_in_, m.mask, Xd, indptr,
                                       indices, data, dense, X.shape[0], m.V,
                                       self._embeds, t.max_arity, self._score_code)
        return total

    # -- memory ------------------------------------------------------------------------
    def estimate_memory(self, n_samples, n_features, nnz, n_classes):
        self._validate_params()
        shape = defaults.DataShape(int(n_samples), int(n_features), nnz / max(n_samples, 1),
                                   int(n_classes),
                                   mostly_zeros(nnz, n_samples, n_features), 1.0)
        saved = getattr(self, "_resolved", None)
        self._resolved = self._resolve(shape)
        try:
            return self._estimate(n_samples, n_features, nnz, n_classes)
        finally:
            if saved is None:
                del self._resolved
            else:
                self._resolved = saved

    def _estimate(self, n_samples, n_features, nnz, n_classes):
        self._check_solver()
        total = phase = 0  # phase: the largest transient bytes of a fit step
        for shape, count in self._shapes(n_classes):
            kept, transient = self._trees_bytes(shape, count, n_samples, n_features, nnz,
                                                n_classes)
            total, phase = total + kept, max(phase, transient)
        total += 8 * n_samples  # the rows' leaf order
        if self._p("normalize"):
            total += 8 * nnz + 16 * n_samples  # the unit-row copy of X
        total += phase
        if self._p("structure") == "confusion":
            from xcbench.api import make_method

            ova = make_method("ova", max_iter=int(self.confusion_iter))
            total += ova.estimate_memory(n_samples, n_features, nnz, n_classes) or \
                8 * n_classes * n_features * 4
        return int(total)

    def _trees_bytes(self, shape, count, n_samples, n_features, nnz, n_classes):
        """(bytes kept, transient bytes) of ``count`` trees of TreeShape ``shape``."""
        branching = shape.branching
        if shape.structure == "kmeans_unbalanced":
            # at most 2K nodes (every internal node has >= 2 children); the depth limit
            depth = int(shape.max_depth or math.ceil(math.log2(max(n_classes, 2))))
            n_nodes = 2 * n_classes
        else:
            n_nodes, depth = structure_size(n_classes, branching, shape.leaf_size)
        depth = max(depth, 1)
        width = self._width
        rows = width or n_nodes
        pairs = min(float(nnz) * (width or path_rows(branching, depth, shape.leaf_size)),
                    float(n_nodes) * n_features)
        phase = 0  # the node-by-node fit's transient bytes (after the structure's)
        if self._p("solver") == "liblinear":
            total, phase = self._node_fit_bytes(
                n_samples, n_features, nnz, n_nodes, widest_node(branching, shape.leaf_size),
                depth, pairs, count)
        else:
            total = count * table_bytes(rows, n_features, self._p("bits"), pairs, copies=2)
        total += count * (64 * n_nodes + 16 * n_classes)  # structure
        total += count * 2 * 8 * n_nodes * max(width, 1)  # V and its sums
        if shape.structure != "random":
            # class means (dense data: projected to 64 dims; sparse: CSR, <= nnz entries, and
            # the centres); the root split's K x b similarities, their sort and copy
            # (built and freed before the nodes are fitted)
            phase = max(phase, max(8 * n_classes * 64 * 3, 48 * nnz)
                        + 3 * 8 * n_classes * branching)
        return total, phase

    def _node_fit_bytes(self, n_samples, n_features, nnz, n_nodes, branching, depth, pairs,
                        n_trees=1):
        """``solver="liblinear"``'s (weights kept, transient bytes of the node fits): the
        class docstring."""
        loss, prune = self._p("loss"), float(self._p("prune"))
        if self._p("bits") == "csr":  # collected per row, then packed by node: 16 bytes each
            kept = kept_weights_estimate(pairs, nnz, depth, branching, prune, loss)
            total = 16 * kept * (n_trees + 1)  # every tree's store + one being packed
        else:
            total = n_trees * table_bytes(n_nodes, n_features, self._p("bits"), pairs)
        phase = 56 * nnz + 40 * n_samples
        # the widest node's coefficients: LIBLINEAR's and a copy, m x (active features)
        phase += 2 * 8 * branching * min(nnz, n_features)
        if loss == "independent":  # Crammer-Singer: per (row, class) dual variables
            phase += 16 * n_samples * branching
        elif loss == "softmax":  # multinomial L-BFGS: ~16 vectors over classes x features
            phase += 8 * branching * (16 * min(nnz, n_features) + 4 * n_samples)
        else:  # one-vs-rest: one binary problem's dual variables at a time
            phase += 16 * n_samples
        return total, phase

    def _by_shape(self, name):
        """A per-shape dict of fit (``node_C_``, ``C_probes_``) keyed "own" and "bonsai"
        (the order the shapes were fitted in)."""
        return dict(zip(("own", "bonsai"), self.__dict__.get(name, {}).values()))

    def _shape_stats(self) -> list[dict]:
        """Per tree shape of the ensemble (see ``_shapes``): its parameters, its number of
        trees, and the deepest path and widest node over those trees."""
        out, start = [], 0
        for name, (shape, count) in zip(("own", "bonsai"), self._shapes(self.n_classes_)):
            shape_trees = [_depths_and_arity(m.tree) for m in self.trees_[start:start + count]]
            start += count
            out.append({"shape": name, "n_trees": count, **shape._asdict(),
                        "depth": max(int(depths.max()) for depths, _ in shape_trees),
                        "arity_max": max((int(arity.max()) for _, arity in shape_trees
                                          if arity.size), default=0)})
        return out

    def stats(self):
        self._check_fitted()
        n_params = weight_bytes = 0
        forest = self.__dict__.get("forest_")
        for m in self.trees_:
            weights = m.table[3] if m.exact else m.table
            n_params += (0 if forest else weights.size) + m.bias.size
            n_params += m.V.size if self._embeds else 0
            if not forest:
                weight_bytes += (sum(a.nbytes for a in m.table) if m.exact else weights.nbytes)
            weight_bytes += m.bias.nbytes + m.V.nbytes + m.tree.nbytes()
        if forest:  # the weights once, and the forest's own arrays
            n_params += forest.store[3].size
            weight_bytes += sum(a.nbytes for a in forest.store) + sum(
                a.nbytes for a in (forest.roots, forest.child_ptr, forest.children,
                                   forest.node_label, forest.bias))
        depths, arity = _depths_and_arity(self.tree_)
        return {
            "n_params": int(n_params),
            "bytes": int(weight_bytes),
            "depth": int(depths.max()),
            "depth_mean": float(depths.mean()),
            "leaves": int(self.n_classes_),
            "internal_nodes": int(arity.size),  # one arity per internal node
            "branching": int(self.branching_),
            "arity_max": int(arity.max()) if arity.size else 0,
            "arity_mean": float(arity.mean()) if arity.size else 0.0,
            "n_trees": len(self.trees_),
            "bonsai_trees": int(self._p("bonsai_trees")),
            # depth, branching and arity above are the first tree's shape; each shape's here
            "shapes": self._shape_stats(),
            # each shape's node C ("own": the shape the parameters give; "bonsai": the
            # added Bonsai trees') with LIBLINEAR nodes
            "node_C": self._by_shape("node_C_"),
            "beam": int(self._p("beam")),
            "hashed_weights": bool(self.mask_ != DIRECT),
            "weight_layout": ("csr" if self.trees_[0].exact else
                              "direct" if self.mask_ == DIRECT else "hashed"),
            "classes_per_leaf_mean": 1.0,
            "classes_per_leaf_max": 1,
            "resolved_params": dict(self.resolved_params_),
            # C="auto" with hinge nodes: the root's held-out accuracy at each candidate C
            "C_probe": {str(C): acc for C, acc in (self.__dict__.get("C_probe_") or {}).items()},
            "bonsai_C_probe": {str(C): acc for C, acc in
                               self._by_shape("C_probes_").get("bonsai", {}).items()},
            # lr="auto" of the embedding tree on dense rows: held-out accuracy at each rate
            "lr_probe": {str(lr): acc for lr, acc in self.__dict__.get("lr_probe_", {}).items()},
            "train_loss_curve": self.loss_curve_,
        }


def _depths_and_arity(tree):
    """A tree's path length to each class, and the number of children of each internal
    node."""
    return np.diff(tree.path_ptr), np.diff(tree.child_ptr)[tree.node_label < 0]


def _first_then_rest(first, labels, scores, k):
    """Lists whose first entry is ``first``'s (the narrower beam's best) and the rest the
    other labels of (labels, scores) in order, scores capped at the first's."""
    n = labels.shape[0]
    out_l = np.full((n, k), -1, dtype=np.int64)
    out_s = np.full((n, k), -np.inf)
    out_l[:, 0], out_s[:, 0] = first[0][:, 0], first[1][:, 0]
    for i in range(n):
        rest = [(c, s) for c, s in zip(labels[i], scores[i]) if c >= 0 and c != out_l[i, 0]]
        for j, (c, s) in enumerate(rest[:k - 1]):
            out_l[i, j + 1], out_s[i, j + 1] = c, min(s, out_s[i, 0])
    return out_l, out_s


def _unit_rows(X):
    """X with every nonzero row scaled to unit L2 length (a copy)."""
    from sklearn.preprocessing import normalize

    return normalize(X, norm="l2", copy=True)


class LabelEmbeddingTree(LabelTree):
    """Label embedding tree: z = W x (d_e = ``embedding_dim``) computed once per example,
    node s scored by z . V_s; W and V trained jointly by SGD on the tree loss (Relaxation 2;
    or ``loss="softmax"``, see ``LabelTree``; ``"auto"`` takes the softmax on skewed labels)
    with ||V_s|| <= 1. Same structures and
    parameters as ``LabelTree`` (``loss="independent"`` is a plain label tree's only), and:

    embedding_dim : d_e, an int, or "auto" (``defaults.embedding_width``): the paper's 100
        on sparse rows (at most 10% nonzeros) and skewed labels (next-word data); on other
        dense rows max(100, D) capped at 256, so z = W x does not narrow x of up to 256
        features (letter's D = 16 and ALOI's 27 keep 100). The value used is in
        ``resolved_params_``; docs/methods/label-trees.md ("The embedding's width").

    Memory (fit, bytes): W table 2 x 8 x S (S = d_e x D direct, or 2^bits hashed) + V and its
    sums 16 x nodes x d_e + structure O(K).
    """

    _embeds = True

    _parameter_constraints = {
        **LabelTree._parameter_constraints,
        "loss": [StrOptions({"tree", "softmax", "auto"})],
        "bits": [Interval(Integral, 16, 30, closed="both"), StrOptions({"auto"}), None],
        "embedding_dim": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    }

    def __init__(self, structure="auto", branching="auto", max_depth="auto",
                 embedding_dim="auto", loss="auto", epochs=5, lr="auto", bits="auto",
                 n_trees="auto", beam="auto", holdout=0.2, confusion_iter=50,
                 random_state=None):
        super().__init__(structure=structure, branching=branching, max_depth=max_depth,
                         loss=loss, epochs=epochs, lr=lr, solver="sgd", C=1.0, prune=0.0,
                         bits=bits, normalize=False, n_trees=n_trees, beam=beam,
                         holdout=holdout, confusion_iter=confusion_iter,
                         random_state=random_state, leaf_size=None, bonsai_trees=0)
        self.embedding_dim = embedding_dim

    def _initial_table(self, size, rng):
        """W starts random (a zero W gives z = 0 and no gradient for V)."""
        return rng.normal(0.0, 1.0 / math.sqrt(max(self.n_features_in_, 1)), size)

    def _initial_embeddings(self, tree, rng):
        V = rng.normal(size=(tree.n_nodes, self._width))
        return V / np.linalg.norm(V, axis=1, keepdims=True)
