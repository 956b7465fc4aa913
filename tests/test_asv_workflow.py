"""The documented asv workflow (docs/asv.md) on two commits of a clone of this repository:
results are stored for both, and ``asv compare`` prints a table of them."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: one small benchmark keeps the test to a few minutes; the steps are the documented ones
BENCH = ["-b", "CSRRowDot", "-a", "repeat=1", "-a", "rounds=1"]

pytestmark = pytest.mark.slow


def _run(args, cwd, env):
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_asv_steps_store_results_per_commit_and_compare_prints_a_table(tmp_path):
    pytest.importorskip("asv")
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout of xcbench")
    clone = tmp_path / "xcbench"
    env = {**os.environ, "HOME": str(tmp_path)}  # asv keeps its machine file in $HOME
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    _run(git + ["clone", "--quiet", str(ROOT), str(clone)], tmp_path, env)
    _run(git + ["checkout", "--quiet", "-B", "main"], clone, env)  # asv.conf.json's branch
    _run(git + ["commit", "--quiet", "--allow-empty", "-m", "second"], clone, env)
    first, second = _run(["git", "rev-parse", "HEAD~1", "HEAD"], clone, env).split()
    asv = [sys.executable, "-m", "asv"]
    _run(asv + ["machine", "--yes"], clone, env)
    # this checkout in this environment, nothing built (the installed xcbench is the
    # checkout's, as the page asks)
    _run(asv + ["run", "--python=same", "--set-commit-hash", second] + BENCH, clone, env)
    # a range of commits: asv builds one environment and installs each commit's xcbench
    _run(asv + ["run", f"{first}^..{second}"] + BENCH, clone, env)
    stored = {}
    for path in (clone / ".asv" / "results").glob("*/*-*.json"):
        result = json.loads(path.read_text())
        stored.setdefault(result["commit_hash"], []).append(result["env_name"])
    assert len(stored[second]) == 2 and len(stored[first]) == 1, stored
    table = _run(asv + ["compare", first, second], clone, env)
    rows = [line for line in table.splitlines() if "CSRRowDot.time_scores" in line]
    assert "| Change" in table and rows
    built = [r for r in rows if "virtualenv" in r]  # both commits in the built environment
    assert built and all("n/a" not in r.split("|")[2] for r in built), table
