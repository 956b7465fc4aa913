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


def test_default_limit_is_a_share_of_available_ram(monkeypatch):
    """The README's rule: 70% of the available RAM; no limit where it is unknown."""
    import xcbench.run.memory as memory

    for available in (10 * 2 ** 30, 3 * 10 ** 9 + 7):
        monkeypatch.setattr(memory, "available_memory", lambda: available)
        assert default_memory_limit() == int(0.7 * available)
    monkeypatch.setattr(memory, "available_memory", lambda: None)
    assert default_memory_limit() is None


def test_available_memory_is_memavailable_of_proc_meminfo():
    from pathlib import Path

    from xcbench.run.memory import available_memory

    meminfo = Path("/proc/meminfo")
    if not meminfo.exists():
        assert available_memory() is None
        return
    fields = dict(line.split(":", 1) for line in meminfo.read_text().splitlines())
    kb = int(fields["MemAvailable"].split()[0])
    assert abs(available_memory() - kb * 1024) <= 0.05 * kb * 1024  # it moves meanwhile


def test_format_gb():
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
