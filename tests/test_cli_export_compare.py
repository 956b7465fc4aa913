"""``xcbench export`` and ``xcbench compare``, on stores written record by record and on
the records of a real run."""
import csv
import io
import json
import math

import pytest

from xcbench.cli import EXIT_USAGE, main
from xcbench.store.compare import geometric_mean, match_cells, ratio
from xcbench.store.results import SCHEMA_VERSION, ResultStore


def record(method, params, dataset="letter", seed=0, *, error=0.2, p50=0.1, fit=2.0,
           status="ok", version="0.1.0", key=None, started="2026-01-01T00:00:00+00:00",
           query=None):
    """A minimal stored record; the key depends on the version, as real keys do."""
    key = key or f"{method}-{json.dumps(params, sort_keys=True)}-{dataset}-{seed}-{version}"
    return {"schema_version": SCHEMA_VERSION, "key": key, "method": method,
            "params": params, "query_params": query or {}, "dataset": dataset,
            "seed": seed, "status": status, "started_at": started,
            "error": None if status == "ok" else "RuntimeError: boom\ntraceback",
            "metrics": {"top1_error": error, "P@1": 1 - error} if status == "ok" else None,
            "summary": {"latency_p50_ms": p50, "fit_seconds": fit, "compile_seconds": 0.0,
                        "fit_wall_seconds": fit} if status == "ok" else None,
            "stats": {"n_params": 10}, "timings": {"latency_seconds": [0.1, 0.2]},
            "environment": {"xcbench": version, "cpu": "Test CPU", "cpu_count": 2,
                            "git_commit": "abcdef123456"}}


def store(path, records):
    ResultStore(path).append_many(records)
    return path


@pytest.fixture
def two_stores(tmp_path):
    a = store(tmp_path / "a", [
        record("st", {"alpha": 0.1}, error=0.40, p50=0.10, fit=10.0),
        record("st", {"alpha": 1}, error=0.50, p50=0.20, fit=8.0),
        record("ova", {}, error=0.30, p50=1.0, fit=4.0),
        record("hsm", {}, dataset="aloi", error=0.9),
    ])
    b = store(tmp_path / "b", [
        record("st", {"alpha": 0.1}, error=0.20, p50=0.40, fit=5.0, version="0.2.0"),
        record("st", {"alpha": 1.0}, error=0.50, p50=0.05, fit=8.0, version="0.2.0"),
        record("ova", {}, status="error", version="0.2.0"),
        record("ova", {"C": 2}, version="0.2.0"),
    ])
    return a, b


def test_ratio_and_geometric_mean():
    assert ratio(0.4, 0.2) == 0.5 and ratio(0.0, 0.0) == 1.0
    assert ratio(0.0, 0.1) is None and ratio(None, 1.0) is None
    assert geometric_mean([0.5, 2.0, None]) == pytest.approx(1.0)
    assert geometric_mean([None]) is None


def test_cells_match_by_what_was_measured_not_by_key(two_stores):
    a, b = (ResultStore(p).latest() for p in two_stores)
    cells = match_cells(a, b)
    sides = {(c.method, json.dumps(c.params), c.dataset): c.side for c in cells}
    assert sides == {("hsm", "{}", "aloi"): "A", ("ova", "{}", "letter"): "both",
                     ('ova', '{"C": 2}', "letter"): "B",
                     ("st", '{"alpha": 0.1}', "letter"): "both",
                     ("st", '{"alpha": 1}', "letter"): "both"}  # alpha=1 matches alpha=1.0
    st = next(c for c in cells if c.params == {"alpha": 0.1})
    assert (st.error_ratio, st.p50_ratio, st.fit_ratio) == (0.5, 4.0, 0.5)


def test_compare_markdown_shows_per_cell_and_per_method_ratios(two_stores, capsys):
    assert main(["compare", str(two_stores[0]), str(two_stores[1])]) == 0
    out = capsys.readouterr().out
    assert "xcbench 0.1.0 at abcdef1, Test CPU, 2 CPUs" in out
    # top-1 errors in percent, as in the report tables
    assert "| top-1 error A (%) | top-1 error B (%) |" in out
    assert "| st | alpha=0.1 | letter | 0 | 40.0 | 20.0 | 0.5 | 4 | 0.5 |" in out
    assert "| st | alpha=1 | letter | 0 | 50.0 | 50.0 | 1 | 0.25 | 1 |" in out
    assert "| ova | defaults | letter | 0 | 30.0 | error | – | – | – |" in out
    # geometric means over st's two cells: error sqrt(0.5*1), p50 sqrt(4*0.25), fit sqrt(0.5)
    assert f"| st | 2 | {math.sqrt(0.5):.3g} | 1 | {math.sqrt(0.5):.3g} |" in out
    assert "## Only in A (1)\n\n- hsm defaults on aloi seed 0 (ok)" in out
    assert "## Only in B (1)\n\n- ova C=2 on letter seed 0 (ok)" in out


def test_compare_csv_has_one_row_per_cell(two_stores, capsys, tmp_path):
    target = tmp_path / "cmp.csv"
    assert main(["compare", str(two_stores[0]), str(two_stores[1]), "--format", "csv",
                 "--output", str(target)]) == 0
    rows = list(csv.DictReader(io.StringIO(target.read_text())))
    assert len(rows) == 5
    st = next(r for r in rows if r["params"] == '{"alpha": 0.1}')
    assert (st["side"], float(st["top1_error_ratio"]), float(st["latency_p50_ms_ratio"]),
            float(st["fit_seconds_ratio"])) == ("both", 0.5, 4.0, 0.5)
    ova = next(r for r in rows if r["method"] == "ova" and r["side"] == "both")
    assert (ova["status_b"], ova["top1_error_b"], ova["top1_error_ratio"]) == ("error", "", "")


def test_compare_keeps_the_newest_record_of_a_cell(tmp_path, capsys):
    a = store(tmp_path / "a", [record("ova", {}, error=0.3)])
    b = store(tmp_path / "b", [
        record("ova", {}, error=0.6, key="new", started="2026-02-01T00:00:00+00:00"),
        record("ova", {}, error=0.9, key="old", started="2026-01-01T00:00:00+00:00")])
    assert main(["compare", str(a), str(b)]) == 0
    assert "| ova | defaults | letter | 0 | 30.0 | 60.0 | 2 |" in capsys.readouterr().out


def test_compare_says_so_when_no_cell_matches(tmp_path, capsys):
    a = store(tmp_path / "a", [record("ova", {}, error=0.3)])
    b = store(tmp_path / "b", [record("ova", {"C": 2}, error=0.6),
                               record("st", {}, error=0.5)])
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "No cell was measured on both sides (A has 1 cells, B has 2)" in out
    assert "| method |" not in out  # no empty table
    assert "## Only in A (1)\n\n- ova defaults on letter seed 0 (ok)" in out


def test_export_csv_flattens_each_latest_record(two_stores, capsys):
    assert main(["export", "--out", str(two_stores[1])]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["method"], r["status"]) for r in rows] == \
        [("ova", "ok"), ("ova", "error"), ("st", "ok"), ("st", "ok")]
    ok, failed = rows[0], rows[1]
    assert ok["param.C"] == "2" and ok["params"] == '{"C": 2}'
    assert float(ok["metric.top1_error"]) == 0.2 and float(ok["summary.fit_seconds"]) == 2.0
    assert ok["env.xcbench"] == "0.2.0" and ok["env.cpu"] == "Test CPU"
    assert failed["error"] == "RuntimeError: boom" and failed["metric.top1_error"] == ""
    assert not any(name.startswith("timings") for name in rows[0])  # lists stay in the jsonl
    assert list(rows[0])[:3] == ["key", "method", "family"]


def test_export_json_is_the_same_rows(two_stores, tmp_path, capsys):
    target = tmp_path / "rows.json"
    assert main(["export", "--out", str(two_stores[0]), "--format", "json",
                 "-o", str(target)]) == 0
    assert "exported 4 row(s)" in capsys.readouterr().err
    rows = json.loads(target.read_text())
    assert [r["method"] for r in rows] == ["hsm", "ova", "st", "st"]
    assert rows[2]["param.alpha"] == 0.1 and rows[2]["summary.latency_p50_ms"] == 0.1


def test_export_and_compare_refuse_a_folder_without_results(tmp_path, capsys):
    assert main(["export", "--out", str(tmp_path)]) == EXIT_USAGE
    assert "no results.jsonl there" in capsys.readouterr().err
    assert main(["compare", str(tmp_path), str(tmp_path)]) == EXIT_USAGE
    assert "no results.jsonl there" in capsys.readouterr().err


def test_compare_a_real_run_with_a_newer_version_of_itself(tmp_path, capsys):
    out_a, out_b = tmp_path / "a", tmp_path / "b"
    assert main(["run", "--in-process", "--methods", "softmax", "--dataset",
                 "synthetic-small", "--seeds", "0,1", "--latency-calls", "20", "--quiet",
                 "--no-report", "--out", str(out_a)]) == 0
    capsys.readouterr()
    newer = []
    for r in ResultStore(out_a).records():  # the same cells, keyed by another version
        r = json.loads(json.dumps(r))
        r["key"] = r["key"][::-1]
        r["environment"]["xcbench"] = "9.9"
        r["summary"]["latency_p50_ms"] *= 3
        newer.append(r)
    store(out_b, newer)
    assert main(["compare", str(out_a), str(out_b), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["side"], r["seed"]) for r in rows] == [("both", "0"), ("both", "1")]
    for r in rows:
        assert float(r["top1_error_ratio"]) == 1.0 and float(r["fit_seconds_ratio"]) == 1.0
        assert float(r["latency_p50_ms_ratio"]) == pytest.approx(3.0)
    assert main(["export", "--out", str(out_a), "--format", "json"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert {r["dataset.n_train"] for r in exported} == {2000}
    assert all(0 <= r["metric.top1_error"] <= 1 for r in exported)


@pytest.mark.parametrize("argv", [["export", "--out", "{a}"], ["compare", "{a}", "{b}"],
                                  ["plot", "--out", "{a}", "--dataset", "letter"]])
def test_an_output_file_in_a_missing_folder_is_named(two_stores, capsys, tmp_path, argv):
    """It was a bare "[Errno 2] No such file or directory"."""
    a, b = two_stores
    missing = tmp_path / "no-such-folder" / "out.txt"
    args = [x.format(a=a, b=b) for x in argv] + ["--output", str(missing)]
    assert main(args) == EXIT_USAGE
    assert f"the folder {missing.parent} does not exist" in capsys.readouterr().err
