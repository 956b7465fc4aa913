"""xcbench.tree.node_fit: the node models' scores (children never seen, two-child nodes, a
child whose score is fixed at 0) against scikit-learn's own fits."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

from xcbench.tree.node_fit import FitTree, fit_nodes, logistic_node, multiclass_hinge_node


def _node_data(n_present, seed=0):
    rng = np.random.default_rng(seed)
    target = rng.integers(0, n_present, 120)
    X = sp.csr_matrix(rng.normal(size=(120, 6)) + 4.0 * np.eye(6)[target % 6])
    return X, target


@pytest.mark.parametrize("n_present", [2, 3])
def test_hinge_node_scores_differ_like_sklearns_and_unseen_children_score_below(n_present):
    """Children 0..n_present-1 have rows, child 3 none: score differences equal
    LinearSVC's decision values, two-child scores sum to 0 (as LIBLINEAR's do), and the
    unseen child has w = 0 and a bias below every present child's."""
    X, target = _node_data(n_present)
    coef, intercept = multiclass_hinge_node(X, target, 4, 1.0, 1000, 0)
    scores = X @ coef.T + intercept
    ref = LinearSVC(multi_class="crammer_singer", dual=True, C=1.0, max_iter=1000,
                    random_state=0).fit(X, target).decision_function(X)
    if n_present == 2:
        np.testing.assert_allclose(scores[:, 1] - scores[:, 0], ref, atol=1e-8)
        np.testing.assert_allclose(scores[:, 0] + scores[:, 1], 0.0, atol=1e-8)
    else:
        np.testing.assert_allclose(scores[:, :3], ref, atol=1e-8)
    assert not coef[3].any() and intercept[3] < intercept[:n_present].min()


def test_logistic_node_is_sklearns_log_odds_against_the_last_child():
    X, target = _node_data(3, seed=1)
    coef, intercept = logistic_node(X, target, 4, 1.0, 1000, 0)
    assert not coef[-1].any() and intercept[-1] == 0.0
    logp = LogisticRegression(C=1.0, max_iter=1000).fit(X, target).predict_log_proba(X)
    scores = X @ coef.T + intercept
    got = scores[:, :3] - np.logaddexp.reduce(scores[:, :3], axis=1, keepdims=True)
    np.testing.assert_allclose(got, logp, atol=1e-4)


def test_fit_nodes_makes_absolute_scores_relative_to_a_fixed_child():
    """One node whose last child has no row (score 0): the hinge node's other children get
    scores relative to it, so differences between children are the SVM's."""
    X, y = _node_data(3, seed=2)
    tree = FitTree(child_ptr=np.array([0, 3]), children=np.array([-1, -2, -3]),
                   edge_row=np.array([0, 1, -1]), n_nodes=1, n_classes=3)
    W, bias = np.zeros((2, X.shape[1])), np.zeros(2)

    def write(row, cols, coef):
        W[row, cols] = coef

    fit_nodes(tree, X, y, write, bias, C=1.0, max_iter=1000, fit_node=multiclass_hinge_node)
    ours = np.column_stack([X @ W.T + bias, np.zeros(X.shape[0])])
    ref = LinearSVC(multi_class="crammer_singer", dual=True, C=1.0, max_iter=1000,
                    random_state=0).fit(X, y).decision_function(X)
    # the same problem up to row order (fit_nodes sorts rows by class): equal to tolerance
    np.testing.assert_allclose(ours - ours[:, [2]], ref - ref[:, [2]], atol=1e-4)
