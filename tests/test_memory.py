import pytest

from xcbench.run.memory import default_memory_limit, format_gb, parse_size


def test_parse_size_units():
    assert parse_size("4G") == 4 * 2 ** 30
    assert parse_size("512M") == 512 * 2 ** 20
    assert parse_size("1.5GB") == int(1.5 * 2 ** 30)
    assert parse_size("2048") == 2048
    for bad in ["lots", "-1G", "0"]:
        with pytest.raises(ValueError, match="memory size"):
            parse_size(bad)


def test_default_limit_is_a_share_of_available_ram():
    limit = default_memory_limit()
    assert limit is None or limit > 0
    assert format_gb(12.3e9) == "12.3 GB"
    assert format_gb(5.0912e13) == "50,900 GB"  # no exponent in a refusal message


def test_a_memory_limit_too_small_to_start_a_run_is_refused_up_front(tmp_path, capsys):
    """A 1 MB cap stalled the child until the timeout; it is now a usage error (rc 2)."""
    from xcbench.cli import main

    out = tmp_path / "never"
    assert main(["run", "--methods", "ova", "--dataset", "synthetic-small", "--memory-limit",
                 "1M", "--out", str(out), "--quiet"]) == 2
    assert "--memory-limit" in capsys.readouterr().err
    assert not (out / "results.jsonl").exists()
