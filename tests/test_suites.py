"""Suite files: parsing, checks before any work, --only, and the suites shipped with
xcbench and with each report."""
import tomllib
import warnings
from pathlib import Path

import pytest

from xcbench.run.suites import NAMED_SUITES, load_suite, parse_suite, suite_cells
from xcbench.run.suites import SuiteError, newest_per_planned, plan_vs_records

REPORTS = Path(__file__).resolve().parent.parent / "reports"


def _suite(text: str, tmp_path=None):
    data = tomllib.loads(text)
    return parse_suite(data, (tmp_path / "suite.toml") if tmp_path else None)


BASIC = """
name = "t"
datasets = ["synthetic-small"]
seeds = [0, 1]
options = { timeout = 60, memory_limit = "1G" }

[[runs]]
methods = ["softmax", "hsm"]
[runs.params.softmax]
C = [0.1, 1]
[runs.query.hsm]
decoder = ["greedy", "topk"]

[[runs]]
methods = ["st"]
seeds = [3]
options = { timeout = 120, fit_threads = 2 }
[runs.params.st]
"k+depth" = [[4, 2], [8, 3]]
"""


def test_runs_inherit_the_top_level_and_plan_their_cells():
    suite = _suite(BASIC)
    first, second = suite.runs
    assert first.datasets == ("synthetic-small",) and first.seeds == (0, 1)
    assert first.options == {"timeout": 60, "memory_limit": 2 ** 30}
    assert second.seeds == (3,)
    assert second.options == {"timeout": 120, "memory_limit": 2 ** 30, "fit_threads": 2}
    assert second.run_options().fit_threads == 2
    cells = [cell for _, cell in suite_cells(suite)]
    softmax = [c for c in cells if c.method == "softmax"]
    assert sorted({c.params_dict["C"] for c in softmax}) == [0.1, 1]
    hsm = [c for c in cells if c.method == "hsm"]
    assert len(hsm) == 2  # one fit per seed, both decoders measured on it
    assert [dict(q)["decoder"] for q in hsm[0].queries] == ["greedy", "topk"]
    st = [c for c in cells if c.method == "st"]
    assert {(c.params_dict["k"], c.params_dict["depth"], c.seed) for c in st} == \
        {(4, 2, 3), (8, 3, 3)}


def test_top_level_params_reach_every_run_of_the_method_and_a_run_replaces_them():
    suite = _suite("""
datasets = ["synthetic-small"]
[params.st]
alpha = [1.0]
k = [4]
n_jobs = 2
[query.hsm]
decoder = ["greedy", "topk"]

[[runs]]
methods = ["st", "hsm"]
[[runs]]
methods = ["st"]
[runs.params.st]
alpha = [0.5]
"k+depth" = [[8, 3]]
""")
    first, second = suite.runs
    assert first.params == {"st": {"alpha": [1.0], "k": [4], "n_jobs": [2]},
                            "hsm": {"decoder": ["greedy", "topk"]}}
    assert first.query == {"hsm": ("decoder",)}
    assert second.params == {"st": {"n_jobs": [2], "alpha": [0.5], "k+depth": [(8, 3)]}}
    cells = [cell for _, cell in suite_cells(suite)]
    assert {(c.method, c.params_dict.get("alpha"), c.params_dict.get("k")) for c in cells} == \
        {("st", 1.0, 4), ("st", 0.5, 8), ("hsm", None, None)}
    with pytest.raises(SuiteError, match=r"top-level params/query of sst \(did you mean 'st'"):
        _suite("datasets = ['synthetic-small']\n[params.sst]\nC = 1\n[[runs]]\nmethods = ['st']")


def test_only_keeps_the_named_methods_and_datasets():
    suite = _suite(BASIC)
    assert suite.only("st").methods == ["st"]
    assert [r.methods for r in suite.only("softmax,hsm").runs] == [("softmax", "hsm")]
    assert suite.only("synthetic-small").methods == ["softmax", "hsm", "st"]
    with pytest.raises(SuiteError, match=r"'sofmax' is neither .*did you mean 'softmax'"):
        suite.only("sofmax")


def test_a_timeout_may_be_a_duration():
    suite = _suite("datasets = ['synthetic-small']\noptions = { timeout = '1h30m' }\n"
                   "[[runs]]\nmethods = ['ova']\n[[runs]]\nmethods = ['softmax']\n"
                   "options = { timeout = 600 }")
    assert [run.options["timeout"] for run in suite.runs] == [5400, 600]


@pytest.mark.parametrize("text,message", [
    ("[[runs]]\nmethod = ['ova']\ndatasets = ['letter']",
     r"unknown key\(s\) 'method' \(did you mean 'methods'"),
    ("datasets = ['letter']", r"at least one \[\[runs\]\]"),
    ("[[runs]]\nmethods = ['ova']", "no datasets"),
    ("datasets = ['synthetic-small']\nseeds = ['0']\n[[runs]]\nmethods = ['ova']",
     "seeds: expected a list of integers"),
    ("datasets = ['synthetic-small']\noptions = { timeout = -1 }\n[[runs]]\nmethods = ['ova']",
     r"\[options\]: timeout must be"),
    ("datasets = ['synthetic-small']\noptions = { threds = 2 }\n[[runs]]\nmethods = ['ova']",
     "did you mean 'threads'"),
    ("datasets = ['synthetic-small']\noptions = { memory_limit = 'lots' }\n[[runs]]\nmethods = ['ova']",
     "memory size 'lots' not understood"),
    ("datasets = ['synthetic-small']\noptions = { timeout = '10x' }\n[[runs]]\nmethods = ['ova']",
     r"\[options\]: '10x' is not a duration"),
    ("datasets = ['synthetic-small']\n[[runs]]\nmethods = ['st']\n[runs.params.st]\n'k+depth' = [[4]]",
     r"params.st.k\+depth: each value must be a list of 2 values"),
    ("datasets = ['synthetic-small']\n[[runs]]\nmethods = ['st']\n[runs.params.ova]\nC = [1]",
     "params.ova names a method not in this run's methods"),
])
def test_shape_problems_are_named(text, message):
    with pytest.raises(SuiteError, match=message):
        _suite(text)


@pytest.mark.parametrize("text,message", [
    ("datasets = ['synthetic-small']\n[[runs]]\nmethods = ['nope']", r"runs\[1\]: unknown method 'nope'"),
    ("datasets = ['synthetic-small']\n[[runs]]\nmethods = ['ova']\n[[runs]]\nmethods = ['ova']\n"
     "datasets = ['synthetic-smal']",
     r"runs\[2\]: unknown dataset 'synthetic-smal' \(did you mean 'synthetic-small'"),
    ("datasets = ['file:no-such-train.svm']\n[[runs]]\nmethods = ['ova']",
     r"runs\[1\]: dataset 'file:no-such-train.svm': no file"),
    ("datasets = ['synthetic-small']\n[[runs]]\nmethods = ['st']\n[runs.params.st]\ndeepth = [3]",
     "unknown parameter.*'deepth'.*did you mean 'depth'"),
    ("datasets = ['synthetic-small']\n[[runs]]\nmethods = ['hsm']\n[runs.query.hsm]\nlr = [0.1]",
     "query.hsm names build parameter"),
    ("datasets = ['synthetic-small']\n[[runs]]\nmethods = ['ova']\n[[runs]]\nmethods = ['ova']",
     r"runs\[2\]: ova .* is planned in .*runs\[1\] already"),
])
def test_plan_problems_are_named_before_any_work(text, message):
    suite = _suite(text)
    with pytest.raises(SuiteError, match=message):
        suite_cells(suite)


def test_the_same_cell_under_other_measuring_options_is_not_a_duplicate():
    suite = _suite("datasets = ['synthetic-small']\n[[runs]]\nmethods = ['ova']\n"
                   "[[runs]]\nmethods = ['ova']\noptions = { threads = 2 }")
    assert len(suite_cells(suite)) == 2


def test_out_is_relative_to_the_suite_file(tmp_path):
    suite = _suite("out = 'res'\ndatasets = ['synthetic-small']\n[[runs]]\nmethods = ['ova']", tmp_path)
    assert suite.out == tmp_path / "res"


def test_missing_file_names_the_named_suites():
    with pytest.raises(SuiteError, match="did you mean 'quick'"):
        load_suite("quik")


@pytest.mark.parametrize("name", NAMED_SUITES)
def test_named_suites_parse_plan_and_state_their_wall_time(name):
    suite = load_suite(name)
    assert suite.name == name
    assert suite.expected_wall and "2 cores" in suite.expected_wall
    assert suite_cells(suite)


REPORT_SUITES = sorted(REPORTS.glob("*/suite.toml"))


def test_every_report_has_a_suite():
    folders = sorted(p for p in REPORTS.iterdir() if (p / "README.md").exists())
    assert [p.parent for p in REPORT_SUITES] == folders


@pytest.mark.parametrize("path", REPORT_SUITES, ids=lambda p: p.parent.name)
def test_report_suite_plans_exactly_the_reports_records(path):
    from xcbench.store.results import ResultStore

    suite = load_suite(path)
    assert suite.expected_wall
    if not (path.parent / "results.jsonl").exists():  # a timing study, no records kept
        assert suite_cells(suite)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        records = ResultStore(path.parent).latest()
    missing, extra = plan_vs_records(suite, records)
    assert (missing, extra) == ([], [])
    if (path.parent / "results.jsonl").exists():
        assert suite.out == path.parent


def test_a_suite_report_leaves_out_records_a_newer_one_of_the_same_planned_cell_supersedes():
    """An old record lacking a query parameter (hsm's beam) serves the planned cell, and so
    does the newer record stating it: the suite's view keeps the newer only; a record the
    suite does not plan, and the old record of a cell not re-run, stay."""
    suite = _suite(BASIC)
    keyed = {"threads": 1, "fit_threads": None, "latency_calls": 1000, "topk": 5}

    def record(started, params, seed=0, method="hsm"):
        return {"method": method, "params": params, "dataset": "synthetic-small",
                "seed": seed, "started_at": started, "run_options": keyed}
    old = record("2026-01-01", {"decoder": "greedy"})
    new = record("2026-02-01", {"beam": 10, "decoder": "greedy"})
    old_seed1 = record("2026-01-01", {"decoder": "greedy"}, seed=1)
    unplanned = record("2026-01-01", {"decoder": "exact"})
    records = [old, old_seed1, unplanned, new]
    assert plan_vs_records(suite, [old])[1] == []  # the old record serves the plan alone
    assert newest_per_planned(suite, records) == [old_seed1, unplanned, new]
    assert newest_per_planned(suite, [new, old]) == [new]
