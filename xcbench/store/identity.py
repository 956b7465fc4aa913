"""What a record measures, independent of the code that measured it: the identity
``--resume``, suites and reports match records by, and the run options that are part of it."""
from __future__ import annotations

import json

from ..contract.method_params import canonical_params

#: run options that change what is measured, so they are part of a record's key
KEYED_OPTIONS = ("threads", "fit_threads", "latency_calls", "topk")

#: an option an old record does not state (it matches any planned value)
UNSTATED = "(not recorded)"


def measurement_identity(method, params, dataset, seed, keyed_options) -> tuple:
    """What one record measures, independent of the code that measured it: method, canonical
    params (build + query), dataset, seed and the measuring options (``KEYED_OPTIONS``;
    ``fit_threads`` equal to ``threads`` is the default, None, as in ``RunOptions.keyed``)."""
    options = dict(keyed_options or {})
    fit_threads = options.get("fit_threads")
    if isinstance(fit_threads, int) and fit_threads == options.get("threads"):
        options["fit_threads"] = None
    return (method, json.dumps(canonical_params(params or {}), sort_keys=True, default=str),
            dataset, int(seed), tuple((k, options.get(k)) for k in KEYED_OPTIONS))


def record_identity(record: dict) -> tuple:
    """``measurement_identity`` of a stored record (its params already hold the query
    params); an option the record does not state is ``UNSTATED``."""
    stated = record.get("run_options") or {}
    options = {k: stated.get(k, UNSTATED) for k in KEYED_OPTIONS}
    return measurement_identity(record["method"], record.get("params"), record["dataset"],
                                record["seed"], options)


def newest_per_measurement(records: list[dict]) -> list[dict]:
    """The newest record of each measurement (latest ``started_at``; on a tie, the later
    in file order), in file order: a record made again, by the same code or by newer code
    (another key), supersedes the older one. A record that does not state its run options
    (made before records kept them) is the same measurement as any record of its method,
    params, dataset and seed, as ``--resume`` matches it, so a newer one supersedes it."""
    newest: dict = {}
    for index, record in enumerate(records):
        ident = record_identity(record)
        rank = newness(record, index)
        if ident not in newest or rank >= newest[ident][0]:
            newest[ident] = (rank, index, record)
    stated: dict = {}  # (method, params, dataset, seed) -> newest rank of a record with options
    for ident, (rank, _, record) in newest.items():
        if record.get("run_options"):
            stated[ident[:4]] = max(rank, stated.get(ident[:4], rank))
    kept = [(rank, index, record) for ident, (rank, index, record) in newest.items()
            if record.get("run_options") or stated.get(ident[:4], rank) <= rank]
    return [record for _, _, record in sorted(kept, key=lambda v: v[1])]


def newness(record: dict, index: int) -> tuple:
    """How new a record is, to compare: its ``started_at``, then its place in the file."""
    return (record.get("started_at") or "", index)
