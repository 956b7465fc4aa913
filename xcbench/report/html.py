"""A self-contained HTML page from a report's markdown: the same content, plots embedded as
base64 PNG, tables sortable by a small inline script; no external URL."""
from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from .html_sort import SORT_SCRIPT


STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1400px;
       padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em;
     border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f0f3f7; cursor: pointer; user-select: none; white-space: nowrap; }
th[aria-sort=ascending]::after { content: " \\25B2"; }
th[aria-sort=descending]::after { content: " \\25BC"; }
tbody tr:nth-child(even) { background: #fafafa; }
pre { background: #f5f5f5; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
img { max-width: 100%; height: auto; }
.table-wrap { overflow-x: auto; }
td:nth-child(2) { font-size: 0.9em; max-width: 30em; }
.hint { color: #666; font-size: 0.85em; }
"""

_IMAGE = re.compile(r"^!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)\)$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_NUMERIC = re.compile(r"^(-?[\d,]*\.?\d+(e[-+]?\d+)?( ± \S+)?( †)?|n/a|-?inf)$")


def inline(text: str) -> str:
    """Escape ``text`` for HTML and turn markdown `code` and **bold** into tags."""
    text = html.escape(text, quote=False)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)


def _cells(line: str) -> list[str]:
    parts = _CELL_SPLIT.split(line.strip())[1:-1]
    return [p.strip().replace("\\|", "|") for p in parts]


def _td(cell: str) -> str:
    """A table cell; numbers (and n/a) get class ``num`` to align right."""
    kind = ' class="num"' if _NUMERIC.match(cell) else ""
    return f"<td{kind}>{inline(cell)}</td>"


def table_html(lines: list[str]) -> str:
    """A sortable HTML table from markdown table lines (header, separator, rows)."""
    head = "".join(f"<th>{inline(c)}</th>" for c in _cells(lines[0]))
    body = "\n".join("<tr>" + "".join(_td(c) for c in _cells(line)) + "</tr>"
                     for line in lines[2:])
    return (f'<div class="table-wrap"><table class="sortable">\n<thead><tr>{head}</tr></thead>'
            f"\n<tbody>\n{body}\n</tbody>\n</table></div>")


def image_html(alt: str, src: str, image_dir: Path | None) -> str:
    """An <img> embedding the PNG ``image_dir/src`` as a data URI; a note if it is missing
    (never a link to a file or a URL)."""
    path = (image_dir or Path(".")) / src
    if src.lower().endswith(".png") and "/" not in src and path.is_file():
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return (f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{inline(alt)}</figcaption></figure>")
    return f'<p class="hint">(plot {inline(src)} not found)</p>'


def markdown_to_html(markdown: str, title: str = "xcbench report",
                     image_dir=None) -> str:
    """A complete HTML page of a report's ``markdown`` (the subset reports use: headings,
    paragraphs, fenced code, tables, images on their own line); images are read from
    ``image_dir`` and embedded."""
    image_dir = Path(image_dir) if image_dir is not None else None
    blocks, paragraph = [], []
    lines = markdown.splitlines()

    def flush():
        if paragraph:
            blocks.append("<p>" + " ".join(inline(p) for p in paragraph) + "</p>")
            paragraph.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")),
                       len(lines))
            blocks.append("<pre><code>" + html.escape("\n".join(lines[i + 1:end]))
                          + "</code></pre>")
            i = end + 1
            continue
        if line.startswith("|"):
            flush()
            end = i
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            blocks.append(table_html(lines[i:end]))
            i = end
            continue
        heading = re.match(r"^(#{1,6}) (.*)$", line)
        image = _IMAGE.match(line.strip())
        if heading:
            flush()
            level = len(heading.group(1))
            blocks.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
            if level == 1:
                blocks.append('<p class="hint">Click a column header to sort a table (click '
                              "again to reverse).</p>")
        elif image:
            flush()
            blocks.append(image_html(image.group("alt"), image.group("src"), image_dir))
        elif not line.strip():
            flush()
        else:
            paragraph.append(line)
        i += 1
    flush()
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
            + "\n".join(blocks)
            + f"\n<script>\n{SORT_SCRIPT}</script>\n</body>\n</html>\n")
