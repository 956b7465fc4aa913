"""``C="auto"`` for one-vs-rest hinge nodes: the regularisation chosen on the data.

How much the node models should be regularised depends on how noisy the labels are, which
the data's sizes do not say: on the synthetic sparse sets (nearly separable, Bayes error
6-7%) weak regularisation, C = 8, gains 2 points of top-1 error over Omikuji's C = 1; on
next-word prediction (`ptb-sparse`, where three in four test words are missed by every
method) C = 8 loses to C = 1 and fits several times slower. So the first tree's root node
is fitted at each candidate C on a sample of the training rows and scored on other
training rows (which of the root's children holds the row's class). The first candidate
(C = 8) is kept unless another is better by more than two standard errors of the paired
difference of held-out accuracy (at K = 1e5 on the synthetic data C = 8 wins the root by
only 0.2-0.3 points, so a plain "most accurate" could flip there by chance); the chosen C
is used for every node of every tree. The probe costs seconds (at most ``FIT_ROWS`` + ``HELD_ROWS`` rows, one node
problem per candidate); it draws from its own random generator, so the rest of the fit
takes the same random draws as with a fixed C. Measurements: docs/methods/label-trees.md
("C chosen on the data").
"""
from __future__ import annotations

from functools import partial

import numpy as np

from xcbench.stats import keep_unless_beaten
from xcbench.tree import node_pool

CANDIDATES = (8.0, 1.0)  # the measured best on separable sparse data first, then Omikuji's
FIT_ROWS, HELD_ROWS = 20_000, 5_000  # the probe's sample: rows fitted on, rows scored on
HELD_SHARE = 0.2  # on smaller data, this share of the rows is held out
MIN_ROWS = 500  # below this many training rows the held-out score is too coarse to choose


def root_targets(tree, y) -> tuple[np.ndarray, int]:
    """(the index, among the root's children, of the child above each row's class; the
    root's number of children). ``tree``: a LabelTreeStructure (``path_node`` lists each
    class's root-to-leaf path without the root)."""
    root_children = tree.children[tree.child_ptr[0]:tree.child_ptr[1]]
    position = np.full(tree.n_nodes, -1, dtype=np.int64)
    position[root_children] = np.arange(root_children.size)
    first_below_root = tree.path_node[tree.path_ptr[:-1]]
    return position[first_below_root][y], int(root_children.size)


def held_out_correct(fit_node, X, target, n_children, fit, held, max_iter, seed, C):
    """Whether the node model fitted at ``C`` on the ``fit`` rows ranks each ``held`` row's
    root child first (None when the sample shows fewer than two children)."""
    fitted = fit_node(X[fit], target[fit], n_children, C, max_iter, seed)
    if fitted is None:
        return None
    coef, intercept = fitted
    scores = np.asarray(X[held] @ coef.T) + intercept
    return np.argmax(scores, axis=1) == target[held]


def choose_C(X, y, tree, fit_node, random_state, max_iter=1000,
             candidates=CANDIDATES, n_jobs=1) -> tuple[float | None, dict]:
    """(the chosen C, {candidate: held-out root accuracy}); (None, {}) when the data is too
    small to choose on (fewer than ``MIN_ROWS`` rows, or fewer than two root children seen
    in the sample): the caller keeps its rule's constant. The first candidate is kept
    unless the most accurate other one is clearly better
    (``xcbench.stats.keep_unless_beaten``). X: the node solver's input
    (unit rows when ``normalize``), y: int classes, ``tree``: the first tree's structure.
    ``n_jobs`` > 1 fits the candidates side by side (``xcbench.tree.node_pool``)."""
    n = X.shape[0]
    if n < MIN_ROWS:
        return None, {}
    target, n_children = root_targets(tree, y)
    rng = np.random.default_rng(random_state)
    n_fit = min(FIT_ROWS, int(round((1 - HELD_SHARE) * n)))
    n_held = min(HELD_ROWS, n - n_fit)
    order = rng.permutation(n)
    fit, held = np.sort(order[:n_fit]), np.sort(order[n_fit:n_fit + n_held])
    seed = int(rng.integers(2**31))
    candidates = [float(C) for C in candidates]
    probe = partial(held_out_correct, fit_node, X, target, n_children, fit, held, max_iter,
                    seed)
    right = dict(zip(candidates, node_pool.solve_all(probe, candidates, n_jobs)))
    if any(correct is None for correct in right.values()):
        return None, {}
    accuracy = {C: float(r.mean()) for C, r in right.items()}
    return keep_unless_beaten(right), accuracy
