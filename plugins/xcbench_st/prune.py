"""Post-processing of a trained softmax tree (ALGORITHMS.md section 1, "Post-processing").

- A decision node whose weight vector is zero sends every input the same way (sign of b):
  it is replaced by that child. Predictions are unchanged for every input.
- A dead subtree (no training point reaches it) is removed and its parent replaced by the
  sibling. Predictions are unchanged for every training point.
- A pure subtree (every training point reaching it has class c, and the tree already predicts
  c for each of them) becomes a constant leaf of class c. Training top-1 is unchanged.
"""
from __future__ import annotations

import numpy as np

from .tree import Tree, constant_leaf


def _visits(tree: Tree, Xk) -> tuple[np.ndarray, np.ndarray]:
    """Per Tree node id: how many training points pass through it; and each point's path."""
    paths = tree.flatten().route_paths(Xk, tree.max_depth())
    counts = np.bincount(paths[paths >= 0], minlength=len(tree.left))
    return counts, paths


def prune(tree: Tree, Xk, y: np.ndarray, predicted: np.ndarray) -> dict:
    """Prune in place; ``predicted`` is the tree's current top-1 on the training set.
    Returns how many nodes of each kind were removed."""
    removed = {"zero_weight": 0, "dead": 0, "pure": 0}
    changed = True
    while changed:
        changed = False
        for node in tree.alive():
            if not tree.is_leaf(node) and not np.any(tree.w[node][1]):
                tree.replace(node, tree.right[node] if tree.b[node] >= 0 else tree.left[node])
                removed["zero_weight"] += 1
                changed = True
                break
    counts, paths = _visits(tree, Xk)
    changed = True
    while changed:
        changed = False
        for node in tree.alive():
            if tree.is_leaf(node) or counts[node] == 0:
                continue
            left, right = tree.left[node], tree.right[node]
            if counts[left] == 0 or counts[right] == 0:
                tree.replace(node, right if counts[left] == 0 else left)
                removed["dead"] += 1
                changed = True
                break
    counts, paths = _visits(tree, Xk)
    queue = [0]
    while queue:
        node = queue.pop(0)
        if tree.is_leaf(node):
            continue
        rows = np.flatnonzero(paths[:, tree.depth[node]] == node)
        classes = np.unique(y[rows])
        if len(classes) == 1 and np.all(predicted[rows] == classes[0]):
            _make_leaf(tree, node, int(classes[0]))
            removed["pure"] += 1
        else:
            queue.extend((tree.left[node], tree.right[node]))
    return removed


def _make_leaf(tree: Tree, node: int, cls: int) -> None:
    tree.left[node] = tree.right[node] = -1
    del tree.w[node], tree.b[node]
    tree.leaf[node] = constant_leaf(cls)
