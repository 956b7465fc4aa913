"""--resume reuses only records of the same code; --retry re-runs the stored cells of a
status; `xcbench run --suite` runs a suite file end to end."""
import json

import pytest

from xcbench.run.options import RunOptions
from xcbench.run.resume import parse_retry
from xcbench.run.runner import execute_plan
from xcbench.store import provenance
from xcbench.store.results import ResultStore

FAST = dict(latency_calls=20, latency_warmup=2, throughput_repeats=1, timeout=120,
            isolate=False)


def _code(commit, dirty=False):
    return {"xcbench": "0.1.0", "commit": commit, "dirty": dirty,
            "changes": "abc" if dirty else None, "plugins": {"xcbench": "0.1.0"}}


@pytest.fixture
def at_commit(monkeypatch):
    """Pretend the checkout is at the given commit (and dirty state)."""
    def set_commit(commit, dirty=False):
        monkeypatch.setattr(provenance, "code_state", lambda fresh=False: _code(commit, dirty))
    return set_commit


def _run(out, memory_limit=None, **kwargs):
    return execute_plan(["softmax", "ova"], ["synthetic-small"], [0], out=out,
                        options=RunOptions(**FAST, memory_limit=memory_limit), progress=False,
                        **kwargs)


def test_records_keep_their_code_and_same_code_resumes(tmp_path, at_commit):
    at_commit("a" * 40)
    first = _run(tmp_path)
    assert [r["code"]["commit"] for r in first.records] == ["a" * 40] * 2
    again = _run(tmp_path, resume=True)
    assert again.records == [] and len(again.reused) == 2
    assert again.resume_note == "--resume: reused 2 stored record(s) made by this code"


def test_a_changed_commit_makes_resume_rerun_and_say_why(tmp_path, at_commit):
    at_commit("a" * 40)
    first = _run(tmp_path)
    at_commit("b" * 40)
    again = _run(tmp_path, resume=True)
    assert len(again.records) == 2 and again.reused == []
    assert {r["key"] for r in again.records}.isdisjoint(r["key"] for r in first.records)
    assert "re-running 2 whose stored record was made by other code or data: 2 made at " \
           "commit aaaaaaa (now bbbbbbb)" in again.resume_note
    # the report's view: each measurement once, the newer code's record
    latest = ResultStore(tmp_path).latest()
    assert len(latest) == 2 and {r["code"]["commit"] for r in latest} == {"b" * 40}


def test_uncommitted_changes_are_other_code(tmp_path, at_commit):
    at_commit("a" * 40)
    _run(tmp_path)
    at_commit("a" * 40, dirty=True)
    again = _run(tmp_path, resume=True)
    assert len(again.records) == 2
    assert "other uncommitted changes" in again.resume_note


def test_records_from_before_code_keys_are_rerun_with_a_reason(tmp_path, at_commit):
    at_commit("a" * 40)
    _run(tmp_path)
    store = ResultStore(tmp_path)
    old = []
    for record in store.records():  # as written before records kept their code state
        record.pop("code")
        record["key"] = record["key"][::-1]
        record["environment"]["git_commit"] = "c" * 40
        old.append(record)
    store.path.write_text("".join(json.dumps(r) + "\n" for r in old))
    again = _run(tmp_path, resume=True)
    assert len(again.records) == 2
    assert "2 made at ccccccc before records kept their code state" in again.resume_note


def test_retry_refused_reruns_only_the_refused_cells(tmp_path, at_commit, monkeypatch):
    from xcbench.contract.plugins import get_method_spec

    at_commit("a" * 40)
    ova = type(get_method_spec("ova").make())
    monkeypatch.setattr(ova, "estimate_memory", lambda self, *a: 100 * 2 ** 30)
    first = _run(tmp_path, resume=True, memory_limit=2 ** 30)
    status = {r["method"]: r["status"] for r in first.records}
    assert status == {"softmax": "ok", "ova": "refused"}
    monkeypatch.undo()  # a larger limit, or a fixed estimate: ova fits now
    at_commit("a" * 40)
    plain = _run(tmp_path, resume=True, memory_limit=2 ** 30)  # without --retry the refusal stays
    assert plain.records == [] and {r["status"] for r in plain.reused} == {"ok", "refused"}
    retried = _run(tmp_path, resume=True, retry=parse_retry("refused"), memory_limit=2 ** 30)
    assert [(r["method"], r["status"]) for r in retried.records] == [("ova", "ok")]
    assert [r["method"] for r in retried.reused] == ["softmax"]
    assert "re-running 1 refused (--retry refused)" in retried.resume_note
    latest = {r["method"]: r["status"] for r in ResultStore(tmp_path).latest()}
    assert latest == {"softmax": "ok", "ova": "ok"}


def test_parse_retry():
    assert parse_retry("failed") == ("error", "timeout", "refused")
    assert parse_retry("refused,timeout") == ("refused", "timeout")
    with pytest.raises(ValueError, match="'ok' is not one of"):
        parse_retry("ok")


SUITE = """
name = "tiny"
expected_wall = "under a minute on 2 cores"
datasets = ["synthetic-small"]
seeds = [0]
options = { latency_calls = 20, timeout = 120 }

[report]
title = "Tiny suite"

[[runs]]
methods = ["softmax", "ova"]
[runs.params.softmax]
C = [0.1, 1]

[[runs]]
methods = ["hsm"]
options = { latency_calls = 10 }
[runs.query.hsm]
decoder = ["greedy", "exact"]
"""


def test_cli_runs_a_suite_and_only_a_part_of_it(tmp_path, capsys):
    from xcbench.cli import main

    path = tmp_path / "suite.toml"
    path.write_text('out = "res"\n' + SUITE)
    assert main(["run", "--suite", str(path), "--only", "softmax", "--quiet"]) == 0
    store = ResultStore(tmp_path / "res")
    assert sorted(r["params"]["C"] for r in store.records()) == [0.1, 1]
    assert main(["run", "--suite", str(path), "--resume", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "reused 2 stored record(s) made by this code" in printed
    records = store.records()
    assert len(records) == 5  # softmax x2, ova, hsm greedy + exact
    hsm = [r for r in records if r["method"] == "hsm"]
    assert {r["run_options"]["latency_calls"] for r in hsm} == {10}
    assert (tmp_path / "res" / "report.md").read_text().startswith("# Tiny suite")


def test_cli_dry_run_prints_the_plan_and_runs_nothing(tmp_path, capsys):
    from xcbench.cli import main

    path = tmp_path / "suite.toml"
    path.write_text(SUITE)
    assert main(["run", "--suite", str(path), "--dry-run", "--out", str(tmp_path / "x")]) == 0
    out = capsys.readouterr().out
    assert "runs[1]: 3 cell(s), 3 measurement(s)" in out
    assert "suite tiny: 4 cell(s), 5 measurement(s); expected wall time: under a minute" in out
    assert not (tmp_path / "x").exists()


def test_stored_cell_time_counts_each_planned_cell_once_from_its_newest_record(tmp_path,
                                                                              capsys):
    from xcbench.cli import main
    from xcbench.run.suites import parse_suite, stored_cell_seconds

    import tomllib

    def record(method, params, wall, started="2026-01-01"):
        return {"method": method, "params": params, "dataset": "synthetic-small", "seed": 0,
                "status": "ok", "started_at": started, "wall_seconds": wall,
                "schema_version": 1, "key": f"{method}{params}{started}"}
    records = [record("softmax", {"C": 0.1}, 10.0), record("softmax", {"C": 0.1}, 30.0,
                                                          "2026-02-01"),
               record("ova", {}, 5.0), record("ova", {"C": 9}, 99.0),  # not planned
               record("hsm", {"decoder": "greedy"}, 7.0), record("hsm", {"decoder": "exact"},
                                                                 7.0)]
    suite = parse_suite(tomllib.loads(SUITE))
    assert stored_cell_seconds(suite, records) == ({"synthetic-small": 42.0}, 1)  # C=1: none

    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "results.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records))
    path = tmp_path / "suite.toml"
    path.write_text(SUITE)
    assert main(["run", "--suite", str(path), "--dry-run", "--out", str(tmp_path / "x")]) == 0
    assert "stored cell time: 42s: the planned cells' newest records' wall times" \
        in capsys.readouterr().out


def test_cli_refuses_plan_flags_with_a_suite(tmp_path, capsys):
    from xcbench.cli import main

    path = tmp_path / "suite.toml"
    path.write_text(SUITE)
    assert main(["run", "--suite", str(path), "--methods", "ova", "--out",
                 str(tmp_path / "x")]) == 2
    assert "--methods cannot be combined" in capsys.readouterr().err
    assert main(["run", "--suite", str(path), "--threads", "2", "--out",
                 str(tmp_path / "x")]) == 2
    assert "--threads cannot be combined" in capsys.readouterr().err
    params_file = tmp_path / "best.toml"
    params_file.write_text('[params.ova]\nC = [1.0]\n')
    assert main(["run", "--suite", str(path), "--params-file", str(params_file), "--out",
                 str(tmp_path / "x")]) == 2
    assert "--params-file cannot be combined" in capsys.readouterr().err
    assert main(["run", "--only", "ova", "--out", str(tmp_path / "x")]) == 2
    assert main(["run", "--retry", "refused", "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x" / "results.jsonl").exists()


def test_a_record_without_run_options_is_superseded_by_a_newer_one_of_its_cell():
    """Records made before they kept their run options match any options, as --resume
    matches them: the report shows only the newer record of the cell (label-trees' letter
    table kept both before)."""
    from xcbench.store.identity import newest_per_measurement

    def record(started, options, params=None, seed=0):
        return {"method": "m", "params": params or {"a": 1}, "dataset": "d", "seed": seed,
                "started_at": started, "run_options": options}
    stated = {"threads": 1, "fit_threads": None, "latency_calls": 1000, "topk": 5}
    old, other_seed = record("2026-01-01", None), record("2026-01-01", None, seed=1)
    new = record("2026-02-01", stated)
    assert newest_per_measurement([old, other_seed, new]) == [other_seed, new]
    later_old = record("2026-03-01", None)  # an unstated record newer than the stated one
    assert newest_per_measurement([new, later_old]) == [new, later_old]
    two_threads = record("2026-02-02", {**stated, "threads": 2})  # stated records: options
    assert newest_per_measurement([old, new, two_threads]) == [new, two_threads]  # count


def test_cli_retire_unplanned_moves_what_an_edited_suite_no_longer_plans(tmp_path, capsys):
    """After a grid value leaves the suite file, its records leave results.jsonl for
    retired.jsonl (raw outputs kept); the planned records stay; nothing runs."""
    from xcbench.cli import main

    path = tmp_path / "suite.toml"
    path.write_text(SUITE)
    out = tmp_path / "res"
    assert main(["run", "--suite", str(path), "--only", "softmax", "--quiet", "--no-report",
                 "--out", str(out)]) == 0
    store = ResultStore(out)
    before = {r["params"]["C"]: r for r in store.records()}
    path.write_text(SUITE.replace("C = [0.1, 1]", "C = [1]"))
    assert main(["run", "--suite", str(path), "--only", "softmax", "--retire-unplanned",
                 "--out", str(out)]) == 2
    assert "drop --only" in capsys.readouterr().err
    assert main(["run", "--suite", str(path), "--retire-unplanned", "--out", str(out)]) == 0
    assert "moved 1 record(s)" in capsys.readouterr().out
    assert [r["params"]["C"] for r in store.records()] == [1]
    retired = ResultStore(out / "retired.jsonl").records()
    assert [r["key"] for r in retired] == [before[0.1]["key"]]
    assert (out / before[0.1]["raw"]).exists()
    assert main(["run", "--suite", str(path), "--retire-unplanned", "--out", str(out)]) == 0
    assert "moved 0 record(s)" in capsys.readouterr().out


def test_store_retire_keeps_unreadable_lines_and_order(tmp_path):
    store = ResultStore(tmp_path)
    rows = [{"schema_version": 2, "key": k, "method": "m", "params": {}, "dataset": "d",
             "seed": 0, "status": "ok"} for k in "abc"]
    store.append_many(rows)
    with open(store.path, "a") as f:
        f.write("not json\n")
    assert store.retire(lambda r: r["key"] == "b") == 1
    assert store.path.read_text().splitlines()[-1] == "not json"
    with pytest.warns(UserWarning, match="corrupt"):
        assert [r["key"] for r in store.records()] == ["a", "c"]
    assert [r["key"] for r in ResultStore(tmp_path / "retired.jsonl").records()] == ["b"]


def test_reuse_from_copies_the_same_codes_records_with_their_raw_outputs(tmp_path, at_commit):
    at_commit("a" * 40)
    first = _run(tmp_path / "a")
    lent = _run(tmp_path / "b", resume=True, reuse_from=[tmp_path / "a"])
    assert lent.records == [] and len(lent.reused) == 2  # nothing measured again
    assert f"--reuse-from: copied 2 record(s) made by this code from {tmp_path / 'a'}" \
        in lent.resume_note
    ours = ResultStore(tmp_path / "b")
    assert sorted(r["key"] for r in ours.records()) == sorted(r["key"] for r in first.records)
    for record in ours.records():
        assert (tmp_path / "b" / record["raw"]).read_bytes() == \
            (tmp_path / "a" / record["raw"]).read_bytes()
    again = _run(tmp_path / "b", resume=True, reuse_from=[tmp_path / "a"])
    assert len(ours.records()) == 2 and "--reuse-from" not in again.resume_note


def test_reuse_from_never_lends_other_code_or_failed_records(tmp_path, at_commit, monkeypatch):
    from xcbench.contract.plugins import get_method_spec

    at_commit("a" * 40)
    ova = type(get_method_spec("ova").make())
    monkeypatch.setattr(ova, "estimate_memory", lambda self, *a: 100 * 2 ** 30)
    _run(tmp_path / "a", memory_limit=2 ** 30)  # softmax ok, ova refused
    monkeypatch.undo()
    at_commit("a" * 40)
    mixed = _run(tmp_path / "b", resume=True, reuse_from=[tmp_path / "a"],
                 memory_limit=2 ** 30)
    assert [(r["method"], r["status"]) for r in mixed.records] == [("ova", "ok")]
    assert "copied 1 record(s)" in mixed.resume_note
    at_commit("b" * 40)  # other code: nothing of folder a is this code's measurement
    other = _run(tmp_path / "c", resume=True, reuse_from=[tmp_path / "a"])
    assert len(other.records) == 2 and other.resume_note is None


def test_reuse_from_a_folder_without_results_says_so(tmp_path):
    with pytest.raises(ValueError, match="--reuse-from .*nowhere: no results file there"):
        _run(tmp_path / "b", resume=True, reuse_from=[tmp_path / "nowhere"])


def test_a_suites_reuse_from_is_relative_to_its_file_and_needs_resume(tmp_path, capsys):
    from xcbench.cli import main
    from xcbench.run.suites import load_suite

    path = tmp_path / "reports" / "mine" / "suite.toml"
    path.parent.mkdir(parents=True)
    path.write_text('reuse_from = ["../theirs"]\n' + SUITE)
    theirs = tmp_path / "reports" / "theirs"
    assert load_suite(path).reuse_from == (theirs,)
    assert main(["run", "--suite", str(path), "--reuse-from", str(tmp_path)]) == 2
    assert "use it with --resume" in capsys.readouterr().err
    assert main(["run", "--suite", str(path), "--dry-run"]) == 0
    assert f"reuse_from {theirs}: no results file there" in capsys.readouterr().out
    assert main(["run", "--suite", str(path), "--only", "ova", "--out", str(theirs),
                 "--quiet", "--no-report"]) == 0
    capsys.readouterr()
    assert main(["run", "--suite", str(path), "--dry-run"]) == 0
    assert "holds 1 of the 5 planned measurement(s)" in capsys.readouterr().out
