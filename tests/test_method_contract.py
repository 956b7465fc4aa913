import numpy as np
import pytest
import scipy.sparse as sp

import xcbench
from xcbench.contract.method import (MethodSpec, check_k, check_labels, check_X,
                                     topk_from_scores)
from xcbench.testing import check_method, parametrize_with_checks


def _recall_tree_small():
    """A small hash table for recall_tree (``hash_bits`` is being replaced by ``bits``)."""
    valid = xcbench.get_method_spec("recall_tree").valid_params()
    return {"hash_bits": 16} if "hash_bits" in valid else {}


#: Built-in methods with small settings (as in their own tests).
BUILTIN = ["ova", "softmax", ("hsm", {"lr": 0.05, "epochs": 20}), "lomtree",
           ("recall_tree", _recall_tree_small()), ("st", {"k": 4, "depth": 2, "n_iter": 4,
                                                          "alpha": 0.1}),
           ("ast", {"depth0": 1, "initial_iter": 2, "global_iter": 1, "max_stages": 2,
                    "expand_iter": 2, "alpha": 0.1})]

@parametrize_with_checks(BUILTIN)
def test_builtin_methods_conform(check):
    check()


def test_unknown_parameter_lists_valid_ones():
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) Cee.*valid parameters: C"):
        xcbench.make_method("softmax", Cee=1)


def test_unknown_method_lists_registered():
    with pytest.raises(KeyError, match="registered methods: .*ova.*softmax"):
        xcbench.make_method("nope")


def test_spec_rejects_bad_family():
    with pytest.raises(ValueError, match="family"):
        MethodSpec("x", "forest", "", lambda: None)


def test_topk_pads_when_k_exceeds_classes():
    scores = np.array([[0.1, 0.5, 0.2], [3.0, 1.0, 2.0]])
    labels, top = topk_from_scores(scores, 5)
    assert labels.tolist() == [[1, 2, 0, -1, -1], [0, 2, 1, -1, -1]]
    assert np.isneginf(top[:, 3:]).all()


def test_check_X_errors_name_the_problem():
    with pytest.raises(ValueError, match="2-dimensional"):
        check_X(np.zeros(3))
    with pytest.raises(ValueError, match="NaN"):
        check_X(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="3 features but the model was fitted with 4"):
        check_X(np.zeros((2, 3)), n_features=4)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sparse", [False, True])
def test_check_X_finds_a_non_finite_value_anywhere(bad, dtype, sparse):
    """The compiled |x| scan must not lose a NaN behind a larger value seen earlier."""
    X = np.ones((3, 4), dtype=dtype)
    X[0, 0] = 1e30
    X[2, 3] = bad
    with pytest.raises(ValueError, match="NaN or infinite"):
        check_X(sp.csr_matrix(X) if sparse else X)
    X[2, 3] = -2e38
    assert check_X(sp.csr_matrix(X) if sparse else X).shape == (3, 4)


@pytest.mark.parametrize("n_classes", [4.7, "4", True, 0])
def test_check_labels_refuses_a_class_count_that_is_not_a_positive_integer(n_classes):
    """4.7 was truncated to 4 and "4" reached a comparison error."""
    with pytest.raises(ValueError, match="n_classes must be a positive integer"):
        check_labels(np.array([0, 1]), 2, n_classes=n_classes)
    assert check_labels(np.array([0, 1]), 2, n_classes=np.int64(3))[1] == 3


@pytest.mark.parametrize("k", [0, -1, 2.5, True, "3", None])
def test_check_k_refuses_what_is_not_a_positive_whole_number(k):
    with pytest.raises(ValueError, match=r"k must be a whole number >= 1"):
        check_k(k)


def test_check_k_returns_a_python_int():
    assert check_k(np.int32(3)) == 3 and type(check_k(np.int64(3))) is int


def test_check_labels_out_of_range():
    with pytest.raises(ValueError, match="out of range"):
        check_labels(np.array([0, 5]), 2, n_classes=3)
    with pytest.raises(ValueError, match="0..K-1"):
        check_labels(np.array([0, -1]), 2)
    with pytest.raises(ValueError, match="shape"):
        check_labels(np.array([0, 1, 2]), 2)


def test_check_method_catches_a_broken_method():
    from xcbench_linear import Softmax

    class Unsorted(Softmax):
        def predict_topk(self, X, k=1):
            labels, scores = super().predict_topk(X, k)
            return labels[:, ::-1].copy(), scores[:, ::-1].copy()

    with pytest.raises(AssertionError, match="check_fit_predict_dense"):
        check_method(Unsorted)


def test_softmax_probabilities_sum_to_one():
    m = xcbench.make_method("softmax")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 5)), rng.integers(0, 4, 200)
    m.fit(X, y)
    total = sum(np.exp(m.log_proba(X, np.full(200, c))) for c in range(4))
    np.testing.assert_allclose(total, 1.0, rtol=1e-10)


def test_check_X_refuses_no_rows_at_fit_only():
    with pytest.raises(ValueError, match="0 rows; fit needs at least one example"):
        check_X(np.zeros((0, 3)))
    assert check_X(np.zeros((0, 3)), n_features=3).shape == (0, 3)  # predicting nothing is fine


def test_check_X_refuses_values_beyond_float32_range():
    with pytest.raises(ValueError, match="beyond the float32 range.*rescale"):
        check_X(np.array([[1.0, 3e200]]))
    with pytest.raises(ValueError, match="beyond the float32 range"):
        check_X(sp.csr_matrix(np.array([[0.0, -1e39]])))
    check_X(np.array([[1.0, 3e38]]))


def test_check_X_refuses_non_numeric_features():
    with pytest.raises(ValueError, match="must hold numbers, got dtype <U1"):
        check_X(np.array([["a", "b"]]))


def test_check_labels_refuses_strings_and_fractions():
    with pytest.raises(ValueError, match="dtype <U3.*LabelEncoder"):
        check_labels(np.array(["cat", "dog"]), 2)
    with pytest.raises(ValueError, match="dtype object"):
        check_labels(np.array([1, "b"], dtype=object), 2)
    with pytest.raises(ValueError, match="found 1.5"):
        check_labels(np.array([0.0, 1.5]), 2)
    with pytest.raises(ValueError, match="y is empty"):
        check_labels(np.array([], dtype=int), 0)
    assert check_labels(np.array([0.0, 2.0]), 2)[0].dtype == np.int64


@pytest.mark.parametrize("name", ["ova", "softmax", "hsm", "lomtree"])
def test_methods_refuse_bad_input_at_fit(name):
    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 4
    with pytest.raises(ValueError, match="0 rows"):
        xcbench.make_method(name).fit(X[:0], y[:0])
    with pytest.raises(ValueError, match="LabelEncoder"):
        xcbench.make_method(name).fit(X, np.array(list("abcd") * 5))
    with pytest.raises(ValueError, match="float32 range"):
        xcbench.make_method(name).fit(X * 1e200, y)


def test_learned_attribute_before_fit_is_not_fitted_error():
    from sklearn.exceptions import NotFittedError

    m = xcbench.make_method("softmax")
    with pytest.raises(NotFittedError, match="not fitted yet.*call fit"):
        m.predict_topk(np.zeros((1, 3)), 1)
    assert not hasattr(m, "coef_")
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        m.nope
