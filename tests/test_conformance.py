"""The output rules (xcbench.validate) and the conformance checker (xcbench.testing)."""
import numpy as np
import pytest

from xcbench.validate import check_log_proba_output, check_topk_output

GOOD_LABELS = np.array([[2, 0, -1], [1, 2, 0]])
GOOD_SCORES = np.array([[0.5, 0.1, -np.inf], [3.0, 2.0, 2.0]])


def test_valid_topk_output_passes():
    check_topk_output(GOOD_LABELS, GOOD_SCORES, 2, 3, 3)


@pytest.mark.parametrize("labels, scores, n, k, match", [
    (GOOD_LABELS[:, :1], GOOD_SCORES[:, :1], 2, 3, r"two \(2, 3\) arrays"),
    (GOOD_LABELS.astype(float), GOOD_SCORES, 2, 3, "labels must be integers"),
    (GOOD_LABELS, GOOD_SCORES.astype(int), 2, 3, "scores must be floats"),
    (np.array([[3, 0, -1], [1, 2, 0]]), GOOD_SCORES, 2, 3, "out of range"),
    (np.array([[2, 0, -2], [1, 2, 0]]), GOOD_SCORES, 2, 3, "negative label -2"),
    (GOOD_LABELS, np.array([[0.5, 0.1, 0.0], [3.0, 2.0, 2.0]]), 2, 3, "score -inf"),
    (GOOD_LABELS, np.array([[0.1, 0.5, -np.inf], [3.0, 2.0, 2.0]]), 2, 3, "not sorted"),
    (np.array([[2, 2, -1], [1, 2, 0]]), GOOD_SCORES, 2, 3, "repeated a label"),
    (np.array([[-1, 2, 0], [1, 2, 0]]), np.array([[-np.inf, 1, 0], [3.0, 2.0, 2.0]]), 2, 3,
     "no predicted label"),
    (np.array([[2, -1, 0], [1, 2, 0]]), np.array([[1, -np.inf, 0], [3.0, 2.0, 2.0]]), 2, 3,
     "padding .* after"),
    (GOOD_LABELS, np.array([[np.nan, 0.1, -np.inf], [3.0, 2.0, 2.0]]), 2, 3, "NaN score"),
])
def test_invalid_topk_output_is_named(labels, scores, n, k, match):
    with pytest.raises(ValueError, match=match):
        check_topk_output(labels, scores, n, k, 3)


def test_log_proba_rules():
    check_log_proba_output(np.array([-0.1, -np.inf, 0.0]), 3)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        check_log_proba_output(np.zeros((3, 1)), 3)
    with pytest.raises(ValueError, match="floats"):
        check_log_proba_output(np.zeros(3, dtype=int), 3)
    with pytest.raises(ValueError, match="NaN"):
        check_log_proba_output(np.array([-1.0, np.nan, 0.0]), 3)
    with pytest.raises(ValueError, match="<= 0"):
        check_log_proba_output(np.array([-1.0, 5.0, 0.0]), 3)
