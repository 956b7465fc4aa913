"""The runner's output rules (xcbench.contract.validate) name each kind of invalid output."""
import numpy as np
import pytest

from xcbench.contract.validate import (check_log_proba_output, check_path_cost_output,
                              check_support_output, check_topk_output)


def _good():
    return np.array([[2, 0, -1], [1, 2, 0]]), np.array([[0.0, -1.0, -np.inf], [3.0, 2.0, 2.0]])


def test_valid_topk_passes():
    check_topk_output(*_good(), n=2, k=3, n_classes=3)


@pytest.mark.parametrize("change, message", [
    (lambda l, s: (l[:, :2], s[:, :2]), r"two \(2, 3\) arrays"),
    (lambda l, s: (l.astype(float), s), "integers"),
    (lambda l, s: (l + 5, s), "out of range"),
    (lambda l, s: (np.where(l == -1, -2, l), s), "negative label"),
    (lambda l, s: (l, np.where(l == -1, 0.0, s)), "score -inf"),
    (lambda l, s: (l[:, [0, 2, 1]], s[:, [0, 2, 1]]), "after the real labels"),
    (lambda l, s: (l, s * np.array([1, 1, 1]) + np.array([0, 0, 5])), "sorted"),
    (lambda l, s: (np.array([[2, 2, -1], [1, 2, 0]]), s), "repeated"),
    (lambda l, s: (l, np.where(l == 0, np.nan, s)), "NaN"),
])
def test_invalid_topk_is_named(change, message):
    labels, scores = change(*_good())
    with pytest.raises(ValueError, match=message):
        check_topk_output(labels, scores, n=2, k=3, n_classes=3)


def test_log_proba_support_and_path_cost_rules():
    check_log_proba_output(np.array([-1.0, -np.inf, 0.0]), 3)
    for bad, message in [(np.array([0.5, 0, 0]), "<= 0"), (np.array([np.nan, 0, 0]), "NaN"),
                         (np.zeros(2), r"\(3,\)")]:
        with pytest.raises(ValueError, match=message):
            check_log_proba_output(bad, 3)
    check_support_output(np.array([1, 3]), 2, 3)
    with pytest.raises(ValueError, match="1..3"):
        check_support_output(np.array([0, 3]), 2, 3)
    check_path_cost_output(np.array([0.0, 2.5]), 2)
    with pytest.raises(ValueError, match="finite"):
        check_path_cost_output(np.array([np.inf, 2.5]), 2)
