"""`xcbench compare` with confidence: paired tests on the stored raw outputs, and a refusal
when the two sides did not measure the same things."""
import csv
import io
import json

import pytest

from xcbench.cli import main
from xcbench.run.options import RunOptions
from xcbench.run.runner import execute_plan
from xcbench.store.results import ResultStore

FAST = dict(latency_calls=50, latency_warmup=5, throughput_repeats=1, timeout=600,
            isolate=False)


def _run(out, methods, dataset="synthetic-small", params=None, **options):
    return execute_plan(methods, [dataset], [0], out=out, param_overrides=params,
                        options=RunOptions(**{**FAST, **options}), progress=False)


def test_two_runs_of_the_same_code_and_seed_differ_in_nothing_significant(tmp_path, capsys):
    for side in ("a", "b"):
        n = len(_run(tmp_path / side, ["softmax", "ova", "hsm"]).records)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    text = capsys.readouterr().out
    section = text.split("## Is each difference larger than noise?")[1]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + n  # header, softmax, ova, hsm x its decoders
    assert all("not significant" in row for row in rows[1:])
    assert f"0 of {n} tested cell(s) differ significantly" in text
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["top1_error_verdict"] for r in table} == {"not significant"}
    assert all(float(r["mcnemar_p"]) == 1.0 for r in table)  # same predictions, row by row
    assert all(float(r["latency_p50_ratio_low"]) <= float(r["latency_p50_ratio_high"])
               for r in table)
    # the same probabilities row by row: the perplexity ratio is exactly 1
    assert {(r["perplexity_ratio"], r["perplexity_ratio_low"], r["perplexity_ratio_high"])
            for r in table} == {("1.0", "1.0", "1.0")}


@pytest.mark.slow
def test_a_real_improvement_of_st_on_letter_is_flagged(tmp_path, capsys, shared_data):
    """B stands for new code that improves st: its records are those of a better setting
    (k=8 instead of k=4 leaves, 21.7% vs 31.2% top-1 error in reports/softmax-tree-small),
    relabelled with A's parameters so that compare pairs them as one cell."""
    params_a = {"st": {"k": [4], "depth": [3], "alpha": [0.1]}}
    params_b = {"st": {"k": [8], "depth": [3], "alpha": [0.1]}}
    a = _run(tmp_path / "a", ["st"], "letter", params_a).records
    b = _run(tmp_path / "b", ["st"], "letter", params_b).records
    assert b[0]["metrics"]["top1_error"] < a[0]["metrics"]["top1_error"] - 0.02
    store = ResultStore(tmp_path / "b")
    relabelled = [dict(r, params=a[0]["params"]) for r in store.records()]
    store.path.write_text("".join(json.dumps(r) + "\n" for r in relabelled))
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    text = capsys.readouterr().out
    row = [line for line in text.split("larger than noise?")[1].splitlines()
           if line.startswith("| st ")][0]
    assert "B better" in row
    assert "1 of 1 tested cell(s) differ significantly" in text


def test_compare_refuses_other_run_options_and_names_them(tmp_path, capsys):
    _run(tmp_path / "a", ["softmax"])
    _run(tmp_path / "b", ["softmax"], latency_calls=60)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "not comparable" in err and "run option latency_calls: A 50, B 60 (1 cell(s))" in err
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--force"]) == 0
    captured = capsys.readouterr()
    assert "**WARNING: A and B did not measure the same things" in captured.out
    assert "latency_calls: A 50, B 60" in captured.err


def test_compare_refuses_another_dataset_checksum(tmp_path, capsys):
    _run(tmp_path / "a", ["softmax"])
    _run(tmp_path / "b", ["softmax"])
    store = ResultStore(tmp_path / "b")
    records = [dict(r, dataset_checksum="0" * 16) for r in store.records()]
    store.path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    assert "dataset synthetic-small checksum" in capsys.readouterr().err
