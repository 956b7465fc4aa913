"""The files that keep a record's raw outputs, and how they are read back.

Two formats are read:

- **compact** (written by runs and by ``xcbench compact``), three files in ``raw/``:

  - ``<key>.compact.npz``, what the metrics, the report and the paired tests read:
    ``true_rank`` (per test row, the position of the true label among the top-k predicted
    labels, k when absent; uint8), ``n_predicted`` (k), ``log_p`` (float32), ``support``
    and ``path_cost`` (the smallest integer type that holds their values; float64 if one
    is not a whole number), ``y_checksum`` (which test labels file it shares) and
    ``format``;
  - ``testlabels-<checksum>.npz``: the test labels ``y``, once for every record measured
    on the same test rows;
  - ``<key>.topk.npz``: the top-k predicted ``labels`` (smallest signed integer type;
    -1 pads), for whoever wants the predictions themselves; nothing xcbench computes
    needs it, so it may be left out (``reports/`` does not commit it).

  Predicted scores are not kept: no metric, report or paired test reads them.
- **old** (``raw/<key>.npz``): int64 ``labels``, float64 ``scores`` and ``log_p``, int64
  ``support``, float64 ``path_cost`` and the test labels ``y`` in every file.

:func:`read_raw` returns the same names for both: ``true_rank``, ``n_predicted``, ``y``,
and where the record has them ``log_p``, ``support``, ``path_cost``, ``labels`` (and
``scores`` from an old file).
"""
from __future__ import annotations

import hashlib
import zipfile
import zlib
from pathlib import Path

import numpy as np

from ..metrics import true_label_rank

COMPACT_SUFFIX = ".compact.npz"
TOPK_SUFFIX = ".topk.npz"
OLD_SUFFIX = ".npz"
TEST_LABELS_PREFIX = "testlabels-"
#: the compact format's version, stored in each compact file as ``format``
COMPACT_FORMAT = 2
#: what a compact file holds besides ``format`` and ``y_checksum`` (when the cell had it)
COMPACT_ARRAYS = ("true_rank", "n_predicted", "log_p", "support", "path_cost")
_INT_TYPES = (np.int8, np.int16, np.int32, np.int64)
_UINT_TYPES = (np.uint8, np.uint16, np.uint32, np.uint64)


class RawFileError(ValueError):
    """A raw outputs file exists but cannot be read; names the file and its record."""


def smallest_int(values) -> np.ndarray | None:
    """``values`` in the smallest integer type that holds them exactly (unsigned when none
    is negative); None when a value is not a whole number."""
    values = np.asarray(values)
    if values.dtype.kind == "f":
        if not np.all(np.isfinite(values)) or not np.array_equal(values, np.round(values)):
            return None
    elif values.dtype.kind not in "iub":
        return None
    if not values.size:
        return values.astype(np.uint8)
    low, high = int(values.min()), int(values.max())
    for kind in (_UINT_TYPES if low >= 0 else _INT_TYPES):
        info = np.iinfo(kind)
        if info.min <= low and high <= info.max:
            return values.astype(kind)
    return None


def compact_float(values) -> np.ndarray:
    """``values`` as float32 unless that turns a finite value infinite (then float64)."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore"):
        small = values.astype(np.float32)
    return small if np.array_equal(np.isfinite(small), np.isfinite(values)) else values


def labels_checksum(y) -> str:
    """A short checksum of test labels, independent of their integer type."""
    data = np.ascontiguousarray(np.asarray(y, dtype="<i8")).tobytes()
    return hashlib.sha256(data).hexdigest()[:16]


def shared_labels_name(checksum: str) -> str:
    """The name of the test labels file with checksum ``checksum``."""
    return f"{TEST_LABELS_PREFIX}{checksum}{OLD_SUFFIX}"


def compact_files(arrays: dict) -> dict[str, dict]:
    """The arrays of each compact file, by the file's suffix (``COMPACT_SUFFIX``,
    ``TOPK_SUFFIX``) or, for the test labels, its name; from a cell's raw outputs
    (``labels`` and ``y`` required; ``log_p``, ``support``, ``path_cost`` optional;
    ``scores`` and anything else dropped)."""
    labels, y = np.asarray(arrays["labels"]), smallest_int(arrays["y"])
    checksum = labels_checksum(y)
    compact = {"format": np.asarray(COMPACT_FORMAT, dtype=np.uint8),
               "true_rank": true_label_rank(labels, y),
               "n_predicted": np.asarray(labels.shape[1]),
               "y_checksum": np.asarray(checksum)}
    if arrays.get("log_p") is not None:
        compact["log_p"] = compact_float(arrays["log_p"])
    for name in ("support", "path_cost"):
        if arrays.get(name) is not None:
            small = smallest_int(arrays[name])
            compact[name] = small if small is not None else np.asarray(arrays[name], float)
    return {COMPACT_SUFFIX: compact, TOPK_SUFFIX: {"labels": smallest_int(labels)},
            shared_labels_name(checksum): {"y": y}}


def _load(path: Path, key) -> dict:
    try:
        with open(path, "rb") as f, np.load(f) as data:
            return {k: data[k] for k in data.files}
    except (ValueError, OSError, EOFError, KeyError, TypeError, zipfile.BadZipFile,
            zlib.error) as exc:
        raise RawFileError(f"{path}: the raw outputs of record {key} cannot be read "
                           f"({type(exc).__name__}: {exc}); the file is truncated or "
                           "corrupt") from exc


def topk_path(compact: Path) -> Path:
    """The top-k labels file beside compact file ``compact``."""
    return compact.with_name(compact.name[:-len(COMPACT_SUFFIX)] + TOPK_SUFFIX)


def read_raw(path: Path, key=None) -> dict:
    """The raw outputs in ``path`` (either format) as {name: array}, with the names the
    module's docstring lists. A compact file's test labels are read from their shared file
    and checked against their checksum; its top-k labels from their file when it is there.
    RawFileError naming the file and record ``key`` when a file cannot be read."""
    arrays = _load(path, key)
    if "y_checksum" not in arrays:  # the old format
        if "labels" not in arrays or "y" not in arrays:
            raise RawFileError(f"{path}: the raw outputs of record {key} have no labels or "
                               "no test labels")
        return {**arrays, "true_rank": true_label_rank(arrays["labels"], arrays["y"]),
                "n_predicted": np.asarray(arrays["labels"].shape[1])}
    checksum = str(arrays.pop("y_checksum"))
    arrays.pop("format", None)
    shared = path.parent / shared_labels_name(checksum)
    if not shared.exists():
        raise RawFileError(f"{shared}: the test labels of record {key} ({path.name}) are "
                           "missing")
    y = _load(shared, key).get("y")
    if y is None or labels_checksum(y) != checksum:
        raise RawFileError(f"{shared}: the test labels of record {key} ({path.name}) do "
                           "not match their checksum; the file is corrupt")
    if len(arrays.get("true_rank", ())) != len(y):
        raise RawFileError(f"{path}: the raw outputs of record {key} do not cover the "
                           "test rows; the file is corrupt")
    topk = topk_path(path)
    if topk.exists():
        arrays["labels"] = _load(topk, key)["labels"]
    return {**arrays, "y": y}


def shared_labels_intact(path: Path, checksum: str) -> bool:
    """Whether the test labels file ``path`` can be read and matches ``checksum``."""
    try:
        y = _load(path, None).get("y")
    except RawFileError:
        return False
    return y is not None and labels_checksum(y) == checksum


def same_outputs(old: dict, new: dict) -> str | None:
    """Why the outputs read from compact files (``new``) differ from those read from an
    old file (``old``), or None when they hold the same values: integers exactly,
    ``log_p`` to float32's rounding with the same infinite rows (scores are not kept)."""
    expected = sorted(k for k in old if k != "scores")
    if expected != sorted(new):
        return f"arrays {sorted(new)} instead of {expected}"
    for name in expected:
        a, b = np.asarray(old[name]), np.asarray(new[name])
        if a.shape != b.shape:
            return f"{name} has shape {b.shape} instead of {a.shape}"
        if name == "log_p" and b.dtype == np.float32:
            a = a.astype(np.float32)
        if not np.array_equal(a, b, equal_nan=a.dtype.kind == "f" and b.dtype.kind == "f"):
            return f"{name} differs"
    return None


def files_of(path: Path) -> list[str]:
    """The names of the files in ``path``'s folder that hold its record's raw outputs:
    for a compact file the test labels it shares, its top-k labels file when present, then
    itself (the order :meth:`ResultStore.save_raw` writes them); else the file itself. A
    damaged compact file is named alone."""
    path = Path(path)
    if not path.name.endswith(COMPACT_SUFFIX):
        return [path.name]
    try:
        checksum = str(_load(path, path.name.split(".")[0])["y_checksum"])
    except (RawFileError, KeyError):
        return [path.name]
    topk = [topk_path(path).name] if topk_path(path).exists() else []
    return [shared_labels_name(checksum), *topk, path.name]
