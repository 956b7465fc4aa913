"""Did-you-mean hints for misspelt command-line options, on every subcommand (the parser
built once in ``xcbench.cli.common.HintingParser``)."""
import pytest

from xcbench.cli.main import build_parser


def usage_error(argv, capsys) -> str:
    """The error line argparse prints for ``argv`` (exit code 2 checked)."""
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(argv)
    assert stop.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("argv, hint", [
    (["run", "--seed", "0"], "did you mean --seeds?"),
    (["report", "--titel", "x"], "did you mean --title?"),
    (["compare", "a", "b", "--formt", "csv"], "did you mean --format?"),
    (["check", "ova", "--skp", "x"], "did you mean --skip?"),
    (["list", "methods", "--data_dir", "x"], "did you mean --data-dir?"),
    (["tune", "ova", "--dataset", "d", "--objetcive", "top1_error"],
     "did you mean --objective?"),
])
def test_a_misspelt_option_gets_the_close_ones(argv, hint, capsys):
    line = usage_error(argv, capsys)
    assert line.startswith(f"xcbench {argv[0]}: error: unrecognized arguments:"), line
    assert line.endswith(f"({hint})"), line


def test_several_misspelt_options_each_get_their_own_hint(capsys):
    line = usage_error(["run", "--seed", "0", "--metods", "ova"], capsys)
    assert line.endswith("(--seed: did you mean --seeds?; --metods: did you mean --methods?)")


def test_an_option_close_to_nothing_gets_no_hint(capsys):
    line = usage_error(["run", "--zzzz"], capsys)
    assert line == "xcbench run: error: unrecognized arguments: --zzzz"
