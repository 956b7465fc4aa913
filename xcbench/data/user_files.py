"""Bring your own data: the dataset ``file:[FORMAT:]TRAIN[:TEST]`` built from the user's files.

Syntax (the part after ``file:`` is split on ``:``):

- ``file:train.svm`` — one file, split 80/20 (``split_rows``);
- ``file:train.svm:test.svm`` — a training and a test file;
- ``file:csv:train.csv[:test.csv]`` — the format named explicitly (``svmlight``/``libsvm``,
  ``xc``, ``csv``, ``vw``), when the extension and the first line do not tell.

Relative paths are resolved against the current directory. Paths containing ``:`` (or ``,``,
which separates dataset names on the command line) are not supported.

Labels: classes are the distinct labels of the training part, numbered 0..K-1 in sorted
order. Test examples whose label never occurs in training are dropped with a warning, and
their count is kept in the dataset info (``test_dropped_unseen_label``), so it appears in
every record's ``dataset_stats``. The checksum covers the files' SHA-256, the format, the
split rule and these policies, so records (and ``--resume``) are keyed on the data itself.
"""
from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .cache import cache_dir
from .dataset import Dataset, DatasetSpec
from .fetch import DataError
from .hashmemo import file_sha256
from .readers import (FormatError, not_utf8, open_text, read_csv, read_svmlight,
                      read_vw_multiclass, read_xc)
from .splits import holdout_split
from ..suggest import did_you_mean

PREFIX = "file:"
FORMATS = ("svmlight", "xc", "csv", "vw")
FORMAT_ALIASES = {"svmlight": "svmlight", "libsvm": "svmlight", "svm": "svmlight",
                  "xc": "xc", "csv": "csv", "vw": "vw"}
EXTENSIONS = {".csv": "csv", ".vw": "vw", ".xc": "xc", ".svm": "svmlight",
              ".libsvm": "svmlight", ".svmlight": "svmlight"}
COMPRESSED = (".gz", ".bz2", ".xz")
TEST_FRACTION = 0.2
SPLIT_SEED = 0
DENSE_AT = 0.25  # sparse formats become dense arrays when at least this fraction is nonzero
LOADER_VERSION = "2"  # 2: CSV test columns matched by header name; numeric labels by value
SPLIT_RULE = (f"no test file: a seeded (seed {SPLIT_SEED}) {100 - 100 * TEST_FRACTION:.0f}/"
              f"{100 * TEST_FRACTION:.0f} split, stratified by class when every class has at least "
              "2 examples and both parts can hold every class, else uniformly at random")


class UserFileWarning(UserWarning):
    """Something in the user's files was dropped or adjusted (the message says what)."""


def parse_file_name(name: str) -> tuple[str | None, list[str]]:
    """(explicit format or None, [train path, optional test path]) of ``file:...``;
    DataError explaining the syntax when it does not parse."""
    usage = ("use file:TRAIN, file:TRAIN:TEST or file:FORMAT:TRAIN[:TEST] with FORMAT one "
             f"of {', '.join(FORMATS)} (paths must not contain ':')")
    if not name.startswith(PREFIX):
        raise DataError(f"{name!r} is not a file dataset; {usage}")
    parts = name[len(PREFIX):].split(":")
    fmt = None
    if len(parts) > 1 and parts[0].lower() in FORMAT_ALIASES:
        fmt = FORMAT_ALIASES[parts.pop(0).lower()]
    if not 1 <= len(parts) <= 2 or not all(p.strip() for p in parts):
        raise DataError(f"dataset {name!r}: expected one or two file paths; {usage}")
    return fmt, [p.strip() for p in parts]


def _strip_compression(path: Path) -> str:
    return path.with_suffix("").suffix if path.suffix in COMPRESSED else path.suffix


def sniff_format(path: Path) -> str:
    """The format of ``path``: by extension (.csv, .svm, .libsvm, .svmlight, .xc, .vw, also
    compressed), else by its first non-empty line; DataError asking for FORMAT if unclear."""
    by_extension = EXTENSIONS.get(_strip_compression(path).lower())
    if by_extension:
        return by_extension
    try:
        with open_text(path) as f:
            first = next((line for line in f if line.strip()), "")
    except UnicodeDecodeError as exc:
        raise not_utf8(path, exc) from exc
    except (OSError, EOFError) as exc:
        raise FormatError(path, None, f"cannot read the first line ({exc})") from exc
    tokens = first.split()
    if len(tokens) == 3 and all(t.isdigit() for t in tokens):
        return "xc"  # the header line N D K
    if "|" in first:
        return "vw"
    if any(":" in t for t in tokens[1:]):
        return "svmlight"
    if "," in first:
        return "csv"
    raise DataError(f"{path}: cannot tell the file format from its extension or first line "
                    f"{first.strip()[:60]!r}; name it, e.g. file:svmlight:{path}")


def resolve_paths(name: str) -> tuple[str, list[Path]]:
    """(format, absolute existing paths) of a ``file:`` name; DataError for a missing file or
    files of different formats."""
    fmt, raw = parse_file_name(name)
    paths = [Path(p).expanduser().resolve() for p in raw]
    for position, (given, path) in enumerate(zip(raw, paths)):
        if path.is_dir():
            raise DataError(f"dataset {name!r}: {given!r} is a folder ({path}); name a file")
        if not path.is_file():
            hint = ""
            if position == 0 and len(raw) > 1 and fmt is None and "." not in given:
                hint = (f"; if {given!r} is meant as the format, the formats are "
                        f"{', '.join(FORMATS)}{did_you_mean(given.lower(), FORMAT_ALIASES)}")
            raise DataError(f"dataset {name!r}: no file {given!r} (looked at {path}); "
                            f"relative paths are resolved against the current directory{hint}")
    formats = {sniff_format(p) for p in paths} if fmt is None else {fmt}
    if len(formats) > 1:
        raise DataError(f"dataset {name!r}: the files look like different formats "
                        f"({', '.join(sorted(formats))}); both must be in one format: "
                        "convert one, or, if one was misread, name the format, e.g. "
                        f"file:{sorted(formats)[0]}:{':'.join(raw)}")
    return formats.pop(), paths


def user_file_spec(name: str) -> DatasetSpec:
    """A DatasetSpec for ``file:...`` (checked now: the files exist and have a known format)."""
    fmt, paths = resolve_paths(name)
    files = " + ".join(p.name for p in paths)
    return DatasetSpec(
        name=name, task="multiclass", loader=load_user_files, format=fmt,
        description=f"your {fmt} data: {files}" + ("" if len(paths) == 2 else " (80/20 split)"),
        split="the given test file" if len(paths) == 2 else SPLIT_RULE,
        preprocessing="labels numbered 0..K-1 by sorted training label; test examples with a "
                      "label unseen in training dropped",
        params={"format": fmt, "paths": [str(p) for p in paths]}, licence="your own data",
        version=LOADER_VERSION, plugin="xcbench")


# ----- reading
def _read(fmt: str, path: Path, feature_index=None, unseen=None):
    """(X, raw labels, what names the columns: VW's feature index, a CSV header's feature
    names or None) of one file in ``fmt``; FormatError naming the file and line of bytes
    that are not UTF-8, or saying the file holds no example."""
    try:
        X, y, index = _read_format(fmt, path, feature_index, unseen)
    except UnicodeDecodeError as exc:
        raise not_utf8(path, exc) from exc
    if not X.shape[0]:
        raise FormatError(path, None, "the file holds no example (it is empty or blank)")
    return X, y, index


def _read_format(fmt: str, path: Path, feature_index=None, unseen=None):
    if fmt == "svmlight":
        X, y = read_svmlight(path, zero_based=True)  # shifted later if no file uses index 0
        return X, y, None
    if fmt == "xc":
        X, y, _ = read_xc(path)
        return X, y, None
    if fmt == "vw":
        return read_vw_multiclass(path, feature_index, unseen=unseen)
    return _read_user_csv(path)


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _read_user_csv(path: Path):
    """(X, raw labels, the header's feature names or None) of a user CSV: the first line is a
    header when a feature field is not a number; the label is the column named ``label``
    (any case) if the header has one, else the first column."""
    with open_text(path) as f:
        first = next((line for line in f if line.strip()), "").rstrip("\n").split(",")
    if first == [""]:
        raise FormatError(path, None, "the file is empty (no header, no examples)")
    label = 0
    has_header = any(not _is_number(v) for v in first[1:])
    if has_header:
        names = [v.strip().lower() for v in first]
        label = names.index("label") if "label" in names else 0
    X, y = read_csv(path, label_column=label, header="infer" if has_header else None)
    features = [v.strip() for i, v in enumerate(first) if i != label] if has_header else None
    return X, y, features


def _widen(X, n_features: int):
    """X with ``n_features`` columns (sparse: more empty columns; dense: zero-padded)."""
    if X.shape[1] == n_features:
        return X
    if sp.issparse(X):
        return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
    return np.hstack([X, np.zeros((X.shape[0], n_features - X.shape[1]))])


def read_parts(fmt: str, paths: list[Path]):
    """[(X, raw labels)] of each file, with the same number of features (the largest).

    svmlight feature indices count from 1 (LIBSVM) unless a file uses index 0 (as
    scikit-learn's ``dump_svmlight_file`` writes), decided over all the files together."""
    parts, index, unseen, headers = [], None, set(), []
    for path in paths:
        X, y, names = _read(fmt, path, index, unseen)
        index = names if fmt == "vw" else None
        headers.append(names if fmt == "csv" else None)
        parts.append((X, y))
    if fmt == "svmlight" and not any(X.nnz and X.indices.min() == 0 for X, _ in parts):
        parts = [(X[:, 1:], y) for X, y in parts]  # LIBSVM's 1-based feature indices
    if len(parts) == 2 and fmt == "csv":
        parts[1] = (_test_columns_by_name(paths, headers, parts[1][0]), parts[1][1])
    width = max(X.shape[1] for X, _ in parts)
    if not width or not any((X.nnz if sp.issparse(X) else X.any()) for X, _ in parts):
        raise DataError(f"{', '.join(str(p) for p in paths)}: no example has a feature value "
                        "(every line holds a label only, or only zeros); check the format")
    if fmt == "csv" and any(X.shape[1] != width for X, _ in parts):
        raise DataError(f"{paths[0]} and {paths[1]} have different numbers of feature columns "
                        f"({parts[0][0].shape[1]} and {parts[1][0].shape[1]}); make them match")
    if len(parts) == 2:
        _warn_test_only_features(paths[1], parts[0][0].shape[1], parts[1][0], unseen)
    return [(_widen(X, width), y) for X, y in parts]


def _test_columns_by_name(paths: list[Path], headers: list, X_test):
    """The test CSV's feature columns in the training file's order, matched by header name
    (a warning says when they were reordered); DataError when only one file has a header or
    the two headers name different columns. Without headers, columns match by position."""
    train, test = headers
    if train == test:
        return X_test
    if train is None or test is None:
        with_header, without = (paths[0], paths[1]) if test is None else (paths[1], paths[0])
        raise DataError(f"{with_header} starts with a header line and {without} does not; "
                        "give both files the same header (or neither), so that their "
                        "columns can be matched")
    position, known = {name: i for i, name in enumerate(test)}, set(train)
    missing = [c for c in train if c not in position]
    extra = [c for c in test if c not in known]
    if missing or extra or len(known) != len(train) or len(position) != len(test):
        raise DataError(f"{paths[1]}: its header names other feature columns than "
                        f"{paths[0]}'s (missing: {missing[:5]}, not in training: "
                        f"{extra[:5]}); give both files the same columns")
    warnings.warn(f"{paths[1].name}: the feature columns are in another order than in "
                  f"{paths[0].name}; they are matched by header name", UserFileWarning,
                  stacklevel=4)
    return X_test[:, [position[c] for c in train]]


def _warn_test_only_features(path: Path, train_width: int, X_test, unseen: set) -> None:
    """Warn when the test file uses features the training file never has: named VW features
    are dropped; numbered ones are kept, but every training row is 0 there."""
    if unseen:
        warnings.warn(f"{path.name}: {len(unseen)} feature name(s) never seen in the training "
                      f"file (e.g. {sorted(unseen)[0]!r}) are dropped from the test examples",
                      UserFileWarning, stacklevel=3)
    if X_test.shape[1] > train_width:
        extra = X_test[:, train_width:]
        n_values = int(extra.nnz if sp.issparse(extra) else np.count_nonzero(extra))
        if n_values:
            warnings.warn(f"{path.name}: the test file has {X_test.shape[1]} feature columns, "
                          f"the training file {train_width}; its {n_values} value(s) in the "
                          "extra columns are 0 in every training row, so no method learns "
                          "from them", UserFileWarning, stacklevel=3)


# ----- splitting and labels
def split_rows(y_raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, test rows) of one file: SPLIT_RULE (seeded, so always the same split)."""
    return holdout_split(y_raw, TEST_FRACTION, SPLIT_SEED)


def number_labels(y_train_raw, y_test_raw):
    """(y_train, y_test, keep, classes): labels 0..K-1 by sorted training label; ``keep``
    marks the test examples whose label occurs in training. Numbers compare as numbers
    (``0`` and ``0.0`` are one label); labels read as different types in the two files
    (e.g. numbers and words in CSV) are compared as text."""
    y_train_raw, y_test_raw = np.asarray(y_train_raw), np.asarray(y_test_raw)
    kinds = {y_train_raw.dtype.kind, y_test_raw.dtype.kind}
    if len(kinds) > 1 and kinds <= set("iuf"):
        y_train_raw, y_test_raw = y_train_raw.astype(float), y_test_raw.astype(float)
    elif len(kinds) > 1:
        y_train_raw, y_test_raw = y_train_raw.astype(str), y_test_raw.astype(str)
    classes = np.unique(y_train_raw)
    position = np.clip(np.searchsorted(classes, y_test_raw), 0, len(classes) - 1)
    keep = classes[position] == y_test_raw
    y_train = np.searchsorted(classes, y_train_raw).astype(np.int64)
    return y_train, position[keep].astype(np.int64), keep, classes


def _some(labels, n: int = 5) -> str:
    """The first ``n`` of ``labels`` as text, with how many there are in all."""
    shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in labels[:n])
    return shown + (f", ... ({len(labels)} in all)" if len(labels) > n else "")


def _dense_enough(X) -> bool:
    """Whether sparse training data is dense enough (DENSE_AT) to be stored as an array."""
    cells = X.shape[0] * X.shape[1]
    return sp.issparse(X) and cells > 0 and X.nnz >= DENSE_AT * cells


def _checksum(spec: DatasetSpec, hashes: dict) -> str:
    identity = {"loader": LOADER_VERSION, "format": spec.params["format"], "files": hashes,
                "split": spec.split, "test_fraction": TEST_FRACTION, "seed": SPLIT_SEED,
                "unseen_test_labels": "dropped", "dense_at": DENSE_AT}
    return "sha256:" + hashlib.sha256(json.dumps(identity, sort_keys=True).encode()
                                      ).hexdigest()[:16]


def load_user_files(spec: DatasetSpec, data_dir: Path | None = None) -> Dataset:
    """Read, split (one file) and number the labels of a ``file:`` dataset (``data_dir`` is
    not used: the paths are the user's)."""
    fmt, paths = spec.params["format"], [Path(p) for p in spec.params["paths"]]
    roles = ["train", "test"] if len(paths) == 2 else ["train+test"]
    hashes = {role: file_sha256(p, cache_dir()) for role, p in zip(roles, paths)}
    parts = read_parts(fmt, paths)
    if len(parts) == 2:
        (X_train, y_train_raw), (X_test, y_test_raw) = parts
    else:
        ((X, y_raw),) = parts
        train, test = split_rows(y_raw)
        X_train, y_train_raw, X_test, y_test_raw = X[train], y_raw[train], X[test], y_raw[test]
    y_train, y_test, keep, classes = number_labels(y_train_raw, y_test_raw)
    if len(classes) < 2:
        raise DataError(f"{spec.name}: every training example has the label {_some(classes)}; "
                        "a classifier needs at least 2 classes (is the label column the "
                        "right one?)")
    dropped = int((~keep).sum())
    if dropped:
        warnings.warn(f"{spec.name}: dropped {dropped} of {len(keep)} test examples whose label "
                      "never occurs in the training part", UserFileWarning, stacklevel=2)
        X_test = X_test[keep]
    if not len(y_test):
        raise DataError(f"{spec.name}: no test example has a label seen in training "
                        f"(training labels: {_some(classes)}; test labels: "
                        f"{_some(np.unique(np.asarray(y_test_raw)))}); is the label column "
                        "the right one in both files?")
    if _dense_enough(X_train):
        X_train, X_test = X_train.toarray(), X_test.toarray()
    info = {"source_sha256": {f"{r} ({p.name})": h for (r, h), p in zip(hashes.items(), paths)},
            "test_dropped_unseen_label": dropped}
    return Dataset(name=spec.name, X_train=X_train, y_train=y_train,
                   X_test=X_test, y_test=y_test, n_classes=len(classes),
                   checksum=_checksum(spec, hashes), version=spec.version, info=info)
