"""First cell vs second cell of each method with an empty numba cache: for each repeat and
method, a fresh NUMBA_CACHE_DIR, then the same cell run twice (two `xcbench run` calls into
two folders); writes results.json (one row per run) and prints the ratios.

    python reports/compile-time/measure.py --repeats 3 --methods hsm,label_tree,lomtree,mary_tree,st
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def run_cell(method: str, dataset: str, cache: str, out: str) -> dict:
    """The record of one `xcbench run` of ``method`` on ``dataset`` (seed 0) with ``cache``
    as numba's cache folder."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    subprocess.run([sys.executable, "-m", "xcbench.cli", "run", "--methods", method,
                    "--dataset", dataset, "--seeds", "0", "--latency-calls", "50",
                    "--no-report", "--quiet", "--out", out], env=env, check=True)
    record = json.loads(Path(out, "results.jsonl").read_text().splitlines()[-1])
    if record["status"] != "ok":
        raise RuntimeError(f"{method}: {record['status']}: {record.get('error')}")
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default="hsm,label_tree,lomtree,mary_tree,st")
    parser.add_argument("--dataset", default="letter")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", default=str(HERE / "results.json"))
    args = parser.parse_args()
    rows = []
    for repeat in range(args.repeats):
        for method in args.methods.split(","):
            with tempfile.TemporaryDirectory() as tmp:
                for cell in ("first", "second"):
                    r = run_cell(method, args.dataset, f"{tmp}/numba-cache", f"{tmp}/{cell}")
                    s, t = r["summary"], r["timings"]
                    rows.append({"method": method, "repeat": repeat, "cell": cell,
                                 "fit_seconds": s["fit_seconds"],
                                 "fit_wall_seconds": s["fit_wall_seconds"],
                                 "compile_seconds": s["compile_seconds"],
                                 "fit_cache_seconds": t["fit_cache_seconds"],
                                 "first_predict_compile_seconds":
                                     t["first_predict_compile_seconds"],
                                 "commit": r["code"]["commit"]})
                    print(json.dumps(rows[-1]), flush=True)
    Path(args.output).write_text(json.dumps(rows, indent=1) + "\n")
    print(summary_table(rows))


def summary_table(rows: list[dict]) -> str:
    """Markdown: per method, the median over repeats of first/second fit time (without and
    with the JIT) and the seconds of JIT in each cell."""
    lines = ["| method | fit ratio first/second (median, min-max) | wall ratio (median) | "
             "compile s, first cell (median) | JIT s, second cell (median) |",
             "|---|---|---|---|---|"]
    for method in dict.fromkeys(r["method"] for r in rows):
        pairs = {}
        for r in rows:
            if r["method"] == method:
                pairs.setdefault(r["repeat"], {})[r["cell"]] = r
        fit = [p["first"]["fit_seconds"] / p["second"]["fit_seconds"] for p in pairs.values()]
        wall = [p["first"]["fit_wall_seconds"] / p["second"]["fit_wall_seconds"]
                for p in pairs.values()]
        first_jit = [p["first"]["compile_seconds"] for p in pairs.values()]
        second_jit = [p["second"]["compile_seconds"] for p in pairs.values()]
        lines.append(f"| {method} | {np.median(fit):.2f} ({min(fit):.2f}-{max(fit):.2f}) | "
                     f"{np.median(wall):.1f} | {np.median(first_jit):.1f} | "
                     f"{np.median(second_jit):.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
