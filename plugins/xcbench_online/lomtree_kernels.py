"""Compiled LOMtree (Choromanska & Langford 2015, Algorithm 1): online training pass and
routing. Node arrays have a fixed capacity of 2T+1 nodes; node 0 is the root.

State per node j: ``left``/``right`` children (-1 at a leaf), ``parent``; a linear
regressor (row j of ``W``, ``b``) used while j is internal; per-class score sums ``m``,
counts ``n`` (so e_j(y) = m/n) and label counts ``l``; the score sum/count giving E_j;
``C`` (leaf: examples that ended there; internal: min over its subtree's leaves) and the
number of distinct labels seen.
"""
import math

import numba
import numpy as np

from xcbench.kernels import row_score as _dot

_jit = numba.njit(cache=True, nogil=True)


@_jit
def _regress(W, b, G, Gb, j, Xd, indptr, indices, data, i, dense, target, lr, loss):
    """One AdaGrad step of node j's regressor toward ``target`` (+1/-1) on loss
    0: squared, 1: absolute (median regression, as VW's log_multi). The absolute-loss step
    is shortened so the output does not jump past the target (in the spirit of VW's
    importance-invariant updates). Returns the output after the step."""
    h = _dot(W, b, j, Xd, indptr, indices, data, i, dense)
    g = (h - target) if loss == 0 else (1.0 if h > target else -1.0)
    if g == 0.0:
        return h
    Gb[j] += g * g
    step_b = -lr * g / math.sqrt(Gb[j])
    dh = step_b  # change of the output the full step would make
    if dense:
        for f in range(Xd.shape[1]):
            gf = g * Xd[i, f]
            if gf != 0.0:
                G[j, f] += gf * gf
                dh += -lr * gf / math.sqrt(G[j, f]) * Xd[i, f]
    else:
        for p in range(indptr[i], indptr[i + 1]):
            gf = g * data[p]
            if gf != 0.0:
                G[j, indices[p]] += gf * gf
                dh += -lr * gf / math.sqrt(G[j, indices[p]]) * data[p]
    scale = 1.0
    if loss == 1 and dh != 0.0 and (h + dh - target) * (h - target) < 0.0:
        scale = (target - h) / dh
    b[j] += scale * step_b
    if dense:
        for f in range(Xd.shape[1]):
            gf = g * Xd[i, f]
            if gf != 0.0:
                W[j, f] -= scale * lr * gf / math.sqrt(G[j, f])
    else:
        for p in range(indptr[i], indptr[i + 1]):
            gf = g * data[p]
            if gf != 0.0:
                W[j, indices[p]] -= scale * lr * gf / math.sqrt(G[j, indices[p]])
    return h + scale * dh


@_jit
def _refresh_C(j, left, right, parent, C):
    """Re-establish C(internal) = min(C(children)) from node j up to the root."""
    while j >= 0:
        if left[j] >= 0:
            C[j] = min(C[left[j]], C[right[j]])
        j = parent[j]


@_jit
def _reset(j, l, m, n, E_sum, E_cnt, distinct, W, b, G, Gb):
    l[j, :] = 0
    m[j, :] = 0.0
    n[j, :] = 0
    E_sum[j] = 0.0
    E_cnt[j] = 0
    distinct[j] = 0
    W[j, :] = 0.0
    b[j] = 0.0
    G[j, :] = 0.0
    Gb[j] = 0.0


@_jit
def _smallest_leaf(left, right, C):
    j = 0
    while left[j] >= 0:
        j = left[j] if C[left[j]] <= C[right[j]] else right[j]
    return j


@_jit
def train_pass(order, y, state_int, left, right, parent, C, distinct, l, m, n, E_sum, E_cnt,
               W, b, G, Gb, Xd, indptr, indices, data, dense, max_internal, swap_resistance,
               lr, loss):
    """One online pass over rows ``order``. ``state_int`` holds [internal nodes, nodes in
    use, swaps done]. Returns nothing; all state is updated in place."""
    for t in range(order.shape[0]):
        i = order[t]
        c = y[i]
        j = 0
        counted = False
        while True:
            if not counted:
                l[j, c] += 1
                if l[j, c] == 1:
                    distinct[j] += 1
            counted = False
            if left[j] >= 0:  # internal: one regression step, then descend
                e_y = m[j, c] / n[j, c] if n[j, c] > 0 else 0.0
                E = E_sum[j] / E_cnt[j] if E_cnt[j] > 0 else 0.0
                target = -1.0 if E > e_y else 1.0
                h = _regress(W, b, G, Gb, j, Xd, indptr, indices, data, i, dense, target,
                             lr, loss)
                m[j, c] += h
                n[j, c] += 1
                E_sum[j] += h
                E_cnt[j] += 1
                j = left[j] if h < 0 else right[j]
                continue
            if distinct[j] >= 2:  # a leaf that has seen two labels: split it, or recycle
                top = 0
                for k in range(l.shape[1]):
                    if l[j, k] > top:
                        top = l[j, k]
                if state_int[0] < max_internal:
                    a, bb = state_int[1], state_int[1] + 1
                    state_int[1] += 2
                    state_int[0] += 1
                    _reset(a, l, m, n, E_sum, E_cnt, distinct, W, b, G, Gb)
                    _reset(bb, l, m, n, E_sum, E_cnt, distinct, W, b, G, Gb)
                elif C[j] - top > swap_resistance * (C[0] + 1):
                    s = _smallest_leaf(left, right, C)
                    sp = parent[s]
                    if s == j or sp <= 0 or sp == j:
                        C[j] += 1
                        _refresh_C(parent[j], left, right, parent, C)
                        break
                    g = parent[sp]
                    sib = right[sp] if left[sp] == s else left[sp]
                    if left[g] == sp:  # the sibling takes sp's place under g
                        left[g] = sib
                    else:
                        right[g] = sib
                    parent[sib] = g
                    _refresh_C(g, left, right, parent, C)
                    a, bb = s, sp
                    _reset(a, l, m, n, E_sum, E_cnt, distinct, W, b, G, Gb)
                    _reset(bb, l, m, n, E_sum, E_cnt, distinct, W, b, G, Gb)
                    state_int[2] += 1
                else:
                    C[j] += 1
                    _refresh_C(parent[j], left, right, parent, C)
                    break
                left[j], right[j] = a, bb
                left[a] = right[a] = left[bb] = right[bb] = -1
                parent[a] = parent[bb] = j
                C[a] = C[j] // 2
                C[bb] = C[j] - C[a]
                _refresh_C(j, left, right, parent, C)
                counted = True  # train on at j, now internal, without counting again
                continue
            C[j] += 1
            _refresh_C(parent[j], left, right, parent, C)
            break


@_jit
def route(left, right, W, b, Xd, indptr, indices, data, dense, n_rows, out_leaf, out_depth):
    """Leaf reached by each row (descend left iff the regressor's output < 0)."""
    for i in range(n_rows):
        j = 0
        depth = 0
        while left[j] >= 0:
            h = _dot(W, b, j, Xd, indptr, indices, data, i, dense)
            j = left[j] if h < 0 else right[j]
            depth += 1
        out_leaf[i] = j
        out_depth[i] = depth
