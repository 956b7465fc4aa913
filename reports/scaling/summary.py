"""The README's summary table from this folder's results.jsonl: per method and settings
(the run's parameters, then query-time ones), top-1 error, p50 latency and fit time at each
K, the p50 ratio 100k / 1k, and peak fit RSS and model size at K = 100,000.

Usage: python summary.py [results.jsonl]
"""
import json
import sys
from collections import defaultdict
from pathlib import Path

PATH = sys.argv[1] if len(sys.argv) > 1 else Path(__file__).with_name("results.jsonl")
SIZES = {"synthetic-sparse-1k": "1k", "synthetic-sparse-10k": "10k",
         "synthetic-sparse-100k": "100k"}
PER_K = {"depth", "depth0"}  # settings that follow K by a stated rule (st's depth, ast's depth0): one row for all K
rows = defaultdict(dict)
for line in open(PATH):
    r = json.loads(line)
    q = r.get("query_params") or {}
    settings = {k: v for k, v in sorted(r["params"].items()) if k not in q and k not in PER_K}
    settings.update(q)
    name = " ".join([r["method"]] + [f"{k}={v}" for k, v in settings.items()])
    K = SIZES[r["dataset"]]
    if r["status"] != "ok":
        rows[name][K] = r["status"]
        continue
    s, m, mem = r["summary"], r["metrics"], r.get("memory") or {}
    rows[name][K] = dict(err=100 * m["top1_error"], p50=s["latency_p50_ms"],
                         fit=s["fit_seconds"], rss=(mem.get("fit_peak_rss_bytes") or 0) / 2**30,
                         mb=(mem.get("model_pickle_bytes") or 0) / 2**20)


def f(d, k, fmt):
    """One cell: the formatted value, the status of a run that did not finish, or -."""
    v = d.get(k)
    return v if isinstance(v, str) else ("-" if v is None else fmt.format(**v))


print("| method | top-1 error % 1k / 10k / 100k | p50 ms 1k / 10k / 100k | p50 100k / 1k "
      "| fit s 1k / 10k / 100k | peak RSS GB 100k | model MB 100k |")
print("|---|---|---|---|---|---|---|")
for name, d in sorted(rows.items()):
    ratio = "-"
    if isinstance(d.get("1k"), dict) and isinstance(d.get("100k"), dict):
        ratio = f'{d["100k"]["p50"] / d["1k"]["p50"]:.2f}'
    print(f"| {name} | " + " / ".join(f(d, k, "{err:.1f}") for k in ("1k", "10k", "100k")) + " | "
          + " / ".join(f(d, k, "{p50:.3g}") for k in ("1k", "10k", "100k")) + f" | {ratio} | "
          + " / ".join(f(d, k, "{fit:.0f}") for k in ("1k", "10k", "100k")) + " | "
          + f(d, "100k", "{rss:.2f}") + " | " + f(d, "100k", "{mb:.0f}") + " |")
