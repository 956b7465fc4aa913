import warnings

from xcbench.report.plot import dataset_families
from xcbench.report.summary import run_summary
from xcbench.store.results import ResultStore


def _record(dataset, k, **extra):
    return {"dataset": dataset, "dataset_stats": {"n_classes": k}, **extra}


def test_dataset_families_need_a_shared_prefix_and_different_k():
    records = [_record("synthetic-sparse-10k", 10000), _record("synthetic-sparse-1k", 1000),
               _record("synthetic", 100), _record("synthetic-small", 50),
               _record("ptb", 9999), _record("ptb-words", 9999), _record("x-a", 5),
               _record("x-b", 5)]
    assert dataset_families(records) == {
        "synthetic-sparse": ["synthetic-sparse-1k", "synthetic-sparse-10k"]}


def test_run_summary_lists_every_measurement_with_the_reason():
    ok = {"method": "ova", "params": {"C": 1}, "dataset": "d", "seed": 0, "status": "ok"}
    bad = {**ok, "method": "st", "status": "refused",
           "error": "would need ~9 GB (limit 4 GB); ...\nmore"}
    lines = run_summary([bad], [ok]).splitlines()
    assert lines[1].split() == ["st", "set", "C=1", "d", "0", "refused"]
    assert lines[2] == "  why: would need ~9 GB (limit 4 GB); ..."
    assert lines[3].split() == ["ova", "set", "C=1", "d", "0", "ok", "(stored)"]


def test_schema_version_1_records_are_still_read(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"schema_version": 1, "key": "k", "method": "m", "params": {}, '
                    '"dataset": "d", "seed": 0, "status": "ok"}\n')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [r["key"] for r in ResultStore(tmp_path).records()] == ["k"]


def test_run_summary_shows_errors_in_percent_like_the_tables():
    ok = {"method": "ova", "params": {"C": 1}, "dataset": "d", "seed": 0, "status": "ok",
          "metrics": {"top1_error": 0.2987}}
    assert run_summary([ok]).splitlines()[1].split() == ["ova", "set", "C=1", "d", "0", "ok",
                                                         "29.9%"]
