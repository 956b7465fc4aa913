"""Readers for the file formats users bring; each validates and names file and line on error.

- LIBSVM / svmlight (scikit-learn's parser): ``label idx:val idx:val ...``
- Extreme Classification Repository: header ``N D K``, then ``labels idx:val ...``
  (comma-separated labels; multiclass needs exactly one per line)
- Vowpal Wabbit multiclass text: ``label [importance] [tag]|[namespace] feat[:val] ...``,
  labels 1..K
- CSV: one label column, numeric feature columns
"""
from __future__ import annotations

import bz2
import gzip
import io
import lzma
import math
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .fetch import DataError


class FormatError(DataError):
    """A data file is malformed; the message names the file, the line and the fix."""

    def __init__(self, path, line: int | None, problem: str):
        where = f"{path}:{line}" if line else str(path)
        fix = ("fix or remove that line, or replace the file" if line
               else "replace it with a complete, valid copy")
        super().__init__(f"{where}: {problem.rstrip('.')}; {fix}.")
        self.path, self.line, self.problem = path, line, problem


def open_text(path: str | Path):
    """Open a text file for reading, decompressing .gz/.bz2/.xz by extension."""
    path = str(path)
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(Path(path).suffix, open)
    return opener(path, "rt", encoding="utf-8")


def _open_binary(path):
    path = str(path)
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(Path(path).suffix, open)
    return opener(path, "rb")


def not_utf8(path, exc: UnicodeDecodeError | None = None) -> FormatError:
    """A FormatError naming the first line of ``path`` that is not UTF-8 and its bad byte."""
    with _open_binary(path) as f:
        for lineno, raw in enumerate(f, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as bad:
                byte = raw[bad.start:bad.start + 1].hex()
                return FormatError(path, lineno, f"byte 0x{byte} at column {bad.start + 1} is "
                                                 "not UTF-8 text; save the file as UTF-8")
    return FormatError(path, None, f"the file is not UTF-8 text ({exc}); save it as UTF-8")


def _check_values(path, X, rows_to_lines=None):
    data = X.data if sp.issparse(X) else X
    if data.size and not np.isfinite(data).all():
        if sp.issparse(X):
            row = int(np.searchsorted(X.indptr, np.argmax(~np.isfinite(X.data)), side="right") - 1)
        else:
            row = int(np.argmax(~np.isfinite(X).all(axis=1)))
        line = rows_to_lines(row) if rows_to_lines else row + 1
        raise FormatError(path, line, "a feature value is NaN or infinite")


def _integer_labels(path, y, rows_to_lines=None):
    y = np.asarray(y, dtype=np.float64)
    bad = ~np.isfinite(y) | (np.mod(y, 1) != 0)
    if bad.any():
        row = int(np.argmax(bad))
        line = rows_to_lines(row) if rows_to_lines else row + 1
        raise FormatError(path, line, f"label {float(y[row])!r} is not an integer class id")
    return y.astype(np.int64)


#: the largest feature index scikit-learn's svmlight reader takes (a C int, less one column)
MAX_FEATURE_INDEX = 2**31 - 2


def _svmlight_line_problem(line: str, zero_based: bool) -> str | None:
    """Why one svmlight line is malformed (None if it is fine)."""
    body = line.split("#", 1)[0].split()
    if not body:
        return None
    try:
        float(body[0])
    except ValueError:
        return f"label {body[0]!r} is not a number"
    last = -1
    for token in body[1:]:
        if token.startswith("qid:"):
            continue
        idx, sep, val = token.partition(":")
        if not sep:
            return f"feature {token!r} is not index:value"
        try:
            i, v = int(idx), float(val)
        except ValueError:
            return f"feature {token!r} is not integer-index:number"
        if i < (0 if zero_based else 1):
            return f"feature index {i} is below {0 if zero_based else 1}"
        if i > MAX_FEATURE_INDEX:
            return f"feature index {i} is too large (at most {MAX_FEATURE_INDEX:,})"
        if i <= last:
            return f"feature indices are not increasing at {token!r}"
        if not math.isfinite(v):
            return f"feature value {val!r} is NaN or infinite"
        last = i
    return None


def _first_bad_svmlight_line(path, zero_based: bool):
    with open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            problem = _svmlight_line_problem(line, zero_based)
            if problem:
                return lineno, problem
    return None, None


def read_svmlight(path, n_features: int | None = None, zero_based: bool = False):
    """Read a LIBSVM/svmlight file: (X CSR float64, y int64 as written in the file).

    ``zero_based=False`` is LIBSVM's convention (feature indices start at 1).
    """
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(str(path), n_features=n_features, dtype=np.float64,
                                  zero_based=zero_based)
    except (ValueError, RuntimeError, OverflowError) as exc:
        try:
            line, problem = _first_bad_svmlight_line(path, zero_based)
        except UnicodeDecodeError as bad:
            raise not_utf8(path, bad) from exc
        raise FormatError(path, line, problem or f"unreadable svmlight data ({exc})") from exc
    except (EOFError, OSError) as exc:
        raise FormatError(path, None, f"the file is truncated or corrupt ({exc})") from exc
    _check_values(path, X)
    return X.tocsr(), _integer_labels(path, y)


def read_xc(path, n_classes: int | None = None):
    """Read an Extreme Classification Repository file (header ``N D K``) as multiclass data.

    Feature indices and labels are zero-based. Returns (X CSR, y int64, K).
    """
    from sklearn.datasets import load_svmlight_file

    with open_text(path) as f:
        header = f.readline().split()
        if len(header) != 3 or not all(h.isdigit() for h in header):
            raise FormatError(path, 1, f"expected a header 'N D K', got {' '.join(header)!r}")
        n, d, k = map(int, header)
        body = f.read()
    lines = body.splitlines()
    if len(lines) != n:
        raise FormatError(path, None, f"header says N={n} examples but {len(lines)} lines follow")
    for lineno, line in enumerate(lines, 2):
        labels, _, features = line.partition(" ")
        if "," in labels or not labels.strip():
            raise FormatError(path, lineno, "multiclass data needs exactly one label per line, "
                                            f"got {labels.strip()!r}")
        if ":" in labels:  # a line with no label starts with a feature
            raise FormatError(path, lineno, "the line has no label")
    try:
        X, y = load_svmlight_file(io.BytesIO(body.encode()), n_features=d, dtype=np.float64,
                                  zero_based=True)
    except ValueError as exc:
        for lineno, line in enumerate(lines, 2):
            problem = _svmlight_line_problem(line, zero_based=True)
            if problem:
                raise FormatError(path, lineno, problem) from exc
        raise FormatError(path, None, f"unreadable data ({exc}); are all feature indices "
                                      f"below D={d}?") from exc
    y = _integer_labels(path, y, lambda row: row + 2)
    _check_values(path, X, lambda row: row + 2)
    k = n_classes or k
    bad = (y < 0) | (y >= k)
    if bad.any():
        row = int(np.argmax(bad))
        raise FormatError(path, row + 2, f"label {y[row]} is outside 0..{k - 1} (K={k})")
    return X.tocsr(), y, k


def read_vw_multiclass(path, feature_index: dict | None = None, n_classes: int | None = None,
                       unseen: set | None = None):
    """Read Vowpal Wabbit multiclass text (labels 1..K) as (X CSR, y in 0..K-1, feature_index).

    Features named by integers keep that index; other names get the next free index from
    ``feature_index`` (pass the training set's dict when reading its test set; names first
    seen in the test set are dropped, and added to ``unseen`` when given). Namespaces are
    ignored (features are pooled).
    """
    growing = feature_index is None
    feature_index = {} if feature_index is None else feature_index
    indptr, indices, values, labels = [0], [], [], []
    with open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            head, bar, rest = line.partition("|")
            if not bar:
                raise FormatError(path, lineno, "no '|' separates the label from the features")
            parts = head.split()
            if not parts:
                raise FormatError(path, lineno, "the line has no label")
            try:
                label = int(parts[0])
            except ValueError:
                raise FormatError(path, lineno, f"label {parts[0]!r} is not an integer") from None
            if label < 1 or (n_classes is not None and label > n_classes):
                raise FormatError(path, lineno, f"label {label} is outside 1..{n_classes or 'K'} "
                                                "(VW multiclass labels start at 1)")
            labels.append(label - 1)
            for segment in rest.split("|"):
                tokens = segment.split()
                if segment[:1] not in (" ", "\t", "") and tokens:
                    tokens = tokens[1:]  # the first word names the namespace
                for token in tokens:
                    name, sep, val = token.partition(":")
                    try:
                        value = float(val) if sep else 1.0
                    except ValueError:
                        raise FormatError(path, lineno, f"feature value in {token!r} is not a "
                                                        "number") from None
                    if not math.isfinite(value):
                        raise FormatError(path, lineno, f"feature {token!r} is NaN or infinite")
                    if name.isdigit():
                        col = int(name)
                    elif name in feature_index:
                        col = feature_index[name]
                    elif growing:
                        col = feature_index[name] = len(feature_index)
                    else:
                        if unseen is not None:
                            unseen.add(name)
                        continue
                    indices.append(col)
                    values.append(value)
            indptr.append(len(indices))
    n_cols = max([*indices, *feature_index.values(), -1]) + 1
    X = sp.csr_matrix((np.asarray(values, dtype=np.float64), np.asarray(indices, dtype=np.int64),
                       np.asarray(indptr, dtype=np.int64)), shape=(len(labels), n_cols))
    X.sum_duplicates()
    return X, np.asarray(labels, dtype=np.int64), feature_index


def read_csv(path, label_column, sep=",", header="infer", drop_columns=()):
    """Read a CSV file: (X float64 dense, raw labels as a numpy array).

    ``label_column`` is a column name or position; other columns must be numeric.
    """
    import pandas as pd

    try:
        frame = pd.read_csv(path, sep=sep, header=header)
    except pd.errors.EmptyDataError as exc:
        raise FormatError(path, None, "the file is empty (no header, no examples)") from exc
    except UnicodeDecodeError as exc:
        raise not_utf8(path, exc) from exc
    except (pd.errors.ParserError, EOFError, OSError) as exc:
        raise FormatError(path, None, f"unreadable CSV ({exc})") from exc
    if isinstance(label_column, int):
        label_column = frame.columns[label_column]
    if label_column not in frame.columns:
        raise FormatError(path, None, f"no label column {label_column!r}; columns are "
                                      f"{list(frame.columns)[:10]}")
    labels = frame[label_column].to_numpy()
    features = frame.drop(columns=[label_column, *drop_columns])
    numeric = features.apply(pd.to_numeric, errors="coerce")
    bad = numeric.isna() & features.notna()
    if bad.to_numpy().any():
        row, col = np.argwhere(bad.to_numpy())[0]
        first_data_line = 2 if header == "infer" else 1
        raise FormatError(path, int(row) + first_data_line,
                          f"column {features.columns[col]!r} holds non-numeric "
                          f"{features.iat[row, col]!r}")
    X = numeric.to_numpy(dtype=np.float64)
    missing = ~np.isfinite(X)
    if missing.any():
        row = int(np.argwhere(missing)[0][0])
        raise FormatError(path, row + (2 if header == "infer" else 1),
                          "a feature value is missing, NaN or infinite")
    return X, labels


def encode_labels(*label_arrays):
    """Map raw labels (any sortable values) to 0..K-1 by sorted order.

    Returns (list of int64 arrays, classes) where classes[i] is the raw label of class i.
    """
    classes = np.unique(np.concatenate([np.asarray(a) for a in label_arrays]))
    return [np.searchsorted(classes, np.asarray(a)).astype(np.int64) for a in label_arrays], \
        classes
