"""Compiled LOMtree (Choromanska & Langford 2015, Algorithm 1): the online training pass and
the leaf tables. Node arrays have a fixed capacity of 2T+1 nodes; node 0 is the root.

State per node j: ``left``/``right`` children (-1 at a leaf), ``parent``; a linear
regressor, row ``row_of[j]`` of a flat table (``xcbench.tree.linear``), used while j is
internal; in sparse label statistics (``xcbench.tree.label_stats``, aux columns 1: score
sum m, 2: score count n) per label seen at j its count l, m and n, so e_j(y) = m/n;
``E[j]`` = (score sum, count) giving E_j; ``C`` (leaf: examples that ended there; internal:
min over its subtree's leaves); with VW's update, ``gd[j]`` its regressor's own [examples,
norm sum] (VW >= 9.10's gd keeps one per sub-model: ``gd_per_model_states``).

As VW's gd under ``--log_multi``, a regressor's loss and step are taken at its output clipped
to the label range [-1, 1] (VW clips predictions to [min_label, max_label], which its scorer
widens to the +-1 labels): an output already beyond its target is left alone (a hinge-like
loss, not median regression to +-1); the output used afterwards (E_j, e_j(y), the branch) is
the raw one, recomputed after the step as VW predicts again.
"""
import numba
import numpy as np

from xcbench.tree import label_stats as ls
from xcbench.tree.linear import adagrad_step, clear_row, dot
from xcbench.tree.vw_update import ABSOLUTE, SQUARED, vw_step

_jit = numba.njit(cache=True, nogil=True)
_M, _N = 1, 2  # aux columns of the label statistics: score sum, score count


@_jit
def _loss_grad(h, target, loss):
    """d loss / d h: 0 squared, 1 absolute. The absolute loss's gradient is 0 within 1e-9
    of the target, as VW's quantile loss is at the target: steps stop exactly there, and a
    rounding difference (a dense row vs its CSR copy) must not flip the next step's sign."""
    if loss == 0:
        return h - target
    if abs(h - target) <= 1e-9:
        return 0.0
    return 1.0 if h > target else -1.0


@_jit
def _refresh_C(j, left, right, parent, C):
    """Re-establish C(internal) = min(C(children)) from node j up to the root."""
    while j >= 0:
        if left[j] >= 0:
            C[j] = min(C[left[j]], C[right[j]])
        j = parent[j]


@_jit
def _reset(j, stats, E, row_of, wa, n_cols, mask, state, gd):
    """A fresh node j: no label statistics, E_j = 0, a zero regressor (hashed tables: a new
    row id, see ``clear_row``) with a fresh normalizer state."""
    ls.clear_node(stats, j)
    E[j, 0] = 0.0
    E[j, 1] = 0.0
    gd[j, 0] = 0.0
    gd[j, 1] = 0.0
    if mask < 0:
        clear_row(wa, row_of[j], n_cols, mask)
    else:
        row_of[j] = state[4]
        state[4] += 1


@_jit
def _smallest_leaf(left, right, C):
    j = 0
    while left[j] >= 0:
        j = left[j] if C[left[j]] <= C[right[j]] else right[j]
    return j


@_jit
def train_pass(order, start, y, state, left, right, parent, C, stats, E, row_of, wa, n_cols,
               mask, xscale, Xd, indptr, indices, data, dense, max_internal, swap_resistance,
               lr, loss, gd):
    """One online pass over rows ``order[start:]``. ``state`` holds [internal nodes, nodes in
    use, swaps done, deepest leaf reached, next fresh row id]. ``wa`` is a (size, 2) AdaGrad
    table, or a (size, 3) table with ``gd`` (n_nodes, 2) its per-node state for VW's update
    (``xcbench.tree.vw_update``). Returns the position reached: ``len(order)``, or earlier
    when the label statistics need to grow first."""
    vw = wa.shape[1] == 3
    ent_f, node_i, node_f = stats[2], stats[3], stats[4]
    w = wa[:, 0]
    for t in range(start, order.shape[0]):
        if not ls.has_room(stats, state[3] + 3):  # an example adds <= depth + 2 pairs
            return t
        i = order[t]
        c = y[i]
        j = 0
        depth = 0
        e = -1
        counted = False
        while True:
            if not counted:
                e = ls.add(stats, j, c, 1.0)
            counted = False
            if left[j] >= 0:  # internal: one regression step, then descend
                e_y = ent_f[e, _M] / ent_f[e, _N] if ent_f[e, _N] > 0 else 0.0
                E_j = E[j, 0] / E[j, 1] if E[j, 1] > 0 else 0.0
                target = -1.0 if E_j > e_y else 1.0
                row = row_of[j]
                h = dot(w, row, n_cols, mask, xscale, Xd, indptr, indices, data, i, dense)
                if vw:  # step at the clipped output, then the raw output again
                    vw_step(wa, gd[j], row, n_cols, mask, Xd, indptr, indices, data, i, dense,
                            SQUARED if loss == 0 else ABSOLUTE, min(max(h, -1.0), 1.0),
                            target, lr)
                    h = dot(w, row, n_cols, mask, xscale, Xd, indptr, indices, data, i, dense)
                else:
                    g = _loss_grad(h, target, loss)
                    h = adagrad_step(wa, row, n_cols, mask, xscale, Xd, indptr, indices, data,
                                     i, dense, g, lr, h, target, loss == 1)
                ent_f[e, _M] += h
                ent_f[e, _N] += 1.0
                E[j, 0] += h
                E[j, 1] += 1.0
                j = left[j] if h < 0 else right[j]
                depth += 1
                if depth > state[3]:
                    state[3] = depth
                continue
            if node_i[j, 1] >= 2:  # a leaf that has seen two labels: split it, or recycle
                top = node_f[j, 1]
                if state[0] < max_internal:
                    a, bb = state[1], state[1] + 1
                    state[1] += 2
                    state[0] += 1
                    _reset(a, stats, E, row_of, wa, n_cols, mask, state, gd)
                    _reset(bb, stats, E, row_of, wa, n_cols, mask, state, gd)
                elif C[j] - top > swap_resistance * (C[0] + 1):
                    s = _smallest_leaf(left, right, C)
                    sp = parent[s]
                    if s == j or sp <= 0 or sp == j:
                        C[j] += 1
                        _refresh_C(parent[j], left, right, parent, C)
                        break
                    g_ = parent[sp]
                    sib = right[sp] if left[sp] == s else left[sp]
                    if left[g_] == sp:  # the sibling takes sp's place under g_
                        left[g_] = sib
                    else:
                        right[g_] = sib
                    parent[sib] = g_
                    _refresh_C(g_, left, right, parent, C)
                    a, bb = s, sp
                    _reset(a, stats, E, row_of, wa, n_cols, mask, state, gd)
                    _reset(bb, stats, E, row_of, wa, n_cols, mask, state, gd)
                    state[2] += 1
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
    return order.shape[0]


@_jit
def leaf_top1(stats, parent, leaf, out):
    """The most frequent label of each row's leaf (or of its nearest ancestor with data), -1
    when no node on the way has any: the prediction of a tree still being trained."""
    node_f = stats[4]
    cnt = np.empty(1)
    lab = np.empty(1, dtype=np.int64)
    for i in range(leaf.shape[0]):
        j = leaf[i]
        while node_f[j, 0] == 0 and parent[j] >= 0:
            j = parent[j]
        out[i] = lab[0] if ls.top_labels(stats, j, 1, lab, cnt) > 0 else -1
