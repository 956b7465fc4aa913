"""AssignLabels (Jernite, Choromanska & Sontag 2017, Algorithms 2 and 3): rebuild an M-ary
label tree top-down from the statistics each node has gathered.

At node n with label set L, every pair (label i, child slot j) gets the node objective's
derivative dJ_n/dp_{j|i} = (2/M) q_i (1 - q_i) sign(p_{j|i} - p_j), with q_i the share of
class i among the points that reached n, p_{j|i} the mean probability n gave child j on them
and p_j = sum_i q_i p_{j|i}. Pairs are taken greedily in decreasing order (ties, which are
massive because the derivative takes only two values per label, broken by p_{j|i} - p_j), a
label going to the first child that still has room.

"Room" is where the two variants differ:
- well-formed trees (every internal node has exactly M children): a child's final size must be
  >= 1 and congruent to 1 mod (M - 1). A child holding s labels commits to c(s), the smallest
  such size >= max(s, 1); child j has room for one more label while
  sum of committed sizes (with j's one label larger) <= |L|. Greedy order then always leaves
  every child well-formed, and the rule is the same for M = 2 (where it only keeps both
  children non-empty), so the binary case needs no special bookkeeping. The root's label set
  is padded with dummy labels to a size congruent to 1 mod (M - 1).
- depth-constrained trees (``max_depth`` D): a child at depth d holds at most M^(D - d)
  labels; no congruence is needed and some slots may stay empty.
"""
from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _committed(s, m):
    """Smallest size >= max(s, 1) congruent to 1 mod m (m = M - 1 >= 1)."""
    s = max(s, 1)
    return s + ((1 - s) % m)


@numba.njit(cache=True)
def greedy_assign(order, n_labels, n_slots, capacity, wellformed):
    """Child slot of each label, taking (label, slot) pairs in ``order`` (flat indices
    label * n_slots + slot, best first). ``capacity[j]`` bounds slot j (depth-constrained
    trees); with ``wellformed`` the congruence rule of the module docstring applies."""
    m = n_slots - 1
    size = np.zeros(n_slots, dtype=np.int64)
    assign = np.full(n_labels, -1, dtype=np.int64)
    committed = n_slots if wellformed else 0
    left = n_labels
    for flat in order:
        i, j = flat // n_slots, flat % n_slots
        if assign[i] >= 0:
            continue
        if wellformed:
            grown = committed - _committed(size[j], m) + _committed(size[j] + 1, m)
            if grown > n_labels:
                continue
            committed = grown
        elif size[j] >= capacity[j]:
            continue
        assign[i] = j
        size[j] += 1
        left -= 1
        if left == 0:
            break
    return assign


def split_scores(p_cond: np.ndarray, q: np.ndarray):
    """(score, tie) arrays (n_labels, M) for greedy_assign: the objective's derivative
    q_i (1 - q_i) sign(p_{j|i} - p_j) (the constant 2/M dropped) and p_{j|i} - p_j."""
    p = q @ p_cond
    diff = p_cond - p[None, :]
    return (q * (1 - q))[:, None] * np.sign(diff), diff


def assign_node(p_cond: np.ndarray, q: np.ndarray, capacity: np.ndarray,
                wellformed: bool) -> np.ndarray:
    """Child slot of each of the node's labels (see greedy_assign)."""
    n_labels, n_slots = p_cond.shape
    score, tie = split_scores(p_cond, q)
    order = np.lexsort((-tie.ravel(), -score.ravel())).astype(np.int64)
    return greedy_assign(order, n_labels, n_slots, capacity.astype(np.int64), wellformed)


def padded_size(n_classes: int, arity: int) -> int:
    """Smallest K' >= K with K' congruent to 1 mod (M - 1): the root's size with dummies."""
    m = arity - 1
    return n_classes + ((1 - n_classes) % m) if n_classes > 1 else n_classes


def node_objective(p_cond: np.ndarray, q: np.ndarray) -> float:
    """J_n = (2/M) sum_i q_i sum_j |p_j - p_{j|i}|, p_j = sum_i q_i p_{j|i}: large when the
    node splits its labels cleanly (each label's points go to one child) and evenly."""
    M = p_cond.shape[1]
    p = q @ p_cond
    return float(2.0 / M * (q[:, None] * np.abs(p[None, :] - p_cond)).sum())


def node_objective_grad(p_cond: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Exact dJ_n / dp_{j|i} (p_j depends on p_{j|i} too):
    (2/M) q_i [(1 - q_i) sign(p_{j|i} - p_j) + sum_{i' != i} q_i' sign(p_j - p_{j|i'})].
    The paper's (2/M) q_i (1 - q_i) sign(p_{j|i} - p_j), which AssignLabels ranks pairs by,
    is its first term: the label's own pull, without the other labels' shared term."""
    M = p_cond.shape[1]
    p = q @ p_cond
    sign = np.sign(p_cond - p[None, :])
    shared = -(q[:, None] * sign).sum(axis=0)  # sum_i' q_i' sign(p_j - p_{j|i'})
    own = (1 - q)[:, None] * sign
    others = shared[None, :] + q[:, None] * sign  # remove label i's own share of `shared`
    return 2.0 / M * q[:, None] * (own + others)
