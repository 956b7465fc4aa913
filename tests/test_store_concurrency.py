"""The results store under concurrency and full disks (issue 34, defects 1 and 2).

- several ``xcbench run --resume`` processes into one ``--out``, some killed at random: every
  cell is stored exactly once, no temporary file is left, every line of results.jsonl parses;
- a write that fails part-way (short write, ENOSPC; simulated by patching the store's write
  call): no partial line, a clear message and exit code 3, and ``--resume`` re-runs the cell.
"""
import errno
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from report_records import record, write_store
from xcbench.cli import EXIT_NOT_STORED, main
from xcbench.store import results as store_results
from xcbench.store.claims import CellClaims
from xcbench.store.temporaries import HOST
from xcbench.store.results import ResultStore, StoreWriteError

GRID = ["--methods", "ova", "--param", "ova:C=0.1,1", "--dataset", "synthetic-small",
        "--seeds", "0,1,2,3", "--latency-calls", "5", "--no-report", "--quiet"]
N_CELLS = 8


def _lines(out: Path) -> list[dict]:
    """Every line of results.jsonl parsed (fails on any line that does not parse)."""
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def _leftovers(out: Path) -> list[str]:
    return [p.name for p in out.rglob("*") if ".tmp" in p.name or p.parent.name == "claims"]


def _cli(out, *extra):
    return [sys.executable, "-m", "xcbench.cli", "run", *GRID, "--resume", "--out", str(out),
            *extra]


@pytest.mark.slow
def test_concurrent_resume_runs_with_random_kills_store_each_cell_once(tmp_path):
    """Before: two runs renamed each other's raw/<key>.tmp.npz (a run aborted, a measured
    cell lost) and concurrent --resume runs stored 24 records for 8 keys."""
    out = tmp_path / "out"
    rng = random.Random(34)
    procs = [subprocess.Popen(_cli(out, *(["--in-process"] if i % 2 else [])),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              start_new_session=True)
             for i in range(4)]
    victims = rng.sample(procs, 2)
    time.sleep(rng.uniform(12, 25))  # start-up takes ~10 s on a busy machine
    for p in victims:  # kill -9 the run and its cell process, mid-run
        os.killpg(p.pid, signal.SIGKILL)
    for p in procs:
        p.wait(timeout=600)
        assert p in victims or p.returncode == 0, p.stderr.read().decode()[-2000:]
    final = subprocess.run(_cli(out), capture_output=True, text=True, timeout=600)
    assert final.returncode == 0, final.stderr[-2000:]
    records = _lines(out)
    keys = [r["key"] for r in records]
    said = f"final run's output:\n{final.stdout[-2000:]}\n{final.stderr[-2000:]}"
    # isolated runs measure again what --in-process runs stored (issue 61: they do not
    # reuse in-process records), so a key has one isolated record and at most one
    # in-process record: each mode measured each cell once
    isolated = [r["key"] for r in records if not r["run_options"]["in_process"]]
    in_process = [r["key"] for r in records if r["run_options"]["in_process"]]
    assert len(set(isolated)) == N_CELLS and len(isolated) == N_CELLS, (sorted(keys), said)
    assert len(set(in_process)) == len(in_process), (sorted(keys), said)
    assert all(r["status"] == "ok" for r in records), (
        [(r["key"], r["status"], str(r.get("error"))[:500]) for r in records], said)
    assert not _leftovers(out), said
    raw = sorted(p.name for p in (out / "raw").iterdir()
                 if not p.name.startswith("testlabels-"))
    assert raw == sorted(f"{k}{suffix}" for k in set(keys)
                         for suffix in (".compact.npz", ".topk.npz")), said


def _dead_pid() -> int:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return gone.pid


def test_a_dead_runs_claim_on_a_stored_cell_is_removed(tmp_path):
    """Before: a run killed after storing a cell and before dropping its claim left
    claims/<key> for good (every later run saw the cell stored and never took the claim)."""
    claims = CellClaims(ResultStore(tmp_path / "out"))
    claims.folder.mkdir(parents=True)
    (claims.folder / "k1").write_text(json.dumps({**claims.me, "pid": _dead_pid()}))
    (claims.folder / "k2").write_text(json.dumps({**claims.me, "host": "elsewhere"}))
    assert claims.claim("k1", lambda _: True) == "stored"
    assert claims.claim("k2", lambda _: True) == "stored"
    assert sorted(p.name for p in claims.folder.iterdir()) == ["k2"]  # other hosts: kept


def test_temporaries_of_dead_processes_are_removed_and_the_others_kept(tmp_path):
    """Before: a run killed while writing a raw file or a claim left its temporary for good."""
    store = ResultStore(tmp_path / "out")
    store.raw_dir.mkdir(parents=True)
    dead, alive = _dead_pid(), os.getpid()
    names = {"dead": f".k1.{HOST}.{dead}.x1.tmp.npz", "alive": f".k2.{HOST}.{alive}.x2.tmp.npz",
             "other host": f".k3.elsewhere.{dead}.x3.tmp.npz", "record": "k4.npz"}
    for name in names.values():
        (store.raw_dir / name).write_bytes(b"")
    assert store.remove_stale_temporaries() == [names["dead"]]
    assert sorted(p.name for p in store.raw_dir.iterdir()) == sorted(
        [names["alive"], names["other host"], names["record"]])


def test_a_retire_killed_before_its_rename_leaves_a_temporary_the_next_run_removes(
        tmp_path, monkeypatch):
    """Before: retire's temporary beside results.jsonl was not named after its process, and
    only raw/ was scanned, so a retire killed mid-way left it for good."""
    import tempfile

    store = ResultStore(tmp_path / "out")
    store.path.parent.mkdir(parents=True)
    write_store(store.path.parent, [record("softmax")])
    made = []
    real_mkstemp = tempfile.mkstemp
    monkeypatch.setattr(tempfile, "mkstemp", lambda **kw: made.append(kw) or real_mkstemp(**kw))
    assert store.retire(lambda record: True) == 1
    assert made and made[-1]["prefix"] == f".results.{HOST}.{os.getpid()}."
    dead = _dead_pid()
    left = store.path.parent / f".results.{HOST}.{dead}.abc.tmp"  # as a kill leaves it
    left.write_text("partial")
    assert store.remove_stale_temporaries() == [left.name]
    assert not left.exists() and store.path.exists()


def test_a_finished_run_removes_the_claims_a_killed_run_left(tmp_path):
    claims = CellClaims(ResultStore(tmp_path / "out"))
    claims.folder.mkdir(parents=True)
    dead = _dead_pid()
    (claims.folder / "k1").write_text(json.dumps({**claims.me, "pid": dead}))
    (claims.folder / f".k2.{HOST}.{dead}.tmp").write_text("{}")
    assert claims.claim("k3", lambda _: False) == "claimed"
    claims.release_all()
    assert not claims.folder.exists()


#: the smallest raw outputs a cell gives: top-k labels and test labels
RAW = {"labels": np.array([[0, 1], [1, 0]]), "y": np.array([1, 1])}


def test_unique_raw_temporary_names(tmp_path, monkeypatch):
    """Two writers of one key never share a temporary name (the rename that lost a cell)."""
    store = ResultStore(tmp_path)
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        seen.append(Path(src).name)
        real_replace(src, dst)

    monkeypatch.setattr(store_results.os, "replace", spy)
    for _ in range(2):
        store.save_raw("83ee", RAW)
    # the shared test labels once, the top-k and compact files twice
    assert len(seen) == 5 and len(set(seen)) == 5 and all(".tmp" in name for name in seen)
    assert sorted(p.name for p in (tmp_path / "raw").iterdir()
                  if not p.name.startswith("testlabels-")) == ["83ee.compact.npz",
                                                               "83ee.topk.npz"]


@pytest.mark.parametrize("fault", ["short", "enospc"])
def test_a_failed_write_leaves_no_partial_line_and_resume_reruns_the_cell(tmp_path, monkeypatch,
                                                                         capsys, fault):
    """Before: a short write left a partial line despite the all-or-none promise, and a full
    disk exited 2 ("usage error") with a bare [Errno 28], leaving a 0-byte .tmp.npz."""
    out = tmp_path / "out"
    args = ["run", *GRID[:4], "--dataset", "synthetic-small", "--seeds", "0,1",
            "--latency-calls", "5", "--no-report", "--quiet", "--in-process", "--out", str(out)]
    real_write = store_results._write
    calls = []

    def failing(fd, data):
        calls.append(len(data))
        if len(calls) == 2:  # the second cell's records
            if fault == "short":
                return real_write(fd, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(store_results, "_write", failing)
    assert main(args) == EXIT_NOT_STORED
    err = capsys.readouterr().err
    assert "disk is full" in err and "--resume" in err and "Traceback" not in err
    first = _lines(out)  # every line parses: no partial line
    assert len(first) == 1  # the first cell's record; the run stopped at the second
    assert not _leftovers(out)
    monkeypatch.setattr(store_results, "_write", real_write)
    assert main([*args, "--resume"]) == 0
    records = _lines(out)
    assert len(records) == 4 and len({r["key"] for r in records}) == 4


def test_a_full_disk_while_writing_raw_outputs_leaves_no_temporary_file(tmp_path, monkeypatch):
    store = ResultStore(tmp_path)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_results.np, "savez_compressed", full)
    with pytest.raises(StoreWriteError, match="disk is full"):
        store.save_raw("k1", RAW)
    assert list((tmp_path / "raw").iterdir()) == []


def test_results_file_that_is_a_folder_is_refused_before_any_fit(tmp_path, capsys):
    out = tmp_path / "out"
    (out / "results.jsonl").mkdir(parents=True)
    assert main(["run", "--methods", "ova", "--dataset", "synthetic-small", "--out", str(out),
                 "--quiet", "--in-process"]) == 2
    assert "is not a file" in capsys.readouterr().err
    assert not (out / "raw").exists()


def test_a_claim_reads_the_newest_record_of_a_key_before_the_retry_filter(tmp_path):
    """A cell refused, then run with a higher limit and timed out, has two records of one
    key; ``--retry timeout`` must re-run it. The claim's re-read filtered each record by
    status before taking the newest, so the older ``refused`` record was served as stored
    and the cell was not retried."""
    from xcbench.run.resume import ResumeState
    from xcbench.run.runner import _claim

    refused = record("m", status="refused", key="k1")
    timed_out = record("m", status="timeout", key="k1")
    store = ResultStore(write_store(tmp_path, [refused, timed_out]))

    def state(retry):
        return ResumeState(store.records(), {}, retry)

    stored = {}
    assert _claim(store, CellClaims(store), ["k1"], stored, state(("timeout",))) == "claimed"
    assert "k1" not in stored
    stored = {}
    assert _claim(store, CellClaims(store), ["k1"], stored, state(("refused",))) == "stored"
    assert stored["k1"]["status"] == "timeout"


def test_the_claims_folder_is_removed_under_the_store_lock(tmp_path, monkeypatch):
    """Claims are written under the store lock (mkdir claims/, then the claim file); a
    finishing run removed the emptied folder outside it, so another run's claim could fail
    with "No such file or directory: .../claims" (seen once in the random-kill test above)."""
    import contextlib

    (tmp_path / "out").mkdir()
    store = ResultStore(tmp_path / "out")
    claims = CellClaims(store)
    claims.folder.mkdir()
    locked, removals = [], []
    real_lock, real_rmdir = store.lock, Path.rmdir

    @contextlib.contextmanager
    def lock():
        with real_lock():
            locked.append(True)
            try:
                yield
            finally:
                locked.pop()

    def rmdir(path):
        if path == claims.folder:
            removals.append(bool(locked))
        return real_rmdir(path)

    monkeypatch.setattr(store, "lock", lock)
    monkeypatch.setattr(Path, "rmdir", rmdir)
    claims.release_all()
    assert removals == [True] and not claims.folder.exists()


HOLD_LOCK = """
import sys
from filelock import FileLock
with FileLock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_an_append_waits_while_another_process_holds_the_store_lock(tmp_path):
    """Issue 61: the store's append without its lock passed every test. Here another
    process holds the lock: the append must wait for it, then store the record."""
    import threading

    store = ResultStore(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK,
                               str(tmp_path / store_results.LOCK_FILE)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        appender = threading.Thread(target=store.append, args=(record("ova"),))
        appender.start()
        appender.join(1.5)
        assert appender.is_alive(), "the append did not wait for the store lock"
        assert not store.path.exists() or store.path.read_text() == ""
        holder.stdin.write("release\n")
        holder.stdin.flush()
        appender.join(30)
        assert not appender.is_alive()
        assert [r["method"] for r in _lines(tmp_path)] == ["ova"]
    finally:
        holder.kill()
        holder.wait()
