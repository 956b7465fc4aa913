"""``"auto"`` defaults of the learned M-ary tree, resolved from what the training data say.

``DataShape`` is what a rule may look at; ``resolve`` is a pure function from (the
estimator's parameters, a DataShape) to the value of every parameter left at ``"auto"``.
``docs/methods/mary-tree.md`` ("Defaults by rule") gives the measurements behind each rule.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from xcbench.contract.data_shape import DataSizes, label_entropy, skewed_labels, stored_values

AUTO = "auto"
ID_MAX_COLUMNS = 8  # word-id data: at most this many columns (context positions) ...
ID_MIN_VALUE = 16  # ... of non-negative integers reaching at least this value
INDICATOR_NNZ = 4.0  # sparse rows with at most this many nonzeros on average: indicators
NARROW = {"arity": 5, "lr": 0.1}  # identity: the paper's classification setting
EPOCHS_MIN, EPOCHS_MAX = 5, 20  # identity: epochs = ceil(ROW_VISITS / N) within these
ROW_VISITS = 10**6  # ... so small data get more passes (letter 34.4 -> 30.9% at 20)
WIDE = {"d_r": 200, "epochs": 2, "lr": 0.07, "tree_epochs": 0.25}  # learned representation


@dataclass(frozen=True)
class DataShape(DataSizes):
    """The training data as the rules see them: sizes, sparsity, whether X looks like
    word ids (few dense columns of non-negative integers; None when unknown) and the label
    entropy over log K (``data_shape.label_entropy``; None when unknown)."""

    integer_ids: bool | None = None
    label_entropy: float | None = None
    SPARSE_SHARE = 0.5

    @classmethod
    def of(cls, X, n_classes: int, y=None) -> "DataShape":
        """The shape of training data X; with labels y, their entropy too."""
        n, d = X.shape
        sparse = sp.issparse(X)
        nnz = stored_values(X)
        ids = (not sparse and d <= ID_MAX_COLUMNS and X.size > 0 and X.min() >= 0
               and X.max() >= ID_MIN_VALUE and bool(np.all(X == np.floor(X))))
        entropy = None if y is None else label_entropy(y, int(n_classes))
        return cls(n, d, nnz, int(n_classes), sparse, bool(ids), entropy)

    @classmethod
    def from_sizes(cls, n_samples, n_features, nnz, n_classes) -> "DataShape":
        """What ``estimate_memory`` knows (sizes only): the costlier guesses. Few dense
        columns are taken for ids, and the labels of dense data for skewed ones (a
        learned map's wide nodes cost more than the identity's)."""
        sizes = super().from_sizes(n_samples, n_features, nnz, n_classes)
        return replace(sizes, integer_ids=not sizes.sparse and n_features <= ID_MAX_COLUMNS,
                       label_entropy=None if sizes.sparse else 0.0)


def representation_rule(shape: DataShape) -> str:
    """``"embedding"`` for word ids; ``"linear"`` for sparse indicator rows (a shared map
    lets rare contexts borrow from frequent ones) and for dense rows with skewed labels
    (next-word data: one map trained by every row serves all the wide nodes, the
    language-model regime); ``"identity"`` otherwise."""
    if shape.integer_ids:
        return "embedding"
    if shape.sparse and shape.nnz_per_row <= INDICATOR_NNZ:
        return "linear"
    if not shape.sparse and skewed_labels(shape.label_entropy):
        return "linear"
    return "identity"


def resolve(params: dict, shape: DataShape) -> dict:
    """The value of each ``"auto"`` parameter among ``params`` (``get_params()``):

    - ``representation``: ``representation_rule``.
    - With a learned representation (the language-model regime): a wide, shallow tree,
      ``arity`` = ceil(sqrt(K)) and ``max_depth`` = ceil(log_M K) (2), ``d_r`` 200,
      2 ``epochs`` at ``lr`` 0.07, the tree learned for the first quarter epoch
      (``tree_epochs`` 0.25).
    - With the identity: ``arity`` 5, ``max_depth`` ceil(log_M K) + 1, lr 0.1, the tree
      learned for the first half of training (ceil(epochs / 2) epochs), and
      ceil(10^6 / N) epochs, at least 5 and at most 20: about 10^6 example visits, so
      small data get more passes while N >= 200,000 keeps 5 (fit time grows with N x
      epochs).
    """
    out = {}

    def pick(name, value):
        if params.get(name) == AUTO:
            out[name] = value
        return out.get(name, params.get(name))

    rep = pick("representation", representation_rule(shape))
    k = max(shape.n_classes, 2)
    learned = rep != "identity"
    arity = pick("arity", max(2, math.ceil(math.sqrt(k))) if learned else NARROW["arity"])
    levels = max(1, math.ceil(math.log(k) / math.log(arity) - 1e-9))
    pick("max_depth", levels if learned else levels + 1)
    pick("d_r", WIDE["d_r"])
    epochs = pick("epochs", WIDE["epochs"] if learned else _epochs_rule(shape))
    pick("lr", WIDE["lr"] if learned else NARROW["lr"])
    pick("tree_epochs", WIDE["tree_epochs"] if learned else math.ceil(epochs / 2))
    return out


def _epochs_rule(shape: DataShape) -> int:
    """Passes of the identity regime: about ROW_VISITS example visits in all."""
    wanted = math.ceil(ROW_VISITS / max(shape.n_samples, 1))
    return int(min(EPOCHS_MAX, max(EPOCHS_MIN, wanted)))
