"""The line under each report table that says which code and which machine made its rows."""
from __future__ import annotations

from collections import Counter

from ..store.provenance import record_code, short_commit
from .machines import machine_labeller, short_machine_names


def platform_name(record: dict) -> str | None:
    """The record's operating-system platform without the architecture and C-library tail
    (``Linux-6.18.44-fc-v657`` for ``Linux-6.18.44-fc-v657-x86_64-with-glibc2.36``), or None.
    Hosts of cloned virtual machines share a name, so this is what tells them apart."""
    env = record.get("environment") or {}
    platform = env.get("platform")
    if not platform:
        return None
    arch = env.get("machine")
    return platform.split(f"-{arch}")[0] if arch else platform


def provenance_line(records: list[dict], all_records: list[dict] | None = None) -> str:
    """``Made at commit abc1234 (9 records) and def5678+dirty (2), on host (platform).`` for
    ``records`` (machines named as across ``all_records``, the whole report)."""
    commits = Counter(short_commit(record_code(r)) for r in records)
    label = machine_labeller(all_records or records)
    short = short_machine_names({label(r) for r in records})

    def machine(record):
        platform = platform_name(record)
        name = short[label(record)]
        return f"{name} ({platform})" if platform and platform not in name else name

    machines = Counter(machine(r) for r in records)

    def listing(counts):
        if len(counts) == 1:
            return next(iter(counts))
        items = [f"{k} ({n} record{'s' if n > 1 else ''})" for k, n in counts.most_common()]
        return ", ".join(items[:-1]) + " and " + items[-1]

    many = len(commits) > 1
    return (f"Made at commit{'s' if many else ''} {listing(commits)}, on "
            f"{listing(machines)}.")
