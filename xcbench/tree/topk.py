"""Compiled top-k over candidate scores: a bounded heap that keeps the k best (score, label)
pairs in O(n log k), then sorts them best first. Ties go to the smaller label, so results
do not depend on the order candidates arrive in."""
import numba
import numpy as np

_jit = numba.njit(cache=True, nogil=True)


@_jit
def _worse(s1, l1, s2, l2):
    """(s1, l1) ranks below (s2, l2): lower score, or equal score and larger label."""
    return s1 < s2 or (s1 == s2 and l1 > l2)


@_jit
def _sift_down(scores, labels, pos, size):
    while True:
        child = 2 * pos + 1
        if child >= size:
            return
        if child + 1 < size and _worse(scores[child + 1], labels[child + 1], scores[child],
                                       labels[child]):
            child += 1
        if not _worse(scores[child], labels[child], scores[pos], labels[pos]):
            return
        scores[pos], scores[child] = scores[child], scores[pos]
        labels[pos], labels[child] = labels[child], labels[pos]
        pos = child


@_jit
def heap_push(scores, labels, size, k, s, label):
    """Offer (s, label) to the heap of the k best held in ``scores[:size]`` /
    ``labels[:size]`` (worst at the root). Returns the new size."""
    if k <= 0:
        return size
    if size < k:
        pos = size
        scores[pos], labels[pos] = s, label
        while pos > 0:
            up = (pos - 1) // 2
            if not _worse(scores[pos], labels[pos], scores[up], labels[up]):
                break
            scores[pos], scores[up] = scores[up], scores[pos]
            labels[pos], labels[up] = labels[up], labels[pos]
            pos = up
        return size + 1
    if _worse(scores[0], labels[0], s, label):
        scores[0], labels[0] = s, label
        _sift_down(scores, labels, 0, size)
    return size


@_jit
def heap_sorted(scores, labels, size):
    """Turn a heap from ``heap_push`` into a list sorted best first, in place."""
    for end in range(size - 1, 0, -1):
        scores[0], scores[end] = scores[end], scores[0]
        labels[0], labels[end] = labels[end], labels[0]
        _sift_down(scores, labels, 0, end)


@_jit
def topk_of(cand_scores, cand_labels, m, k, out_labels, out_scores):
    """Write the k best of ``m`` candidates, best first, into ``out_labels`` /
    ``out_scores`` (rows of the (n, k) outputs, pre-filled with -1 / -inf padding)."""
    kk = min(k, m)
    s = np.empty(max(kk, 1))
    lab = np.empty(max(kk, 1), dtype=np.int64)
    size = 0
    for q in range(m):
        size = heap_push(s, lab, size, kk, cand_scores[q], cand_labels[q])
    heap_sorted(s, lab, size)
    for q in range(size):
        out_labels[q] = lab[q]
        out_scores[q] = s[q]
    return size
