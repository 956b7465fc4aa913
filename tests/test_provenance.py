"""The code state a record keeps (commit, uncommitted changes, plugin versions)."""
import shutil
import subprocess
from pathlib import Path

import pytest

from xcbench.store.provenance import code_state, git_state, key_code, short_commit, why_stale

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(root, *args):
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def checkout(tmp_path):
    (tmp_path / "xcbench").mkdir()
    (tmp_path / "xcbench" / "core.py").write_text("x = 1\n")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "results.jsonl").write_text("")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    return tmp_path


def test_clean_checkout(checkout):
    state = git_state(checkout)
    assert len(state["commit"]) == 40
    assert state["dirty"] is False and state["changes"] is None


def test_code_changes_make_it_dirty_with_a_digest_of_the_changes(checkout):
    (checkout / "xcbench" / "core.py").write_text("x = 2\n")
    first = git_state(checkout)
    assert first["dirty"] is True and len(first["changes"]) == 12
    (checkout / "xcbench" / "core.py").write_text("x = 3\n")
    second = git_state(checkout)
    assert second["changes"] != first["changes"]  # other edits, other code
    (checkout / "xcbench" / "core.py").write_text("x = 2\n")
    assert git_state(checkout)["changes"] == first["changes"]


def test_an_untracked_module_counts_but_results_do_not(checkout):
    (checkout / "reports" / "results.jsonl").write_text("{}\n")  # a suite writing results
    (checkout / "reports" / "new.md").write_text("notes")
    assert git_state(checkout)["dirty"] is False
    (checkout / "xcbench" / "new.py").write_text("y = 1\n")
    assert git_state(checkout)["dirty"] is True


def test_outside_a_checkout(tmp_path):
    assert git_state(tmp_path) == {"commit": None, "dirty": None, "changes": None}


def test_code_state_of_this_checkout():
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        pytest.skip("xcbench is not imported from a git checkout here")
    state = code_state(fresh=True)

    def git(*args):  # asked here, not through the functions under test
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                              text=True, check=True).stdout

    assert state["commit"] == git("rev-parse", "HEAD").strip()
    changed = git("status", "--porcelain", "--untracked-files=all", "--", "xcbench",
                  "plugins", "pyproject.toml").strip()
    assert state["dirty"] is bool(changed)
    assert (state["changes"] is None) is not state["dirty"]


def test_code_state_names_plugin_distributions():
    state = code_state()
    assert state["plugins"]["xcbench"] == state["xcbench"]
    key = key_code(state, "linear")
    assert key["plugin"] == ["xcbench", state["xcbench"]]
    assert "plugins" not in key  # an unrelated plugin's version does not change the key


def test_why_stale_names_the_first_difference():
    now = {"xcbench": "0.1.0", "commit": "b" * 40, "dirty": False, "changes": None,
           "plugins": {}}
    old = {"code": dict(now, commit="a" * 40)}
    assert why_stale(old, now) == "made at commit aaaaaaa (now bbbbbbb)"
    dirty = {"code": dict(now, dirty=True, changes="123")}
    assert why_stale(dirty, now) == ("made with other uncommitted changes at bbbbbbb+dirty "
                                     "(now bbbbbbb)")
    legacy = {"environment": {"git_commit": "c" * 40, "xcbench": "0.1.0"}}
    assert why_stale(legacy, now).startswith("made at ccccccc before records kept")
    assert short_commit({"commit": None}) == "unknown commit"
