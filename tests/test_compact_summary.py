"""Compact tables: the end-of-run summary fits 120 columns, values set first, then a short
form of the resolved ones; the report's params column says which are set and which resolved."""
import pytest

from xcbench.contract.method_params import effective_params
from xcbench.contract.plugins import get_method_spec
from xcbench.report.params import VARIES, clip, common_values, params_column, short_value
from xcbench.report.summary import WIDTH, run_summary
from xcbench.report.table import failed_table

#: what recall_tree's fit chose for its "auto" parameters in a shipped report
RESOLVED = {"bits": {"path": "direct", "routers": "direct", "scorers": "direct"},
            "lr": 0.5, "max_candidates": 20, "max_depth": 5, "node_only": False,
            "passes": 16, "router_lr": 2.0, "temperature": 0.9610270767116994}


def _recall_tree_record(params, status="ok", **extra):
    resolved = {k: v for k, v in RESOLVED.items() if k not in params}
    effective = {**effective_params(get_method_spec("recall_tree"), params), **resolved}
    return {"method": "recall_tree", "params": params, "effective_params": effective,
            "resolved_params": resolved, "dataset": "synthetic-sparse-10k", "seed": 0,
            "status": status, "metrics": {"top1_error": 0.2331}, **extra}


def test_recall_tree_has_13_parameters_a_dict_among_them():
    record = _recall_tree_record({})
    shown = {k for k in record["effective_params"] if k != "random_state"}
    assert len(shown) >= 13 and isinstance(record["effective_params"]["bits"], dict)


def test_no_line_of_the_summary_is_wider_than_120_columns():
    records = [_recall_tree_record({}),
               _recall_tree_record({"passes": 4, "lr": 0.123456789, "max_depth": 7}),
               _recall_tree_record({"candidate_store": "auto"}, status="error",
                                   error="ValueError: " + "a long reason " * 30)]
    text = run_summary(records)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= WIDTH, text
    first, second = lines[1], lines[2]
    # nothing set: the resolved values, the method's own choices first, 3 digits, dict short
    assert "resolved bits={path,routers,scorers:direct} (+13 more)" in first
    assert "0.9610270767116994" not in text
    # the values set come first, as given; the resolved ones are left out first
    assert "set lr=0.123456789, max_depth=7, passes=4 (+11 more)" in second
    assert lines[-1].startswith("(+N more)")
    assert lines[4].startswith("  why: ValueError: a long reason") and lines[4].endswith("…")


def test_a_wide_summary_still_fits_when_everything_is_shown():
    text = run_summary([_recall_tree_record({})], width=400)
    assert "resolved bits={path,routers,scorers:direct}, lr=0.5, max_candidates=20" in text
    assert "temperature=0.961" in text and "(+N more)" not in text


def test_short_values():
    assert short_value(0.9610270767116994) == "0.961"
    assert short_value(0.00022950580407627412) == "0.00023"
    assert short_value(2.0) == "2" and short_value(1e-06) == "1e-06"
    assert short_value({"path": 23, "routers": "direct"}) == "{path:23,routers:direct}"
    assert short_value({str(i): i for i in range(30)}) == "{30 keys}"
    assert short_value("x" * 40) == "x" * 19 + "…"
    assert short_value([0.123456, 2]) == "[0.123,2]"


def test_the_params_column_says_which_values_are_set_and_which_resolved():
    effective = {"beam": 1, "C": 1.0, "tol": 0.0001, "n_jobs": 1, "random_state": None}
    assert params_column({}, effective) == "resolved C=1, beam=1, tol=0.0001"
    assert params_column({"beam": "auto", "random_state": 3}, effective) == \
        "set beam=auto->1; resolved C=1, tol=0.0001"
    assert params_column({"C": 2.0}, None) == "set C=2"
    assert params_column({}, None) == "defaults"
    assert params_column({}, {"C": 1, "tol": 0.1}, resolved=["tol"]) == "resolved tol=0.1, C=1"
    record = {"method": "ova", "params": {"C": 0.5}, "effective_params": {"C": 0.5, "tol": 1},
              "seed": 0, "status": "error", "error": "boom"}
    assert "| ova | set C=0.5; resolved tol=1 | 0 | error | boom |" in failed_table([record])


@pytest.mark.parametrize("limit, shown", [
    (None, "set a=1, b=2; resolved c=3, d=4"),
    (26, "set a=1, b=2 (+2 more)"),
    (22, "set a=1, b=2 (+2 more)"),
    (21, "set a=1 (+3 more)"),
    (12, "set a=1 (+3…"),
])
def test_a_limit_leaves_out_resolved_values_first_then_set_ones(limit, shown):
    assert params_column({"a": 1, "b": 2}, {"a": 1, "b": 2, "c": 3, "d": 4}, limit=limit) \
        == shown
    assert clip("abcdef", 4) == "abc…" and clip("abc", 4) == "abc"


def test_a_value_resolved_differently_by_the_seeds_of_a_row_varies():
    runs = [{"C": 1, "temperature": 0.961}, {"C": 1, "temperature": 0.958}]
    assert common_values(runs) == {"C": 1, "temperature": VARIES}
    assert common_values([runs[0], None]) is None
    assert params_column({}, common_values(runs)) == "resolved C=1, temperature=varies"
