"""M-ary Huffman trees over label weights, as nested lists (a list is an internal node, an
int a label), for any plugin to flatten into its own tree arrays."""
from __future__ import annotations

import heapq
import itertools

import numpy as np


def huffman_nested(weights, arity: int = 2):
    """The Huffman tree of ``weights`` (one per label, used as given), nested.

    Repeatedly merges the ``arity`` lightest subtrees (ties broken by creation order, so the
    tree is deterministic). For arity > 2 the first merge takes just enough subtrees that every
    later merge is full, which keeps the code optimal; with a label count congruent to 1 mod
    (arity - 1) every node is full. One label gives the bare int.
    """
    if arity < 2:
        raise ValueError(f"arity must be >= 2, got {arity}")
    weights = np.asarray(weights, dtype=np.float64)
    k = len(weights)
    if k == 0:
        raise ValueError("huffman_nested needs at least one label weight")
    order = itertools.count()
    heap = [(w, next(order), c) for c, w in enumerate(weights)]
    heapq.heapify(heap)
    take = 2 + (k - 2) % (arity - 1) if k > arity else k
    while len(heap) > 1:
        group = [heapq.heappop(heap) for _ in range(min(take, len(heap)))]
        heapq.heappush(heap, (sum(g[0] for g in group), next(order), [g[2] for g in group]))
        take = arity
    return heap[0][2]
