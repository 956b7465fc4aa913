"""Vowpal Wabbit reductions behind the xcbench method contract: ``--log_multi`` (VW's
LOMtree), ``--recall_tree`` and ``--oaa``, through the ``vowpalwabbit`` package's in-memory
Workspace (no files). Examples are passed as VW text built once per fit: label ``y+1``
(VW multiclass labels are 1..K), then ``| j:v`` for each non-zero feature j (features named
by their column index, hashed by VW into 2^bits weights). Passes are online passes over the
examples, reshuffled each pass (VW's own --passes needs a cache file).

``bits``, ``passes`` and ``lr`` default to ``"auto"``: the rule in :mod:`.vw_settings`
(bits from K, D and the reduction's weight stride; passes and learning rate as VW's demos
use them for that data size, with VW's holdout and early termination). An explicit value
overrides the rule; explicit ``passes`` trains that many passes on every example (no
holdout). ``stats()["settings"]`` gives the options a fit used.

Other options, from VW's documentation and demos: recall tree with
``--loss_function logistic`` (its README: "always works better") and VW's defaults
max_candidates = min(K, 4 ceil(log2 K)), max_depth = ceil(log2 K), bern_hyper = 1;
log_multi with its forced quantile loss; oaa with ``--loss_function logistic
--probabilities`` (so it also gives top-k and log-probabilities).

VW answers label 0 when it has no prediction (e.g. a recall-tree leaf that no training
example reached). Such rows get label -1 and score -inf in ``predict_topk`` (the contract's
padding, so they count as errors, never as class 0), and ``stats()["no_prediction_rows"]``
counts them among the rows the fit checks: VW's holdout rows, or up to
``NO_PREDICTION_SAMPLE`` training rows when there is no holdout.

Prediction leaves the weights alone, but VW's workspace counts the examples it has seen
(``weighted_examples`` and the like in its saved-model header), so the saved model bytes
(``stats()["bytes"]`` content, a pickle) differ after ``predict_topk`` while every prediction
stays identical. The conformance purity check compares the workspace's Python attributes,
not VW's native state, so it does not see these counters; ``tests/test_peers.py`` pins that
only a few header bytes change and that a model saved before and after predicting
predicts the same.
"""
from __future__ import annotations

import os
import tempfile
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from xcbench.contract.method import Method, check_k, check_labels, check_X
from xcbench.tree.passes import PassSchedule

from .optional import require
from .text_features import feature_pairs_text
from .vw_settings import EARLY_TERMINATE, HOLDOUT_PERIOD, vw_settings, weight_bytes

NO_PREDICTION_SAMPLE = 2000


def _workspace(args: str):
    return require("vowpalwabbit", "Vowpal Wabbit", "vowpalwabbit", "vw").Workspace(args)


def vw_feature_strings(X) -> list[str]:
    """``| j:v ...`` for each row: the row's non-zero features named by column index."""
    return ["| " + pairs for pairs in feature_pairs_text(X)]


def _setting(value):
    return [StrOptions({"auto"}), value]


class _VWMethod(Method):
    """Shared wrapper; subclasses give the reduction's name and options."""

    probabilities = False
    reduction = ""
    _parameter_constraints = {
        "passes": _setting(Interval(Integral, 1, None, closed="left")),
        "lr": _setting(Interval(Real, 0, None, closed="neither")),
        "bits": _setting(Interval(Integral, 1, 32, closed="both")),
        "extra": [str],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
    }

    def _options(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def _max_depth(self):
        return None

    def resolve_settings(self, n_samples: int, n_features: int, n_classes: int) -> dict:
        """The settings a fit on this shape uses: the rule's, overridden by explicit values."""
        rule = vw_settings(n_samples, n_features, n_classes, self.reduction, self._max_depth())
        out = dict(rule)
        if self.bits != "auto":
            out["bits"] = int(self.bits)
        if self.lr != "auto":
            out["lr"] = float(self.lr)
        if self.passes != "auto":
            out["passes"], out["holdout"] = int(self.passes), False
        return out

    def _args(self) -> str:
        seed = int(self.random_state or 0)
        return (f"{self._options()} --quiet -b {self.settings_['bits']} "
                f"-l {self.settings_['lr']:g} --random_seed {seed} {self.extra}").strip()

    def fit(self, X, y, n_classes=None):
        self._validate_params()
        X = check_X(X)
        y, self.n_classes_ = check_labels(y, X.shape[0], n_classes)
        self.n_features_in_ = X.shape[1]
        self.settings_ = self.resolve_settings(X.shape[0], X.shape[1], self.n_classes_)
        lines = [f"{label + 1} {features}" for label, features in zip(y, vw_feature_strings(X))]
        self.vw_ = _workspace(self._args())
        rng = np.random.default_rng(self.random_state)
        passes = self.settings_["passes"]
        schedule = PassSchedule(len(lines), "auto" if self.settings_["holdout"] else passes,
                                rng, max_passes=passes)
        self.settings_["holdout"] = schedule.holdout is not None  # too few rows: no holdout
        check = schedule.holdout
        if check is None:  # no holdout: check a sample of training rows for no-predictions
            check = rng.permutation(len(lines))[:NO_PREDICTION_SAMPLE]
        for order in schedule:
            for i in order:
                self.vw_.learn(lines[i])
            if schedule.holdout is not None:
                schedule.report(np.mean(self._top1([lines[i] for i in check]) != y[check]))
        self.passes_run_ = schedule.passes_done
        self.no_prediction_rows_ = int(np.sum(self._top1([lines[i] for i in check]) < 0))
        self.no_prediction_checked_ = int(len(check))
        return self

    def _top1(self, lines):
        """Top-1 label (-1 for no prediction) of VW text lines."""
        return np.array([self._label(self.vw_.predict(line)) for line in lines], dtype=np.int64)

    def _label(self, p) -> int:
        if self.probabilities:
            return int(np.argmax(p))
        p = int(p)  # VW labels are 1..K; 0 is VW's "no prediction"
        return p - 1 if 1 <= p <= self.n_classes_ else -1

    def _predictions(self, X):
        X = check_X(X, self.n_features_in_)
        return [self.vw_.predict(line) for line in vw_feature_strings(X)]

    def predict_topk(self, X, k=1):
        k = check_k(k)
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
            else:
                label = self._label(p)
                if label >= 0:  # no prediction keeps the -1 / -inf padding
                    labels[i, 0], scores[i, 0] = label, 0.0
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

    def settings_text(self) -> str:
        """The options the fit used, as a VW command line plus the pass schedule."""
        s = self.settings_
        passes = f"--passes {self.passes_run_}"
        if s["holdout"]:
            passes += (f" (of at most {s['passes']}, holdout 1/{HOLDOUT_PERIOD}, "
                       f"early stop after {EARLY_TERMINATE})")
        return f"{self._args().replace(' --quiet', '')} {passes}"

    def stats(self):
        blob = self._model_bytes()
        return {"n_params": 2 ** int(self.settings_["bits"]), "bytes": len(blob),
                "settings": self.settings_text(),
                "no_prediction_rows": self.no_prediction_rows_,
                "no_prediction_checked_rows": self.no_prediction_checked_,
                "note": "bytes: VW's saved model; no_prediction_rows: rows VW gave no label "
                        "among the checked rows (holdout, or a training sample)"}

    def estimate_memory(self, n_samples, n_features, nnz, n_classes):
        """VW's weight table (2^bits x 16 bytes) plus the fit's VW text: ~17 characters per
        stored value and ~64 bytes per row, held twice while the lines are built."""
        bits = self.resolve_settings(n_samples, n_features, n_classes)["bits"]
        return int(weight_bytes(bits) + 2 * (17 * nnz + 64 * n_samples))

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
    """VW ``--log_multi K``: its LOMtree (T = K-1, quantile loss forced). Memory: the 2^bits
    weight table, 16 bytes per weight."""

    reduction = "log_multi"
    _parameter_constraints = {**_VWMethod._parameter_constraints,
                              "swap_resistance": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, passes="auto", lr="auto", swap_resistance=4, bits="auto", extra="",
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
    keep VW's defaults. Memory: the 2^bits weight table, 16 bytes per weight."""

    reduction = "recall_tree"
    _parameter_constraints = {
        **_VWMethod._parameter_constraints,
        "max_candidates": [Interval(Integral, 1, None, closed="left"), None],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "bern_hyper": [Interval(Real, 0, None, closed="left")],
        "randomized_routing": ["boolean"],
    }

    def __init__(self, passes="auto", lr="auto", max_candidates=None, max_depth=None,
                 bern_hyper=1.0, randomized_routing=False, bits="auto", extra="",
                 random_state=None):
        self.passes = passes
        self.lr = lr
        self.max_candidates = max_candidates
        self.max_depth = max_depth
        self.bern_hyper = bern_hyper
        self.randomized_routing = randomized_routing
        self.bits = bits
        self.extra = extra
        self.random_state = random_state

    def _max_depth(self):
        return self.max_depth

    def _options(self):
        # VW's recall tree trains no scorer for a single label and then answers "no label"
        # for every row; K = 1 is given to VW as 2 labels, the second never seen
        opts = f"--recall_tree {max(self.n_classes_, 2)} --loss_function logistic"
        opts += f" --bern_hyper {float(self.bern_hyper)}"
        if self.max_candidates:
            opts += f" --max_candidates {int(self.max_candidates)}"
        if self.max_depth:
            opts += f" --max_depth {int(self.max_depth)}"
        if self.randomized_routing:
            opts += " --randomized_routing 1"
        return opts


class VWOneAgainstAll(_VWMethod):
    """VW ``--oaa K`` with logistic loss and ``--probabilities``. Memory: the 2^bits weight
    table, 16 bytes per weight."""

    probabilities = True
    reduction = "oaa"

    def __init__(self, passes="auto", lr="auto", bits="auto", extra="", random_state=None):
        self.passes = passes
        self.lr = lr
        self.bits = bits
        self.extra = extra
        self.random_state = random_state

    def _options(self):
        return f"--oaa {self.n_classes_} --loss_function logistic --probabilities"
