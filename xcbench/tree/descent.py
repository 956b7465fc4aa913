"""Compiled descent of a binary tree of linear routers: node j's router is row
``row_of[j]`` of a flat table (``xcbench.tree.linear``); an example goes right iff the
router's output is >= 0. Children are explicit arrays (``left[j] == -1`` at a leaf), so
trees whose node ids are recycled (LOMtree) descend like any other."""
import numba

from .linear import dot

_jit = numba.njit(cache=True, nogil=True)


@_jit
def child(left, right, row_of, w, j, n_cols, mask, xscale, Xd, indptr, indices, data, i,
          dense):
    """The child of internal node j that row i goes to."""
    h = dot(w, row_of[j], n_cols, mask, xscale, Xd, indptr, indices, data, i, dense)
    return right[j] if h >= 0 else left[j]


@_jit
def descend(left, right, row_of, w, n_cols, mask, xscale, Xd, indptr, indices, data, dense,
            n_rows, out_leaf, out_depth):
    """Leaf reached by each of the first ``n_rows`` rows, and its depth (routers evaluated)."""
    for i in range(n_rows):
        j = 0
        depth = 0
        while left[j] >= 0:
            j = child(left, right, row_of, w, j, n_cols, mask, xscale, Xd, indptr, indices,
                      data, i, dense)
            depth += 1
        out_leaf[i] = j
        out_depth[i] = depth
