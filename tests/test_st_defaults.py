"""st's default l1 strength: alpha="auto", picked on a validation split (alpha_search.py)."""
import numpy as np
import pytest

from xcbench_st import AdaptiveSoftmaxTree, SoftmaxTree
from xcbench_st.alpha_search import AUTO_ALPHAS, best_alpha, choose_alpha, search_memory

SMALL = {"k": 3, "depth": 2, "n_iter": 3, "random_state": 0}


def _problem(n=400, n_classes=6, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    return rng.normal(size=(n, 5)) + 3.0 * np.eye(n_classes, 5)[y], y


def test_default_alpha_is_auto_and_the_refit_uses_the_validated_alpha():
    assert SoftmaxTree().alpha == "auto"
    X, y = _problem()
    model = SoftmaxTree(**SMALL).fit(X, y)
    errors = {float(a): e for a, e in model.alpha_validation_error_.items()}
    assert list(errors) == list(AUTO_ALPHAS)[:len(errors)]
    assert model.alpha_ == best_alpha(errors) and model.stats()["alpha_used"] == model.alpha_
    assert "alpha_search" in model.stats()["fit_seconds"]
    fixed = SoftmaxTree(**SMALL, alpha=model.alpha_).fit(X, y)
    np.testing.assert_array_equal(model.predict(X), fixed.predict(X))
    assert fixed.alpha_validation_error_ == {} and fixed.alpha_ == model.alpha_


def test_ties_go_to_the_larger_alpha():
    assert best_alpha({1.0: 0.2, 0.1: 0.2, 0.01: 0.3}) == 1.0
    assert best_alpha({1.0: 0.3, 0.1: 0.2, 0.01: 0.2}) == 0.1


class ScriptedTree:
    """A stand-in whose validation error per alpha is scripted; records the alphas fitted."""
    script, fitted = {}, []

    def __init__(self, alpha="auto", random_state=0, verbose=False):
        self.alpha, self.random_state, self.verbose = alpha, random_state, verbose
        self.n_classes_ = 2

    def get_params(self):
        return {"alpha": self.alpha, "random_state": self.random_state, "verbose": self.verbose}

    def fit(self, X, y, n_classes):
        ScriptedTree.fitted.append(self.alpha)
        return self

    def predict_topk(self, X, k=1):
        wrong = np.arange(len(X)) < round(self.script[self.alpha] * len(X))
        return np.where(wrong, 1, 0)[:, None], None

    def _log(self, message):
        pass


@pytest.mark.parametrize("script, fitted, chosen", [
    ({1.0: 0.3, 0.1: 0.2, 0.01: 0.1}, [1.0, 0.1, 0.01], 0.01),
    ({1.0: 0.3, 0.1: 0.4, 0.01: 0.1}, [1.0, 0.1], 1.0),  # worse at 0.1: 0.01 never tried
    ({1.0: 0.3, 0.1: 0.2, 0.01: 0.2}, [1.0, 0.1, 0.01], 0.1),
])
def test_search_goes_down_from_the_largest_alpha_and_stops_when_worse(script, fitted, chosen):
    ScriptedTree.script, ScriptedTree.fitted = script, []
    X, y = np.zeros((100, 1)), np.zeros(100, dtype=np.int64)
    alpha, errors = choose_alpha(ScriptedTree(), X, y)
    assert ScriptedTree.fitted == fitted and alpha == chosen
    assert list(errors) == [str(a) for a in fitted]


def test_validation_depends_on_the_data_not_only_on_the_candidates():
    X, y = _problem()
    a = SoftmaxTree(**SMALL).fit(X, y).alpha_validation_error_
    b = SoftmaxTree(**SMALL).fit(X * 100.0, y).alpha_validation_error_  # feature scale
    assert a == SoftmaxTree(**SMALL).fit(X, y).alpha_validation_error_  # seeded
    assert a != b


def test_search_memory_is_counted_and_auto_is_st_only():
    auto = SoftmaxTree().estimate_memory(10_000, 100, 1_000_000, 50)
    fixed = SoftmaxTree(alpha=1.0).estimate_memory(10_000, 100, 1_000_000, 50)
    assert auto - fixed == search_memory(10_000, 100, 1_000_000) == 7_200_000
    with pytest.raises(ValueError, match="alpha"):
        SoftmaxTree(alpha="tuned")._validate_params()
    with pytest.raises(ValueError, match="alpha"):
        AdaptiveSoftmaxTree(alpha="auto")._validate_params()


def test_auto_depth_keeps_8_until_the_leaves_cannot_hold_every_class():
    from xcbench_st.model import auto_depth
    assert SoftmaxTree().depth == "auto"
    assert [auto_depth(K, 50) for K in (26, 1_000, 10_000, 12_800)] == [8, 8, 8, 8]
    assert auto_depth(12_801, 50) == 9 and auto_depth(100_000, 50) == 11
    assert auto_depth(105_033, 300) == 9  # the paper's ODP setting
    assert all(50 * 2 ** auto_depth(K, 50) >= K for K in (10 ** 5, 10 ** 6, 3 * 10 ** 6))


def test_auto_depth_is_the_fitted_depth_and_sizes_the_memory_estimate():
    X, y = _problem()
    model = SoftmaxTree(**{**SMALL, "depth": "auto", "k": 2, "alpha": 1.0, "n_iter": 1})
    assert model.estimate_memory(400, 5, 2000, 3000) > model.estimate_memory(400, 5, 2000, 6)
    model.fit(X, y)
    assert model.depth_ == 8 and model.stats()["depth"] <= 8
