"""Omikuji's Parabel and Bonsai label trees behind the xcbench method contract
(``pip install omikuji``, a Rust library; ``omikuji-parabel``, ``omikuji-bonsai``).

Multi-class data is given to Omikuji as single-label multi-label data. Omikuji trains only
from a file in the Extreme Classification Repository format, so ``fit`` writes one to a
temporary folder (header ``N D K``, then ``label j:v j:v ...`` per row, dense or CSR input);
prediction passes each row's (feature, value) pairs in memory.

Configurations, from Omikuji's README: **Parabel** = Omikuji's defaults (balanced 2-means
tree, ``min_branch_size`` 100 labels per leaf, ``max_depth`` 20, 3 trees, squared-hinge
linear classifiers with C = 1 and weights below 0.1 pruned); **Bonsai** = regular
(unbalanced) k-means with ``cluster_k`` 100 and ``max_depth`` 3, the rest as Parabel.
Prediction is Omikuji's beam search (beam 10, its default).

No ``log_proba``: Omikuji scores each label by a product along its tree path of
independent one-vs-rest node scores (``exp(-squared hinge)`` by default; a sigmoid with
``linear_loss="log"``), averaged over the trees. These are multi-label scores: they do not
sum to one over the classes and the API returns only the beam's top-k, so there is no
multi-class probability model to report without inventing one (the contract then asks
for NotImplementedError). ``predict_topk`` returns log(score), best first.

Omikuji seeds its k-means and solvers from an unseeded thread RNG, so two fits differ
slightly; it takes no ``random_state``. Memory: ``estimate_memory`` bounds the weights
before pruning (pruned models are usually far smaller; see its docstring).
"""
from __future__ import annotations

import contextlib
import math
import os
import sys
import tempfile
from numbers import Integral, Real
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from xcbench.contract.method import Method, check_k, check_labels, check_X

from .optional import require
from .text_features import feature_pairs_text


#: Omikuji's own run-time allocations, whatever the data: 36-37 MB measured on a
#: 5,000 x 2,000 problem (K=100) with the library already imported
RUNTIME_BYTES = 64 * 2 ** 20
# weights kept after Omikuji's threshold, per stored value and tree level (measured <= 0.5,
# estimate_memory's docstring); valid from this threshold up
KEPT_PER_VALUE_LEVEL, PRUNED_THRESHOLD = 1.0, 0.1


def _omikuji():
    return require("omikuji", "Omikuji", "omikuji", "omikuji")


@contextlib.contextmanager
def _output_captured():
    """Omikuji's Rust code logs to file descriptor 1 and draws progress bars on 2 (one
    update per example): drop the bars, keep the log in a temporary file and add its last
    lines to a RuntimeError raised meanwhile."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile(mode="w+") as log, open(os.devnull, "w") as null:
        try:
            os.dup2(log.fileno(), 1)
            os.dup2(null.fileno(), 2)
            yield
        except RuntimeError as exc:
            log.seek(0)
            raise RuntimeError(f"{exc}; Omikuji's log ended with:\n{log.read()[-2000:]}") from exc
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


def write_xc_repo_file(path, X, y, n_classes: int) -> None:
    """Write (X, y) in the Extreme Classification Repository format Omikuji reads."""
    with open(path, "w") as f:
        f.write(f"{X.shape[0]} {X.shape[1]} {n_classes}\n")
        for label, pairs in zip(y.tolist(), feature_pairs_text(X)):
            f.write(f"{label} {pairs}\n" if pairs else f"{label}\n")


def _row_pairs(X):
    """(feature, value) pairs of each row, sorted by feature, as Omikuji's predict takes."""
    if sp.issparse(X):
        return [list(zip(X.indices[X.indptr[i]:X.indptr[i + 1]].tolist(),
                         X.data[X.indptr[i]:X.indptr[i + 1]].tolist()))
                for i in range(X.shape[0])]
    out = []
    for row in X:
        nz = np.flatnonzero(row)
        out.append(list(zip(nz.tolist(), row[nz].tolist())))
    return out


def _tree_index(name: str) -> int:
    return int(name[len("tree"):-len(".cbor")])


def load_in_tree_order(files: dict):
    """Load a model from its saved files ({name: bytes}) with its trees in their saved order.

    Omikuji saves tree i as ``tree{i}.cbor`` but loads trees in directory-listing order,
    and sums the trees' float32 scores in that order, so a plain reload can change scores in
    the last digit. The tree files are created first, then filled in listing order.
    """
    trees = sorted((n for n in files if n.startswith("tree") and n.endswith(".cbor")),
                   key=_tree_index)
    with tempfile.TemporaryDirectory(prefix="xcbench-omikuji-") as folder:
        for name, blob in files.items():
            (Path(folder) / name).write_bytes(b"" if name in trees else blob)
        listed = [n for n in os.listdir(folder) if n in trees]
        for name, source in zip(listed, trees):
            (Path(folder) / name).write_bytes(files[source])
        with _output_captured():
            return _omikuji().Model.load(folder)


class _OmikujiTree(Method):
    """Shared wrapper; subclasses set the tree-building defaults."""

    _parameter_constraints = {
        "n_trees": [Interval(Integral, 1, None, closed="left")],
        "cluster_k": [Interval(Integral, 2, None, closed="left")],
        "cluster_balanced": ["boolean"],
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "min_branch_size": [Interval(Integral, 2, None, closed="left")],
        "linear_c": [Interval(Real, 0, None, closed="neither")],
        "linear_loss": [StrOptions({"hinge", "log"})],
        "linear_weight_threshold": [Interval(Real, 0, None, closed="left")],
        "beam_size": [Interval(Integral, 1, None, closed="left")],
        "n_threads": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_trees, cluster_k, cluster_balanced, max_depth, min_branch_size,
                 linear_c, linear_loss, linear_weight_threshold, beam_size, n_threads):
        self.n_trees = n_trees
        self.cluster_k = cluster_k
        self.cluster_balanced = cluster_balanced
        self.max_depth = max_depth
        self.min_branch_size = min_branch_size
        self.linear_c = linear_c
        self.linear_loss = linear_loss
        self.linear_weight_threshold = linear_weight_threshold
        self.beam_size = beam_size
        self.n_threads = n_threads

    def _hyper_params(self, omikuji):
        hp = omikuji.Model.default_hyper_param()
        hp.n_trees = int(self.n_trees)
        hp.cluster_k = int(self.cluster_k)
        hp.cluster_balanced = bool(self.cluster_balanced)
        hp.max_depth = int(self.max_depth)
        hp.min_branch_size = int(self.min_branch_size)
        hp.linear_c = float(self.linear_c)
        hp.linear_loss_type = omikuji.LossType[self.linear_loss.upper()].value
        hp.linear_weight_threshold = float(self.linear_weight_threshold)
        return hp

    def fit(self, X, y, n_classes=None):
        self._validate_params()
        omikuji = _omikuji()
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        self.n_features_in_ = X.shape[1]
        with tempfile.TemporaryDirectory(prefix="xcbench-omikuji-") as folder:
            path = str(Path(folder) / "train.txt")
            write_xc_repo_file(path, X, y, self.n_classes_)
            with _output_captured():
                self.model_ = omikuji.Model.train_on_data(path, self._hyper_params(omikuji),
                                                          n_threads=int(self.n_threads))
        self.model_.init_prediction_thread_pool(int(self.n_threads))
        return self

    def predict_topk(self, X, k=1):
        k = check_k(k)
        X = check_X(X, self.n_features_in_)
        rows = _row_pairs(X)
        labels = np.full((len(rows), k), -1, dtype=np.int64)
        scores = np.full((len(rows), k), -np.inf)
        for i, pairs in enumerate(rows):
            found = self.model_.predict(pairs, beam_size=int(self.beam_size), top_k=int(k))
            for j, (label, score) in enumerate(found[:k]):
                labels[i, j] = label
                scores[i, j] = np.log(score) if score > 0 else -np.inf
        return labels, scores

    def log_proba(self, X, y):
        raise NotImplementedError("Omikuji's label scores are multi-label path scores, not a "
                                  "probability distribution over the classes")

    def stats(self):
        files = self._model_files()
        size = sum(len(blob) for blob in files.values())
        return {"n_params": int(size // 8), "bytes": int(size), "n_trees": self.model_.n_trees,
                "note": "bytes: Omikuji's saved model (CBOR); n_params ~ bytes / 8 "
                        "(sparse index + value per weight)"}

    def estimate_memory(self, n_samples, n_features, nnz, n_classes):
        """Upper estimate of a fit (and of the model predicting afterwards):

        - the training file's text while ``fit`` writes it (~17 characters per stored value,
          ~64 bytes per row as Python strings, counted twice) and Omikuji's copy of the data
          and of the label centroids, 8 bytes (u32 index, f32 value) per stored value, twice;
        - each tree's weights, 8 bytes per weight: at most one per feature for each of at most
          3K classifiers (every tree node holds a label), and at most one per stored value
          of the examples a classifier is trained on (``cluster_k`` classifiers per example
          per level, ``min_branch_size`` at the leaves);
        - a dense float32 weight vector per child being trained, per thread, and the runtime.

        Omikuji drops each classifier's weights below ``linear_weight_threshold`` as soon as
        it is trained, so with the default threshold (0.1) the kept weights are bounded by
        ``KEPT_PER_VALUE_LEVEL`` per stored value per tree level instead: saved models kept
        0.35-0.5 per value and level (Bonsai 1.4 / 1.85 / 1.94 per value over 4 levels at
        K = 1e3 / 1e4 / 1e5, Parabel 4.7 over 11 levels at 1e5, ``synthetic-sparse-*``);
        the bound takes twice that. At K = 1e5 this estimates Bonsai at 3.1 GB (measured
        peaks 2.7 and 2.9 GB) where the weight bound said 165 GB."""
        self._validate_params()
        values = nnz + n_samples
        text = 2 * (17 * nnz + 64 * n_samples)
        leaves = max(math.ceil(n_classes / self.min_branch_size), 1)
        levels = math.ceil(math.log(leaves, self.cluster_k)) if leaves > 1 else 0
        depth = min(int(self.max_depth), levels if self.cluster_balanced else
                    max(levels, int(self.max_depth)))
        per_tree = min(3 * n_classes * (n_features + 1),
                       (self.cluster_k * depth + self.min_branch_size) * values)
        if self.linear_weight_threshold >= PRUNED_THRESHOLD:
            per_tree = min(per_tree, KEPT_PER_VALUE_LEVEL * (depth + 1) * values)
        work = 4 * (n_features + 1) * self.cluster_k * int(self.n_threads)
        return int(RUNTIME_BYTES + text + 2 * 8 * values + 8 * self.n_trees * per_tree + work)

    def _model_files(self) -> dict:
        with tempfile.TemporaryDirectory(prefix="xcbench-omikuji-") as folder:
            with _output_captured():
                self.model_.save(folder)
            return {p.name: p.read_bytes() for p in Path(folder).iterdir()}

    def __getstate__(self):
        state = self.__dict__.copy()
        if "model_" in state:
            state["model_"] = self._model_files()
        return state

    def __setstate__(self, state):
        files = state.get("model_")
        self.__dict__.update(state)
        if isinstance(files, dict):
            self.model_ = load_in_tree_order(files)
            self.model_.init_prediction_thread_pool(int(self.n_threads))


class OmikujiParabel(_OmikujiTree):
    """Parabel as Omikuji's README configures it: balanced 2-means tree, 100 labels per
    leaf, depth <= 20, 3 trees."""

    def __init__(self, n_trees=3, cluster_k=2, cluster_balanced=True, max_depth=20,
                 min_branch_size=100, linear_c=1.0, linear_loss="hinge",
                 linear_weight_threshold=0.1, beam_size=10, n_threads=1):
        super().__init__(n_trees, cluster_k, cluster_balanced, max_depth, min_branch_size,
                         linear_c, linear_loss, linear_weight_threshold, beam_size, n_threads)


class OmikujiBonsai(_OmikujiTree):
    """Bonsai as Omikuji's README configures it: unbalanced k-means, cluster_k = 100,
    depth <= 3 (wide, shallow trees), 3 trees."""

    def __init__(self, n_trees=3, cluster_k=100, cluster_balanced=False, max_depth=3,
                 min_branch_size=100, linear_c=1.0, linear_loss="hinge",
                 linear_weight_threshold=0.1, beam_size=10, n_threads=1):
        super().__init__(n_trees, cluster_k, cluster_balanced, max_depth, min_branch_size,
                         linear_c, linear_loss, linear_weight_threshold, beam_size, n_threads)
