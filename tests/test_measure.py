import numpy as np
import pytest
import scipy.sparse as sp

from xcbench.measure import single_example_latency, single_rows


class _Echo:
    def predict_topk(self, X, k=1):
        return np.zeros((X.shape[0], k), dtype=np.int64), np.zeros((X.shape[0], k))


def test_single_rows_cycle_through_the_rows_dense_and_csr():
    X = np.arange(6.0).reshape(3, 2)
    rows = single_rows(X, 5)
    assert [r[0, 0] for r in rows] == [0, 2, 4, 0, 2]
    assert all(r.shape == (1, 2) for r in single_rows(sp.csr_matrix(X), 4))


def test_timing_on_an_empty_test_set_names_the_problem():
    with pytest.raises(ValueError, match="0 rows"):
        single_example_latency(_Echo(), np.zeros((0, 3)), n_calls=10)
    assert single_example_latency(_Echo(), np.ones((2, 3)), n_calls=10, n_warmup=1).shape == (10,)


class _Slow(_Echo):
    def predict_topk(self, X, k=1):
        import time
        time.sleep(0.02 if X.shape[0] > 64 else 0)
        return super().predict_topk(X, k)


def test_batch_repeats_stop_once_the_time_budget_is_spent():
    from xcbench.measure import batch_throughput

    X = np.ones((100, 3))
    assert len(batch_throughput(_Slow(), X, repeats=3)) == 3
    assert len(batch_throughput(_Slow(), X, repeats=3, budget_seconds=0.01)) == 1
