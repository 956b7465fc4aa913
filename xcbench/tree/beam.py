"""Beam search over a tree whose children carry scores that add along a path (log-probabilities,
or any per-edge scores a method sums), compiled with numba.

A tree is the CSR list of each node's children (``child_ptr`` / ``children``, node 0 the
root) and ``node_label`` (the class of a leaf, -1 at internal nodes). A path's score is the
sum of its edges' scores. Beam search of width k keeps, level by level, the k best partial
paths: every kept internal node is replaced by its children (score: the path's plus the
child's), a kept leaf stays as it is, and the k best candidates survive. Width 1 is the
greedy descent; a width at least the number of leaves keeps every path, i.e. it is
exhaustive search.

Two ways in:
- ``beam_search(k, child_ptr, children, node_label, edge_score)``: every edge's score given
  up front (``edge_score`` aligned with ``children``): for tests and small models.
- The steps ``beam_start`` / ``push`` / ``keep_best``, for methods that score a node's
  children only when the beam reaches it (the usual case: a model scores the children of
  the k kept nodes per level, not the whole tree). The loop is::

      width = beam_start(beam_node, beam_score)
      while True:
          m, expanded = 0, False
          for b in range(width):
              v = beam_node[b]
              if node_label[v] >= 0:
                  m = push(cand_node, cand_score, m, v, beam_score[b])
                  continue
              expanded = True
              ...score v's children into scores[:n]...
              for q in range(n):
                  m = push(cand_node, cand_score, m, children[s0 + q],
                           beam_score[b] + scores[q])
          width = keep_best(cand_node, cand_score, m, k, beam_node, beam_score)
          if not expanded:
              break

Buffers: ``beam_node`` / ``beam_score`` of length k, candidates of length k x (widest
node's children) + k (``candidate_capacity``).
"""
from __future__ import annotations

import numba
import numpy as np

_jit = numba.njit(cache=True, nogil=True)


@_jit
def candidate_capacity(k, max_arity):
    """Candidates one level of a width-k beam can produce."""
    return k * max(max_arity, 1) + k


@_jit
def beam_start(beam_node, beam_score, root=0):
    """Put the root (node ``root``, score 0) in the beam; returns the width, 1."""
    beam_node[0], beam_score[0] = root, 0.0
    return 1


@_jit
def push(cand_node, cand_score, m, node, score):
    """Append a candidate; returns the new candidate count."""
    cand_node[m], cand_score[m] = node, score
    return m + 1


@_jit
def keep_best(cand_node, cand_score, m, k, beam_node, beam_score):
    """The best min(k, m) candidates into the beam, best first (ties: the earlier candidate
    first); returns the width. Insertion into the sorted beam: O(m) when few candidates
    beat the k-th best, O(m k) at worst (k is small)."""
    width = 0
    for c in range(m):
        s = cand_score[c]
        if width == k and not s > beam_score[k - 1]:
            continue
        b = width if width < k else k - 1
        while b > 0 and s > beam_score[b - 1]:
            if b < k:
                beam_node[b], beam_score[b] = beam_node[b - 1], beam_score[b - 1]
            b -= 1
        beam_node[b], beam_score[b] = cand_node[c], s
        if width < k:
            width += 1
    return width


@_jit
def beam_search(k, child_ptr, children, node_label, edge_score):
    """Beam search of width k with every edge's score given (``edge_score[e]`` for the child
    ``children[e]``). Returns (leaf nodes, path scores) of the final beam, best first; at
    most k of them (fewer when the tree has fewer leaves)."""
    max_arity = 0
    for v in range(child_ptr.shape[0] - 1):
        max_arity = max(max_arity, child_ptr[v + 1] - child_ptr[v])
    cap = candidate_capacity(k, max_arity)
    cand_node = np.empty(cap, dtype=np.int64)
    cand_score = np.empty(cap)
    beam_node = np.empty(k, dtype=np.int64)
    beam_score = np.empty(k)
    width = beam_start(beam_node, beam_score)
    while True:
        m, expanded = 0, False
        for b in range(width):
            v = beam_node[b]
            if node_label[v] >= 0:
                m = push(cand_node, cand_score, m, v, beam_score[b])
                continue
            expanded = True
            for e in range(child_ptr[v], child_ptr[v + 1]):
                m = push(cand_node, cand_score, m, children[e], beam_score[b] + edge_score[e])
        width = keep_best(cand_node, cand_score, m, k, beam_node, beam_score)
        if not expanded:
            return beam_node[:width].copy(), beam_score[:width].copy()


def exhaustive_search(child_ptr, children, node_label, edge_score):
    """Every leaf's path score, best first (for tests): (leaf nodes, scores)."""
    n = len(child_ptr) - 1
    total = np.full(n, np.nan)
    total[0] = 0.0
    stack = [0]
    while stack:
        v = stack.pop()
        for e in range(child_ptr[v], child_ptr[v + 1]):
            total[children[e]] = total[v] + edge_score[e]
            stack.append(int(children[e]))
    leaves = np.flatnonzero(node_label >= 0)
    order = np.argsort(-total[leaves], kind="stable")
    return leaves[order], total[leaves][order]
