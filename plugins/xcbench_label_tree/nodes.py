"""One-vs-rest node classifiers for node-by-node training (``solver="liblinear"`` with
``loss="hinge"`` or ``loss="logistic"``), the node models of Bonsai and Parabel.

At an internal node, every child gets its own binary classifier, "is the example's label
under this child", trained on the rows that reach the node (the caller,
``xcbench.tree.node_fit.fit_nodes``, hands over those rows on their active features):
- ``hinge``: an L2-regularised squared-hinge SVM, LIBLINEAR's dual coordinate descent
  (scikit-learn's ``LinearSVC``), C sum_i max(0, 1 - y_i f(x_i))^2 + |[w, b]|^2 / 2;
- ``logistic``: an L2-regularised logistic regression (LIBLINEAR), C sum_i log(1 +
  exp(-y_i f(x_i))) + |[w, b]|^2 / 2.
Both stop at LIBLINEAR's default tolerance for its dual solvers (0.1), as Omikuji does.
The decoder turns child margins s into path scores: -max(0, 1 - s)^2 for the hinge (so
exp of a path's sum is in (0, 1]), log sigmoid(s) for the logistic loss
(``kernels.transform_scores``).

A child without rows at the node gets w = 0 and bias -1 (its score sits below any child
that the node's classifier accepts).
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

LIBLINEAR_DUAL_TOL = 0.1  # LIBLINEAR's default stopping tolerance for its dual solvers
ABSENT_BIAS = -1.0


def _absent(n_children, d):
    """Weights and biases of children not (yet) fitted: w = 0, bias ``ABSENT_BIAS``."""
    return np.zeros((n_children, d)), np.full(n_children, ABSENT_BIAS)


def _one_vs_rest(model_factory, Xn, target, n_children, joint=False):
    """(coef (m, d), intercept (m,)) of one binary classifier per child present at the node;
    None when fewer than two children have rows. ``joint``: the model is one-vs-rest
    itself (one call trains every present child: LIBLINEAR's own loop, no Python per
    child); otherwise one fit per child."""
    present = np.unique(target)
    if present.size < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if present.size == 2:  # one problem: the second child's margin, the first's negated
            model = model_factory().fit(Xn, target)
            coef, intercept = _absent(n_children, Xn.shape[1])
            a, b = present
            coef[b], intercept[b] = model.coef_[0], model.intercept_[0]
            coef[a], intercept[a] = -model.coef_[0], -model.intercept_[0]
        elif joint:
            model = model_factory().fit(Xn, target)
            if present.size == n_children:  # every child seen: scikit-learn's arrays, no copy
                return model.coef_, model.intercept_.copy()
            coef, intercept = _absent(n_children, Xn.shape[1])
            coef[present], intercept[present] = model.coef_, model.intercept_
        else:
            coef, intercept = _absent(n_children, Xn.shape[1])
            for q in present:
                model = model_factory().fit(Xn, target == q)
                coef[q], intercept[q] = model.coef_[0], model.intercept_[0]
    return coef, intercept


def squared_hinge_node(Xn, target, n_children, C, max_iter, seed):
    """One squared-hinge SVM per child (LIBLINEAR's L2-loss SVC, dual, one-vs-rest)."""
    return _one_vs_rest(lambda: LinearSVC(loss="squared_hinge", dual=True, C=C,
                                          multi_class="ovr", tol=LIBLINEAR_DUAL_TOL,
                                          max_iter=max_iter, random_state=seed),
                        Xn, target, n_children, joint=True)


def logistic_ovr_node(Xn, target, n_children, C, max_iter, seed):
    """One logistic regression per child (LIBLINEAR's L2-regularised logistic, dual)."""
    return _one_vs_rest(lambda: LogisticRegression(solver="liblinear", dual=True, C=C,
                                                   tol=LIBLINEAR_DUAL_TOL, max_iter=max_iter,
                                                   random_state=seed),
                        Xn, target, n_children)
