"""Claims on cells carry a lease (issue 61 items 6, 7 and 10): a claim whose lease expired
is stale whatever its host, concurrent `--resume --retry` runs measure each cell once, and a
full disk while writing a claim exits 3 and leaves no temporary."""
import errno
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fault_plugins import register
from xcbench.cli.exit_codes import EXIT_NOT_STORED
from xcbench.store import claims as claims_module
from xcbench.store.claims import CellClaims
from xcbench.store.results import ResultStore, StoreWriteError

TESTS = Path(__file__).resolve().parent


def _claims(tmp_path) -> CellClaims:
    return CellClaims(ResultStore(tmp_path))


def _foreign_claim(claims, key, **fields):
    claims.folder.mkdir(parents=True, exist_ok=True)
    path = claims.folder / key
    path.write_text(json.dumps({"host": "another-host", "pid": 1, **fields}))
    return path


def test_a_live_claim_of_another_host_is_respected(tmp_path):
    claims = _claims(tmp_path)
    _foreign_claim(claims, "k", lease_until=time.time() + 60)
    assert claims.claim("k", lambda _: False) == "taken"


def test_a_claim_whose_lease_expired_is_taken_over_whatever_its_host(tmp_path):
    claims = _claims(tmp_path)
    _foreign_claim(claims, "k", lease_until=time.time() - 1)
    assert claims.claim("k", lambda _: False) == "claimed"
    owner = json.loads((claims.folder / "k").read_text())
    assert owner["pid"] == os.getpid() and owner["lease_until"] > time.time()


def test_an_old_claim_without_a_lease_expires_with_its_file_age(tmp_path):
    claims = _claims(tmp_path)
    path = _foreign_claim(claims, "k")
    assert claims.claim("k", lambda _: False) == "taken"  # fresh file: still held
    old = time.time() - claims_module.LEASE_SECONDS - 5
    os.utime(path, (old, old))
    assert claims.claim("k", lambda _: False) == "claimed"


def test_the_measuring_run_renews_its_lease(tmp_path, monkeypatch):
    claims = _claims(tmp_path)
    claims.claim("k", lambda _: False)
    first = json.loads((claims.folder / "k").read_text())["lease_until"]
    time.sleep(0.01)
    claims.renew()  # within RENEW_SECONDS of nothing: renewal is due at once
    second = json.loads((claims.folder / "k").read_text())["lease_until"]
    assert second > first
    claims.renew()  # just renewed: no write
    assert json.loads((claims.folder / "k").read_text())["lease_until"] == second
    # a claim another run took over (after this one's lease ran out) stays theirs
    _foreign_claim(claims, "k", lease_until=time.time() + 60)
    claims.renew(force=True)
    assert json.loads((claims.folder / "k").read_text())["host"] == "another-host"


def test_runs_renew_claims_while_a_cell_runs(tmp_path, monkeypatch, fresh_plugins):
    """A cell longer than the lease keeps its claim: the runner renews it while it waits."""
    from xcbench.run.runner import RunOptions, run_plan

    register()
    monkeypatch.setattr(claims_module, "RENEW_SECONDS", 0.0)
    renewals = []
    real = CellClaims.renew
    monkeypatch.setattr(CellClaims, "renew", lambda self, force=False: (
        renewals.append(time.time()), real(self, force)))
    run_plan(["always-fails"], ["synthetic-small"], out=tmp_path, resume=True,
             param_overrides={"always-fails": {"seconds": [3.0]}}, progress=False,
             options=RunOptions(latency_calls=5, timeout=60))
    assert len(renewals) >= 2


def _full_disk_for_claims(monkeypatch):
    from xcbench.store import claims as claims_module

    real = claims_module.replace_atomically

    def replace_atomically(target, write, **kwargs):
        def part_then_full(f):
            f.write(b"{\"h")  # a part is written, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")

        return real(target, part_then_full, **kwargs)

    monkeypatch.setattr(claims_module, "replace_atomically", replace_atomically)


def test_a_full_disk_while_writing_a_claim_raises_a_store_error_and_leaves_no_tmp(
        tmp_path, monkeypatch):
    claims = _claims(tmp_path)
    _full_disk_for_claims(monkeypatch)
    with pytest.raises(StoreWriteError, match="disk is full"):
        claims.claim("k", lambda _: False)
    assert list(claims.folder.iterdir()) == []


def test_a_full_disk_while_writing_a_claim_exits_3(tmp_path, monkeypatch, capsys,
                                                   fresh_plugins):
    from xcbench.cli.main import main

    register()
    _full_disk_for_claims(monkeypatch)
    code = main(["run", "--methods", "frequent", "--dataset", "synthetic-small", "--resume",
                 "--out", str(tmp_path), "--quiet", "--no-report"])
    assert code == EXIT_NOT_STORED
    assert "disk is full" in capsys.readouterr().err
    assert not [p for p in tmp_path.rglob("*") if ".tmp" in p.name or p.name.endswith("tmp")]


RETRY_RUN = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    sys.path.insert(0, {tests!r})
    from fault_plugins import register
    from xcbench.run.runner import RunOptions, run_plan
    register()
    out, fits, go, ready = sys.argv[1:5]
    Path(ready).write_text("")
    while not Path(go).exists():
        time.sleep(0.01)
    run_plan(["always-fails"], ["synthetic-small"], seeds=range(6), out=out, resume=True,
             retry=("error",), progress=False,
             param_overrides={{"always-fails": {{"fits": [fits], "seconds": [0.5]}}}},
             options=RunOptions(latency_calls=5, timeout=60))
""")


def test_concurrent_resume_retry_runs_measure_each_retried_cell_once(tmp_path, fresh_plugins):
    from xcbench.run.runner import RunOptions, run_plan

    register()
    out, fits, go = tmp_path / "out", tmp_path / "fits", tmp_path / "go"
    first = run_plan(["always-fails"], ["synthetic-small"], seeds=range(6), out=out,
                     progress=False, options=RunOptions(latency_calls=5, timeout=60),
                     param_overrides={"always-fails": {"fits": [str(fits)], "seconds": [0.5]}})
    assert [r["status"] for r in first] == ["error"] * 6
    script = tmp_path / "retry_run.py"
    script.write_text(RETRY_RUN.format(tests=str(TESTS)))
    ready = [tmp_path / f"ready{i}" for i in range(3)]
    procs = [subprocess.Popen([sys.executable, str(script), str(out), str(fits), str(go),
                               str(r)], cwd=str(TESTS.parent)) for r in ready]
    deadline = time.time() + 120
    while not all(r.exists() for r in ready) and time.time() < deadline:
        time.sleep(0.05)
    go.write_text("")  # all three read the store together, as runs started at once do
    for proc in procs:
        assert proc.wait(timeout=240) == 0
    # each of the 6 error cells is retried once among the three runs (main: 11 fits)
    assert fits.read_text().count("\n") == 6 + 6
    assert len(ResultStore(out).records()) == 6 + 6
