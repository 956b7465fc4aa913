"""``xcbench compact``: rewrite the old raw files of results folders in the compact format."""
from __future__ import annotations

import sys

from .exit_codes import EXIT_CELL_FAILED, EXIT_OK


def cmd_compact(args) -> int:
    from ..store.compact import compact_folder

    def progress(done, total):
        if sys.stderr.isatty() or done == total:
            print(f"\r{done}/{total} raw files", end="\n" if done == total else "",
                  file=sys.stderr, flush=True)

    failed = False
    for folder in args.folders:
        summary = compact_folder(folder, progress=progress)
        print(f"{folder}: {summary.converted} raw file(s) compacted, "
              f"{summary.old_bytes:,} bytes of old files removed, "
              f"{summary.compact_bytes:,} bytes of compact and test labels files and "
              f"{summary.topk_bytes:,} bytes of top-k labels files added")
        for path, why in summary.kept:
            print(f"  kept {path}: {why}")
        failed = failed or bool(summary.kept)
        if args.ignore_superseded:
            from ..store.compact import ignore_superseded

            files, size = ignore_superseded(folder)
            print(f"{folder}: {files} raw file(s) of superseded records ({size:,} bytes) "
                  "listed in their raw/.gitignore")
    return EXIT_CELL_FAILED if failed else EXIT_OK


def add_parser(sub) -> None:
    """Register ``xcbench compact``."""
    p = sub.add_parser(
        "compact", help="rewrite old raw files (raw/<key>.npz) in the compact format",
        description="Rewrite every old-format raw file (raw/<key>.npz) under each FOLDER "
                    "(nested results folders included) as raw/<key>.compact.npz (what the "
                    "metrics and paired tests read), raw/<key>.topk.npz (the predicted "
                    "labels) and the test labels shared per dataset split. An old file is removed only "
                    "after its compact file reads back the same outputs; writes are atomic, "
                    "so an interrupted run leaves whole files and running again finishes "
                    "the job. Exit 1 when a file was kept (damaged, or read back "
                    "differently).")
    p.add_argument("folders", nargs="+", metavar="FOLDER")
    p.add_argument("--ignore-superseded", action="store_true",
                   help="also write raw/.gitignore in each results folder listing the raw "
                        "files of records no report table shows (superseded by a newer "
                        "record of the same measurement, or retired), to keep them out of "
                        "git; rerun after new runs")
    p.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    p.set_defaults(func=cmd_compact)
