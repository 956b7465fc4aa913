"""The inputs a method is measured on, handed over so that it cannot change them.

A method receives read-only views of the dataset's arrays (dense arrays, and the
``data``/``indices``/``indptr`` arrays of a sparse matrix): the same memory, no copy, and a
write into them raises ``ValueError: ... read-only``. The scorer keeps its own copy of the
test labels and of each output it scores, taken before the method is called again, so a
``log_proba`` that overwrites its ``y`` (or an output array it returned earlier) cannot
change its score. A method whose library needs writable arrays copies them itself.
"""
from __future__ import annotations

import copy
import dataclasses

import numpy as np
import scipy.sparse as sp

#: the array attributes of the scipy.sparse formats (csr/csc/bsr, coo, dia)
_SPARSE_ARRAYS = ("data", "indices", "indptr", "row", "col", "coords", "offsets")

#: the hint added to the error of a method that wrote into an input
WRITE_HINT = ("the method wrote into an input array; xcbench hands methods their inputs "
              "read-only (X_train, y_train, X_test, y_test and the arrays of a sparse "
              "matrix): copy an array first if the method must change it, e.g. np.array(X)")


def read_only(value):
    """A read-only view of a numpy array or scipy.sparse matrix (its arrays are viewed, not
    copied); any other value is returned as it is."""
    if isinstance(value, np.ndarray):
        view = value.view()
        view.flags.writeable = False
        return view
    if sp.issparse(value):
        view = copy.copy(value)  # a new matrix object sharing the arrays, then viewed
        for name in _SPARSE_ARRAYS:
            array = view.__dict__.get(name)
            if isinstance(array, np.ndarray):
                setattr(view, name, read_only(array))
            elif isinstance(array, tuple):  # coo ``coords``
                setattr(view, name, tuple(read_only(a) for a in array))
        return view
    return value


def read_only_dataset(dataset):
    """``dataset`` with read-only views of its four arrays (see :func:`read_only`)."""
    return dataclasses.replace(dataset, **{name: read_only(getattr(dataset, name))
                                           for name in ("X_train", "y_train", "X_test",
                                                        "y_test")})


def freeze(value):
    """Make ``value``'s own arrays read-only in place (a dataset shared by the cells of an
    in-process run), so that a method cannot write into them and change later cells."""
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif sp.issparse(value):
        for name in _SPARSE_ARRAYS:
            array = value.__dict__.get(name)
            for a in array if isinstance(array, tuple) else (array,):
                if isinstance(a, np.ndarray):
                    a.flags.writeable = False
    return value


def private_copy(value):
    """A copy the scorer keeps of an array it scores (None stays None)."""
    return None if value is None else np.array(value, copy=True)


def is_input_write(exc: BaseException) -> bool:
    """Whether ``exc`` is numpy's (or a compiled library's) refusal to write into a
    read-only array, or to make one writable again."""
    text = str(exc)
    return isinstance(exc, ValueError) and ("read-only" in text or "WRITEABLE flag" in text)
