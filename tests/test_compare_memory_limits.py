"""`xcbench compare` names run options that differ between the two sides; memory limits are
printed as sizes (``14.1 GB``), not raw bytes (``14133248819``)."""
from xcbench.store.compare_stats import side_differences


def record(**options) -> dict:
    return {"dataset": "letter", "dataset_checksum": "c", "run_options": options}


def test_memory_limits_that_differ_are_printed_as_sizes():
    serious, other = side_differences([(record(memory_limit=14133248819, timeout=1800),
                                         record(memory_limit=4 * 2 ** 30, timeout=600))])
    assert serious == []
    assert "run option memory_limit: A 14.1 GB, B 4.29 GB (1 cell(s))" in other
    assert "run option timeout: A 1800, B 600 (1 cell(s))" in other


def test_an_unset_memory_limit_says_so():
    _, other = side_differences([(record(memory_limit=None), record(memory_limit=2e9))])
    assert other == ["run option memory_limit: A unset, B 2 GB (1 cell(s))"]
