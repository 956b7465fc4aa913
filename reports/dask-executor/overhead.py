"""What one cell costs the Dask scheduler and the client, apart from the cell's own work.

Usage: python reports/dask-executor/overhead.py RESULTS_FOLDER
(RESULTS_FOLDER: the output of any `xcbench run`, whose first ok record and its raw outputs
are re-stored here as a realistic record). Prints:
- the round trip of one no-op task (submit -> result) on a 2-worker loopback LocalCluster,
- the scheduler's throughput on 2,000 no-op tasks (tasks per second, so seconds per task),
- the client's cost of storing one cell: appending its record (fsync'ed) and writing its raw
  outputs (compressed .npz), the only per-cell work that does not spread over the workers.
"""
import statistics
import sys
import tempfile
import time

import distributed

from xcbench.run.dask_executor import local_cluster
from xcbench.store.results import ResultStore


def noop(i):
    return i


def scheduler_costs(client, round_trips=200, tasks=2000):
    """(median seconds of one task's round trip, seconds per task at full throughput)."""
    trips = []
    for i in range(round_trips):
        t0 = time.perf_counter()
        client.submit(noop, i, pure=False).result()
        trips.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    client.gather(client.map(noop, range(tasks), pure=False))
    return statistics.median(trips), (time.perf_counter() - t0) / tasks


def store_costs(results_folder, repeats=50):
    """(median seconds to append one record, median seconds to write its raw outputs)."""
    source = ResultStore(results_folder)
    record = next(r for r in source.records() if r["status"] == "ok" and r.get("raw"))
    raw = source.load_raw(record)
    appends, raws = [], []
    with tempfile.TemporaryDirectory() as tmp:
        store = ResultStore(tmp)
        for _ in range(repeats):
            t0 = time.perf_counter()
            store.append_many([record])
            appends.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            store.save_raw(record["key"], raw)
            raws.append(time.perf_counter() - t0)
    return statistics.median(appends), statistics.median(raws), record


def main(results_folder):
    with local_cluster(2) as cluster, distributed.Client(cluster) as client:
        trip, per_task = scheduler_costs(client)
    append, raw, record = store_costs(results_folder)
    print(f"no-op task round trip (median of 200): {trip * 1e3:.2f} ms")
    print(f"scheduler throughput on 2,000 no-op tasks: {1 / per_task:.0f} tasks/s "
          f"({per_task * 1e3:.2f} ms per task)")
    print(f"client, per cell ({record['method']} on {record['dataset']}, "
          f"{record['dataset_stats']['n_test']} test examples): append record "
          f"{append * 1e3:.1f} ms, write raw outputs {raw * 1e3:.1f} ms (medians of 50)")


if __name__ == "__main__":
    main(sys.argv[1])
