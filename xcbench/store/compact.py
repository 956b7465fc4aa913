"""Rewrite a store's old raw files (``raw/<key>.npz``) in the compact format
(:mod:`xcbench.store.raw_format`).

Each old file is read, written compactly through :meth:`ResultStore.save_raw` (atomic
writes: an interrupted conversion leaves whole files only), read back, and removed only
when the compact files hold the same outputs (:func:`raw_format.same_outputs`); otherwise
the new files are removed and the old one kept. Running it again finishes what an interruption left.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import raw_format
from .results import RAW_DIR, ResultStore


@dataclass
class CompactSummary:
    """What a conversion did: files converted, bytes of the old files removed, of the
    compact and test labels files added and of the top-k labels files added, and the old
    files kept, each with the reason."""

    converted: int = 0
    old_bytes: int = 0
    compact_bytes: int = 0
    topk_bytes: int = 0
    kept: list[tuple[Path, str]] = field(default_factory=list)


def old_raw_files(root: Path) -> list[Path]:
    """Every old-format raw file under ``root`` (in any ``raw/`` folder, nested stores
    included)."""
    return sorted(p for p in Path(root).rglob(f"{RAW_DIR}/*{raw_format.OLD_SUFFIX}")
                  if p.parent.name == RAW_DIR and is_old_raw_name(p.name))


def is_old_raw_name(name: str) -> bool:
    """Whether ``name`` is an old raw file's (``<key>.npz``), not a compact, top-k or
    shared test labels file or a temporary."""
    return (not name.startswith((".", raw_format.TEST_LABELS_PREFIX))
            and name.count(".") == 1)


def compact_file(old: Path, summary: CompactSummary) -> None:
    """Convert one old raw file (see the module's docstring), counting into ``summary``."""
    key = old.name.split(".")[0]
    store = ResultStore(old.parent.parent)
    try:
        arrays = raw_format.read_raw(old, key)
    except raw_format.RawFileError as exc:
        summary.kept.append((old, str(exc)))
        return
    shared_before = set(store.raw_dir.glob(f"{raw_format.TEST_LABELS_PREFIX}*"))
    written = old.parent.parent / store.save_raw(key, arrays)
    topk = raw_format.topk_path(written)
    try:
        problem = raw_format.same_outputs(arrays, raw_format.read_raw(written, key))
    except raw_format.RawFileError as exc:
        problem = str(exc)
    if problem:
        written.unlink()
        topk.unlink(missing_ok=True)
        summary.kept.append((old, f"the compact files read back differently ({problem}); "
                                  "the old file is kept"))
        return
    added = set(store.raw_dir.glob(f"{raw_format.TEST_LABELS_PREFIX}*")) - shared_before
    summary.compact_bytes += written.stat().st_size + sum(p.stat().st_size for p in added)
    summary.topk_bytes += topk.stat().st_size
    summary.old_bytes += old.stat().st_size
    old.unlink()
    summary.converted += 1


def compact_folder(root, progress=None) -> CompactSummary:
    """Convert every old raw file under ``root``; ``progress(done, total)`` after each."""
    summary = CompactSummary()
    files = old_raw_files(Path(root))
    for i, old in enumerate(files, 1):
        compact_file(old, summary)
        if progress:
            progress(i, len(files))
    return summary


#: the ignore file ``ignore_superseded`` writes in a ``raw/`` folder
IGNORE_FILE = ".gitignore"
IGNORE_HEADER = ("# written by `xcbench compact --ignore-superseded`: the raw outputs of records\n"
                 "# no report table shows (a newer record of the same measurement supersedes\n"
                 "# them, or they were retired); their metrics stay in results.jsonl\n")


def superseded_raw_names(raw_dir: Path) -> list[str]:
    """The raw files in ``raw_dir`` whose record is not the newest of its measurement in
    the store beside it (or is in no readable record at all): no report table reads them.
    Only compact (or old) files are named: test labels files are shared, and top-k labels
    files are ignored everywhere under ``reports/``."""
    newest = {r["key"] for r in ResultStore(raw_dir.parent).latest()}
    return sorted(p.name for p in raw_dir.iterdir()
                  if p.name.endswith(raw_format.OLD_SUFFIX)
                  and not p.name.endswith(raw_format.TOPK_SUFFIX)
                  and not p.name.startswith((".", raw_format.TEST_LABELS_PREFIX))
                  and p.name.split(".")[0] not in newest)


def ignore_superseded(root) -> tuple[int, int]:
    """Write ``raw/.gitignore`` in every ``raw/`` folder under ``root`` listing
    :func:`superseded_raw_names` (removed when none); return (files listed, their bytes)."""
    files = size = 0
    for raw_dir in sorted(p for p in Path(root).rglob(RAW_DIR) if p.is_dir()):
        names = superseded_raw_names(raw_dir)
        target = raw_dir / IGNORE_FILE
        if names:
            target.write_text(IGNORE_HEADER + "".join(f"/{n}\n" for n in names))
        else:
            target.unlink(missing_ok=True)
        files += len(names)
        size += sum((raw_dir / n).stat().st_size for n in names)
    return files, size
