"""Vowpal Wabbit's default online update (adaptive, normalized, importance-invariant; Ross,
Mineiro and Langford 2013; Karampatziakis and Langford 2011) for one linear row of a flat
table (``xcbench.tree.linear`` layout, bias as the last column).

A training table has three columns per slot: the weight, the AdaGrad sum G of squared
gradients and the normalizer s (largest |x| seen for that weight). For a row with output
p on label y and learning rate eta, with loss gradient l'(p):

1. per feature x (the bias has x = 1): G += l'(p)^2 x^2; if |x| > s the weight is rescaled
   by s / |x| and s = |x|; its rate is r = 1 / (sqrt(G) s);
2. ``gd = [examples seen, sum of the normalised norms sum x^2 / s^2]`` (one per table,
   like VW's per-learner state) gives the multiplier m = sqrt(examples / norm sum);
   the sensitivity is q = m sum x^2 r;
3. the invariant step u is the exact solution of following the gradient flow of the loss
   for "time" eta along the update direction (a closed form per loss: squared, absolute
   as VW's quantile loss with tau = 1/2, logistic through Lambert's W);
4. w += m u x r per feature; the output becomes p + q u.

Memory: 24 bytes per slot while training (8 once fitted).
"""
import math

import numba
import numpy as np

from .weights import slot

_jit = numba.njit(cache=True, nogil=True)
SQUARED, ABSOLUTE, LOGISTIC = 0, 1, 2
_TINY = 1.1754943508222875e-38  # VW floors x^2 at FLT_MIN
_TAU = 0.5
# gradients below this are treated as zero: their square would underflow the AdaGrad sum of a
# fresh weight to 0 and make its rate 1 / sqrt(0)
MIN_GRADIENT = 1e-100


@_jit
def loss_grad(loss, p, y):
    """d loss / d p at output p for label y (+-1 for the absolute and logistic losses)."""
    if loss == SQUARED:
        return 2.0 * (p - y)
    if loss == ABSOLUTE:
        e = y - p
        if e == 0.0:
            return 0.0
        return -_TAU if e > 0 else 1.0 - _TAU
    return -y / (1.0 + math.exp(min(y * p, 700.0)))


@_jit
def _w_of_exp(x):
    """Lambert's W at e^x: the w > 0 with w + log(w) = x (Newton's method). For x < -30,
    W(e^x) = e^x to double precision (and may underflow to 0, where Newton would divide by
    zero): a confidently wrong logistic output reaches this."""
    if x < -30.0:
        return math.exp(x)
    w = x - math.log(x) if x > 1.0 else math.exp(x)
    for _ in range(50):
        step = (w + math.log(w) - x) / (1.0 + 1.0 / w)
        w = max(w - step, 1e-300)
        if abs(step) <= 1e-12 * w:
            break
    return w


@_jit
def invariant_step(loss, p, y, eta, q):
    """u such that the output moves by q u: the exact result of integrating the gradient
    flow of the loss for time eta when the output moves at rate q per unit of step."""
    if q <= 0.0:
        return 0.0
    if loss == SQUARED:
        if eta * q < 1e-6:  # first-order expansion avoids 1 - exp(-tiny) cancellation
            return 2.0 * (y - p) * eta
        return (y - p) * (1.0 - math.exp(-2.0 * eta * q)) / q
    if loss == ABSOLUTE:  # move at constant speed, stopping on the label
        e = y - p
        if e == 0.0:
            return 0.0
        if e > 0:
            return _TAU * eta if _TAU * eta * q < e else e / q
        return (_TAU - 1.0) * eta if (1.0 - _TAU) * eta * q < -e else e / q
    z = y * p  # logistic: z + e^z grows by eta q along the flow
    if eta * q < 1e-6:
        return y * eta / (1.0 + math.exp(min(z, 700.0)))
    x = eta * q + z + math.exp(min(z, 700.0))
    z_new = x - _w_of_exp(x)
    return (y * z_new - p) / q


@_jit
def _feature_rate(wt, s, x, gsq):
    """Steps 1 of the module docstring for one weight; returns (x^2 / s^2, x^2 r)."""
    x2 = max(x * x, _TINY)
    wt[s, 1] += gsq * x2
    ax = abs(x)
    if ax > wt[s, 2]:
        if wt[s, 2] > 0.0:
            wt[s, 0] *= wt[s, 2] / ax
        wt[s, 2] = ax
    norm = x2 / (wt[s, 2] * wt[s, 2])
    return norm, x2 / (math.sqrt(wt[s, 1]) * wt[s, 2])


@_jit
def row_rates(wt, row, n_cols, mask, Xd, indptr, indices, data, i, dense, gsq):
    """Step 1 for every weight of row ``row`` on row i of X; returns (sum x^2 / s^2,
    sum x^2 r) over them. A model whose output sums several rows (Recall Tree's scorers)
    adds these over its rows, then moves each row with ``row_move``: the rows act as one
    linear model over their concatenated features, as VW treats crossed features."""
    D = n_cols - 1
    norm_x, q = _feature_rate(wt, slot(row, D, n_cols, mask), 1.0, gsq)
    if dense:
        for f in range(D):
            x = Xd[i, f]
            if x != 0.0:
                a, b = _feature_rate(wt, slot(row, f, n_cols, mask), x, gsq)
                norm_x += a
                q += b
    else:
        for k in range(indptr[i], indptr[i + 1]):
            x = data[k]
            if x != 0.0:
                a, b = _feature_rate(wt, slot(row, indices[k], n_cols, mask), x, gsq)
                norm_x += a
                q += b
    return norm_x, q


@_jit
def row_move(wt, row, n_cols, mask, Xd, indptr, indices, data, i, dense, step):
    """Step 4 for every weight of row ``row``: w += step x r."""
    D = n_cols - 1
    sb = slot(row, D, n_cols, mask)
    wt[sb, 0] += step / (math.sqrt(wt[sb, 1]) * wt[sb, 2])
    if dense:
        for f in range(D):
            x = Xd[i, f]
            if x != 0.0:
                s = slot(row, f, n_cols, mask)
                wt[s, 0] += step * x / (math.sqrt(wt[s, 1]) * wt[s, 2])
    else:
        for k in range(indptr[i], indptr[i + 1]):
            x = data[k]
            if x != 0.0:
                s = slot(row, indices[k], n_cols, mask)
                wt[s, 0] += step * x / (math.sqrt(wt[s, 1]) * wt[s, 2])


@_jit
def step_of(gd, norm_x, q, loss, p, y, eta):
    """Steps 2-3 for a model whose weights' ``row_rates`` sum to (norm_x, q): counts the
    example in ``gd`` and returns (u, m, q m): each weight then moves by ``row_move`` with
    step m u, and the output changes by q m u."""
    gd[0] += 1.0
    gd[1] += norm_x
    m = math.sqrt(gd[0] / gd[1])
    q *= m
    return invariant_step(loss, p, y, eta, q), m, q


@_jit
def vw_step(wt, gd, row, n_cols, mask, Xd, indptr, indices, data, i, dense, loss, p, y, eta):
    """One VW update of row ``row`` of a (size, 3) table toward label y from output p;
    returns the output after the update."""
    g = loss_grad(loss, p, y)
    if abs(g) < MIN_GRADIENT:
        return p
    norm_x, q = row_rates(wt, row, n_cols, mask, Xd, indptr, indices, data, i, dense, g * g)
    u, m, q = step_of(gd, norm_x, q, loss, p, y, eta)
    if u == 0.0:
        return p
    row_move(wt, row, n_cols, mask, Xd, indptr, indices, data, i, dense, m * u)
    return p + q * u


def new_vw_table(size: int):
    """A zeroed (size, 3) training table and its [examples, norm sum] state."""
    return np.zeros((size, 3)), np.zeros(2)
