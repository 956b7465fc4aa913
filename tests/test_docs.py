"""The docs' examples run: the worked plugin of docs/plugins.md passes every conformance
check and `xcbench check`, and every page under docs/ is in the MkDocs nav."""
import importlib
import json
import re
import sys
from pathlib import Path

import pytest

from xcbench.cli import main
from xcbench.contract.plugins import register_plugin
from xcbench.testing import check_method

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_PAGE = ROOT / "docs" / "plugins.md"
PLUGIN_FIRST_LINE = "# my_xcbench_plugin/__init__.py"


def worked_plugin_code() -> str:
    """The fenced Python block of docs/plugins.md that starts with PLUGIN_FIRST_LINE."""
    blocks = re.findall(r"```python\n(.*?)```", PLUGIN_PAGE.read_text(), flags=re.S)
    found = [b for b in blocks if b.startswith(PLUGIN_FIRST_LINE)]
    assert len(found) == 1, f"docs/plugins.md must hold one block starting {PLUGIN_FIRST_LINE}"
    return found[0]


def load_plugin(code: str, where: Path, monkeypatch):
    """Write ``code`` as the package my_xcbench_plugin under ``where`` and import it."""
    package = where / "my_xcbench_plugin"
    package.mkdir()
    (package / "__init__.py").write_text(code)
    monkeypatch.syspath_prepend(str(where))
    importlib.invalidate_caches()
    monkeypatch.delitem(sys.modules, "my_xcbench_plugin", raising=False)
    return importlib.import_module("my_xcbench_plugin")


def test_docs_worked_plugin_passes_check_method_and_xcbench_check(tmp_path, monkeypatch,
                                                                  fresh_plugins, capsys):
    register_plugin(load_plugin(worked_plugin_code(), tmp_path, monkeypatch), name="my_plugin")
    report = check_method("closest-centroids")
    assert report.ok and not report.notes, str(report)
    assert main(["check", "closest-centroids"]) == 0
    assert re.search(r"closest-centroids: (\d+) of \1 checks run passed",
                     capsys.readouterr().out)


def test_docs_worked_plugin_is_tunable(tmp_path, monkeypatch, fresh_plugins, capsys):
    """Its ``search_space`` is what ``xcbench tune`` needs (the guide once left it out, and
    tune refused the plugin): two trials run and the best parameters are written."""
    pytest.importorskip("optuna")
    register_plugin(load_plugin(worked_plugin_code(), tmp_path, monkeypatch), name="my_plugin")
    out = tmp_path / "tuned"
    assert main(["tune", "closest-centroids", "--dataset", "synthetic-small", "--trials", "2",
                 "--out", str(out), "--in-process", "--quiet", "--no-defaults"]) == 0
    best = json.loads((out / "best-closest-centroids.json").read_text())
    assert set(best["params"]) == {"candidates", "temperature"}
    assert best["param_line"] in capsys.readouterr().out


def test_without_the_support_size_step_the_worked_plugin_fails(tmp_path, monkeypatch,
                                                                fresh_plugins):
    """The page's point about ``support_size`` holds: the default (K) is wrong here."""
    code = worked_plugin_code()
    start = code.index("    def support_size(self, X):")
    end = code.index("    def stats(self):")
    register_plugin(load_plugin(code[:start] + code[end:], tmp_path, monkeypatch),
                    name="my_plugin")
    with pytest.raises(AssertionError, match="check_support_size_counts_log_proba"):
        check_method("closest-centroids")


def test_every_docs_page_is_in_the_mkdocs_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = sorted(p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md"))
    missing = [p for p in pages if f" {p}" not in nav]
    assert not missing, f"add these pages to the nav of mkdocs.yml: {missing}"


def test_own_data_worked_example_builds_the_datasets_the_page_describes(tmp_path,
                                                                        monkeypatch):
    """docs/own-data.md: its Python block writes files that load as the page says
    (2,400 train / 600 test rows, K = 20, for both the svmlight pair and the CSV)."""
    import xcbench

    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "own-data.md").read_text(),
                        flags=re.S)
    assert len(blocks) == 1
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], "docs/own-data.md", "exec"), {})
    for name in ("file:train.svm:test.svm", "file:all.csv"):
        ds = xcbench.load_dataset(name)
        assert (ds.X_train.shape[0], ds.X_test.shape[0], ds.n_classes) == (2400, 600, 20), name


def test_readme_links_point_at_files_that_exist():
    """The README is outside the MkDocs build, so its relative links are checked here."""
    links = re.findall(r"\]\(([^)#:]+)\)", (ROOT / "README.md").read_text())
    assert links, "the README links to the docs"
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, f"README links to missing files: {missing}"


def test_the_home_page_links_every_page():
    home = (ROOT / "docs" / "index.md").read_text()
    linked = set(re.findall(r"\]\(([^)#]+\.md)", home))
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    missing = sorted(pages - linked - {"index.md"})
    assert not missing, f"link these pages from docs/index.md: {missing}"


def test_examples_import_no_private_module():
    """A reader copies the examples: none imports a private module (``sklearn.utils._x``);
    xcbench re-exports what a plugin needs (``xcbench.contract.constraints``)."""
    private = re.compile(r"^\s*(?:from|import)\s+([\w.]*\._\w*)", flags=re.M)
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for block in re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S):
            found += [f"{page.relative_to(ROOT)}: {m}" for m in private.findall(block)]
    assert not found, f"examples importing private modules: {found}"
