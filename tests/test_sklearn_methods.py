"""``sklearn:`` methods: any scikit-learn classifier measured as an xcbench method."""
import pickle

import numpy as np
import pytest
from sklearn.base import clone

from xcbench.testing import check_method, gaussian_problem
from xcbench_sklearn import NotAClassifier, sklearn_spec

THREE = ["sklearn:sklearn.linear_model.LogisticRegression",
         "sklearn:sklearn.linear_model.SGDClassifier",
         "sklearn:sklearn.neighbors.KNeighborsClassifier"]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("name", THREE)
def test_three_estimators_pass_the_method_contract(name):
    report = check_method(sklearn_spec(name))
    assert "passed" in str(report)


def test_parameters_are_the_estimators_own_with_its_defaults():
    spec = sklearn_spec("sklearn:sklearn.linear_model.SGDClassifier")
    assert {"alpha", "loss", "max_iter", "random_state"} <= set(spec.valid_params())
    method = spec.make(alpha=1e-3, random_state=2)
    assert method.get_params()["alpha"] == 1e-3 and method.get_params()["loss"] == "hinge"
    assert clone(method).get_params() == method.get_params()
    with pytest.raises(ValueError, match="alpha"):
        spec.validate_params({"alpah": 1})
    with pytest.raises(ValueError, match="alpha"):
        spec.make(alpha=-1.0)._validate_params()  # scikit-learn's own constraints


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_topk_from_scores_and_log_proba_from_probabilities():
    X, y, Xt, yt = gaussian_problem()
    lr = sklearn_spec(THREE[0]).make(random_state=0).fit(X, y, n_classes=12)
    labels, scores = lr.predict_topk(Xt, 3)
    est = lr.estimator_
    assert np.array_equal(labels[:, 0], est.predict(Xt))
    assert np.allclose(scores[:, 0], est.decision_function(Xt).max(axis=1))
    assert np.allclose(lr.log_proba(Xt, yt),
                       np.log(est.predict_proba(Xt)[np.arange(len(yt)), yt]))
    hinge = sklearn_spec(THREE[1]).make(random_state=0).fit(X, y)
    with pytest.raises(NotImplementedError, match="predict_proba"):
        hinge.log_proba(Xt, yt)  # no probability model: no perplexity, not an invented one
    log_loss = sklearn_spec(THREE[1]).make(loss="log_loss", random_state=0).fit(X, y)
    assert np.isfinite(log_loss.log_proba(Xt, yt)).all()


def test_classes_absent_from_training_get_probability_zero():
    X, y, Xt, yt = gaussian_problem()
    knn = sklearn_spec(THREE[2]).make(n_neighbors=3).fit(X[y != 5], y[y != 5], n_classes=12)
    assert not (knn.predict_topk(Xt, 12)[0] == 5).any()
    assert np.isneginf(knn.log_proba(Xt[:4], np.full(4, 5))).all()
    assert (knn.support_size(Xt) <= 3).all()  # 3 neighbours vote for at most 3 classes
    again = pickle.loads(pickle.dumps(knn))
    assert np.array_equal(again.predict_topk(Xt, 2)[0], knn.predict_topk(Xt, 2)[0])


@pytest.mark.parametrize("name, message", [
    ("sklearn:sklearn.linear_model.Ridge", "is a regressor, not a classifier"),
    ("sklearn:sklearn.cluster.KMeans", "is a clusterer, not a classifier"),
    ("sklearn:sklearn.decomposition.PCA", "is a transformer, not a classifier"),
    ("sklearn:Ridge", "is a regressor, not a classifier"),
    ("sklearn:numpy.array", "not an estimator class"),
    ("sklearn:no_such_package.Model", "'no_such_package' is not a package of an installed"),
    ("sklearn:sklearn.no_such_module.Model", "cannot import module 'sklearn.no_such_module'"),
    ("sklearn:NoSuchThing", "give the class's import path"),
])
def test_what_is_not_a_classifier_is_refused_clearly(name, message):
    with pytest.raises(NotAClassifier, match=message):
        sklearn_spec(name)


@pytest.mark.parametrize("name, hint", [
    ("sklearn:SGDClasifier", "did you mean sklearn:SGDClassifier?"),
    ("sklearn:sklearn.linear_model.SGDClasifier",
     "did you mean sklearn:sklearn.linear_model.SGDClassifier?"),
])
def test_a_misspelt_classifier_gets_did_you_mean(name, hint):
    with pytest.raises(NotAClassifier) as refused:
        sklearn_spec(name)
    assert str(refused.value).endswith(hint), str(refused.value)


def test_a_scikit_learn_class_may_be_named_alone():
    assert sklearn_spec("sklearn:SGDClassifier").factory.estimator_path == \
        "sklearn.linear_model.SGDClassifier"


FAST = ["--dataset", "synthetic-small", "--latency-calls", "20", "--no-report", "--quiet"]


def test_the_cli_runs_sklearn_methods_with_params(tmp_path, capsys):
    from xcbench.cli import main
    from xcbench.store.results import ResultStore

    knn = "sklearn:sklearn.neighbors.KNeighborsClassifier"
    sgd = "sklearn:sklearn.linear_model.SGDClassifier"
    assert main(["run", "--methods", f"{knn},{sgd}", "--param", f"{knn}:n_neighbors=3,7",
                 "--param", f"{sgd}:max_iter=20", "--out", str(tmp_path)] + FAST) == 0
    records = ResultStore(tmp_path).records()
    by = {(r["method"], r["params"].get("n_neighbors")): r for r in records}
    assert set(by) == {(knn, 3), (knn, 7), (sgd, None)}
    assert all(r["status"] == "ok" and r["plugin"] == "sklearn" for r in records)
    assert by[(knn, 3)]["metrics"]["coverage"] < 1  # 3 neighbours: many classes get p = 0
    assert "perplexity" not in by[(sgd, None)]["metrics"] or \
        by[(sgd, None)]["metrics"]["perplexity"] is None  # hinge loss: no probabilities
    assert by[(sgd, None)]["effective_params"]["loss"] == "hinge"


def test_the_python_api_runs_and_makes_sklearn_methods(tmp_path):
    import xcbench
    from xcbench.run.options import RunOptions

    name = "sklearn:sklearn.linear_model.LogisticRegression"
    model = xcbench.make_method(name, C=0.5)
    assert model.get_params()["C"] == 0.5
    records = xcbench.run_plan([name], ["synthetic-small"], out=tmp_path, progress=False,
                               options=RunOptions(latency_calls=20, throughput_repeats=1),
                               param_overrides={name: {"C": [0.1, 10]}})
    assert [r["status"] for r in records] == ["ok", "ok"]
    assert all(r["metrics"]["perplexity"] > 1 for r in records)


def test_the_cli_refuses_a_regressor_before_running_anything(tmp_path, capsys):
    from xcbench.cli import EXIT_USAGE, main

    assert main(["run", "--methods", "sklearn:sklearn.linear_model.Ridge", "--out",
                 str(tmp_path)] + FAST) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "sklearn:sklearn.linear_model.Ridge is a regressor, not a classifier" in err
    assert not (tmp_path / "results.jsonl").exists()


def test_describe_shows_the_estimators_parameters(capsys):
    from xcbench.cli import main

    assert main(["describe", "sklearn:sklearn.linear_model.SGDClassifier"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("method sklearn:sklearn.linear_model.SGDClassifier  (flat; plugin "
                          "sklearn)")
    assert "  alpha " in out and "float in [0, inf)" in out


def test_plugins_and_list_name_the_sklearn_family(capsys):
    """``sklearn:PATH`` names are answered on demand, not registered: the listings must
    still say that the family exists (they said "registers nothing")."""
    from xcbench.cli import main

    assert main(["plugins"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("sklearn "))
    assert "sklearn:PATH" in line and "registers nothing" not in line
    assert main(["list", "methods"]) == 0
    assert any(x.startswith("sklearn:PATH") for x in capsys.readouterr().out.splitlines())


LOCAL_MODULE = """
import pathlib
pathlib.Path(__file__).with_name("imported").write_text("ran")
from sklearn.linear_model import LogisticRegression as Local
"""


@pytest.mark.parametrize("argv", [[], ["--dry-run"]])
def test_a_module_beside_the_suite_or_in_the_working_folder_is_never_imported(
        tmp_path, monkeypatch, capsys, argv):
    """Issue 61 item 11: before, sklearn:localclf.Local imported (ran) a module sitting in
    the working folder on sys.path, even under --dry-run."""
    from xcbench.cli import EXIT_USAGE, main

    name = f"localclf_{len(argv)}"  # sklearn_spec caches by name: one module per case
    (tmp_path / f"{name}.py").write_text(LOCAL_MODULE)
    (tmp_path / "suite.toml").write_text(
        f'name = "local"\ndatasets = ["synthetic-small"]\n\n[[runs]]\n'
        f'methods = ["sklearn:{name}.Local"]\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["run", "--suite", str(tmp_path / "suite.toml"), "--out",
                 str(tmp_path / "out"), "--quiet", *argv]) == EXIT_USAGE
    assert f"'{name}' is not a package of an installed distribution" in \
        capsys.readouterr().err
    assert not (tmp_path / "imported").exists(), "the module's code ran"
    assert name not in __import__("sys").modules
