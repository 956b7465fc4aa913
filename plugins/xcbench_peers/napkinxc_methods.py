"""napkinXC models behind the xcbench method contract.

Labels and features pass in memory (numpy or CSR; napkinXC appends its own bias feature).
napkinXC keeps its model in a folder: each fitted method owns a temporary folder, and
pickling carries the folder's files. Probabilities are napkinXC's own (``predict_proba``; PLT's
normalised over the labels, see NapkinPLT);
``log_proba`` asks for every label's probability (exact, but O(K) per example).
"""
from __future__ import annotations

import math
import shutil
import tempfile
from numbers import Integral, Real
from pathlib import Path

import numpy as np
from sklearn.utils._param_validation import Interval

from xcbench.contract.method import Method, check_k, check_labels, check_X

from .optional import cpu_threads, require

#: napkinXC's own run-time allocations, whatever the data: 33-34 MB measured on a
#: 5,000 x 2,000 problem (K=100) with the library already imported
RUNTIME_BYTES = 64 * 2 ** 20

#: (label, probability) pairs ``log_proba`` asks napkinXC for at once, and what they hold:
#: ~270 bytes each as Python pairs (1e6 pairs took 0.27 GB at K = 1e4)
LOG_PROBA_PAIRS = 250_000
LOG_PROBA_PAIR_BYTES = 300

#: share of the unpruned weight bound napkinXC keeps (weights below 0.1 dropped): the saved
#: models of ``synthetic-sparse-1k/10k/100k`` and ``ptb-sparse`` held 1.0-2.2% of it at
#: 16 bytes per weight (HSM and PLT, arity 2, 100 leaves, C = 10); 0.1 keeps a margin over
#: those. Dense data with few features meets the per-feature bound instead.
KEPT_WEIGHT_SHARE = 0.1

#: bytes per kept weight once the model is loaded to predict: napkinXC's loaded models
#: took 3.7x their saved files at K = 1e4 and ~10x at K = 1e5 (nxc-hsm: 0.50 GB of
#: files, ~5.3 GB predicting)
LOADED_BYTES_PER_WEIGHT = 48


def _import_models():
    return require("napkinxc.models", "napkinXC", "napkinxc", "napkinxc")


class _NapkinModel(Method):
    """Shared wrapper; subclasses name the napkinXC model class in ``_model_name``."""

    _model_name = ""
    _normalize = False  # divide each label's probability by the sum over all labels
    _parameter_constraints = {
        "tree_type": [str],
        "arity": [Interval(Integral, 2, None, closed="left")],
        "max_leaves": [Interval(Integral, 1, None, closed="left")],
        "C": [Interval(Real, 0, None, closed="neither")],
        # napkinXC: 0 = all CPUs, -1 = all but one
        "threads": [Interval(Integral, -1, None, closed="left")],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
    }

    def _make(self, folder):
        model_cls = getattr(_import_models(), self._model_name)
        return model_cls(str(folder), tree_type=self.tree_type, arity=self.arity,
                         max_leaves=self.max_leaves, liblinear_c=self.C,
                         seed=self.random_state or 0, threads=self.threads)

    def fit(self, X, y, n_classes=None):
        self._validate_params()
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        self.n_features_in_ = X.shape[1]
        self._folder = Path(tempfile.mkdtemp(prefix="xcbench-nxc-"))
        self.model_ = self._make(self._folder)
        self.model_.fit(X, [[int(c)] for c in y])
        return self

    def _proba_lists(self, X, k):
        X = check_X(X, self.n_features_in_)
        return self.model_.predict_proba(X, top_k=k)

    def predict_topk(self, X, k=1):
        k = check_k(k)
        rows = self._proba_lists(X, k)
        labels = np.full((len(rows), k), -1, dtype=np.int64)
        scores = np.full((len(rows), k), -np.inf)
        for i, row in enumerate(rows):
            for j, (label, p) in enumerate(row[:k]):
                labels[i, j] = label
                scores[i, j] = np.log(p) if p > 0 else -np.inf
        return labels, scores

    def log_proba(self, X, y, chunk=None):
        """napkinXC answers with every label's probability as Python pairs, so rows go
        ``chunk`` at a time, by default about ``LOG_PROBA_PAIRS`` pairs (~70 MB) per call
        (256 rows at K = 1e5 are 25.6 million pairs: the cell's RSS rose by ~3 GB)."""
        X = check_X(X, self.n_features_in_)
        y, _ = check_labels(y, X.shape[0], self.n_classes_)
        chunk = chunk or max(1, min(256, LOG_PROBA_PAIRS // self.n_classes_))
        out = np.full(len(y), -np.inf)
        for start in range(0, X.shape[0], chunk):
            rows = self.model_.predict_proba(X[start:start + chunk], top_k=self.n_classes_)
            for i, row in enumerate(rows):
                p = dict(row).get(int(y[start + i]), 0.0)
                if self._normalize and p > 0:
                    p /= sum(q for _, q in row)
                out[start + i] = np.log(p) if p > 0 else -np.inf
        return out

    def support_size(self, X):
        return np.full(X.shape[0], self.n_classes_, dtype=np.int64)

    def estimate_memory(self, n_samples, n_features, nnz, n_classes):
        """Upper estimate of the larger of a fit and of predicting with the fitted model.

        Both hold napkinXC's copy of X and the labels: 16 bytes (int index, double value)
        per stored value and per row (its bias feature), counted twice (Python's conversion
        beside it). Beyond that, the fit holds:

        - the label vectors its k-means tree clusters (at most one entry per stored value);
        - each example's label at every node it trains: ``arity`` children per level above
          its cluster and up to ``max_leaves`` in it; 16 bytes each (9-13 measured);
        - LIBLINEAR's dense work vectors (8 of D + 1 doubles per thread);

        and predicting holds the loaded model: the weights napkinXC keeps (it drops those
        below 0.1), at most ``KEPT_WEIGHT_SHARE`` of the unpruned bound (one weight per
        stored value of every example a node trains on, at most one per feature per node),
        ``LOADED_BYTES_PER_WEIGHT`` each, and ``log_proba``'s pairs.

        At K = 1e5 (``synthetic-sparse-100k``) this says 10.6 GB; measured above the loaded
        data: fit 2.5 GB, prediction ~5.3 (nxc-hsm) and ~5.9 GB (nxc-plt). The unpruned
        bound said 33.9 GB."""
        self._validate_params()
        values = nnz + n_samples
        clusters = math.ceil(n_classes / self.max_leaves)
        nodes = n_classes + 2 * clusters + 1  # labels + the k-means tree above them
        depth = 1 + math.ceil(math.log(max(clusters, 1), self.arity)) if clusters > 1 else 1
        trained_per_example = min(self.max_leaves + self.arity * depth, nodes)
        label_vectors = 2 * 16 * min(nnz, n_classes * n_features)
        node_labels = 16 * n_samples * trained_per_example
        work = 8 * 8 * (n_features + 1) * cpu_threads(self.threads)
        kept = min(nodes * (n_features + 1), KEPT_WEIGHT_SHARE * trained_per_example * values)
        fit = label_vectors + node_labels + work
        predict = LOADED_BYTES_PER_WEIGHT * kept + LOG_PROBA_PAIR_BYTES * LOG_PROBA_PAIRS
        return int(RUNTIME_BYTES + 2 * 16 * values + max(fit, predict))

    def stats(self):
        size = sum(f.stat().st_size for f in self._folder.iterdir())
        return {"n_params": int(size // 4), "bytes": int(size), "note": "bytes: napkinXC files"}

    def __getstate__(self):
        state = self.__dict__.copy()
        if "model_" in state:
            state["model_"] = None
            state["_files"] = {f.name: f.read_bytes() for f in self._folder.iterdir()}
            state["_folder"] = None
        return state

    def __setstate__(self, state):
        files = state.pop("_files", None)
        self.__dict__.update(state)
        if files is not None:
            self._folder = Path(tempfile.mkdtemp(prefix="xcbench-nxc-"))
            for name, blob in files.items():
                (self._folder / name).write_bytes(blob)
            self.model_ = self._make(self._folder)
            self.model_.load()

    def __del__(self):
        folder = getattr(self, "_folder", None)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


class NapkinHSM(_NapkinModel):
    """napkinXC ``HSM``: hierarchical softmax over a (by default k-means) label tree."""

    _model_name = "HSM"

    def __init__(self, tree_type="hierarchicalKmeans", arity=2, max_leaves=100, C=10.0,
                 threads=1, random_state=None):
        self.tree_type = tree_type
        self.arity = arity
        self.max_leaves = max_leaves
        self.C = C
        self.threads = threads
        self.random_state = random_state


class NapkinPLT(NapkinHSM):
    """napkinXC ``PLT``: probabilistic label tree (node probabilities as independent
    sigmoids). On multiclass data its label scores need not sum to one (0.83 to 1.10 over
    the 12 classes of the conformance problem), so ``log_proba`` divides each by their sum
    over all labels, giving a distribution over the classes (perplexity is computed from
    it); ``predict_topk`` keeps napkinXC's own scores (same order)."""

    _model_name = "PLT"
    _normalize = True
