"""`xcbench run` options checked before any work (issue 61 items 8, 9 and 10): a flag given
with --suite wins even when it spells the default, a second run into a folder with records
says what to do, seeds numpy cannot take, huge grids and a suite writing outside its folder."""
import json

import pytest

from xcbench.cli.main import main
from xcbench.cli.exit_codes import EXIT_USAGE

SUITE = """
name = "t"
datasets = ["synthetic-small"]
options = {{ timeout = 60 }}
{out}
[[runs]]
methods = ["softmax"]
{params}
"""


def _suite(tmp_path, out="", params=""):
    path = tmp_path / "suite.toml"
    path.write_text(SUITE.format(out=out, params=params))
    return path


class _Stop(Exception):
    pass


def _captured_suite_run(monkeypatch):
    """Replace execute_suite by one that records its arguments and stops the run."""
    import xcbench.run.suites.execute as execute

    seen = {}

    def fake(suite, out, **kwargs):
        seen.update(kwargs, out=out)
        raise _Stop

    monkeypatch.setattr(execute, "execute_suite", fake)
    return seen


@pytest.mark.parametrize("timeout", ["1800", "90"])
def test_an_explicit_timeout_wins_over_the_suites_even_when_it_is_the_default(
        tmp_path, monkeypatch, timeout):
    seen = _captured_suite_run(monkeypatch)
    with pytest.raises(_Stop):
        main(["run", "--suite", str(_suite(tmp_path)), "--timeout", timeout, "--quiet"])
    assert seen["option_overrides"]["timeout"] == float(timeout)



@pytest.mark.parametrize("timeout, seconds", [("30m", 1800.0), ("1h30m", 5400.0), ("90s", 90.0)])
def test_run_timeout_takes_a_duration(tmp_path, monkeypatch, timeout, seconds):
    seen = _captured_suite_run(monkeypatch)
    with pytest.raises(_Stop):
        main(["run", "--suite", str(_suite(tmp_path)), "--timeout", timeout, "--quiet"])
    assert seen["option_overrides"]["timeout"] == seconds


def test_run_timeout_that_is_no_duration_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["run", "--methods", "ova", "--timeout", "10x"])
    assert stop.value.code == EXIT_USAGE
    assert "'10x' is not a duration" in capsys.readouterr().err

def test_without_timeout_the_suites_value_stands(tmp_path, monkeypatch):
    seen = _captured_suite_run(monkeypatch)
    with pytest.raises(_Stop):
        main(["run", "--suite", str(_suite(tmp_path)), "--quiet"])
    assert "timeout" not in seen["option_overrides"]


@pytest.mark.parametrize("flag", [["--threads", "1"], ["--seeds", "0"],
                                  ["--latency-calls", "1000"], ["--methods", "ova,softmax"]])
def test_a_suite_flag_given_with_its_default_value_is_refused_too(tmp_path, flag, capsys):
    assert main(["run", "--suite", str(_suite(tmp_path)), *flag]) == EXIT_USAGE
    assert f"{flag[0]} cannot be combined" in capsys.readouterr().err


def test_an_explicit_out_wins_over_the_suites_even_when_it_is_the_default(
        tmp_path, monkeypatch):
    seen = _captured_suite_run(monkeypatch)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(_Stop):
        main(["run", "--suite", str(_suite(tmp_path, out='out = "elsewhere"')),
              "--out", "xcbench-results", "--quiet"])
    assert str(seen["out"]) == "xcbench-results"


@pytest.mark.parametrize("out", ['out = "../../up"', 'out = "/tmp/abs-xcbench"'])
def test_a_suite_writing_outside_its_folder_is_announced(tmp_path, monkeypatch, capsys, out):
    seen = _captured_suite_run(monkeypatch)
    (tmp_path / "a" / "b").mkdir(parents=True)
    with pytest.raises(_Stop):
        main(["run", "--suite", str(_suite(tmp_path / "a" / "b", out=out)), "--quiet"])
    err = capsys.readouterr().err
    assert "warning: suite" in err and "outside its folder" in err and str(seen["out"]) in err


def test_a_suite_writing_inside_its_folder_is_not_announced(tmp_path, monkeypatch, capsys):
    _captured_suite_run(monkeypatch)
    with pytest.raises(_Stop):
        main(["run", "--suite", str(_suite(tmp_path, out='out = "results"')), "--quiet"])
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize("seeds", ["4294967296", "0,99999999999"])
def test_a_seed_above_2_to_the_32_is_refused_with_the_reason(seeds, capsys, tmp_path):
    assert main(["run", "--seeds", seeds, "--out", str(tmp_path)]) == EXIT_USAGE
    assert "above 2**32 - 1" in capsys.readouterr().err
    assert not (tmp_path / "results.jsonl").exists()


def test_the_largest_seed_is_accepted():
    from xcbench.cli.run import _parse_seeds

    assert _parse_seeds("0,4294967295") == [0, 4294967295]


def test_a_suite_seed_above_2_to_the_32_is_refused(tmp_path):
    from xcbench.run.suites import SuiteError, load_suite

    path = tmp_path / "s.toml"
    path.write_text(SUITE.format(out="", params="").replace('name = "t"',
                                                              'name = "t"\nseeds = [4294967296]'))
    with pytest.raises(SuiteError, match="above 2"):
        load_suite(path)


def test_a_huge_suite_grid_is_refused_for_dry_run_before_it_is_listed(tmp_path, capsys):
    import resource

    values = ", ".join(str(v / 1000) for v in range(1, 201))
    grid = ("[runs.params.softmax]\n"
            + "\n".join(f"{name} = [{values}]" for name in ("C", "tol", "max_iter", "temperature")))
    path = _suite(tmp_path, params=grid)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert main(["run", "--suite", str(path), "--dry-run"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "1,600,000,000 cells" in err and "more than the 100,000" in err
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 200


def test_a_second_run_into_a_folder_with_records_is_refused_and_says_what_to_do(
        tmp_path, capsys):
    (tmp_path / "results.jsonl").write_text(json.dumps({"key": "x"}) + "\n")
    assert main(["run", "--methods", "softmax", "--dataset", "synthetic-small",
                 "--out", str(tmp_path), "--quiet"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--resume" in err and "--append" in err
    assert (tmp_path / "results.jsonl").read_text().count("\n") == 1  # nothing ran


def test_append_and_resume_exclude_each_other(tmp_path, capsys):
    assert main(["run", "--append", "--resume", "--out", str(tmp_path)]) == EXIT_USAGE
    assert "give one of them" in capsys.readouterr().err
