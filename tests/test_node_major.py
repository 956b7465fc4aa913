"""xcbench.tree.node_major: exact weights grouped by node score a node's children exactly as
separate rows would, for dense and CSR input, children without a row, and zeros dropped."""
import numpy as np
import pytest
import scipy.sparse as sp

from xcbench.tree import node_major
from xcbench.tree.csr_weights import sorted_kernel_input
from xcbench.tree.node_softmax import child_logprobs


def _random_tree_rows(rng, D, density=0.4):
    """Two nodes (a 4-child node whose last child has no row, a binary one) over 6 rows of
    sparse weights with some exact zeros, as CSR rows in a shuffled order."""
    child_ptr = np.array([0, 4, 6], dtype=np.int64)
    edge_row = np.array([3, 0, 5, -1, 1, -1], dtype=np.int64)
    W = rng.normal(size=(6, D)) * (rng.random((6, D)) < density)
    W[2] = 0.0  # row 2 belongs to no node
    W[0, :3] = 0.0
    rows = sp.csr_matrix(W)
    indices, data = rows.indices.copy(), rows.data.copy()  # rows shuffled: need not be sorted
    for r in range(6):
        lo, hi = rows.indptr[r], rows.indptr[r + 1]
        order = rng.permutation(hi - lo)
        indices[lo:hi], data[lo:hi] = indices[lo:hi][order], data[lo:hi][order]
    return W, child_ptr, edge_row, rows.indptr.astype(np.int64), indices, data


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("D", [30, 3000])  # runs of one block, and of many (the skip index)
def test_node_major_scores_equal_the_rows_dot_products(sparse, D):
    rng = np.random.default_rng(0)
    W, child_ptr, edge_row, indptr, indices, data = _random_tree_rows(rng, D, 0.4 if D < 100
                                                                      else 0.05)
    store = node_major.from_rows(indptr, indices, data, child_ptr, edge_row)
    assert len(store[3]) == np.count_nonzero(W[[3, 0, 5, 1]])  # zeros and row 2 dropped
    bias = rng.normal(size=6)
    X = rng.normal(size=(5, D)) * (rng.random((5, D)) < 0.3)
    X[:, rng.choice(D, D // 2, replace=False)] = 0.0  # gaps the lower bound must jump
    Xd, xptr, xidx, xdat, dense = sorted_kernel_input(X if not sparse else sp.csr_matrix(X))
    out = np.empty(4)
    for i in range(5):
        for node in range(2):
            start, m = child_ptr[node], child_ptr[node + 1] - child_ptr[node]
            scores = np.array([W[r] @ X[i] + bias[r] if r >= 0 else 0.0
                               for r in edge_row[start:start + m]])
            want = scores - np.logaddexp.reduce(scores)
            got = child_logprobs(node, child_ptr, edge_row, store, bias, D, -1, Xd, xptr,
                                 xidx, xdat, i, dense, out)
            assert got == m
            np.testing.assert_allclose(out[:m], want, atol=1e-12)


def test_a_node_keeps_its_weights_sorted_by_feature():
    rng = np.random.default_rng(1)
    W, child_ptr, edge_row, indptr, indices, data = _random_tree_rows(rng, 40)
    node_ptr, feature, slot, value, skip_ptr, skip = node_major.from_rows(
        indptr, indices, data, child_ptr, edge_row)
    for node in range(2):
        run = slice(node_ptr[node], node_ptr[node + 1])
        assert np.all(np.diff(feature[run]) >= 0)
        rows = edge_row[child_ptr[node]:child_ptr[node + 1]]
        np.testing.assert_array_equal(value[run], W[rows[slot[run]], feature[run]])
        np.testing.assert_array_equal(skip[skip_ptr[node]:skip_ptr[node + 1]],
                                      feature[run][::node_major.SKIP])


def test_compact_store_scores_like_its_float32_weights_in_small_types():
    """``compact`` keeps every weight (rounded to float32) in the smallest index types,
    and a node's children score as with those rounded weights."""
    rng = np.random.default_rng(2)
    W, child_ptr, edge_row, indptr, indices, data = _random_tree_rows(rng, 300, 0.1)
    store = node_major.from_rows(indptr, indices, data, child_ptr, edge_row)
    small = node_major.compact(store, 300)
    assert small[1].dtype == np.uint16 and small[2].dtype == np.uint8
    assert small[3].dtype == np.float32 and small[5].dtype == np.uint16
    np.testing.assert_array_equal(small[3], store[3].astype(np.float32))
    X = rng.normal(size=(3, 300)) * (rng.random((3, 300)) < 0.3)
    Xd, xptr, xidx, xdat, dense = sorted_kernel_input(sp.csr_matrix(X))
    for i in range(3):
        want, got = np.zeros(4), np.zeros(4)
        node_major.children_dot(*store, 0, Xd, xptr, xidx, xdat, i, dense, want)
        node_major.children_dot(*small, 0, Xd, xptr, xidx, xdat, i, dense, got)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert node_major.smallest_uint(255) == np.uint8
    assert node_major.smallest_uint(256) == np.uint16
    assert node_major.smallest_uint(70_000) == np.int32
