"""The shared data sizes behind the plugins' defaults-by-rule."""
import numpy as np
import scipy.sparse as sp
from xcbench_hsm.defaults import DataShape as HsmShape
from xcbench_mary_tree.defaults import DataShape as MaryShape
from xcbench_online.defaults import DataShape as OnlineShape
from xcbench_st.defaults import DataShape as StShape

from xcbench.contract.data_shape import (DataSizes, mostly_zeros, narrow_dense, nonzeros,
                                         stored_values)


def test_stored_values_counts_nonzeros_of_sparse_and_cells_of_dense():
    X = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 0.0]])
    assert stored_values(X) == 6 and stored_values(sp.csr_matrix(X)) == 2


def test_sparse_by_the_share_of_nonzeros_whatever_the_container():
    X = np.zeros((10, 10))
    X[0, :10] = 1.0  # 10 of 100 values nonzero: sparse at the 10% line, dense or CSR alike
    assert nonzeros(X) == nonzeros(sp.csr_matrix(X)) == 10
    assert mostly_zeros(nonzeros(X), *X.shape) and not mostly_zeros(11, 10, 10)


def test_narrow_dense_is_dense_under_100_features():
    assert narrow_dense(False, 99) and not narrow_dense(False, 100)
    assert not narrow_dense(True, 16)


def test_from_sizes_calls_data_sparse_by_each_shapes_share():
    # 60 of 100 cells stored: sparse where any cell may be missing (share 1.0), dense
    # where under half must be missing (share 0.5)
    for shape in (DataSizes, OnlineShape, StShape):
        s = shape.from_sizes(10, 10, 60, 4)
        assert s.sparse and (s.n_samples, s.n_features, s.nnz, s.n_classes) == (10, 10, 60, 4)
        assert not shape.from_sizes(10, 10, 100, 4).sparse
    for shape in (HsmShape, MaryShape):
        assert not shape.from_sizes(10, 10, 60, 4).sparse
        assert shape.from_sizes(10, 10, 40, 4).sparse
    assert MaryShape.from_sizes(10, 4, 40, 4).integer_ids  # few dense columns: ids guessed
    assert StShape.from_sizes(10, 10, 60, 4).row_norm is None
    assert DataSizes(4, 2, 6, 3, False).nnz_per_row == 1.5
