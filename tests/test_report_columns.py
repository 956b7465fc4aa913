import pytest

from xcbench.report.columns import COLUMNS, DEFAULT_COLUMNS, select_columns


def test_default_columns_are_few_and_carry_units():
    names = [c.name for c in select_columns(None)]
    assert names == list(DEFAULT_COLUMNS) and len(names) <= 8
    headers = {c.name: c.header for c in COLUMNS}
    assert headers["p50"] == "p50 (ms)" and headers["fit_seconds"] == "fit (s)"
    assert headers["model_mb"] == "model (MB)" and headers["top1_error"].endswith("(%)")


def test_columns_by_name_and_all():
    assert [c.name for c in select_columns("p99, depth")] == ["p99", "depth"]
    assert select_columns("all") == COLUMNS


def test_unknown_column_lists_the_valid_names():
    with pytest.raises(ValueError, match=r"--columns: unknown name 'p51'.*valid names: top1_error"):
        select_columns("top1_error,p51")
    with pytest.raises(ValueError, match="no column named"):
        select_columns(" , ")


def test_raw_value_and_scale():
    col = {c.name: c for c in COLUMNS}["model_mb"]
    assert col.raw({"memory": {"model_pickle_bytes": 2_000_000}}) * col.scale == 2.0
    assert col.raw({}) is None
