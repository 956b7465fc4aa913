"""asv benchmark of the tree toolkit's hashed weight table: scoring a node's consecutive
weight rows (its children) against one sparse row, the inner step of every tree method on
sparse data at large K. The table (2^25 slots, 256 MB) is larger than any cache, as at
K = 1e5, so the time is memory traffic: the blocked layout keeps a feature's weights for
32 consecutive rows in one place (``xcbench.tree.weights``)."""
import numba
import numpy as np
import scipy.sparse as sp

from xcbench.tree.weights import rows_dot

BITS, N_FEATURES, CALLS = 25, 848_632, 2000


@numba.njit(cache=True)
def _score_nodes(table, bias, firsts, mask, indptr, indices, data, out):
    empty = np.zeros((1, 1))
    for c in range(firsts.shape[0]):
        rows_dot(table, bias, firsts[c], N_FEATURES, mask, empty, indptr, indices, data,
                 c, False, out)


class HashedRowScoring:
    """CALLS nodes of ``rows`` children each, scored against 16-feature CSR rows."""

    params = ([2, 32, 317],)
    param_names = ["rows"]

    def setup(self, rows):
        rng = np.random.default_rng(0)
        self.table = rng.standard_normal(1 << BITS)  # touched: no shared zero pages
        self.bias = np.zeros(200_000)
        self.mask = (1 << BITS) - 1
        X = sp.csr_matrix((np.ones(16 * CALLS), rng.integers(0, N_FEATURES, 16 * CALLS),
                           np.arange(0, 16 * CALLS + 1, 16)), shape=(CALLS, N_FEATURES))
        self.X = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data)
        self.firsts = rng.integers(0, 190_000 // rows, CALLS) * rows
        self.out = np.empty(rows)
        _score_nodes(self.table, self.bias, self.firsts[:2], self.mask, *self.X, self.out)

    def time_score_children(self, rows):
        _score_nodes(self.table, self.bias, self.firsts, self.mask, *self.X, self.out)
