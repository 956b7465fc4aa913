"""Compare a model's state before and after a call (scikit-learn's check_dict_unchanged)."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import scipy.sparse as sp


def state_differences(a, b, path="", depth=0) -> dict[str, str]:
    """Where two values (e.g. model attributes) differ: {path: what changed}, empty when
    equal. Objects are compared through their __dict__; others with ==."""
    if depth > 20:
        return {}
    if type(a) is not type(b):
        return {path: f"type {type(a).__name__} -> {type(b).__name__}"}
    if isinstance(a, np.ndarray):
        same = a.shape == b.shape and a.dtype == b.dtype and (
            np.array_equal(a, b, equal_nan=a.dtype.kind in "fc") if a.dtype != object
            else all(not state_differences(x, y) for x, y in zip(a.ravel(), b.ravel())))
        return {} if same else {path: "array changed"}
    if sp.issparse(a):
        return {} if a.shape == b.shape and (a != b).nnz == 0 else {path: "matrix changed"}
    if isinstance(a, dict):
        out = {f"{path}[{k!r}]": "added" for k in b.keys() - a.keys()}
        out.update({f"{path}[{k!r}]": "removed" for k in a.keys() - b.keys()})
        for k in a.keys() & b.keys():
            out.update(state_differences(a[k], b[k], f"{path}[{k!r}]", depth + 1))
        return out
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return {path: f"length {len(a)} -> {len(b)}"}
        out = {}
        for i, (x, y) in enumerate(zip(a, b)):
            out.update(state_differences(x, y, f"{path}[{i}]", depth + 1))
        return out
    if isinstance(a, float) and np.isnan(a) and np.isnan(b):
        return {}
    if hasattr(a, "__dict__") and not isinstance(a, type):
        return state_differences(vars(a), vars(b), path, depth + 1)
    try:
        return {} if bool(a == b) else {path: f"{a!r} -> {b!r}"}
    except Exception:  # noqa: BLE001 - not comparable
        return {path: "not comparable"}


def snapshot(m):
    """A deep copy of a model's attributes (through pickle when it cannot be deep-copied)."""
    try:
        return copy.deepcopy(vars(m))
    except Exception:  # noqa: BLE001 - e.g. an extension object: fall back to pickle
        return vars(pickle.loads(pickle.dumps(m)))
