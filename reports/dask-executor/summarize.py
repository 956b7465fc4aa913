"""Summarise the runs of benchmark.sh: per run the records, the executor and host named in
them, the summed wall time of its cells (the serial work), and whether every metric equals
the first run's. Usage: python reports/dask-executor/summarize.py RUN_FOLDER..."""
import sys

from xcbench.store.results import ResultStore


def summary(folder, reference=None):
    """(one line describing the run in ``folder``, its records by key)."""
    records = {r["key"]: r for r in ResultStore(folder).records()}
    cell_seconds = {(r["method"], r["seed"], str({k: v for k, v in r["params"].items()
                                                  if k not in r.get("query_params", {})})):
                    r["wall_seconds"] for r in records.values()}  # per cell, not per record
    same = reference is None or (records.keys() == reference.keys() and all(
        records[k].get("metrics") == reference[k].get("metrics") for k in records))
    hosts = sorted({str(r["environment"].get("host")) for r in records.values()})
    executors = sorted({str(r["environment"].get("executor")) for r in records.values()})
    line = (f"{folder}: {len(records)} records, {len(cell_seconds)} cells, executor "
            f"{'/'.join(executors)}, host {'/'.join(hosts)}, summed cell wall time "
            f"{sum(cell_seconds.values()):.1f} s, metrics equal to the first run: {same}")
    return line, records


def main(folders):
    reference = None
    for folder in folders:
        line, records = summary(folder, reference)
        reference = reference or records
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
