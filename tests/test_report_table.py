from report_records import record

from xcbench.report.params import shown_params
from xcbench.report.table import markdown_report


def _table_lines(text, dataset="d"):
    section = text.split(f"## {dataset}\n", 1)[1].split("\n## ")[0]
    return [line for line in section.splitlines() if line.startswith("|")]


def test_default_table_is_short_with_units_and_three_digits():
    text = markdown_report([record("ova", params={"C": 1.0}, top1=0.11213),
                            record("ova", params={"C": 1.0}, seed=1, top1=0.13346)])
    head, _, row = _table_lines(text)
    assert head == ("| method | params | seeds | top-1 error (%) | top-5 error (%) | perplexity "
                    "| coverage (%) | p50 (ms) | fit (s) | model (MB) |")
    assert row == ("| ova | set C=1 | 2 | 12.3 ± 1.5 | 6.14 ± 0.75 | 3.00 | 100 | 0.0500 | 1.23 "
                   "| 0.123 |")


def test_columns_option_and_empty_default_columns_dropped():
    rec = record("m", params={"a": 1})
    rec["metrics"].pop("perplexity")
    head = _table_lines(markdown_report([rec]))[0]
    assert "perplexity" not in head and "coverage (%)" in head
    head = _table_lines(markdown_report([rec], columns="perplexity,p50"))[0]
    assert head == "| method | params | seeds | perplexity | p50 (ms) |"
    assert _table_lines(markdown_report([rec], columns="perplexity,p50"))[2].endswith(
        "| n/a | 0.0500 |")
    assert "fit peak RSS (MB)" in markdown_report([rec], columns="all")


def test_rows_show_parameter_values_not_just_defaults():
    assert shown_params({"alpha": 0.1, "random_state": 3}) == "alpha=0.1"
    assert shown_params({}) == "defaults"  # an old record: today's defaults may differ
    used = {"C": 1.0, "max_iter": 100, "n_jobs": 2, "random_state": 0}
    assert shown_params({}, used) == "C=1, max_iter=100"  # one spelling of 1.0
    assert shown_params({"C": 2.0}, {**used, "C": 2.0}) == "C=2"
    assert shown_params({"tol": 1e-05, "loss": ""}) == "loss='', tol=1e-05"


def test_records_store_the_values_the_run_used():
    from xcbench.contract.plugins import get_method_spec
    from xcbench.store.results import effective_params

    spec = get_method_spec("ova")
    used = effective_params(spec, {"C": 0.5}, {})
    assert used["C"] == 0.5 and used["max_iter"] == spec.make().get_params()["max_iter"]
    assert effective_params(spec, {"no_such_param": 1}, {}) is None


def test_mixed_machines_get_a_notice_and_a_machine_column():
    text = markdown_report([record("a", cpu="AMD EPYC"), record("b", cpu="Intel Xeon"),
                            record("c", dataset="e")])
    d_part = text.split("## d\n", 1)[1].split("## e\n")[0]
    assert "this table mixes 2 machines" in d_part and "AMD EPYC, Linux-x" in d_part
    head, _, first, second = _table_lines(text)
    assert head.startswith("| method | params | machine | seeds |")
    assert first.startswith("| a | defaults | AMD EPYC | 1 |")
    assert second.startswith("| b | defaults | Intel Xeon | 1 |")
    e_part = text.split("## e\n", 1)[1]
    assert "mixes" not in e_part and "| machine |" not in e_part
    assert "Machines: AMD EPYC, Linux-x; CPU A, Linux-x; Intel Xeon, Linux-x" in text


def test_hosts_name_the_machines_and_separate_rows():
    text = markdown_report([record("a", host="node1", seed=0),
                            record("a", host="node2", seed=1)])
    rows = _table_lines(text)[2:]
    assert [r.split(" | ")[2] for r in rows] == ["node1", "node2"]
    assert "node1 (CPU A); node2 (CPU A)" in text


def test_failed_runs_are_listed():
    text = markdown_report([record("a"), record("b", status="error")])
    assert "| b | defaults | 0 | error | boom |" in text


def test_one_machine_is_described_once_with_its_host():
    text = markdown_report([record("a", host="node1"), record("b", host="node1")])
    assert "Machine: node1, CPU A (2 CPUs), 1 thread(s) per run" in text
    assert "mixes" not in text and "| machine |" not in text


def test_records_without_a_host_match_newer_ones_of_the_same_cpu():
    text = markdown_report([record("a", host="node1"), record("b")])
    assert "mixes" not in text and "| machine |" not in text
    text = markdown_report([record("a", host="node1"), record("b", cpu="CPU B")])
    assert "mixes 2 machines" in text and "CPU A, Linux-x; CPU B, Linux-x" in text
