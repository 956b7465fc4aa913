"""Sparse per-node label statistics: counts (and extra per-label values) for only the
(node, label) pairs a tree has actually seen.

A dense (n_nodes x K) count table is 80 GB at 2e5 nodes x 1e5 classes; here memory grows
with the number of distinct (node, label) pairs E, about 44 + 8 x n_aux bytes each (x 2
after a doubling, x 1.5 while one is under way).

Storage (plain numpy arrays, so numba kernels read and write them and pickling is free),
passed to kernels as the tuple ``parts = (slots, ent_i, ent_f, node_i, node_f, meta)``:

- ``slots`` int32 (2^b,): an open-addressing hash table (linear probing, load <= 1/2) of
  entry ids, -1 empty, keyed by (node, label);
- ``ent_i`` int32 (cap, 3): per entry its node, label and the next entry of the same node
  (a chain per node, for iterating a node's labels); ``ent_f`` float64 (cap, 1 + n_aux):
  its count and ``n_aux`` caller-defined values (e.g. LOMtree's score sums);
- ``node_i`` int64 (n_nodes, 2): first entry of the node's chain (-1: none) and its number
  of distinct labels; ``node_f`` float64 (n_nodes, 2): its total and its largest count;
- ``meta`` int64: [entries used, entries live].

Kernels call ``has_room(parts, need)`` before an example that may add up to ``need``
entries and return to Python when it is False; ``LabelStats.grow`` then doubles the table
(dropping entries of cleared nodes) and the kernel resumes.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from .topk import heap_push, heap_sorted

_jit = numba.njit(cache=True, nogil=True)
_NODE, _LABEL, _NEXT = 0, 1, 2
_HEAD, _DISTINCT = 0, 1
_TOTAL, _MAX = 0, 1
SLOT_BYTES = 4  # per hash slot (int32)


def pairs_allowance(n_samples: int, path_length: int) -> int:
    """Distinct (node, label) pairs a tree trained on ``n_samples`` rows is assumed to hold
    for memory estimates: n_samples (ceil(path_length / 2) + 2). A row adds at most one pair
    per node on its path, but rows of a label mostly share a path: LOMtree and Recall Tree
    held 0.1-2.3 pairs per row on letter, aloi27d and synthetic-sparse-1k/10k/100k, and
    this allows 4-6 at K = 1e3 and 10 at K = 1e5."""
    return int(n_samples) * (math.ceil(path_length / 2) + 2)


def entry_bytes(n_aux: int) -> int:
    """Bytes one stored entry costs: its row in ``ent_i`` and ``ent_f`` and two hash slots."""
    return 3 * 4 + 8 * (1 + n_aux) + 2 * SLOT_BYTES


@_jit
def _hash(node, label, mask):
    h = np.uint64(node) * np.uint64(0x9E3779B97F4A7C15) ^ np.uint64(label) * np.uint64(
        0xC2B2AE3D27D4EB4F)
    h ^= h >> np.uint64(29)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(32)
    return np.int64(h & np.uint64(mask))


@_jit
def find(parts, node, label):
    """Entry id of (node, label), or -1 if the pair was never seen (or was cleared)."""
    slots, ent_i = parts[0], parts[1]
    mask = slots.shape[0] - 1
    h = _hash(node, label, mask)
    while True:
        e = slots[h]
        if e < 0:
            return -1
        if ent_i[e, _NODE] == node and ent_i[e, _LABEL] == label:
            return e
        h = (h + 1) & mask


@_jit
def has_room(parts, need):
    """True if ``need`` more entries fit without growing."""
    return parts[5][0] + need <= parts[1].shape[0]


@_jit
def add(parts, node, label, weight):
    """Add ``weight`` to the count of (node, label), creating the entry if new (the caller
    has checked ``has_room``). Returns the entry id."""
    slots, ent_i, ent_f, node_i, node_f, meta = parts
    mask = slots.shape[0] - 1
    h = _hash(node, label, mask)
    while True:
        e = slots[h]
        if e < 0:
            e = meta[0]
            meta[0] += 1
            meta[1] += 1
            slots[h] = e
            ent_i[e, _NODE] = node
            ent_i[e, _LABEL] = label
            ent_i[e, _NEXT] = node_i[node, _HEAD]
            ent_f[e, :] = 0.0
            node_i[node, _HEAD] = e
            node_i[node, _DISTINCT] += 1
            break
        if ent_i[e, _NODE] == node and ent_i[e, _LABEL] == label:
            break
        h = (h + 1) & mask
    c = ent_f[e, 0] + weight
    ent_f[e, 0] = c
    node_f[node, _TOTAL] += weight
    if c > node_f[node, _MAX]:
        node_f[node, _MAX] = c
    return e


@_jit
def _delete_slot(slots, ent_i, h):
    """Empty slot h and shift later members of its probe run back (no tombstones)."""
    mask = slots.shape[0] - 1
    slots[h] = -1
    j = h
    while True:
        j = (j + 1) & mask
        e = slots[j]
        if e < 0:
            return
        home = _hash(ent_i[e, _NODE], ent_i[e, _LABEL], mask)
        # move e into the hole unless its home lies cyclically in (h, j]
        if (j > h and (home <= h or home > j)) or (j < h and (home <= h and home > j)):
            slots[h] = e
            slots[j] = -1
            h = j


@_jit
def clear_node(parts, node):
    """Forget every label of ``node`` (a recycled tree node starts empty)."""
    slots, ent_i, ent_f, node_i, node_f, meta = parts
    mask = slots.shape[0] - 1
    e = node_i[node, _HEAD]
    while e >= 0:
        h = _hash(node, ent_i[e, _LABEL], mask)
        while slots[h] != e:
            h = (h + 1) & mask
        _delete_slot(slots, ent_i, h)
        ent_i[e, _NODE] = -1
        meta[1] -= 1
        e = ent_i[e, _NEXT]
    node_i[node, _HEAD] = -1
    node_i[node, _DISTINCT] = 0
    node_f[node, _TOTAL] = 0.0
    node_f[node, _MAX] = 0.0


@_jit
def count(parts, node, label):
    """Count of ``label`` at ``node`` (0 if never seen)."""
    e = find(parts, node, label)
    return parts[2][e, 0] if e >= 0 else 0.0


@_jit
def top_labels(parts, node, k, out_labels, out_counts):
    """The ``k`` most frequent labels of ``node``, by count then smaller label, into
    ``out_labels`` / ``out_counts`` (length >= k); returns how many were written."""
    ent_i, ent_f, node_i = parts[1], parts[2], parts[3]
    size = 0
    e = node_i[node, _HEAD]
    while e >= 0:
        size = heap_push(out_counts, out_labels, size, k, ent_f[e, 0], ent_i[e, _LABEL])
        e = ent_i[e, _NEXT]
    heap_sorted(out_counts, out_labels, size)
    return size


@_jit
def _rebuild(old_ent_i, old_ent_f, old_used, slots, ent_i, ent_f, node_i, meta):
    """Copy the live entries (chain order per node kept) into fresh arrays."""
    mask = slots.shape[0] - 1
    n_nodes = node_i.shape[0]
    new_id = np.full(old_used, -1, dtype=np.int64)
    used = 0
    for e in range(old_used):
        if old_ent_i[e, _NODE] >= 0:
            new_id[e] = used
            ent_i[used, _NODE] = old_ent_i[e, _NODE]
            ent_i[used, _LABEL] = old_ent_i[e, _LABEL]
            ent_f[used, :] = old_ent_f[e, :]
            h = _hash(old_ent_i[e, _NODE], old_ent_i[e, _LABEL], mask)
            while slots[h] >= 0:
                h = (h + 1) & mask
            slots[h] = used
            used += 1
    for e in range(old_used):
        if new_id[e] >= 0:
            nxt = old_ent_i[e, _NEXT]
            ent_i[new_id[e], _NEXT] = new_id[nxt] if nxt >= 0 else -1
    for j in range(n_nodes):
        if node_i[j, _HEAD] >= 0:
            node_i[j, _HEAD] = new_id[node_i[j, _HEAD]]
    meta[0] = used
    meta[1] = used


class LabelStats:
    """Per-node label counts (plus ``n_aux`` float values per pair) for ``n_nodes`` nodes,
    holding only the pairs seen. See the module docstring for the layout."""

    def __init__(self, n_nodes: int, n_aux: int = 0, capacity: int = 1024):
        self.n_aux = int(n_aux)
        self.node_i = np.zeros((n_nodes, 2), dtype=np.int64)
        self.node_i[:, _HEAD] = -1
        self.node_f = np.zeros((n_nodes, 2))
        self.meta = np.zeros(2, dtype=np.int64)
        self._allocate(max(int(capacity), 16))

    def _allocate(self, capacity):
        cap = 1 << int(np.ceil(np.log2(capacity)))
        self.slots = np.full(2 * cap, -1, dtype=np.int32)
        self.ent_i = np.zeros((cap, 3), dtype=np.int32)
        self.ent_f = np.zeros((cap, 1 + self.n_aux))

    @property
    def parts(self):
        """The arrays kernels take, in the order of the module docstring."""
        return (self.slots, self.ent_i, self.ent_f, self.node_i, self.node_f, self.meta)

    @property
    def capacity(self) -> int:
        return self.ent_i.shape[0]

    @property
    def n_entries(self) -> int:
        """Distinct (node, label) pairs currently held."""
        return int(self.meta[1])

    def grow(self, need: int = 0):
        """Re-pack the live entries into a table with room for ``need`` more (doubling the
        capacity if needed): entries of cleared nodes are dropped."""
        live = int(self.meta[1])
        capacity = self.capacity
        while live + need > capacity // 2:  # half full after re-packing: O(1) amortised
            capacity *= 2
        old_i, old_f, old_used = self.ent_i, self.ent_f, int(self.meta[0])
        self._allocate(capacity)
        _rebuild(old_i, old_f, old_used, self.slots, self.ent_i, self.ent_f, self.node_i,
                 self.meta)

    def shrink(self):
        """Re-pack into the smallest table holding the live entries (after fitting)."""
        old_i, old_f, old_used = self.ent_i, self.ent_f, int(self.meta[0])
        self._allocate(max(int(self.meta[1]), 16))
        _rebuild(old_i, old_f, old_used, self.slots, self.ent_i, self.ent_f, self.node_i,
                 self.meta)

    def count(self, node: int, label: int) -> float:
        return float(count(self.parts, node, label))

    def labels_of(self, node: int) -> dict:
        """{label: count} of one node (for tests and inspection)."""
        out, e = {}, int(self.node_i[node, _HEAD])
        while e >= 0:
            out[int(self.ent_i[e, _LABEL])] = float(self.ent_f[e, 0])
            e = int(self.ent_i[e, _NEXT])
        return out

    def distinct(self):
        """Distinct labels per node, (n_nodes,) int64."""
        return self.node_i[:, _DISTINCT].copy()

    def totals(self):
        """Total count per node, (n_nodes,) float64."""
        return self.node_f[:, _TOTAL].copy()

    def max_counts(self):
        """Largest label count per node, (n_nodes,) float64."""
        return self.node_f[:, _MAX].copy()

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in self.parts))
