import base64
import shutil
import subprocess
from html.parser import HTMLParser
from urllib.parse import quote

import numpy as np
import pytest
from report_records import record, write_store

from xcbench.cli import main
from xcbench.report import write_report
from xcbench.report.html import markdown_to_html

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


class Page(HTMLParser):
    """Tags with their attributes, and the text of each table's header and body cells."""

    def __init__(self):
        super().__init__()
        self.tags, self.tables, self._cell = [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def _store(tmp_path):
    spread = [4e-5, 5e-5, 6e-5]
    return write_store(tmp_path, [
        record("fast", top1=0.4, p50_ms=0.05, latencies=spread, path_cost=3.0),
        record("slow", top1=0.1, p50_ms=0.2, path_cost=30.0),
        record("huge", top1=0.05, p50_ms=1234.0, path_cost=300.0),
        record("mid", top1=0.2, p50_ms=9.5, path_cost=10.0),
        record("other", dataset="e", top1=0.3)])


def test_html_report_is_self_contained_with_the_markdown_tables_and_plots(tmp_path):
    paths = write_report(_store(tmp_path))
    page = Page()
    page.feed(paths["html"].read_text(encoding="utf-8"))
    for tag, attrs in page.tags:
        for name in ("src", "href"):
            value = attrs.get(name) or ""
            assert not value.lower().startswith(("http:", "https:", "//")), (tag, attrs)
    assert not [t for t, a in page.tags if t == "link" or (t == "script" and "src" in a)]
    images = [a["src"] for t, a in page.tags if t == "img"]
    assert len(images) == len(paths["plots"]) == 3  # two plots of d, one of e (no path cost)
    for src in images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    markdown = paths["markdown"].read_text(encoding="utf-8")
    md_tables = [[[c.strip() for c in line.strip("|").split("|")] for line in block
                  if not line.startswith("|---")]
                 for block in _markdown_tables(markdown)]
    assert [[[c.strip() for c in row] for row in t] for t in page.tables] == md_tables
    assert all(a.get("class") == "sortable" for t, a in page.tags if t == "table")


def _markdown_tables(text):
    blocks, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            blocks.append(current)
            current = []
    return blocks


def test_report_command_writes_html_unless_told_not_to(tmp_path, capsys):
    _store(tmp_path)
    assert main(["report", "--out", str(tmp_path), "--no-html"]) == 0
    assert not (tmp_path / "report.html").exists()
    assert main(["report", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "report.html").exists() and "report.html" in capsys.readouterr().out


def test_markdown_features_become_html(tmp_path):
    page = markdown_to_html("# T\n\nA `code` and **bold** <b>\n\n| a | b\\|c |\n|---|---|\n"
                            "| 1 | x\\|y |\n\n![missing](nowhere.png)\n", image_dir=tmp_path)
    assert "<code>code</code>" in page and "<strong>bold</strong> &lt;b&gt;" in page
    assert "<th>b|c</th>" in page and "<td>x|y</td>" in page
    assert "(plot nowhere.png not found)" in page and "<img" not in page
    assert '<td class="num">1</td>' in page  # numbers align right, text left


def _browser():
    found = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
    if found is None:
        pytest.skip("no chromium or chrome binary on PATH to render the HTML report")
    return found


def _chromium(browser, tmp_path, *args):
    return subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--user-data-dir={tmp_path / 'profile'}", *args],
        capture_output=True, text=True, timeout=60, check=True).stdout


def test_html_report_renders_and_sorts_in_headless_chromium(tmp_path):
    browser = _browser()
    html_path = write_report(_store(tmp_path))["html"]
    url = html_path.as_uri()

    def methods(dom):
        """The method column of the first results table (a multi-dataset report opens with
        the cross-dataset ranking, which has no p50 column)."""
        page = Page()
        page.feed(dom)
        results = next(t for t in page.tables if "p50 (ms)" in t[0])
        return [row[0] for row in results[1:]]

    assert methods(_chromium(browser, tmp_path, "--dump-dom", url)) == [
        "fast", "huge", "mid", "slow"]  # as written: by method name
    sorted_dom = _chromium(browser, tmp_path, "--dump-dom",
                           url + "?sort=" + quote("p50 (ms)") + "&order=desc")
    assert methods(sorted_dom) == ["huge", "mid", "slow", "fast"]  # 1,230 > 9.50: numeric
    assert 'aria-sort="descending"' in sorted_dom

    from PIL import Image

    shot = tmp_path / "shot.png"
    _chromium(browser, tmp_path, f"--screenshot={shot}", "--window-size=1200,900", url)
    image = Image.open(shot)
    assert image.size == (1200, 900)
    pixels = np.asarray(image.convert("L"), dtype=float)
    assert pixels.std() > 10  # text, tables and plots, not a blank page
    assert (pixels < 100).mean() > 0.005  # some dark ink (text) on the page
