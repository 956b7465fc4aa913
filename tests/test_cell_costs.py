"""The expected duration of planned cells (``cell_costs``) and the ETA it gives a run from its
first cell on, on a fake clock."""
import io

import pytest

from xcbench.run.cell_costs import CellCosts, Guess, dataset_size, this_machine
from xcbench.run.progress import RunProgress

HERE = this_machine()
SMALL = {"n_train": 1000, "n_classes": 10}  # rows x classes 1e4
LARGE = {"n_train": 4000, "n_classes": 50}  # 2e5: 20 times SMALL


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _record(method, dataset, seconds, stats=SMALL, status="ok", environment=HERE):
    return {"method": method, "dataset": dataset, "wall_seconds": seconds, "status": status,
            "dataset_stats": stats, "environment": dict(environment)}


def _plain(cells, costs, parallel=1):
    err = io.StringIO()
    bar = RunProgress(len(cells), parallel, cells=cells, costs=costs, stream=err,
                      out=io.StringIO(), terminal=False, clock=FakeClock())
    return bar, err


def test_dataset_size_is_rows_times_classes():
    assert dataset_size(LARGE) == 200000
    assert dataset_size({"n_train": 5}) is None
    assert dataset_size(None) is None


def test_earlier_records_of_this_machine_give_an_eta_before_any_cell_finished():
    records = [_record("ova", "small", 30.0), _record("ova", "small", 50.0),
               _record("st", "small", 5.0),
               _record("st", "small", 999.0, status="timeout"),  # not a duration
               _record("st", "small", 999.0, environment={**HERE, "host": "elsewhere"})]
    bar, _ = _plain([("ova", "small"), ("st", "small")], CellCosts.from_records(records))
    assert bar.eta() == "ETA 45s"  # ova's mean 40 s + st's 5 s


def test_a_method_on_a_dataset_of_known_size_is_scaled_by_rows_times_classes():
    costs = CellCosts.from_records([_record("ova", "small", 10.0),
                                    _record("st", "large", 1.0, stats=LARGE)])
    assert costs.expected("ova", "large") == Guess(200.0)  # 20 times the rows x classes
    assert costs.expected("hsm", "large") is None  # nothing known of hsm: estimating
    costs.learn_size("huge", {"n_train": 40000, "n_classes": 50})
    assert costs.expected("ova", "huge") == Guess(2000.0)


def test_the_estimate_follows_the_pace_of_this_run():
    costs = CellCosts.from_records([_record("ova", "small", 10.0), _record("st", "small", 4.0)])
    bar, err = _plain([("ova", "small"), ("st", "small")], costs)
    assert bar.eta() == "ETA 14s"
    bar.finished("ova 1", "ova", 20.0, dataset="small")  # twice as slow as recorded
    assert bar.eta() == "ETA 8s"  # st's 4 s, twice
    assert err.getvalue().splitlines() == ["xcbench run: 1/2 done, ETA 8s"]


def test_methods_with_one_cell_each_get_an_eta_after_the_first_finished_cell():
    bar, err = _plain([("ova", "small"), ("st", "small"), ("hsm", "large")], CellCosts())
    bar.dataset_loaded("small", SMALL)
    bar.cell_status("ova 1", "ova", "fitting", 3.0, dataset="small")
    bar.finished("ova 1", "ova", 10.0, dataset="small")
    # ova's 10 s is a rough guess (~) for st and hsm; large's size is not known yet
    assert bar.eta() == "ETA ~20s"
    bar.dataset_loaded("large", LARGE)
    assert bar.eta() == "ETA ~3m30s"  # hsm: 20 times the rows x classes of small
    bar.finished("st 1", "st", 2.0, dataset="small")
    assert bar.eta() == "ETA ~2m00s"  # hsm at the mean rate of ova's and st's cells
    assert err.getvalue().splitlines() == [
        "xcbench run: 0/3 done; ova 1: fitting 3 s, ETA estimating",
        "xcbench run: 1/3 done, ETA ~20s",
        "xcbench run: 2/3 done, ETA ~2m00s"]


def test_on_two_workers_the_eta_never_drops_below_a_running_cell():
    """Dask: the last cell outran its estimate; the others finished. Not "ETA 0s"."""
    costs = CellCosts.from_records([_record("ova", "small", 40.0)])
    bar, err = _plain([("ova", "small")] * 4, costs, parallel=2)
    for i in range(3):
        bar.finished(f"ova {i}", "ova", 40.0, dataset="small")
    bar.cell_status("ova 3", "ova", "fitting", 60.0, dataset="small")
    assert bar.eta() == "ETA 6s"  # a tenth of its 60 s so far
    bar.cell_status("ova 3", "ova", "fitting", 20.0, dataset="small")
    assert bar.eta() == "ETA 20s"  # the rest of its 40 s, not halved by the idle worker
    bar.finished("ova 3", "ova", 70.0, dataset="small")
    assert bar.eta() == "ETA 0s"
    assert "3/4 done, ETA 0s" not in err.getvalue()


@pytest.mark.parametrize("skip_with_dataset", [True, False])
def test_cells_skipped_leave_the_estimate(skip_with_dataset):
    costs = CellCosts.from_records([_record("ova", "small", 10.0),
                                    _record("ova", "large", 100.0, stats=LARGE)])
    bar, _ = _plain([("ova", "small"), ("ova", "large")], costs)
    assert bar.eta() == "ETA 1m50s"
    bar.skipped("ova", "large" if skip_with_dataset else None)
    # without its dataset, some cell of the method leaves (here the first planned)
    assert bar.eta() == ("ETA 10s" if skip_with_dataset else "ETA 1m40s")


def test_the_costs_of_a_store_skip_what_they_cannot_read(tmp_path):
    import json

    from xcbench.store.results import ResultStore

    good = {"schema_version": 2, "key": "k1", "method": "ova", "params": {}, "dataset": "small",
            "seed": 0, **_record("ova", "small", 12.0)}
    (tmp_path / "results.jsonl").write_text(json.dumps(good) + "\nnot json\n")
    assert CellCosts.from_store(ResultStore(tmp_path)).expected("ova", "small") == Guess(12.0)
