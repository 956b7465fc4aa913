"""Reading odd stores (issue 34, defects 5 and 9): a truncated raw file under
``report --recompute``, records with fields of the wrong type, and a store with no readable
record under ``export``."""
import json
import warnings

import pytest

from xcbench.cli import EXIT_USAGE, main

RUN = ["run", "--methods", "ova", "--dataset", "synthetic-small", "--seeds", "0,1",
       "--latency-calls", "5", "--quiet", "--no-report", "--in-process"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    out = tmp_path_factory.mktemp("odd") / "out"
    assert main([*RUN, "--out", str(out)]) == 0
    return out


def _copy(store, tmp_path):
    import shutil

    shutil.copytree(store, tmp_path / "out")
    return tmp_path / "out"


def test_recompute_with_a_truncated_raw_file_names_it_and_keeps_going(store, tmp_path, capsys):
    """Before: zipfile.BadZipFile, rc 1, no file named."""
    out = _copy(store, tmp_path)
    first = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    raw = out / first["raw"]
    raw.write_bytes(raw.read_bytes()[:100])
    with pytest.warns(UserWarning, match=rf"{raw.name}.*truncated or corrupt.*kept"):
        assert main(["report", "--out", str(out), "--recompute"]) == 0
    assert "recomputed the metrics of 1 record(s)" in capsys.readouterr().out


@pytest.mark.parametrize("field, value", [("seed", "x"), ("params", None), ("metrics", [1]),
                                          ("status", "great")])
def test_records_with_wrong_field_types_are_skipped_with_a_warning(store, tmp_path, capsys,
                                                                   field, value):
    """Before: seed "x" or params null crashed export, report and plot with tracebacks."""
    out = _copy(store, tmp_path)
    lines = (out / "results.jsonl").read_text().splitlines()
    bad = json.loads(lines[0])
    bad[field] = value
    (out / "results.jsonl").write_text("\n".join([json.dumps(bad), *lines[1:]]) + "\n")
    for command in (["export", "--out", str(out)], ["report", "--out", str(out)],
                    ["plot", "--out", str(out)]):
        with pytest.warns(UserWarning, match=rf"results.jsonl:1: skipping .*{field}"):
            assert main(command) == 0, command
    capsys.readouterr()
    main(["export", "--out", str(out), "--format", "json"])
    assert len(json.loads(capsys.readouterr().out)) == 1  # the good record only


def test_export_of_no_readable_record_exits_non_zero(tmp_path, capsys):
    """Before: exit 0 with empty output."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.jsonl").write_text('{"not": "a record"}\nnot json\n')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["export", "--out", str(out)]) == EXIT_USAGE
    captured = capsys.readouterr()
    assert "no readable record" in captured.err and captured.out == ""


@pytest.mark.parametrize("command, purpose", [(["report"], "report"), (["plot"], "plot")])
def test_report_and_plot_of_no_readable_record_say_so(tmp_path, capsys, command, purpose):
    """They said "no results ...; run `xcbench run` first" of a file full of lines."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.jsonl").write_text("not json\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main([*command, "--out", str(out)]) == EXIT_USAGE
    assert f"no readable record (empty, or every line was skipped: see the warnings above); " \
           f"nothing to {purpose}" in capsys.readouterr().err
