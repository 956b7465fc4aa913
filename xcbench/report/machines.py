"""Which machine measured a record, so a table that mixes machines can say so."""
from __future__ import annotations


def machine_label(record: dict) -> str:
    """A short name of the machine that measured ``record``: ``host (cpu)`` when the record
    names its host, else ``cpu, platform``; ``unknown machine`` when it names neither."""
    env = record.get("environment") or {}
    host, cpu = env.get("host"), env.get("cpu")
    if host:
        return f"{host} ({cpu})" if cpu else str(host)
    return cpu_platform_label(record)


def cpu_platform_label(record: dict) -> str:
    """The machine of ``record`` by CPU and platform only (``unknown machine`` if neither)."""
    env = record.get("environment") or {}
    return ", ".join(str(env[k]) for k in ("cpu", "platform") if env.get(k)) or "unknown machine"


def machine_labeller(records: list[dict]):
    """The function naming machines among ``records``: ``machine_label`` when every record
    names its host, else ``cpu_platform_label`` (so records written before hosts were
    recorded still match newer ones from the same machine)."""
    if all((r.get("environment") or {}).get("host") for r in records):
        return machine_label
    return cpu_platform_label


def short_machine_names(labels) -> dict[str, str]:
    """{full label: the short name a table column shows}: the host, else the CPU (the part
    before the first comma or parenthesis), unless two machines would then share a name."""
    short = {label: label.split(" (")[0].split(",")[0] for label in labels}
    return short if len(set(short.values())) == len(short) else {lab: lab for lab in labels}


def machines(records: list[dict], label=None) -> list[str]:
    """The distinct machine labels of ``records`` (named by ``label``, by default
    ``machine_labeller(records)``), sorted."""
    label = label or machine_labeller(records)
    return sorted({label(r) for r in records})


def mixed_machines_notice(records: list[dict], label=None) -> str | None:
    """A sentence warning that ``records`` come from several machines (listing them, named
    by ``label`` as in ``machines``), or None when one machine measured them all."""
    names = machines(records, label)
    if len(names) < 2:
        return None
    return (f"**Note: this table mixes {len(names)} machines** ({'; '.join(names)}); "
            "the `machine` column says which measured each row. Compare latency and "
            "training times only between rows of the same machine.")
