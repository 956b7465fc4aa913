"""Vowpal Wabbit reductions behind the xcbench method contract: ``--log_multi`` (VW's
LOMtree), ``--recall_tree`` and ``--oaa``, through the ``vowpalwabbit`` package's in-memory
Workspace (no files). Examples are passed as VW text built once per fit: label ``y+1``
(VW multiclass labels are 1..K), then ``| j:v`` for each non-zero feature j (features named
by their column index, hashed by VW into 2^bits weights). Passes are online passes over the
examples, reshuffled each pass (VW's own --passes needs a cache file).

Default options, from VW's documentation and demos: recall tree with
``--loss_function logistic`` (its README: "always works better") and VW's defaults
max_candidates = min(K, 4 ceil(log2 K)), max_depth = ceil(log2 K), bern_hyper = 1;
log_multi with its forced quantile loss; oaa with ``--loss_function logistic
--probabilities`` (so it also gives top-k and log-probabilities). Learning rate ``-l``.
"""
from __future__ import annotations

import os
import tempfile

import numpy as np
import scipy.sparse as sp

from xcbench.method import Method, check_labels, check_X

from .optional import require



def _workspace(args: str):
    return require("vowpalwabbit", "Vowpal Wabbit", "vowpalwabbit", "vw").Workspace(args)


def _vw_features(indices, values) -> str:
    pairs = np.column_stack((indices, values)).ravel().tolist()  # j, v, j, v, ...
    return "| " + " ".join(["%d:%.7g"] * len(indices)) % tuple(pairs)


def vw_feature_strings(X) -> list[str]:
    """``| j:v ...`` for each row: the row's non-zero features named by column index.

    One %-format per row (no per-feature Python calls, no sparse conversion of dense
    input): formatting is part of every VW call's measured latency, so it is kept lean.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        return [_vw_features(X.indices[X.indptr[i]:X.indptr[i + 1]],
                             X.data[X.indptr[i]:X.indptr[i + 1]]) for i in range(X.shape[0])]
    out = []
    for row in np.asarray(X):
        nz = np.flatnonzero(row)
        out.append(_vw_features(nz, row[nz]))
    return out


class _VWMethod(Method):
    """Shared wrapper; subclasses give the reduction's options."""

    probabilities = False

    def _options(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def _args(self) -> str:
        seed = int(self.random_state or 0)
        return (f"{self._options()} --quiet -b {int(self.bits)} -l {float(self.lr)} "
                f"--random_seed {seed} {self.extra}").strip()

    def fit(self, X, y, n_classes=None):
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        self.n_features_in_ = X.shape[1]
        lines = [f"{label + 1} {features}" for label, features in zip(y, vw_feature_strings(X))]
        self.vw_ = _workspace(self._args())
        rng = np.random.default_rng(self.random_state)
        for _ in range(int(self.passes)):
            for i in rng.permutation(len(lines)):
                self.vw_.learn(lines[i])
        return self

    def _predictions(self, X):
        X = check_X(X, self.n_features_in_)
        return [self.vw_.predict(line) for line in vw_feature_strings(X)]

    def predict_topk(self, X, k=1):
        preds = self._predictions(X)
        labels = np.full((len(preds), k), -1, dtype=np.int64)
        scores = np.full((len(preds), k), -np.inf)
        for i, p in enumerate(preds):
            if self.probabilities:
                probs = np.asarray(p, dtype=np.float64)
                top = np.argsort(-probs, kind="stable")[:k]
                labels[i, :len(top)] = top
                with np.errstate(divide="ignore"):
                    scores[i, :len(top)] = np.log(probs[top])
            else:  # one label, 1..K (0 would be VW's "no prediction")
                if 1 <= int(p) <= self.n_classes_:
                    labels[i, 0], scores[i, 0] = int(p) - 1, 0.0
                else:
                    labels[i, 0], scores[i, 0] = 0, 0.0
        return labels, scores

    def log_proba(self, X, y):
        if not self.probabilities:
            raise NotImplementedError(f"VW {self._options().split()[0]} gives no probabilities")
        y, _ = check_labels(y, X.shape[0], self.n_classes_)
        preds = self._predictions(X)
        with np.errstate(divide="ignore"):
            return np.log(np.array([p[c] for p, c in zip(preds, y)], dtype=np.float64))

    def support_size(self, X):
        return np.full(X.shape[0], self.n_classes_, dtype=np.int64)

    def stats(self):
        blob = self._model_bytes()
        return {"n_params": 2 ** int(self.bits), "bytes": len(blob),
                "note": "bytes: VW's saved model"}

    def _model_bytes(self) -> bytes:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "model.vw")
            self.vw_.save(path)
            with open(path, "rb") as f:
                return f.read()

    def __getstate__(self):
        state = self.__dict__.copy()
        if "vw_" in state:
            state["vw_"] = self._model_bytes()
        return state

    def __setstate__(self, state):
        blob = state.get("vw_")
        self.__dict__.update(state)
        if isinstance(blob, bytes):  # VW reads the model when the workspace starts
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "model.vw")
                with open(path, "wb") as f:
                    f.write(blob)
                self.vw_ = _workspace(f"{self._options()} --quiet -i {path}")


class VWLogMulti(_VWMethod):
    """VW ``--log_multi K``: its LOMtree (T = K-1, quantile loss forced)."""

    def __init__(self, passes=3, lr=0.5, swap_resistance=4, bits=18, extra="",
                 random_state=None):
        self.passes = passes
        self.lr = lr
        self.swap_resistance = swap_resistance
        self.bits = bits
        self.extra = extra
        self.random_state = random_state

    def _options(self):
        return f"--log_multi {self.n_classes_} --swap_resistance {int(self.swap_resistance)}"


class VWRecallTree(_VWMethod):
    """VW ``--recall_tree K`` with logistic loss; ``max_candidates``/``max_depth`` None
    keep VW's defaults."""

    def __init__(self, passes=3, lr=1.0, max_candidates=None, max_depth=None, bern_hyper=1.0,
                 randomized_routing=False, bits=18, extra="", random_state=None):
        self.passes = passes
        self.lr = lr
        self.max_candidates = max_candidates
        self.max_depth = max_depth
        self.bern_hyper = bern_hyper
        self.randomized_routing = randomized_routing
        self.bits = bits
        self.extra = extra
        self.random_state = random_state

    def _options(self):
        opts = f"--recall_tree {self.n_classes_} --loss_function logistic"
        opts += f" --bern_hyper {float(self.bern_hyper)}"
        if self.max_candidates:
            opts += f" --max_candidates {int(self.max_candidates)}"
        if self.max_depth:
            opts += f" --max_depth {int(self.max_depth)}"
        if self.randomized_routing:
            opts += " --randomized_routing 1"
        return opts


class VWOneAgainstAll(_VWMethod):
    """VW ``--oaa K`` with logistic loss and ``--probabilities``."""

    probabilities = True

    def __init__(self, passes=3, lr=0.5, bits=18, extra="", random_state=None):
        self.passes = passes
        self.lr = lr
        self.bits = bits
        self.extra = extra
        self.random_state = random_state

    def _options(self):
        return f"--oaa {self.n_classes_} --loss_function logistic --probabilities"
