"""Statistics of two records of the same cell (or two rows of a report) from what the
store keeps: top-1 correctness and the (smoothed) log-probability of the true class per
test row from the raw outputs, timing repeats from the record, and the differences between
two sides that make a comparison meaningless."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..metrics import DEFAULT_SMOOTHING_EPSILON, smoothed_log_proba
from ..numbers import format_gb
from ..stats import (Interval, McNemar, bootstrap_median_ratio, mcnemar_exact,
                    paired_bootstrap_error_difference, paired_bootstrap_perplexity_ratio)

#: run options whose difference changes what is measured (compare refuses) and the others
#: stored with a record (compare notes them)
MEASURING_OPTIONS = ("threads", "fit_threads", "latency_calls", "topk")
OTHER_OPTIONS = ("timeout", "memory_limit")


def ok_raw(store, record: dict) -> dict | None:
    """The raw outputs an ``ok`` record kept in ``store``; None when it is not ok, kept
    none, or its raw file is damaged (then with a warning naming the file and record)."""
    if not record or record.get("status") != "ok":
        return None
    return store.load_raw_or_warn(record, "its paired tests are left out (n/a)")


def correct_rows(record: dict, raw: dict | None) -> tuple[np.ndarray, np.ndarray] | None:
    """(whether each test row's top-1 label is right, the true labels) from a record's raw
    outputs; None without them."""
    if not raw or "true_rank" not in raw or "y" not in raw:
        return None
    return np.asarray(raw["true_rank"]) == 0, np.asarray(raw["y"])


def log_p_rows(record: dict, raw: dict | None) -> tuple[np.ndarray, np.ndarray] | None:
    """(each test row's smoothed log-probability of its true class, the true labels) from a
    record's raw outputs, smoothed as its ``perplexity_smoothed`` is; None when the record
    gives no probabilities or kept no raw outputs."""
    n_classes = (record.get("dataset_stats") or {}).get("n_classes")
    if not raw or n_classes is None or any(
            name not in raw for name in ("log_p", "support", "y")):
        return None
    epsilon = (record.get("metrics") or {}).get("smoothing_epsilon", DEFAULT_SMOOTHING_EPSILON)
    return smoothed_log_proba(raw["log_p"], raw["support"], n_classes, epsilon), \
        np.asarray(raw["y"])


def top1_correct(store, record: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`correct_rows` of an ``ok`` record's raw outputs in ``store``."""
    return correct_rows(record, ok_raw(store, record))


def paired_rows(per_row, side_a: list[tuple], side_b: list[tuple]
                ) -> tuple[np.ndarray, np.ndarray] | None:
    """A per-row quantity of A and of B over the same test rows: each side a list of
    (record, raw outputs), paired in order (e.g. one per shared seed); ``per_row(record,
    raw)`` gives (values, true labels) or None (:func:`correct_rows`, :func:`log_p_rows`);
    each pair's rows concatenated; None when a pair lacks the values or its two sides were
    not measured on the same rows (true labels differ)."""
    parts_a, parts_b = [], []
    for (rec_a, raw_a), (rec_b, raw_b) in zip(side_a, side_b):
        a, b = per_row(rec_a, raw_a), per_row(rec_b, raw_b)
        if a is None or b is None or a[1].shape != b[1].shape or not np.array_equal(a[1], b[1]):
            return None
        parts_a.append(a[0])
        parts_b.append(b[0])
    if not parts_a:
        return None
    return np.concatenate(parts_a), np.concatenate(parts_b)


def latency_calls(record: dict) -> np.ndarray | None:
    """The timed single-example calls (seconds) an ``ok`` record kept, or None."""
    if not record or record.get("status") != "ok":
        return None
    calls = (record.get("timings") or {}).get("latency_seconds")
    return np.asarray(calls, dtype=np.float64) if calls else None


@dataclass(frozen=True)
class PairStatistics:
    """The paired statistics of B against A (None where the data to compute one is
    missing): McNemar's test and the error difference B - A on the same rows, and the
    ratio of median single-example latency B / A, and the smoothed perplexity ratio B / A on
    the same rows (where both give probabilities)."""

    mcnemar: McNemar | None
    error_difference: Interval | None
    p50_ratio: Interval | None
    perplexity_ratio: Interval | None = None

    @property
    def error_significant(self) -> bool | None:
        return None if self.mcnemar is None else self.mcnemar.significant


def pair_statistics(store_a, records_a: list[dict], store_b, records_b: list[dict],
                    seed: int = 0) -> PairStatistics:
    """PairStatistics of B vs A from records paired in order (see ``paired_rows``);
    the latency ratio pools each side's timed calls."""
    # each record's raw outputs read once, for its top-1 rows and its log-probabilities
    side_a = [(r, ok_raw(store_a, r)) for r in records_a]
    side_b = [(r, ok_raw(store_b, r)) for r in records_b]
    correct = paired_rows(correct_rows, side_a, side_b)
    test = interval = ratio = None
    if correct is not None:
        test = mcnemar_exact(*correct)
        interval = paired_bootstrap_error_difference(*correct, seed=seed)
    calls_a = [latency_calls(r) for r in records_a]
    calls_b = [latency_calls(r) for r in records_b]
    if calls_a and calls_b and all(c is not None for c in calls_a + calls_b):
        times_a, times_b = np.concatenate(calls_a), np.concatenate(calls_b)
        if np.median(times_a) > 0:
            ratio = bootstrap_median_ratio(times_a, times_b, seed=seed)
    log_p = paired_rows(log_p_rows, side_a, side_b)
    perplexity = None if log_p is None else paired_bootstrap_perplexity_ratio(*log_p, seed=seed)
    return PairStatistics(test, interval, ratio, perplexity)


def side_differences(pairs: list[tuple[dict, dict]]) -> tuple[list[str], list[str]]:
    """(differences that make the two sides measure different things, other differences)
    over ``pairs`` of records (A, B) of the same cell: measuring run options and dataset
    checksums first, then timeouts and memory limits; each a sentence naming the option or
    dataset, both values and how many cells differ."""
    def collect(get, names):
        found: dict = {}
        for a, b in pairs:
            for name in names:
                va, vb = get(a, name), get(b, name)
                if va != vb:
                    found.setdefault((name, _text(va, name), _text(vb, name)), []).append(a)
        return found

    def option(record, name):
        return (record.get("run_options") or {}).get(name, "(not recorded)")

    serious = [f"run option {name}: A {va}, B {vb} ({len(cells)} cell(s))"
               for (name, va, vb), cells in collect(option, MEASURING_OPTIONS).items()]
    checksums: dict = {}
    for a, b in pairs:
        if a.get("dataset_checksum") != b.get("dataset_checksum"):
            checksums.setdefault((a["dataset"], a.get("dataset_checksum"),
                                  b.get("dataset_checksum")), []).append(a)
    serious += [f"dataset {name} checksum: A {ca}, B {cb} (other data; {len(cells)} cell(s))"
                for (name, ca, cb), cells in checksums.items()]
    other = [f"run option {name}: A {va}, B {vb} ({len(cells)} cell(s))"
             for (name, va, vb), cells in collect(option, OTHER_OPTIONS).items()]
    return serious, other


def _text(value, option: str = "") -> str:
    """A run option's value as compare prints it: memory limits as sizes (``14.1 GB``)."""
    if value is None:
        return "unset"
    if option == "memory_limit" and isinstance(value, (int, float)):
        return format_gb(value)
    return str(value)


def cell_statistics(cells, store_a, store_b) -> dict:
    """{index in ``cells``: PairStatistics} for each cell (a ``compare.CellComparison``)
    measured ok on both sides."""
    return {i: pair_statistics(store_a, [c.a], store_b, [c.b]) for i, c in enumerate(cells)
            if c.side == "both" and c.a.get("status") == "ok" and c.b.get("status") == "ok"}


def verdict(stats: PairStatistics) -> str:
    """``B better`` / ``B worse`` (McNemar p < 0.05), ``not significant``, or ``n/a``
    (no raw outputs on a side, or other test rows)."""
    if stats.mcnemar is None:
        return "n/a"
    if not stats.mcnemar.significant:
        return "not significant"
    return "B better" if stats.error_difference.estimate < 0 else "B worse"


def _interval(interval: Interval | None, scale: float, digits: str) -> str:
    if interval is None:
        return "–"
    return (f"{interval.estimate * scale:{digits}} ({interval.low * scale:{digits}} to "
            f"{interval.high * scale:{digits}})")


def statistics_markdown(cells, stats: dict, params_label=str) -> list[str]:
    """The markdown section of paired tests: per cell the top-1 error difference B - A in
    points with its 95% interval, McNemar's p, the verdict, the p50 ratio interval and the
    smoothed perplexity ratio interval (``params_label`` writes a cell's params); nothing
    when no cell was measured ok on both sides."""
    if not stats:
        return []
    lines = ["", "## Is each difference larger than noise? (paired, same test rows)", "",
             "Top-1 error: McNemar's exact test on the test rows one side got right and the "
             "other wrong (raw outputs in each folder's `raw/`), and a paired bootstrap 95% "
             "interval of error B - A in percentage points. p50 latency: bootstrap 95% "
             "interval of the ratio of medians B/A over the timed calls; it covers "
             "call-to-call noise within each run, not drift between runs (other jobs on the "
             "machine), so read it with the machines above in mind. Perplexity (methods that "
             "give probabilities): paired bootstrap 95% interval of the smoothed perplexity "
             "ratio B/A over the same test rows.", "",
             "| method | params | dataset | seed | error B - A (points, 95% CI) | "
             "McNemar p | top-1 error | p50 B/A (95% CI) | perplexity B/A (95% CI) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for i, stat in stats.items():
        c = cells[i]
        p = "–" if stat.mcnemar is None else f"{stat.mcnemar.pvalue:.3g}"
        lines.append(f"| {c.method} | {params_label(c.params)} | {c.dataset} | {c.seed} | "
                     f"{_interval(stat.error_difference, 100, '+.2f')} | {p} | "
                     f"{verdict(stat)} | {_interval(stat.p50_ratio, 1, '.3g')} | "
                     f"{_interval(stat.perplexity_ratio, 1, '.3g')} |")
    tested = [s for s in stats.values() if s.mcnemar is not None]
    significant = [cells[i] for i, s in stats.items() if s.error_significant]
    lines += ["", f"{len(significant)} of {len(tested)} tested cell(s) differ significantly "
              "in top-1 error (p < 0.05, each test on its own: with many cells, expect about "
              "1 in 20 by chance)" + (": " + "; ".join(
                  f"{c.method} {params_label(c.params)} on {c.dataset} seed {c.seed}"
                  for c in significant) if significant else "") + "."]
    return lines


def statistics_columns(stat: PairStatistics | None) -> dict:
    """The CSV columns of one cell's statistics (empty when not computed)."""
    diff = stat.error_difference if stat else None
    ratio = stat.p50_ratio if stat else None
    ppl = stat.perplexity_ratio if stat else None
    return {"top1_error_diff": diff.estimate if diff else None,
            "top1_error_diff_low": diff.low if diff else None,
            "top1_error_diff_high": diff.high if diff else None,
            "mcnemar_p": stat.mcnemar.pvalue if stat and stat.mcnemar else None,
            "top1_error_verdict": verdict(stat) if stat else None,
            "latency_p50_ratio_low": ratio.low if ratio else None,
            "latency_p50_ratio_high": ratio.high if ratio else None,
            "perplexity_ratio": ppl.estimate if ppl else None,
            "perplexity_ratio_low": ppl.low if ppl else None,
            "perplexity_ratio_high": ppl.high if ppl else None}


STATISTICS_COLUMNS = list(statistics_columns(None))
