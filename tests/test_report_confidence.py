"""Reports name the commit(s) and machine(s) behind each table and mark the rows not
distinguishable from the best one."""
import numpy as np

from xcbench.report import write_report
from xcbench.report.provenance import provenance_line
from xcbench.report.significance import p_text, vs_best
from xcbench.run.options import RunOptions
from xcbench.run.runner import execute_plan
from xcbench.store.results import ResultStore


def _record(commit, host, dirty=False, platform=None):
    environment = {"host": host, "cpu": "CPU"}
    if platform:
        environment |= {"platform": f"{platform}-x86_64-with-glibc2.36", "machine": "x86_64"}
    return {"code": {"commit": commit, "dirty": dirty}, "environment": environment}


def test_provenance_line_names_commits_and_machines():
    one = [_record("a" * 40, "vm")] * 3
    assert provenance_line(one) == "Made at commit aaaaaaa, on vm."
    mixed = one + [_record("b" * 40, "vm", dirty=True)]
    assert provenance_line(mixed) == ("Made at commits aaaaaaa (3 records) and bbbbbbb+dirty "
                                      "(1 record), on vm.")


def test_provenance_line_tells_apart_hosts_of_the_same_name_by_platform():
    """Cloned virtual machines all call themselves "vm": the platform names each one."""
    fast = [_record("a" * 40, "vm", platform="Linux-6.18-fc-v50")] * 2
    slow = [_record("a" * 40, "vm", platform="Linux-6.18-fc-v657")]
    assert provenance_line(fast) == "Made at commit aaaaaaa, on vm (Linux-6.18-fc-v50)."
    assert provenance_line(fast + slow) == (
        "Made at commit aaaaaaa, on vm (Linux-6.18-fc-v50) (2 records) and "
        "vm (Linux-6.18-fc-v657) (1 record).")


def test_p_text():
    assert p_text(0.31) == "≈ p 0.31"
    assert p_text(0.012) == "p 0.012"
    assert p_text(1e-9) == "p < 0.001"


def test_report_marks_rows_against_the_best(tmp_path):
    options = RunOptions(latency_calls=20, latency_warmup=2, throughput_repeats=1,
                         timeout=120, isolate=False)
    execute_plan(["softmax", "ova"], ["synthetic-small"], [0, 1], out=tmp_path,
                 param_overrides={"softmax": {"C": [1e-4, 1.0]}}, options=options,
                 progress=False)
    store = ResultStore(tmp_path)
    records = store.latest()
    from xcbench.report.aggregate import group_rows

    rows = group_rows(records)
    marks = vs_best(rows, records, store)
    assert list(marks.values()).count("best") == 1
    best = min(rows, key=lambda r: r["values"]["top1_error"][0])
    worst = max(rows, key=lambda r: r["values"]["top1_error"][0])
    assert marks[(best["dataset"], best["method"],
                  __import__("json").dumps(best["params"], sort_keys=True),
                  best["machine"])] == "best"
    # a nearly untrained softmax (C = 1e-4) is far worse than the best, on 2 x 500 rows
    assert worst["params"] == {"C": 0.0001}
    assert np.isfinite(worst["values"]["top1_error"][0])
    text = write_report(tmp_path)["markdown"].read_text()
    assert "| vs best |" in text and "| best |" in text and "| p < 0.001 |" in text
    assert "Made at commit" in text and "McNemar's exact test" in text
