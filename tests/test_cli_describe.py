"""``xcbench describe`` and the parameter values shown in progress lines."""
from numbers import Integral, Real

import numpy as np
import pytest
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

import xcbench
from xcbench import DatasetSpec, Method, MethodSpec, Source
from xcbench.cli import EXIT_USAGE, main
from xcbench.contract.method_params import (constraint_text, effective_params, method_defaults,
                                   params_summary, value_text)
from xcbench.run.plan import parse_value
from xcbench.contract.plugins import get_method_spec, register_plugin
from xcbench.run.runner import one_line


def test_constraints_read_as_ranges_and_choices():
    assert constraint_text([Interval(Integral, 1, None, closed="left")]) == "int in [1, inf)"
    assert constraint_text([Interval(Real, 0, 1, closed="neither"), None]) == \
        "float in (0, 1) or None"
    assert constraint_text([Interval(Real, None, 2.5, closed="right")]) == \
        "float in (-inf, 2.5]"
    assert constraint_text([StrOptions({"b", "a"}), Hidden(StrOptions({"old"}))]) == \
        "one of {'a', 'b'}"
    assert constraint_text(["boolean"]) == "bool"
    assert constraint_text(None) == "any"


def test_describe_method_lists_parameters_defaults_and_constraints(capsys):
    assert main(["describe", "st"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("method st  (tree; plugin ")
    assert "Softmax tree trained by TAO" in out  # the class docstring's first paragraph
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")
             and len(line.split()) > 2}
    assert lines["k"].split()[1:] == ["50", "int", "in", "[1,", "inf)"]
    assert "one of {'01', 'ce-beta', 'ce-drop'}" in lines["loss"]
    assert "query-time parameters (changed on a fitted model, no refit): none" in out
    assert "xcbench run --methods st --param st:k=50,100" in out


def test_describe_method_marks_query_time_parameters(capsys):
    assert main(["describe", "method", "hsm"]) == 0
    out = capsys.readouterr().out
    measured = ", ".join(get_method_spec("hsm").query_params["decoder"])
    decoder = next(line for line in out.splitlines() if line.startswith("  decoder "))
    assert f"[query-time: measured at {measured} on one fit]" in decoder
    assert "no refit): decoder" in out
    assert f"--param hsm:decoder={measured.replace(', ', ',')}" in out


def test_describe_method_doc_prints_the_whole_docstring(capsys):
    assert main(["describe", "st", "--doc"]) == 0
    assert "Build parameters: ``k`` classes per leaf" in capsys.readouterr().out


def test_describe_generated_dataset_shows_its_shape(capsys):
    assert main(["describe", "synthetic-small"]) == 0
    out = capsys.readouterr().out
    assert "status: generated" in out
    assert "shape:  N_train=2,000  N_test=500  D=16  K=50  (dense)" in out


class Twin(Method):
    """A method named like a dataset.

    Second paragraph, not shown by default."""

    _parameter_constraints = {"width": [Interval(Integral, 2, None, closed="left")]}

    def __init__(self, width=3, mode="fast"):
        self.width = width
        self.mode = mode


class TwinPlugin:
    @xcbench.hookimpl
    def register_methods(self, register):
        register(MethodSpec(name="twin", family="flat", description="a twin method",
                            factory=Twin, default_params={"width": 4},
                            query_params={"mode": ["fast", "slow"]}))

    @xcbench.hookimpl
    def register_datasets(self, register):
        register(DatasetSpec(name="twin", task="multiclass", description="a twin dataset",
                             loader=lambda spec, d: None, sources=[Source(
                                 "twin/train.svm", url="https://example.org/train.svm",
                                 sha256="ab" * 32, role="train")]))


def test_a_name_that_is_both_describes_both_or_the_kind_asked(capsys, fresh_plugins,
                                                              tmp_path):
    register_plugin(TwinPlugin(), name="twin-plugin")
    assert main(["describe", "twin", "--data-dir", str(tmp_path)]) == 0
    both = capsys.readouterr().out
    assert "method twin  (flat; plugin twin-plugin)" in both and "dataset twin  (" in both
    assert main(["describe", "method", "twin"]) == 0
    method = capsys.readouterr().out
    assert "dataset twin" not in method and "Second paragraph" not in method
    width = next(line for line in method.splitlines() if line.startswith("  width "))
    assert width.split()[:2] == ["width", "4"]  # the spec's default over the signature's
    assert main(["describe", "dataset", "twin", "--data-dir", str(tmp_path)]) == 0
    dataset = capsys.readouterr().out
    assert "method twin" not in dataset
    assert "status: downloadable" in dataset and "shape:  not downloaded" in dataset
    assert "url:    https://example.org/train.svm" in dataset
    assert f"sha256: {'ab' * 32}" in dataset


def test_describe_unknown_name_suggests_close_ones(capsys):
    assert main(["describe", "sofmax"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "no method or dataset is called 'sofmax' (did you mean 'softmax'?)" in err
    assert main(["describe", "dataset", "alo"]) == EXIT_USAGE
    assert "unknown dataset 'alo' (did you mean 'aloi'" in capsys.readouterr().err


def test_effective_params_put_the_run_values_first_then_the_defaults():
    spec = get_method_spec("st")
    params = effective_params(spec, {"alpha": 0.1})
    assert list(params)[:3] == ["alpha", "k", "depth"]
    assert params["alpha"] == 0.1 and params["k"] == method_defaults(spec)["k"]


def test_params_summary_is_one_short_line():
    params = {f"p{i}": i for i in range(40)} | {"random_state": 3}
    text = params_summary(params, limit=40)
    assert len(text) <= 40 and text.endswith("more)") and "random_state" not in text
    shown = len(text.split(", "))
    assert text.endswith(f"(+{40 - shown} more)")
    assert params_summary({"C": 0.5, "solver": "auto"}) == "C=0.5, solver=auto"
    assert params_summary({"C": 1.0, "tol": 1e-05}) == "C=1, tol=1e-05"  # one spelling


def _record(method, params, status="ok"):
    return {"method": method, "params": params, "dataset": "synthetic-small", "seed": 1,
            "status": status, "error": None if status == "ok" else "Boom: bad\nmore",
            "metrics": {"top1_error": 0.25},
            "summary": {"fit_seconds": 1.5, "latency_p50_ms": 0.02}}


def test_progress_line_shows_effective_parameter_values():
    defaults = method_defaults(get_method_spec("st"))
    first = ", ".join(f"{k}={value_text(defaults[k])}" for k in ("k", "depth", "alpha"))
    line = one_line(_record("st", {}))
    assert line.startswith(f"st {first}, n_iter=")
    assert "{}" not in line and " on synthetic-small seed 1: top-1 error 25.0%" in line
    assert one_line(_record("st", {"alpha": 0.1, "k": 7})).startswith(
        f"st alpha=0.1, k=7, depth={defaults['depth']}, n_iter=")
    softmax = method_defaults(get_method_spec("softmax"))
    shown = ", ".join(f"{k}={value_text(softmax[k])}" for k in ("C", "max_iter", "tol", "solver",
                                                               "temperature", "max_seconds"))
    assert one_line(_record("softmax", {}, "error")) == (
        f"softmax {shown} on synthetic-small seed 1: ERROR Boom: bad")


def test_progress_line_of_an_unregistered_method_shows_its_own_params():
    assert one_line(_record("gone", {"x": 2})).startswith("gone x=2 on synthetic-small")
    assert one_line(_record("gone", {})).startswith("gone (no parameters) on")


def test_values_with_a_leading_zero_stay_strings():
    assert [parse_value(v) for v in ("01", "0", "0.5", "10")] == ["01", 0, 0.5, 10]
    assert np.isinf(parse_value("inf"))


def test_a_sweep_of_loss_01_reaches_st_as_the_string():
    from xcbench.run.plan import expand_plan, parse_param_overrides

    cells = expand_plan(["st"], ["synthetic-small"],
                        param_overrides=parse_param_overrides(["st:loss=01,ce-beta"]))
    assert sorted(c.params_dict["loss"] for c in cells) == ["01", "ce-beta"]


@pytest.mark.parametrize("argv", [["describe", "method", "st", "x"], ["describe", "thing", "st"]])
def test_describe_with_bad_words_says_the_usage(capsys, argv):
    assert main(argv) == EXIT_USAGE
    assert "expected NAME, `method NAME` or `dataset NAME`" in capsys.readouterr().err


def test_list_points_at_describe(capsys):
    assert main(["list", "methods"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == \
        "(parameters and defaults of one: xcbench describe NAME)"
