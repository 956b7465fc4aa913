"""Statistics of two records of the same cell (or two rows of a report) from what the
store keeps: top-1 correctness per test row from the raw outputs, timing repeats from the
record, and the differences between two sides that make a comparison meaningless."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..stats import (Interval, McNemar, bootstrap_median_ratio, mcnemar_exact,
                    paired_bootstrap_error_difference)

#: run options whose difference changes what is measured (compare refuses) and the others
#: stored with a record (compare notes them)
MEASURING_OPTIONS = ("threads", "fit_threads", "latency_calls", "topk")
OTHER_OPTIONS = ("timeout", "memory_limit")


def top1_correct(store, record: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """(whether each test row's top-1 label is right, the true labels) of an ``ok``
    record from its raw outputs in ``store``; None when they were not kept."""
    if not record or record.get("status") != "ok":
        return None
    raw = store.load_raw(record)
    if not raw or "labels" not in raw or "y" not in raw:
        return None
    labels, y = np.asarray(raw["labels"]), np.asarray(raw["y"])
    top1 = labels[:, 0] if labels.ndim == 2 else labels
    return top1 == y, y


def paired_correct(store_a, records_a: list[dict], store_b,
                   records_b: list[dict]) -> tuple[np.ndarray, np.ndarray] | None:
    """The top-1 correctness of A and B over the same test rows: records paired in order
    (e.g. one per shared seed), each pair's rows concatenated; None when a pair lacks raw
    outputs or its two sides were not measured on the same rows (true labels differ)."""
    parts_a, parts_b = [], []
    for rec_a, rec_b in zip(records_a, records_b):
        a, b = top1_correct(store_a, rec_a), top1_correct(store_b, rec_b)
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
    ratio of median single-example latency B / A."""

    mcnemar: McNemar | None
    error_difference: Interval | None
    p50_ratio: Interval | None

    @property
    def error_significant(self) -> bool | None:
        return None if self.mcnemar is None else self.mcnemar.significant


def pair_statistics(store_a, records_a: list[dict], store_b, records_b: list[dict],
                    seed: int = 0) -> PairStatistics:
    """PairStatistics of B vs A from records paired in order (see ``paired_correct``);
    the latency ratio pools each side's timed calls."""
    correct = paired_correct(store_a, records_a, store_b, records_b)
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
    return PairStatistics(test, interval, ratio)


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
                    found.setdefault((name, _text(va), _text(vb)), []).append(a)
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


def _text(value) -> str:
    return "unset" if value is None else str(value)
