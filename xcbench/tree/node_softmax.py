"""Trees of node softmaxes (hierarchical softmax, learned M-ary trees): the log-probabilities
of a node's children and of a label's whole path, compiled.

A node's children are ``child_ptr[node]:child_ptr[node + 1]`` of the child arrays; child q
is scored by weight row ``edge_row[start + q]`` of the toolkit's flat table, or by the exact
node-major store (``xcbench.tree.weights.children_dot``), or fixed at score 0 when that row
is -1. A label's path is the steps ``path_ptr[c]:path_ptr[c + 1]`` of (``path_node``,
``path_pos``: the child taken).
"""
import numba
import numpy as np

from xcbench.kernels import log_softmax_inplace
from xcbench.tree.weights import children_dot

_jit = numba.njit(cache=True, nogil=True)


@_jit
def child_logprobs(node, child_ptr, edge_row, table, bias, n_features, mask, Xd, indptr,
                    indices, data, i, dense, out):
    """Fill out[:m] with log p(child | node, x_i); return m (the node's arity)."""
    m = children_dot(table, bias, node, child_ptr, edge_row, n_features, mask, Xd, indptr,
                     indices, data, i, dense, out)
    log_softmax_inplace(out, m)
    return m


@_jit
def path_log_proba(y, path_ptr, path_node, path_pos, child_ptr, edge_row, table, bias,
                   n_features, mask, Xd, indptr, indices, data, dense, max_arity):
    """log p(y_i | x_i) for every row: the sum of the edge log-probabilities on y_i's path."""
    n = y.shape[0]
    out = np.empty(n)
    buf = np.empty(max_arity)
    for i in range(n):
        total = 0.0
        for s in range(path_ptr[y[i]], path_ptr[y[i] + 1]):
            child_logprobs(path_node[s], child_ptr, edge_row, table, bias, n_features, mask,
                           Xd, indptr, indices, data, i, dense, buf)
            total += buf[path_pos[s]]
        out[i] = total
    return out
