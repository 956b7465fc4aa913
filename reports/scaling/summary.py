"""The README's summary table from this folder's records, as the report shows them (the
suite's newest record of each planned measurement): per method and settings (the run's
parameters, then query-time ones other than the method's default), top-1 error, p50 latency
and fit time at each K, the p50 ratio 100k / 1k, peak fit RSS and model size at K = 100,000,
and the commit of each K's record (so a row that mixes code says so; its ratio is left out).

Usage: python summary.py
"""
from pathlib import Path

from xcbench.contract.plugins import get_method_spec
from xcbench.run.suites import load_suite, newest_per_planned
from xcbench.store.provenance import record_code, short_commit
from xcbench.store.results import ResultStore

HERE = Path(__file__).parent
SIZES = {"synthetic-sparse-1k": "1k", "synthetic-sparse-10k": "10k",
         "synthetic-sparse-100k": "100k"}
PER_K = {"depth", "depth0"}  # settings that follow K by a stated rule (st's depth, ast's depth0): one row for all K


def row_name(record: dict) -> str:
    """Method, run parameters, then query parameters not at the method's default (a record
    made before a query parameter existed, e.g. ``beam``, shares the row of its default)."""
    query_defaults = get_method_spec(record["method"]).query_params
    query = record.get("query_params") or {}
    settings = {k: v for k, v in sorted(record["params"].items())
                if k not in query and k not in PER_K}
    settings.update({k: v for k, v in query.items() if [v] != list(query_defaults.get(k, []))})
    return " ".join([record["method"]] + [f"{k}={v}" for k, v in settings.items()])


def collect() -> dict:
    suite = load_suite(HERE / "suite.toml")
    rows: dict = {}
    for r in newest_per_planned(suite, ResultStore(HERE).latest()):
        cells = rows.setdefault(row_name(r), {})
        K = SIZES[r["dataset"]]
        if r["status"] != "ok":
            cells[K] = r["status"]
            continue
        s, m, mem = r["summary"], r["metrics"], r.get("memory") or {}
        cells[K] = dict(err=100 * m["top1_error"], p50=s["latency_p50_ms"],
                        fit=s["fit_seconds"], rss=(mem.get("fit_peak_rss_bytes") or 0) / 2**30,
                        mb=(mem.get("model_pickle_bytes") or 0) / 2**20,
                        commit=short_commit(record_code(r)))
    return rows


def f(d, k, fmt):
    """One cell: the formatted value, the status of a run that did not finish, or -."""
    v = d.get(k)
    return v if isinstance(v, str) else ("-" if v is None else fmt.format(**v))


def main() -> None:
    print("| method | top-1 error % 1k / 10k / 100k | p50 ms 1k / 10k / 100k | p50 100k / 1k "
          "| fit s 1k / 10k / 100k | peak RSS GB 100k | model MB 100k | commit 1k / 10k / 100k |")
    print("|---|---|---|---|---|---|---|---|")
    for name, d in sorted(collect().items()):
        ratio = "-"
        if isinstance(d.get("1k"), dict) and isinstance(d.get("100k"), dict) \
                and d["1k"]["commit"] == d["100k"]["commit"]:  # not across code changes
            ratio = f'{d["100k"]["p50"] / d["1k"]["p50"]:.2f}'
        print(f"| {name} | " + " / ".join(f(d, k, "{err:.1f}") for k in SIZES.values()) + " | "
              + " / ".join(f(d, k, "{p50:.3g}") for k in SIZES.values()) + f" | {ratio} | "
              + " / ".join(f(d, k, "{fit:.0f}") for k in SIZES.values()) + " | "
              + f(d, "100k", "{rss:.2f}") + " | " + f(d, "100k", "{mb:.0f}") + " | "
              + " / ".join(f(d, k, "{commit}") for k in SIZES.values()) + " |")


if __name__ == "__main__":
    main()
