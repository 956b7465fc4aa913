"""st's and ast's defaults by rule (defaults.py) and st's alpha="search" (alpha_search.py)."""
import numpy as np
import scipy.sparse as sp
import pytest

from xcbench_st import AdaptiveSoftmaxTree, SoftmaxTree
from xcbench_st.alpha_search import AUTO_ALPHAS, best_alpha, choose_alpha, search_memory
from xcbench_st.defaults import DataShape, dense_depth, resolve_ast, resolve_st

SMALL = {"k": 3, "depth": 2, "n_iter": 3, "random_state": 0}


def _problem(n=400, n_classes=6, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    return rng.normal(size=(n, 5)) + 3.0 * np.eye(n_classes, 5)[y], y


def test_alpha_search_refits_with_the_validated_alpha():
    X, y = _problem()
    model = SoftmaxTree(**SMALL, alpha="search").fit(X, y)
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

    def __init__(self, alpha="auto", random_state=0, verbose=False, smoothing="auto",
                 smoothing_floor="auto"):
        self.alpha, self.random_state, self.verbose = alpha, random_state, verbose
        self.smoothing, self.smoothing_floor = smoothing, smoothing_floor
        self.n_classes_ = 2

    def get_params(self):
        return {"alpha": self.alpha, "random_state": self.random_state, "verbose": self.verbose,
                "smoothing": self.smoothing, "smoothing_floor": self.smoothing_floor}

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
    search = {**SMALL, "alpha": "search"}
    a = SoftmaxTree(**search).fit(X, y).alpha_validation_error_
    b = SoftmaxTree(**search).fit(X * 100.0, y).alpha_validation_error_  # feature scale
    assert a == SoftmaxTree(**search).fit(X, y).alpha_validation_error_  # seeded
    assert a != b


def test_search_memory_is_counted_only_for_the_search():
    search = SoftmaxTree(alpha="search").estimate_memory(10_000, 100, 1_000_000, 50)
    auto = SoftmaxTree().estimate_memory(10_000, 100, 1_000_000, 50)
    fixed = SoftmaxTree(alpha=1.0).estimate_memory(10_000, 100, 1_000_000, 50)
    assert search - fixed == search_memory(10_000, 100, 1_000_000) == 7_200_000
    assert auto == fixed
    with pytest.raises(ValueError, match="alpha"):
        SoftmaxTree(alpha="tuned")._validate_params()
    with pytest.raises(ValueError, match="alpha"):
        AdaptiveSoftmaxTree(alpha="search")._validate_params()


AUTO_ST = {"k": 50, "depth": "auto", "alpha": "auto", "n_iter": "auto", "init": "auto",
           "decision_solver": "auto", "leaf_solver": "auto"}
PROX = {"decision_solver": "prox", "leaf_solver": "prox"}
LBFGSB = {"decision_solver": "lbfgs-b", "leaf_solver": "lbfgs-b"}
AUTO_AST = {"depth0": "auto", "k0": "auto", "init": "auto", "initial_iter": "auto",
            "global_iter": "auto", "max_stages": "auto", "alpha": "auto",
            "decision_solver": "auto", "leaf_solver": "auto"}


def _shape(K, sparse, norm=4.0, n=10_000, d=10_000):
    return DataShape(n, d, 16 * n if sparse else n * d, K, sparse, norm)


def test_st_rule_sparse_input_gets_the_clustered_one_pass_tree_one_level_deeper():
    """Sparse: cluster init, one TAO pass, depth ceil(log2(K / k)) + 1 (6 / 9 / 12 at
    K = 1e3 / 1e4 / 1e5 with k = 50, the reports/scaling setting)."""
    for K, depth in ((26, 1), (1_000, 6), (10_000, 9), (100_000, 12)):
        got = resolve_st(AUTO_ST, _shape(K, sparse=True))
        assert got == {"init": "cluster", "n_iter": 1, "depth": depth, "alpha": 1.0, **PROX}
        assert 50 * 2 ** depth >= 2 * K or K < 50  # room: at least two leaf slots per class
    assert resolve_st({**AUTO_ST, "k": 100}, _shape(100_000, True))["depth"] == 11


def test_st_rule_dense_input_keeps_the_paper_tree_and_deepens_only_when_needed():
    """Dense: random init, 20 passes, k = 50; with rows enough to fill 2^8 leaves the depth
    is max(8, ceil(log2(K / 50)))."""
    for K, depth in ((26, 8), (1_000, 8), (12_800, 8), (12_801, 9), (100_000, 11)):
        got = resolve_st(AUTO_ST, _shape(K, sparse=False, n=16 * 50 * 2 ** 8, d=10))
        assert got == {"init": "random", "n_iter": 20, "depth": depth, "alpha": 0.1, **LBFGSB}
    assert resolve_st({**AUTO_ST, "k": 300}, _shape(105_033, False))["depth"] == 9  # ODP


@pytest.mark.parametrize("d, sparse, init", [
    (16, False, "random"), (99, False, "random"),  # narrow dense (letter, aloi27d)
    (100, False, "cluster"), (192, False, "cluster"),  # wide dense (leaves100, synthetic)
    (16, True, "cluster"), (10_000, True, "cluster"),  # sparse
])
def test_st_initial_tree_is_clustered_unless_the_input_is_narrow_and_dense(d, sparse, init):
    assert resolve_st(AUTO_ST, _shape(1_000, sparse=sparse, d=d))["init"] == init


@pytest.mark.parametrize("name, n, K, depth", [
    ("letter", 16_000, 26, 5),  # K <= k: 16,000 // (16 x 26) = 38 leaves' worth -> 2^5
    ("leaves100", 1_200, 100, 4),  # K > k: 1,200 // 50 = 24 -> 2^4
    ("aloi27d-438", 43_642, 438, 8),  # 872 -> capped at 8
    ("aloi27d", 45_000, 1_000, 8),
    ("ptb", 572_902, 6_719, 8),
    ("few rows, many classes", 2_000, 5_000, 7),  # k 2^depth >= K wins
])
def test_st_dense_depth_on_the_shipped_shapes(name, n, K, depth):
    assert resolve_st(AUTO_ST, _shape(K, sparse=False, n=n, d=16))["depth"] == depth


def test_st_dense_depth_is_the_largest_power_of_two_of_leaves_the_rows_fill():
    few = 16 * 26  # K = 26 <= k = 50: rows a leaf keeps, 16 per class
    for n, depth in ((0, 0), (few - 1, 0), (2 * few - 1, 0), (2 * few, 1), (32 * few, 5),
                     (64 * few - 1, 5), (10**9, 8)):
        assert dense_depth(_shape(26, False, n=n, d=16), 50) == depth
    many = 50  # K = 100 > k = 50: one row per leaf slot
    for n, depth in ((49, 0), (2 * many, 1), (16 * many, 4), (32 * many - 1, 4)):
        assert dense_depth(_shape(100, False, n=n, d=16), 50) == depth
    assert dense_depth(_shape(100, False, n=16 * 10, d=16), 10) == 4  # slots scale with k


def test_st_rule_alpha_follows_sparsity_and_the_row_norm():
    """Sparse rows: 1.0. Dense rows of small norm (histograms: aloi27d 0.92, leaves100 0.32)
    need large weights: 0.01; other dense rows (letter 26, synthetic 12): 0.1."""
    for norm, alpha in ((0.32, 0.01), (0.92, 0.01), (1.99, 0.01), (2.0, 0.1), (26.0, 0.1)):
        assert resolve_st(AUTO_ST, _shape(100, False, norm))["alpha"] == alpha
        assert resolve_st(AUTO_ST, _shape(100, True, norm))["alpha"] == 1.0
    assert resolve_st(AUTO_ST, DataShape.from_sizes(100, 5, 500, 3))["alpha"] == 0.1


def test_st_rule_leaves_explicit_values_alone():
    explicit = {"k": 7, "depth": 3, "alpha": 0.5, "n_iter": 2, "init": "random"}
    assert resolve_st(explicit, _shape(1_000, True)) == {}
    # 7 x 2^8 < 1000 <= 7 x 2^9, one level more on sparse input
    assert resolve_st({**explicit, "depth": "auto"}, _shape(1_000, True)) == {"depth": 9}


def test_data_shape_reads_sparsity_and_the_median_row_norm():
    X = np.array([[3.0, 4.0], [0.0, 1.0], [6.0, 8.0]])
    dense = DataShape.of(X, 4)
    assert (dense.sparse, dense.row_norm, dense.nnz, dense.n_classes) == (False, 5.0, 6, 4)
    sparse = DataShape.of(sp.csr_matrix(X), 4)
    assert (sparse.sparse, sparse.row_norm, sparse.nnz) == (True, 5.0, 5)
    assert DataShape.from_sizes(3, 2, 6, 4).sparse is False
    assert DataShape.from_sizes(3, 2, 5, 4).sparse is True


def test_ast_rule_sparse_is_the_scaling_setting_dense_the_paper_start():
    sparse = resolve_ast(AUTO_AST, _shape(100_000, True))
    assert sparse == {"init": "cluster", "depth0": 11, "k0": 100, "initial_iter": 1,
                      "global_iter": 1, "max_stages": 1, "alpha": 1.0, **PROX}
    assert resolve_ast(AUTO_AST, _shape(1_000, True))["depth0"] == 5
    dense = resolve_ast(AUTO_AST, _shape(1_000, False, norm=0.9))
    assert dense == {"init": "random", "depth0": 2, "k0": 250, "initial_iter": 10,
                     "global_iter": 5, "max_stages": 8, "alpha": 0.01, **LBFGSB}
    assert resolve_ast({**AUTO_AST, "depth0": 3}, _shape(1_000, False))["k0"] == 125
    # dense with more than 1,000 classes (ptb): the large-K shape with a second growth
    # stage (sparse input keeps one), the solvers stay dense
    many = resolve_ast(AUTO_AST, _shape(10_000, False, norm=0.9))
    assert {k: many[k] for k in ("init", "depth0", "k0", "initial_iter", "global_iter",
                                 "max_stages")} == {"init": "cluster", "depth0": 8, "k0": 100,
                                                    "initial_iter": 1, "global_iter": 1,
                                                    "max_stages": 2}
    assert resolve_ast(AUTO_AST, _shape(10_000, True))["max_stages"] == 1
    assert {k: many[k] for k in LBFGSB} == LBFGSB


def test_fitted_models_expose_every_resolved_auto_parameter():
    X, y = _problem()
    st = SoftmaxTree(k=3, n_iter=2, random_state=0).fit(X, y)
    smoothing = {"smoothing", "smoothing_floor"}  # chosen on kept-out rows
    assert set(st.resolved_params_) == {"depth", "alpha", "init", *LBFGSB, *smoothing}
    assert st.resolved_params_["depth"] == st.depth_ == 7  # K > k: 400 rows // 3 -> 2^7
    assert st.resolved_params_["alpha"] == st.alpha_ == 0.1
    assert st.resolved_params_["init"] == "random"
    Xs = sp.csr_matrix(np.abs(X))
    st = SoftmaxTree(random_state=0).fit(Xs, y)
    assert st.resolved_params_ == {**resolve_st(AUTO_ST, DataShape.of(Xs, 6)),
                                   **{k: st.resolved_params_[k] for k in smoothing}}
    assert st.resolved_params_["init"] == "cluster" and len(st.objective_curve_) == 1
    ast = AdaptiveSoftmaxTree(initial_iter=1, max_stages=1, global_iter=1,
                              random_state=0).fit(X, y)
    assert ast.resolved_params_ == {"depth0": 2, "k0": 2, "init": "random", "alpha": 0.1,
                                    **LBFGSB, "smoothing": ast.smoothing_,
                                    "smoothing_floor": ast.smoothing_floor_}
    searched = SoftmaxTree(**SMALL, alpha="search").fit(X, y)
    assert searched.resolved_params_["alpha"] == searched.alpha_
