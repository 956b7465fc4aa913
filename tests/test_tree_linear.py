"""The toolkit's linear rows: bias as a column, on-the-fly feature scaling, an AdaGrad step
that can stop at its target, capped automatic hashing, and dropping the AdaGrad sums."""
import numpy as np
import scipy.sparse as sp

from xcbench.kernels import kernel_input
from xcbench.tree.linear import (MAX_AUTO_BITS, adagrad_step, choose_layout, dot, new_table,
                                 weights_only)
from xcbench.tree.weights import DIRECT


def test_dot_scales_features_and_adds_the_bias_column():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4, 6)) * (rng.random((4, 6)) < 0.5)
    scale = rng.random(6) + 0.5
    W = rng.normal(size=(3, 7))  # 6 features + bias
    for inp in (kernel_input(X), kernel_input(sp.csr_matrix(X))):
        for r in range(3):
            for i in range(4):
                got = dot(W.ravel(), r, 7, DIRECT, scale, *inp[:4], i, inp[4])
                assert np.isclose(got, W[r, :6] @ (X[i] * scale) + W[r, 6])


def test_step_stops_at_the_target_and_returns_the_new_output():
    X = np.array([[1.0, 2.0, 0.0]])
    ones = np.ones(3)
    for stop, lr in ((True, 50.0), (False, 0.1)):
        table = new_table(2 * 4)
        h = dot(table[:, 0], 1, 4, DIRECT, ones, *kernel_input(X)[:4], 0, True)
        new = adagrad_step(table, 1, 4, DIRECT, ones, *kernel_input(X)[:4], 0, True, -1.0, lr,
                           h, 1.0, stop)
        assert np.isclose(new, dot(table[:, 0], 1, 4, DIRECT, ones, *kernel_input(X)[:4], 0,
                                   True))
        assert np.isclose(new, 1.0) if stop else 0 < new < 1.0
        assert np.all(table[:4] == 0)  # row 0 untouched


def test_auto_layout_is_direct_when_small_and_capped_when_hashed():
    assert choose_layout(100, 127)[1] == DIRECT
    assert choose_layout(100, 127) == (100 * 128, DIRECT)
    size, mask = choose_layout(200_000, 850_000, touched_pairs=1e12)
    assert size == 1 << MAX_AUTO_BITS and mask == size - 1
    assert choose_layout(10, 10, bits=18) == (1 << 18, (1 << 18) - 1)


def test_weights_only_keeps_column_zero():
    table = np.random.default_rng(1).normal(size=(1000, 2))
    want = table[:, 0].copy()
    got = weights_only(table)
    assert got.shape == (1000,) and np.array_equal(got, want)
