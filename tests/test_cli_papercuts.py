"""Small CLI behaviours: --version, "did you mean" for misspelt names, option errors that
name the option, and --out checked before any data is loaded."""
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import xcbench
from xcbench.cli import EXIT_USAGE, main
from xcbench.run.plan import expand_plan
from xcbench.contract.plugins import get_method_spec
from xcbench.suggest import close_matches, did_you_mean

ROOT = Path(__file__).resolve().parents[1]


def test_version_prints_the_package_version():
    done = subprocess.run([sys.executable, "-m", "xcbench.cli", "--version"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0
    assert done.stdout.startswith(f"xcbench {xcbench.__version__} (Python ")


def test_package_version_matches_pyproject():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert xcbench.__version__ == meta["project"]["version"]


def test_did_you_mean_lists_close_names_only():
    assert close_matches("Softmx", ["softmax", "ova", "st"]) == ["softmax"]
    assert did_you_mean("aplha", ["alpha", "k"]) == " (did you mean 'alpha'?)"
    assert did_you_mean("zzzz", ["alpha", "k"]) == ""


def _error(capsys, argv) -> str:
    assert main(argv) == EXIT_USAGE
    return capsys.readouterr().err


def test_misspelt_method_suggests_the_registered_one(capsys, tmp_path):
    err = _error(capsys, ["run", "--methods", "sofmax", "--dataset", "synthetic-small",
                          "--out", str(tmp_path)])
    assert "unknown method 'sofmax' (did you mean 'softmax'?)" in err


def test_misspelt_dataset_suggests_the_registered_one(capsys, tmp_path):
    err = _error(capsys, ["run", "--methods", "ova", "--dataset", "synthetic-smal",
                          "--out", str(tmp_path)])
    assert "unknown dataset 'synthetic-smal' (did you mean 'synthetic-small'" in err


def test_misspelt_parameter_suggests_the_valid_one(capsys, tmp_path):
    err = _error(capsys, ["run", "--methods", "softmax", "--dataset", "synthetic-small",
                          "--param", "softmax:max_iters=5", "--out", str(tmp_path)])
    assert "'max_iters' (did you mean 'max_iter'?)" in err
    assert "valid parameters: C, max_iter" in err


def test_param_for_a_misspelt_method_suggests_the_planned_one():
    with pytest.raises(ValueError, match=r"'sofmax' \(did you mean 'softmax'\?\)"):
        expand_plan(["softmax"], ["synthetic-small"], param_overrides={"sofmax": {"C": [1]}})


def test_unknown_parameter_error_lists_every_bad_name():
    spec = get_method_spec("softmax")
    with pytest.raises(ValueError, match=r"'Cc' \(did you mean 'C'\?\), 'zzz'; valid"):
        expand_plan(["softmax"], ["synthetic-small"],
                    param_overrides={"softmax": {"Cc": [1], "zzz": [2]}})
    assert "C" in spec.valid_params()


def test_bad_seeds_name_the_option(capsys, tmp_path):
    err = _error(capsys, ["run", "--seeds", "a", "--out", str(tmp_path)])
    assert "--seeds 'a': expected integers" in err


def test_an_empty_method_or_dataset_list_is_a_usage_error(capsys, tmp_path):
    """``--methods ""`` printed "no runs" and exited 0."""
    err = _error(capsys, ["run", "--methods", "", "--out", str(tmp_path / "r")])
    assert "--methods '' names nothing" in err and "xcbench list methods" in err
    err = _error(capsys, ["run", "--dataset", " , ", "--out", str(tmp_path / "r")])
    assert "--dataset ' , ' names nothing" in err
    assert not (tmp_path / "r").exists()


def test_bad_out_is_refused_before_any_data_is_loaded(capsys, tmp_path, monkeypatch):
    from xcbench.data.dataset import DatasetSpec

    def refuse(*args, **kwargs):
        raise AssertionError("a dataset was loaded before --out was checked")

    monkeypatch.setattr(DatasetSpec, "load", refuse)
    a_file = tmp_path / "results"
    a_file.write_text("not a folder")
    err = _error(capsys, ["run", "--methods", "ova", "--dataset", "synthetic-small",
                          "--out", str(a_file), "--in-process"])
    assert f"--out {a_file} is a file, not a folder" in err
    err = _error(capsys, ["run", "--methods", "ova", "--dataset", "synthetic-small",
                          "--out", str(tmp_path / "r.jsonl"), "--in-process"])
    assert "looks like a results file" in err


def test_a_prefix_of_an_option_is_not_taken_for_it(capsys):
    """``--params ova:C=1`` was read as --params-file and failed to read a file."""
    with pytest.raises(SystemExit):
        main(["run", "--params", "ova:C=1"])
    assert "unrecognized arguments: --params" in capsys.readouterr().err


def test_a_repeated_list_option_adds_to_the_list():
    """``--methods ova --methods softmax`` ran softmax alone (argparse keeps the last)."""
    from xcbench.cli.main import build_parser

    parser = build_parser()
    args = parser.parse_args(["run", "--methods", "ova", "--methods", "softmax,st",
                              "--seeds", "1", "--seeds", "2", "--dataset", "letter"])
    assert (args.methods, args.seeds, args.dataset) == ("ova,softmax,st", "1,2", "letter")
    args = parser.parse_args(["run"])  # no option: the defaults, untouched
    assert args.methods is None and args.seeds is None  # not given: `run` fills defaults
    args = parser.parse_args(["tune", "--methods", "st", "--methods", "ova",
                              "--dataset", "letter"])
    assert args.methods_option == "st,ova"
