import pytest

from xcbench.run.plan import (Cell, canonical_params, canonical_value, expand_plan,
                          parse_param_overrides, parse_value)


def test_parse_value_types():
    assert [parse_value(v) for v in ["3", "0.5", "true", "None", "exact"]] == \
        [3, 0.5, True, None, "exact"]


def test_canonical_value_merges_equal_numbers_only():
    assert canonical_value(1.0) == 1 and isinstance(canonical_value(1.0), int)
    assert canonical_value(0.5) == 0.5
    assert canonical_value(True) is True and canonical_value("1") == "1"
    assert canonical_params({"k+d": (50.0, 8)}) == {"k+d": (50, 8)}


def test_param_grammar_errors_name_the_fix():
    with pytest.raises(ValueError, match="METHOD:NAME=V1"):
        parse_param_overrides(["softmax-C=1"])
    assert parse_param_overrides(["softmax:C=0.1,1"]) == {"softmax": {"C": [0.1, 1]}}


def test_duplicate_names_and_values_give_each_cell_once():
    cells = expand_plan(["ova", "ova"], ["synthetic-small", "synthetic-small"], seeds=[0, 0],
                        param_overrides={"ova": {"C": [1, 1.0]}})
    assert len(cells) == 1 and cells[0].params_dict["C"] == 1


def test_cell_run_params_combine_build_and_query_params():
    cell = Cell("hsm", (("epochs", 2),), "d", 0, ((("decoder", "exact"),), (("decoder", "topk"),)))
    assert cell.run_params() == [{"epochs": 2, "decoder": "exact"},
                                 {"epochs": 2, "decoder": "topk"}]
