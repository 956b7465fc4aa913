"""The toolkit's flat weight table: direct layout equals a dense matrix, hashing stays in
range, spreads pairs, and dense and CSR rows give the same dot products."""
import numpy as np
import scipy.sparse as sp

from xcbench.kernels import kernel_input
from xcbench.tree.weights import (AUTO_MAX_BITS, DIRECT, ROW_BLOCK, auto_bits,
                                  row_adagrad_step, row_axpy, row_dot, slot, table_layout)


def _rows(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(5, 40)) * (rng.random((5, 40)) < 0.3)
    return X, sp.csr_matrix(X)


def test_direct_layout_is_the_dense_matrix():
    size, mask = table_layout(3, 40, bits=None)
    assert (size, mask) == (120, DIRECT)
    W = np.random.default_rng(1).normal(size=(3, 40))
    table, bias = W.ravel().copy(), np.array([0.5, -1.0, 2.0])
    X, _ = _rows()
    args = kernel_input(X)[:4]
    for r in range(3):
        for i in range(5):
            got = row_dot(table, bias, r, 40, mask, *args, i, True)
            assert np.isclose(got, W[r] @ X[i] + bias[r])


def test_hashed_slots_in_range_and_spread():
    mask = (1 << 16) - 1
    slots = np.array([slot(r, f, 1000, mask) for r in range(64) for f in range(256)])
    assert slots.min() >= 0 and slots.max() <= mask
    # 16,384 pairs into 65,536 slots: a uniform hash leaves exp(-1/4) ~ 78% of them alone
    _, counts = np.unique(slots, return_counts=True)
    assert (counts == 1).sum() / slots.size > 0.74


def test_hashed_rows_of_one_block_sit_side_by_side():
    """A node's children (consecutive rows) read one feature's weights from one block."""
    mask = (1 << 20) - 1
    for f in (0, 7, 848_631):
        for first in (0, ROW_BLOCK, 5 * ROW_BLOCK):
            slots = np.array([slot(r, f, 848_632, mask) for r in range(first, first + ROW_BLOCK)])
            assert slots[0] % ROW_BLOCK == 0
            assert np.array_equal(slots, slots[0] + np.arange(ROW_BLOCK))
    # the next block, or another feature, goes elsewhere
    assert slot(ROW_BLOCK, 7, 848_632, mask) // ROW_BLOCK != slot(0, 7, 848_632, mask) // ROW_BLOCK
    assert slot(0, 8, 848_632, mask) // ROW_BLOCK != slot(0, 7, 848_632, mask) // ROW_BLOCK


def test_dense_and_csr_rows_agree_in_both_layouts():
    X, Xs = _rows(2)
    for bits in (None, 16):
        size, mask = table_layout(4, 40, bits=bits)
        tables = []
        for inp in (kernel_input(X), kernel_input(Xs)):
            table, acc = np.zeros(size), np.zeros(size)
            bias, bias_acc = np.zeros(4), np.zeros(4)
            for i in range(5):
                row_adagrad_step(table, acc, bias, bias_acc, i % 4, 40, mask, *inp[:4], i,
                                 inp[4], 0.7, 0.1)
                row_axpy(table, (i + 1) % 4, 40, mask, -0.2, *inp[:4], i, inp[4])
            tables.append(table)
            scores = [row_dot(table, bias, r, 40, mask, *inp[:4], i, inp[4])
                      for r in range(4) for i in range(5)]
            tables.append(np.array(scores))
        assert np.allclose(tables[0], tables[2]) and np.allclose(tables[1], tables[3])


def test_auto_layout_hashes_only_when_too_big():
    assert table_layout(100, 128)[1] == DIRECT
    size, mask = table_layout(200_000, 850_000, touched_pairs=1e7)
    assert mask == size - 1 and size == 1 << auto_bits(1e7)
    assert 4 * 1e7 <= size < 8 * 1e7
    assert table_layout(200_000, 850_000)[0] == 1 << AUTO_MAX_BITS  # capped, not 1.4 TB
