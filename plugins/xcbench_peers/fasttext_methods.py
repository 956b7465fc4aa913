"""fastText supervised classifiers behind the xcbench method contract, for datasets whose
X holds word ids (``ptb-words``): each row becomes the text ``p0_w<id> p1_w<id> ...`` (with
``positional=True`` the token says the word's position, so fastText's bag of words keeps
word order) and each label ``__label__<class>``. fastText trains from a text file: one is
written to a temporary folder and deleted after training; pickling carries the model bytes.

``log_proba`` asks fastText for every label with probability >= ``proba_threshold``
(default 1e-6; fastText's hierarchical softmax prunes the rest of its tree); a true label
below it counts as not covered (-inf), so coverage here means "p >= threshold".
"""
from __future__ import annotations

import os
import tempfile
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from xcbench.contract.method import Method, check_k, check_labels, check_X

from .optional import require

NGRAM_BUCKETS = 2_000_000  # fastText's default hash buckets, used when word_ngrams > 1


def _fasttext():
    return require("fasttext", "fastText", "fasttext-community", "fasttext")


class FastTextClassifier(Method):
    """fastText ``train_supervised`` with ``loss`` ``"hs"`` (hierarchical softmax on a
    Huffman tree) or ``"softmax"``; ``dim``, ``epoch``, ``lr``, ``word_ngrams`` as in fastText.
    Memory: (tokens + n-gram buckets + K) x dim float32 weights."""

    _parameter_constraints = {
        "loss": [StrOptions({"hs", "softmax"})],
        "dim": [Interval(Integral, 1, None, closed="left")],
        "epoch": [Interval(Integral, 1, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "word_ngrams": [Interval(Integral, 1, None, closed="left")],
        "positional": ["boolean"],
        "proba_threshold": [Interval(Real, 0, 1, closed="both")],
        "threads": [Interval(Integral, 1, None, closed="left")],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
    }

    def __init__(self, loss="hs", dim=50, epoch=5, lr=0.1, word_ngrams=1, positional=True,
                 proba_threshold=1e-6, threads=1, random_state=None):
        self.loss = loss
        self.dim = dim
        self.epoch = epoch
        self.lr = lr
        self.word_ngrams = word_ngrams
        self.positional = positional
        self.proba_threshold = proba_threshold
        self.threads = threads
        self.random_state = random_state

    def _lines(self, X):
        X = check_X(X, getattr(self, "n_features_in_", None))
        ids = np.asarray(X.toarray() if hasattr(X, "toarray") else X)
        if ids.size and (np.any(ids < 0) or np.any(ids != np.round(ids))):
            raise ValueError("fastText methods need X to hold non-negative integer word ids "
                             "(use a words dataset such as ptb-words)")
        ids = ids.astype(np.int64)
        if self.positional:
            return [" ".join(f"p{j}_w{w}" for j, w in enumerate(row)) for row in ids]
        return [" ".join(f"w{w}" for w in row) for row in ids]

    def fit(self, X, y, n_classes=None):
        self._validate_params()
        fasttext = _fasttext()
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        lines = self._lines(X)
        self.n_features_in_ = X.shape[1]
        with tempfile.TemporaryDirectory(prefix="xcbench-fasttext-") as folder:
            path = os.path.join(folder, "train.txt")
            with open(path, "w") as f:
                for label, text in zip(y, lines):
                    f.write(f"__label__{label} {text}\n")
            self.model_ = fasttext.train_supervised(
                path, loss=self.loss, dim=self.dim, epoch=self.epoch, lr=self.lr,
                wordNgrams=self.word_ngrams, minCount=1, minn=0, maxn=0,
                bucket=self._buckets(), thread=self.threads,
                seed=int(self.random_state or 0), verbose=0)
        return self

    def _buckets(self) -> int:
        return 0 if self.word_ngrams == 1 else NGRAM_BUCKETS

    def estimate_memory(self, n_samples, n_features, nnz, n_classes):
        """Weights: at most one input row per stored token (nnz) plus the n-gram buckets,
        and K output rows, x dim float32; plus the training text (~12 bytes per token and
        ~64 per row, held twice while written)."""
        weights = 4 * int(self.dim) * (nnz + self._buckets() + n_classes)
        return int(weights + 2 * (12 * nnz + 64 * n_samples))

    @staticmethod
    def _label(text):
        return int(text[len("__label__"):])

    def predict_topk(self, X, k=1):
        k = check_k(k)
        lines = self._lines(X)
        labels = np.full((len(lines), k), -1, dtype=np.int64)
        scores = np.full((len(lines), k), -np.inf)
        names, probs = self.model_.predict(lines, k=int(k))
        for i, (row_names, row_probs) in enumerate(zip(names, probs)):
            for j, (name, p) in enumerate(zip(row_names, row_probs)):
                labels[i, j] = self._label(name)
                scores[i, j] = np.log(max(float(p), 1e-300))
        return labels, scores

    def log_proba(self, X, y, chunk=256):
        lines = self._lines(X)
        y, _ = check_labels(y, len(lines), self.n_classes_)
        out = np.full(len(y), -np.inf)
        # in chunks: with the softmax loss nearly every label passes the threshold, and one
        # call on the PTB test set (50k x 6.7k labels as Python objects) was OOM-killed
        for start in range(0, len(lines), chunk):
            names, probs = self.model_.predict(lines[start:start + chunk], k=-1,
                                               threshold=float(self.proba_threshold))
            for i, (row_names, row_probs) in enumerate(zip(names, probs), start):
                target = f"__label__{y[i]}"
                for name, p in zip(row_names, row_probs):
                    if name == target and p > 0:
                        out[i] = np.log(min(float(p), 1.0))
                        break
        return out

    def support_size(self, X):
        # fastText's probabilities are positive for every label it has seen in training
        return np.full(X.shape[0], len(self.model_.get_labels()), dtype=np.int64)

    def stats(self):
        n_params = int(self.model_.get_input_matrix().size + self.model_.get_output_matrix().size)
        return {"n_params": n_params, "bytes": 4 * n_params}

    def __getstate__(self):
        state = self.__dict__.copy()
        if "model_" in state:
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "model.bin")
                self.model_.save_model(path)
                with open(path, "rb") as f:
                    state["model_"] = f.read()
        return state

    def __setstate__(self, state):
        blob = state.get("model_")
        self.__dict__.update(state)
        if isinstance(blob, bytes):
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "model.bin")
                with open(path, "wb") as f:
                    f.write(blob)
                self.model_ = _fasttext().load_model(path)
