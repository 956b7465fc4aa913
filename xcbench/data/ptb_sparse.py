"""The PTB next-word task on sparse features: every training word type is a class.

``ptb-sparse`` (issue 10): classes are all word types of ``ptb.train.txt`` plus the
end-of-sentence token ``<eos>`` (``eos = true``, the default): the standard 10,000-word PTB
vocabulary (9,999 types with ``<unk>``, and ``<eos>``), ids by decreasing training frequency
(ties alphabetical), as in ``ptb``. Examples are made as ``ptb`` makes them (one per
position with ``context`` previous words inside the same sentence; the target must be a
class), without GloVe; with ``eos`` each sentence also ends with an ``<eos>`` target (never
a context word: contexts stay within one sentence). Features are the
position-tagged one-hot context words: the word with class id ``w`` at context position
``p`` (0 = the earliest) sets column ``p * V + w`` to 1, so D = context x V and each row
has ``context`` nonzeros (CSR, float32). A context word outside the training vocabulary
(possible in the test file of other corpora, not in PTB) drops the example
(``missing_context = "drop"``) or leaves its position empty (``"zero"``).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .ptb import read_sentences, vocabulary

EOS = "<eos>"


def onehot_context_examples(sentences, word_index: dict, context: int = 3,
                            missing_context: str = "drop"):
    """(X CSR float32 (n, context * V), y int64): position-tagged one-hot context words."""
    n_words = len(word_index)
    rows, labels = [], []
    for s in sentences:
        ids = [word_index.get(w, -1) for w in s]
        for i in range(context, len(s)):
            if ids[i] < 0:  # the target is not a class
                continue
            window = ids[i - context:i]
            if missing_context == "drop" and min(window) < 0:
                continue
            rows.append(window)
            labels.append(ids[i])
    window = np.asarray(rows, dtype=np.int64).reshape(len(rows), context)
    cols = window + np.arange(context) * n_words
    present = window >= 0
    indptr = np.concatenate([[0], np.cumsum(present.sum(axis=1))])
    X = sp.csr_matrix((np.ones(int(present.sum()), dtype=np.float32), cols[present], indptr),
                      shape=(len(rows), context * n_words))
    return X, np.asarray(labels, dtype=np.int64)


def build_ptb_sparse(paths, params, data_dir=None):
    """Build ``ptb-sparse`` from the train/test files (see the module docstring)."""
    if params["missing_context"] not in ("drop", "zero"):
        raise ValueError(f"missing_context must be 'drop' or 'zero', "
                         f"got {params['missing_context']!r}")
    train, test = read_sentences(paths["train"]), read_sentences(paths["test"])
    if params.get("eos", True):
        train, test = ([s + [EOS] for s in part] for part in (train, test))
    classes = vocabulary(train, min_count=1, unk_is_class=True)
    index = {w: i for i, w in enumerate(classes)}
    context = params["context"]
    X_train, y_train = onehot_context_examples(train, index, context, params["missing_context"])
    X_test, y_test = onehot_context_examples(test, index, context, params["missing_context"])
    info = {"class_names": classes, "train_tokens": sum(len(s) for s in train),
            "test_tokens": sum(len(s) for s in test),
            "note": f"PTB next word over all {len(classes):,} training word types; "
                    f"features: {context} position-tagged one-hot context words"}
    return ({"X_train": X_train, "y_train": y_train, "X_test": X_test, "y_test": y_test},
            len(classes), info)
