"""The line under each report table that says which code and which machine made its rows."""
from __future__ import annotations

from collections import Counter

from ..store.provenance import record_code, short_commit
from .machines import machine_labeller, short_machine_names


def provenance_line(records: list[dict], all_records: list[dict] | None = None) -> str:
    """``Made at commit abc1234 (9 records) and def5678+dirty (2), on host (cpu).`` for
    ``records`` (machines named as across ``all_records``, the whole report)."""
    commits = Counter(short_commit(record_code(r)) for r in records)
    label = machine_labeller(all_records or records)
    machines = Counter(label(r) for r in records)
    short = short_machine_names(machines)

    def listing(counts, name=lambda x: x):
        items = [f"{name(k)} ({n} record{'s' if n > 1 else ''})" if i == 0 or len(counts) > 1
                 else name(k) for i, (k, n) in enumerate(counts.most_common())]
        if len(counts) == 1:
            return name(next(iter(counts)))
        return ", ".join(items[:-1]) + " and " + items[-1]

    many = len(commits) > 1
    return (f"Made at commit{'s' if many else ''} {listing(commits)}, on "
            f"{listing(machines, lambda m: short[m])}.")
