"""Which machine measured a record, so a table that mixes machines can say so."""
from __future__ import annotations


def machine_label(record: dict) -> str:
    """A short name of the machine that measured ``record``: ``host (cpu)`` when the record
    names its host, else ``cpu, platform``; ``unknown machine`` when it names neither."""
    env = record.get("environment") or {}
    host, cpu, platform = env.get("host"), env.get("cpu"), env.get("platform")
    if host:
        return f"{host} ({cpu})" if cpu else str(host)
    return ", ".join(str(p) for p in (cpu, platform) if p) or "unknown machine"


def short_machine_names(labels) -> dict[str, str]:
    """{full label: the short name a table column shows}: the host, else the CPU (the part
    before the first comma or parenthesis), unless two machines would then share a name."""
    short = {label: label.split(" (")[0].split(",")[0] for label in labels}
    return short if len(set(short.values())) == len(short) else {lab: lab for lab in labels}


def machines(records: list[dict]) -> list[str]:
    """The distinct machine labels of ``records``, sorted."""
    return sorted({machine_label(r) for r in records})


def mixed_machines_notice(records: list[dict]) -> str | None:
    """A sentence warning that ``records`` come from several machines (listing them), or
    None when one machine measured them all."""
    names = machines(records)
    if len(names) < 2:
        return None
    return (f"**Note: this table mixes {len(names)} machines** ({'; '.join(names)}); "
            "the `machine` column says which measured each row. Compare latency and "
            "training times only between rows of the same machine.")
