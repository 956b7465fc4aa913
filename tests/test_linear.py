"""The flat baselines (plugin xcbench_linear) beyond the conformance checks."""
import tracemalloc

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import log_expit, logsumexp
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.utils._param_validation import InvalidParameterError
from threadpoolctl import threadpool_limits

import xcbench
from xcbench.data.synthetic import make_hierarchical
from xcbench_linear import OneVsAll, Softmax
from xcbench_linear.chunked_lbfgs import fit_chunked_lbfgs, kernel_threads, make_objective
from xcbench_linear.scoring import csr_scores


def _objective(X, y, c, w, b, C):
    s = np.where(y == c, 1.0, -1.0)
    return 0.5 * w @ w - C * log_expit(s * (X @ w + b)).sum()


def test_joint_ova_reaches_the_per_class_optimum():
    ds = make_hierarchical(n_classes=8, n_features=6, n_train=600, n_test=10, levels=2,
                           bayes_samples=100)
    X, y = ds.X_train, ds.y_train
    W, b, _ = fit_chunked_lbfgs(X, y, 8, "ova", C=1.0, tol=1e-9, max_iter=3000)
    for c in range(8):
        ref = LogisticRegression(C=1.0, tol=1e-10, max_iter=5000).fit(X, (y == c).astype(int))
        ours = _objective(X, y, c, W[:, c], b[c], 1.0)
        theirs = _objective(X, y, c, ref.coef_[0], ref.intercept_[0], 1.0)
        assert ours <= theirs * (1 + 1e-5) + 1e-6


def test_ova_sklearn_solver_matches_joint_predictions():
    ds = make_hierarchical(n_classes=6, n_features=5, n_train=400, n_test=200, levels=2,
                           bayes_samples=100)
    joint = xcbench.make_method("ova", C=1.0, tol=1e-8, max_iter=2000).fit(ds.X_train,
                                                                         ds.y_train)
    per_class = xcbench.make_method("ova", C=1.0, solver="lbfgs", tol=1e-10, max_iter=5000).fit(
        ds.X_train, ds.y_train)
    assert (joint.predict(ds.X_test) == per_class.predict(ds.X_test)).mean() > 0.99
    np.testing.assert_allclose(joint.log_proba(ds.X_test, ds.y_test),
                               per_class.log_proba(ds.X_test, ds.y_test), atol=1e-3)


def test_flat_methods_learn_the_synthetic_problem():
    ds = xcbench.load_dataset("synthetic-small")
    for name in ("ova", "softmax"):
        m = xcbench.make_method(name).fit(ds.X_train, ds.y_train, n_classes=ds.n_classes)
        error = float((m.predict(ds.X_test) != ds.y_test).mean())
        assert error < ds.info["bayes_error"] + 0.08, (name, error)


def test_chunked_softmax_matches_scikit_learn():
    ds = make_hierarchical(n_classes=7, n_features=5, n_train=500, n_test=100, levels=2,
                           bayes_samples=100)
    X, y = ds.X_train, ds.y_train

    def objective(W, b, C=0.5):
        Z = X @ W.T + b
        return 0.5 * (W ** 2).sum() + C * (logsumexp(Z, axis=1) - Z[np.arange(len(y)), y]).sum()

    W, b, _ = fit_chunked_lbfgs(X, y, 7, "softmax", C=0.5, tol=1e-10, max_iter=5000)
    ref = LogisticRegression(C=0.5, tol=1e-10, max_iter=5000).fit(X, y)
    assert objective(W.T, b) <= objective(ref.coef_, ref.intercept_) * (1 + 1e-6) + 1e-6
    chunked = xcbench.make_method("softmax", solver="chunked-lbfgs", tol=1e-10, max_iter=5000,
                                  C=0.5).fit(X, y)
    np.testing.assert_allclose(chunked.log_proba(ds.X_test, ds.y_test),
                               ref.predict_log_proba(ds.X_test)[np.arange(100), ds.y_test],
                               atol=1e-3)


# --- sparse prediction path, memory estimate, kernels, input and parameter validation ---

@pytest.fixture(autouse=True)
def _single_thread():
    """One BLAS thread, as the runner measures (tiny multi-threaded BLAS calls crawl on a
    busy machine)."""
    with threadpool_limits(limits=1):
        yield


def test_loss_kernels_follow_the_blas_thread_limit():
    with threadpool_limits(limits=1):
        assert kernel_threads() == 1


def _sparse_problem(n=400, d=60, k=5, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.1, format="csr", random_state=seed)
    y = rng.integers(0, k, n)
    return X, y


def _peak_traced_bytes(fn):
    """Peak bytes numpy allocated while ``fn`` ran (numpy reports to tracemalloc)."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("cls", [OneVsAll, Softmax])
def test_csr_and_dense_rows_give_the_same_predictions(cls):
    X, y = _sparse_problem()
    model = cls(max_iter=30).fit(X, y)
    before = joblib.hash(model.__dict__)
    labels_sp, scores_sp = model.predict_topk(X[:50], 3)
    labels_d, scores_d = model.predict_topk(X[:50].toarray(), 3)
    np.testing.assert_array_equal(labels_sp, labels_d)
    np.testing.assert_allclose(scores_sp, scores_d, rtol=1e-10, atol=1e-12)
    one = model.predict_topk(X[7:8], 3)
    np.testing.assert_array_equal(one[0], labels_sp[7:8])
    np.testing.assert_allclose(np.exp(model.log_proba(X[:50], y[:50])),
                               np.exp(model.log_proba(X[:50].toarray(), y[:50])), rtol=1e-10)
    assert joblib.hash(model.__dict__) == before  # predict is pure


def test_csr_kernel_reads_any_index_and_value_type():
    rng = np.random.default_rng(1)
    X = sp.random(20, 30, density=0.2, format="csr", random_state=1)
    W, b = rng.normal(size=(30, 4)), rng.normal(size=4)
    expected = X.toarray() @ W + b
    for idx_type, val_type in [(np.int32, np.float64), (np.int64, np.float32)]:
        out = np.empty((5, 4))
        csr_scores(X.indptr.astype(idx_type), X.indices.astype(idx_type),
                   X.data.astype(val_type), 10, W, b, out)
        np.testing.assert_allclose(out, expected[10:15], rtol=1e-6)


def test_one_csr_row_does_not_copy_the_weights():
    """Before the fix, scipy copied the (D, K) transposed weights on every sparse product:
    one row cost O(D K) time and memory. Now it costs O(nnz K)."""
    rng = np.random.default_rng(0)
    n_features, n_classes = 4000, 200
    model = OneVsAll().fit(rng.normal(size=(n_classes, 3)), np.arange(n_classes))
    model.weights_ = rng.normal(size=(n_features, n_classes))  # a wide model, cheaply
    model.n_features_in_ = n_features
    row = sp.random(1, n_features, density=16 / n_features, format="csr", random_state=0)
    model.predict_topk(row, 5)
    weight_bytes = model.weights_.nbytes
    assert _peak_traced_bytes(lambda: model.predict_topk(row, 5)) < weight_bytes / 20


@pytest.mark.parametrize("cls", [OneVsAll, Softmax])
def test_unfitted_model_raises_not_fitted(cls):
    X = np.zeros((2, 3))
    for call in (lambda m: m.predict_topk(X, 1), lambda m: m.log_proba(X, [0, 1]),
                 lambda m: m.path_cost(X), lambda m: m.support_size(X)):
        with pytest.raises(NotFittedError):
            call(cls())


def test_path_cost_is_the_number_of_classes_scored():
    X, y = _sparse_problem(k=6)
    model = Softmax(max_iter=5).fit(X, y, n_classes=9)
    np.testing.assert_array_equal(model.path_cost(X[:4]), np.full(4, 6.0))


@pytest.mark.parametrize("cls", [OneVsAll, Softmax])
def test_fit_on_empty_X_raises_a_clear_error(cls):
    """A ValueError (from this fit or a central check), not ZeroDivisionError as before."""
    with pytest.raises(ValueError):
        cls().fit(np.zeros((0, 3)), np.zeros(0, dtype=int), n_classes=2)
    with pytest.raises(ValueError):
        cls().fit(sp.csr_matrix((0, 3)), np.zeros(0, dtype=int), n_classes=2)


@pytest.mark.parametrize("cls,params", [
    (OneVsAll, {"C": 0.0}), (OneVsAll, {"max_iter": 0}), (OneVsAll, {"tol": -1.0}),
    (OneVsAll, {"solver": "sgd"}), (OneVsAll, {"n_jobs": "two"}),
    (Softmax, {"C": -1.0}), (Softmax, {"solver": "liblinear"}), (Softmax, {"max_iter": 1.5}),
])
def test_bad_parameters_are_refused_before_fitting(cls, params):
    with pytest.raises(InvalidParameterError):
        cls(**params)._validate_params()
    X, y = _sparse_problem(n=20)
    with pytest.raises(InvalidParameterError):
        cls(**params).fit(X, y)


@pytest.mark.parametrize("loss", ["ova", "softmax"])
@pytest.mark.parametrize("sparse", [False, True])
def test_chunked_objective_matches_a_numpy_reference(loss, sparse):
    rng = np.random.default_rng(2)
    n, d, k, C = 37, 6, 5, 0.7
    X = sp.random(n, d, density=0.5, format="csr", random_state=2) if sparse \
        else rng.normal(size=(n, d))
    y = rng.integers(0, k, n)
    theta = rng.normal(size=k * (d + 1))
    W, b = theta[: k * d].reshape(d, k), theta[k * d:]

    def reference(W, b):
        Z = np.asarray(X @ W) + b
        onehot = np.eye(k)[y]
        if loss == "ova":
            S = np.where(onehot == 1, 1.0, -1.0)
            losses = np.logaddexp(0, -S * Z).sum()
            G = 1 / (1 + np.exp(-Z)) - onehot
        else:
            losses = (logsumexp(Z, axis=1) - Z[np.arange(n), y]).sum()
            G = np.exp(Z - logsumexp(Z, axis=1, keepdims=True)) - onehot
        value = (0.5 * (W ** 2).sum() + C * losses) / (C * n)
        return value, (W + C * np.asarray(X.T @ G)) / (C * n), C * G.sum(axis=0) / (C * n)

    value, grad = make_objective(X, y, k, loss, C, chunk_cells=3 * k)(theta)  # 13 chunks
    ref_value, ref_gW, ref_gb = reference(W, b)
    assert value == pytest.approx(ref_value, rel=1e-12)
    np.testing.assert_allclose(grad[: k * d].reshape(d, k), ref_gW, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(grad[k * d:], ref_gb, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("make", [
    lambda: OneVsAll(max_iter=25), lambda: Softmax(solver="chunked-lbfgs", max_iter=25),
    lambda: Softmax(solver="lbfgs", max_iter=25),
], ids=["ova-joint-lbfgs", "softmax-chunked-lbfgs", "softmax-lbfgs"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_memory_estimate_bounds_the_measured_peak(make, sparse):
    """Upper estimate, and within 3x of the peak numpy allocates during fit."""
    rng = np.random.default_rng(3)
    n, d, k = 1500, 1000 if sparse else 60, 40
    X = sp.random(n, d, density=16 / d, format="csr", random_state=3) if sparse \
        else rng.normal(size=(n, d))
    y = np.arange(n) % k
    nnz = X.nnz if sparse else n * d
    make().fit(X[:30], y[:30] % 3)  # compile outside the measurement
    model = make()
    measured = _peak_traced_bytes(lambda: model.fit(X, y))
    estimate = model.estimate_memory(n, d, nnz, k)
    assert measured <= estimate <= 3 * measured, (measured, estimate)


@pytest.mark.parametrize("make", [OneVsAll, Softmax, lambda: Softmax(solver="lbfgs"),
                                  lambda: OneVsAll(solver="liblinear")])
def test_memory_estimate_refuses_the_extreme_problem(make):
    """K = 1e5 classes over D = 848,632 features: K x D weights alone are 679 GB."""
    n, d, k = 1_000_000, 848_632, 100_000
    assert make().estimate_memory(n, d, 16 * n, k) > 10 * 24 * 1024**3
