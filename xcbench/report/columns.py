"""The measured quantities a report can show: table columns and plot axes, by name."""
from __future__ import annotations

from dataclasses import dataclass

#: how a stored value becomes its display unit
SCALES = {"pct": 100.0, "mb": 1e-6, "ms": 1.0, "s": 1.0, "num": 1.0}

#: quantities besides times and sizes that can span orders of magnitude
LOG_SCALE_NAMES = frozenset({"throughput", "train_throughput", "path_cost", "perplexity",
                             "perplexity_smoothed"})


@dataclass(frozen=True)
class Column:
    """One quantity: ``name`` (for ``--columns`` and ``--x``/``--y``), its ``header`` with
    the unit, where the record keeps it (``section``, ``key``), how it is scaled for display
    (``kind``, a key of SCALES), which direction is ``better`` (``lower``/``higher``/None)
    and a one-line ``doc``."""

    name: str
    header: str
    section: str
    key: str
    kind: str
    better: str | None
    doc: str

    def raw(self, record: dict):
        """The stored value of this quantity in ``record`` (None when absent)."""
        return (record.get(self.section) or {}).get(self.key)

    @property
    def spans_decades(self) -> bool:
        """Whether values can differ by orders of magnitude (times, sizes, rates, path
        costs, perplexities), so a plot may use a log axis."""
        return self.kind in ("ms", "s", "mb") or self.name in LOG_SCALE_NAMES

    @property
    def scale(self) -> float:
        """Factor from the stored unit to the displayed one."""
        return SCALES[self.kind]


COLUMNS = [
    Column("top1_error", "top-1 error (%)", "metrics", "top1_error", "pct", "lower",
           "test top-1 error"),
    Column("top5_error", "top-5 error (%)", "metrics", "top5_error", "pct", "lower",
           "test top-5 error (fewer than 5 labels returned count as misses)"),
    Column("perplexity", "perplexity", "metrics", "perplexity", "num", "lower",
           "perplexity over the covered test examples (n/a without a probability model)"),
    Column("coverage", "coverage (%)", "metrics", "coverage", "pct", "higher",
           "share of test examples whose true label gets non-zero probability"),
    Column("perplexity_smoothed", "smoothed perplexity", "metrics", "perplexity_smoothed",
           "num", "lower", "perplexity over all test examples after epsilon smoothing"),
    Column("size_mb", "size (MB)", "stats", "bytes", "mb", "lower",
           "model size as the method counts it"),
    Column("depth", "depth", "stats", "depth", "num", None, "tree depth (0 for flat methods)"),
    Column("path_cost", "path cost (vectors)", "path_cost", "mean", "num", "lower",
           "vectors evaluated per test prediction (decision nodes + scored classes, mean)"),
    Column("p50", "p50 (ms)", "summary", "latency_p50_ms", "ms", "lower",
           "median single-example latency (one predict_topk call per example)"),
    Column("p90", "p90 (ms)", "summary", "latency_p90_ms", "ms", "lower",
           "90th percentile single-example latency"),
    Column("p99", "p99 (ms)", "summary", "latency_p99_ms", "ms", "lower",
           "99th percentile single-example latency"),
    Column("throughput", "throughput (ex/s)", "summary", "throughput_per_s", "num", "higher",
           "examples per second of batch prediction"),
    Column("fit_seconds", "fit (s)", "summary", "fit_seconds", "s", "lower",
           "training wall time, without numba's JIT (compile_seconds)"),
    Column("compile_seconds", "compile (s)", "summary", "compile_seconds", "s", "lower",
           "seconds of the fit numba spent compiling kernels or loading them from its "
           "on-disk cache, left out of fit (s)"),
    Column("fit_wall_seconds", "fit wall (s)", "summary", "fit_wall_seconds", "s", "lower",
           "training wall time as measured, numba's JIT included"),
    Column("fit_cpu_seconds", "fit CPU (s)", "summary", "fit_cpu_seconds", "s", "lower",
           "training CPU time (all threads), without numba's JIT: the fit's cost when other jobs "
           "share the cores"),
    Column("train_throughput", "train (ex/s)", "summary", "train_examples_per_s", "num",
           "higher", "training examples per second"),
    Column("fit_rss_mb", "fit peak RSS (MB)", "memory", "fit_peak_rss_bytes", "mb", "lower",
           "peak resident memory of the fitting process"),
    Column("model_mb", "model (MB)", "memory", "model_pickle_bytes", "mb", "lower",
           "size of the fitted model's pickle"),
]

BY_NAME = {c.name: c for c in COLUMNS}

#: the columns a report table shows unless ``--columns`` says otherwise
DEFAULT_COLUMNS = ("top1_error", "top5_error", "perplexity", "coverage", "p50",
                   "fit_seconds", "model_mb")


def column_names_help() -> str:
    """One line per column: name and what it measures, for --help texts and errors."""
    return "\n".join(f"  {c.name:<20} {c.header}: {c.doc}" for c in COLUMNS)


def get_column(name: str, option: str = "--columns") -> Column:
    """The Column called ``name``; ValueError naming ``option`` and the valid names."""
    if name not in BY_NAME:
        raise ValueError(f"{option}: unknown name {name!r}; valid names: "
                         f"{', '.join(BY_NAME)}")
    return BY_NAME[name]


def select_columns(spec: str | None) -> list[Column]:
    """The columns named in ``spec`` (comma-separated, or ``all``); the defaults if None."""
    if spec is None:
        return [BY_NAME[n] for n in DEFAULT_COLUMNS]
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if names == ["all"]:
        return list(COLUMNS)
    if not names:
        raise ValueError("--columns: no column named; give e.g. --columns top1_error,p50 "
                         f"or --columns all (valid names: {', '.join(BY_NAME)})")
    return [get_column(n) for n in names]
