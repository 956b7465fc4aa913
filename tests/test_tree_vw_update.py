"""VW's adaptive, normalized, importance-invariant update in the tree toolkit: each loss's
invariant step is the exact gradient flow, and the update is invariant to feature scale."""
import math

import numpy as np
import pytest
import scipy.sparse as sp

from xcbench.kernels import kernel_input
from xcbench.tree.linear import dot
from xcbench.tree.vw_update import (ABSOLUTE, LOGISTIC, SQUARED, invariant_step, loss_grad,
                                    new_vw_table, vw_step)
from xcbench.tree.weights import DIRECT


@pytest.mark.parametrize("loss", [SQUARED, ABSOLUTE, LOGISTIC])
def test_a_tiny_step_is_a_gradient_step(loss):
    for p, y in ((0.3, 1.0), (-0.2, -1.0), (1.5, 1.0)):
        eta, q = 1e-8, 2.0
        assert math.isclose(invariant_step(loss, p, y, eta, q), -eta * loss_grad(loss, p, y),
                            rel_tol=1e-5, abs_tol=1e-15)


def test_big_steps_follow_the_exact_flow():
    p, y, eta, q = 0.2, 1.0, 3.0, 0.7
    # squared: the output decays to the label as exp(-2 eta q)
    u = invariant_step(SQUARED, p, y, eta, q)
    assert math.isclose(p + q * u, y - (y - p) * math.exp(-2 * eta * q))
    # absolute: moves at speed 1/2 and stops on the label, never past it
    assert math.isclose(p + q * invariant_step(ABSOLUTE, p, y, eta, q), y)
    assert math.isclose(invariant_step(ABSOLUTE, p, y, 0.1, q), 0.05)
    assert math.isclose(3.0 + q * invariant_step(ABSOLUTE, 3.0, -1.0, 50.0, q), -1.0)
    # logistic: z + e^z grows by eta q along the flow (z = y p)
    for p, y in ((0.2, 1.0), (2.0, -1.0), (-30.0, 1.0)):
        z0, z1 = y * p, y * (p + q * invariant_step(LOGISTIC, p, y, eta, q))
        assert math.isclose(z1 + math.exp(z1), z0 + math.exp(z0) + eta * q, rel_tol=1e-9)


def _train(X, targets, loss):
    table, gd = new_vw_table(2 * (X.shape[1] + 1))
    Xd, indptr, indices, data, dense = kernel_input(X)
    n_cols = X.shape[1] + 1
    outs = []
    for i, y in enumerate(targets):
        row = i % 2
        p = dot(table[:, 0], row, n_cols, DIRECT, np.ones(X.shape[1]), Xd, indptr, indices,
                data, i, dense)
        outs.append(vw_step(table, gd, row, n_cols, DIRECT, Xd, indptr, indices, data, i,
                            dense, loss, p, y, 0.5))
    return np.array(outs)


@pytest.mark.parametrize("loss", [SQUARED, ABSOLUTE, LOGISTIC])
def test_outputs_do_not_depend_on_feature_scale_or_storage(loss):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5)) * (rng.random((200, 5)) < 0.7)
    targets = np.sign(X[:, 0] - X[:, 1] + 0.1)
    base = _train(X, targets, loss)
    scaled = _train(X * np.array([1e-4, 10.0, 1.0, 3e3, 0.5]), targets, loss)
    assert np.allclose(base, scaled, rtol=1e-6, atol=1e-9)
    assert np.array_equal(base, _train(sp.csr_matrix(X), targets, loss))


def test_a_confidently_wrong_logistic_output_takes_a_finite_step():
    """z = y p far below 0: W(e^x) underflows to 0; the step is still the exact flow
    (z + e^z grows by eta q, e^z negligible), not a division by zero."""
    for p, eta, q in ((-900.0, 1.0, 0.5), (-50.0, 0.3, 2.0)):
        u = invariant_step(LOGISTIC, p, 1.0, eta, q)
        z1 = p + q * u
        assert math.isfinite(u) and math.isclose(z1, p + eta * q, rel_tol=1e-12)
