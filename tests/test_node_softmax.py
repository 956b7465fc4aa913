"""xcbench.tree.node_softmax.child_logprobs: a node's child log-probabilities, dense and CSR,
with children fixed at score 0 (row -1) and rows in any order."""
import numpy as np
import pytest
import scipy.sparse as sp

from xcbench.tree.node_softmax import child_logprobs
from xcbench.tree.weights import table_layout


def _expected(edge, table, bias, x, D):
    scores = np.array([table[r * D:(r + 1) * D] @ x + bias[r] if r >= 0 else 0.0
                       for r in edge])
    return scores - np.log(np.exp(scores - scores.max()).sum()) - scores.max()


@pytest.mark.parametrize("edge", [
    [0, 1, 2, 3, 4, -1],        # hsm-like: a consecutive run, the last child fixed at 0
    [5, 6, 7, 8, 9, 10, 11],    # a full M-ary node
    [2, 3, 7, 8, 9, 10],        # a short run, then other rows
    [4, -1],                     # binary
    [3, -1, 5],                  # ends one run apart, a fixed child between
    [5, 7, 6, 8],                # ends one run apart, rows out of order
])
@pytest.mark.parametrize("sparse", [False, True])
def test_child_logprobs_is_the_log_softmax_of_the_child_scores(edge, sparse):
    rng = np.random.default_rng(1)
    D, n_rows = 9, 12
    size, mask = table_layout(n_rows, D, bits=None)
    assert mask < 0
    table, bias = rng.normal(size=size), rng.normal(size=n_rows)
    X = rng.normal(size=(3, D)) * (rng.random((3, D)) < 0.6)
    Xs = sp.csr_matrix(X)
    Xd = np.zeros((0, 0)) if sparse else X
    edge = np.array(edge, dtype=np.int64)
    child_ptr = np.array([0, len(edge)], dtype=np.int64)
    out = np.empty(len(edge))
    for i in range(3):
        m = child_logprobs(0, child_ptr, edge, table, bias, D, mask, Xd,
                           Xs.indptr.astype(np.int64), Xs.indices.astype(np.int64), Xs.data,
                           i, not sparse, out)
        assert m == len(edge)
        np.testing.assert_allclose(out, _expected(edge, table, bias, X[i], D), atol=1e-10)
