"""Builders: turn a recipe's source files into train/test arrays with labels 0..K-1.

Each builder takes (paths by source role, recipe params, data directory) and returns
(arrays {X_train, y_train, X_test, y_test}, n_classes, info). Recipes name their builder.
"""
from __future__ import annotations

import numpy as np
from sklearn.model_selection import train_test_split

from .readers import FormatError, encode_labels, open_text, read_csv, read_svmlight


def split_indices(n: int, test_fraction: float, seed: int, stratify=None):
    """Seeded random (optionally stratified) split of range(n): (train idx, test idx)."""
    return train_test_split(np.arange(n), test_size=test_fraction, random_state=seed,
                            stratify=stratify)


def _arrays(X, y, train, test, center=False):
    X_train, X_test = X[train], X[test]
    if center:  # subtract the training mean (the softmax-tree paper's preprocessing)
        mean = np.asarray(X_train.mean(axis=0)).ravel()
        X_train, X_test = X_train - mean, X_test - mean
    return {"X_train": X_train, "y_train": y[train], "X_test": X_test, "y_test": y[test]}


def build_libsvm_split(paths, params, data_dir=None):
    """One LIBSVM multiclass file, split at random (seeded), optionally mean-centred, dense."""
    (path,) = paths.values()
    X, raw = read_svmlight(path, n_features=params.get("n_features"))
    (y,), classes = encode_labels(raw)
    if params.get("dense", True):
        X = X.toarray()
    train, test = split_indices(len(y), params["test_fraction"], params["seed"])
    return _arrays(X, y, train, test, params.get("center", False)), len(classes), \
        {"raw_labels_min": int(classes.min()), "raw_labels_max": int(classes.max())}


def build_letter(paths, params, data_dir=None):
    """UCI letter: first column the letter, 16 integer features; the standard first-16,000 split."""
    (path,) = paths.values()
    X, raw = read_csv(path, label_column=0)
    (y,), classes = encode_labels(raw)
    n_train = params["n_train"]
    train, test = np.arange(n_train), np.arange(n_train, len(y))
    return _arrays(X, y, train, test), len(classes), {"classes": "".join(map(str, classes))}


def build_leaves100(paths, params, data_dir=None):
    """UCI 100 plant leaves (MATLAB file): the three 64-d views concatenated; stratified split."""
    import scipy.io

    (path,) = paths.values()
    try:
        mat = scipy.io.loadmat(str(path))
        views, labels = mat["X"], mat["Y"].ravel()
        X = np.hstack([np.asarray(views[0, i], dtype=np.float64) for i in range(views.shape[1])])
    except (KeyError, ValueError, TypeError, OSError) as exc:
        raise FormatError(path, None, f"not the expected MATLAB file with X (1x3 views) and "
                                      f"Y ({exc})") from exc
    if not np.isfinite(X).all():
        raise FormatError(path, None, "a feature value is NaN or infinite")
    (y,), classes = encode_labels(labels)
    train, test = split_indices(len(y), params["test_fraction"], params["seed"], stratify=y)
    return _arrays(X, y, train, test), len(classes), {}


def _read_aloi27d(path):
    """Rows of the ELKI ALOI 27-d file: (features (n, 27), object ids (n,))."""
    features, objects = [], []
    with open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 30:
                raise FormatError(path, lineno, f"expected 27 features, an id, a path and a tag "
                                                f"(30 fields), got {len(parts)}")
            try:
                features.append([float(v) for v in parts[:27]])
                objects.append(int(parts[28].split("/", 1)[0]))
            except ValueError as exc:
                raise FormatError(path, lineno, f"unparsable field ({exc})") from None
    X = np.asarray(features)
    if not np.isfinite(X).all():
        row = int(np.argmax(~np.isfinite(X).all(1)))
        raise FormatError(path, row + 1, "a feature value is NaN or infinite")
    return X, np.asarray(objects)


def build_aloi27d(paths, params, data_dir=None):
    """ALOI 27-d HSV histograms; the object is the class. ``min_images`` keeps only objects
    with at least that many images (100 gives the 438-object subset)."""
    (path,) = paths.values()
    X, objects = _read_aloi27d(path)
    counts = {o: c for o, c in zip(*np.unique(objects, return_counts=True))}
    keep = np.array([counts[o] >= params.get("min_images", 0) for o in objects])
    X, objects = X[keep], objects[keep]
    (y,), classes = encode_labels(objects)
    stratify = y if params.get("stratify") else None
    train, test = split_indices(len(y), params["test_fraction"], params["seed"], stratify)
    return _arrays(X, y, train, test), len(classes), {}


BUILDERS = {
    "libsvm_split": build_libsvm_split,
    "letter": build_letter,
    "leaves100": build_leaves100,
    "aloi27d": build_aloi27d,
}


def get_builder(name: str):
    """(build function, key_extras function or None) of the builder a recipe names.

    ``key_extras(params, data_dir)`` returns what else the built data depends on (for
    the processed-cache key), e.g. which GloVe copy the PTB builder will use.
    """
    if name == "ptb_next_word":
        from .ptb import build_ptb_next_word, ptb_key_extras

        return build_ptb_next_word, ptb_key_extras
    if name == "ptb_sparse":
        from .ptb_sparse import build_ptb_sparse

        return build_ptb_sparse, None
    if name not in BUILDERS:
        known = sorted([*BUILDERS, "ptb_next_word", "ptb_sparse"])
        raise KeyError(f"unknown builder {name!r}; known: {known}")
    return BUILDERS[name], None
