"""Methods get read-only inputs and cannot change what they are scored on (issue 61, 1-2)."""
import numpy as np
import pytest
import scipy.sparse as sp

from fault_plugins import register
from xcbench.data import get_dataset_spec, data_dir
from xcbench.run.cell import measure_cell
from xcbench.run.inputs import freeze, read_only, read_only_dataset
from xcbench.run.plan import Cell
from xcbench.run.runner import RunOptions, run_plan

FAST = RunOptions(latency_calls=5, latency_warmup=1, throughput_repeats=1, timeout=60)
INLINE = RunOptions(**{**FAST.__dict__, "isolate": False})


@pytest.fixture
def faults(fresh_plugins):
    register()


@pytest.fixture
def small():
    """synthetic-small as loaded, its arrays writable (not the runner's frozen cache)."""
    return get_dataset_spec("synthetic-small").load(data_dir(None))


def _honest_top1(dataset) -> float:
    counts = np.bincount(dataset.y_train, minlength=dataset.n_classes)
    return float(np.mean(dataset.y_test != np.argmax(counts)))


def test_read_only_views_share_memory_and_refuse_writes():
    dense = np.arange(6.0).reshape(2, 3)
    sparse = sp.random(5, 4, density=0.5, format="csr", random_state=0)
    view = read_only(dense)
    assert np.shares_memory(view, dense)
    with pytest.raises(ValueError, match="read-only"):
        view[0, 0] = 1
    s = read_only(sparse)
    for name in ("data", "indices", "indptr"):
        assert np.shares_memory(getattr(s, name), getattr(sparse, name))
        with pytest.raises(ValueError, match="read-only"):
            getattr(s, name)[0] = 0
    assert (s @ np.ones(4) == sparse @ np.ones(4)).all()  # still a working matrix
    assert sparse.data.flags.writeable  # the original is untouched


def test_a_frozen_array_cannot_be_made_writable_through_a_view():
    base = freeze(np.zeros(3))
    view = read_only(base)
    with pytest.raises(ValueError):
        view.flags.writeable = True


@pytest.mark.parametrize("method", ["cheat-labels", "cheat-outputs"])
def test_a_cheat_through_its_inputs_or_outputs_gets_its_honest_score(faults, small, method):
    # the dataset's arrays are writable here, so cheat-labels can turn its view's write
    # flag back on: the scorer's own copy of the labels still gives the honest score
    honest = _honest_top1(small)
    result = measure_cell(Cell(method, (), "synthetic-small", 0), small, INLINE)
    assert result[0]["metrics"]["top1_error"] == pytest.approx(honest)
    assert honest > 0.9  # a cheat would have scored 0


def test_a_log_proba_overwriting_y_is_stored_with_its_honest_score(faults, tmp_path):
    labels, outputs = run_plan(["cheat-labels", "cheat-outputs"], ["synthetic-small"],
                               out=tmp_path, options=FAST, progress=False)
    honest = _honest_top1(get_dataset_spec("synthetic-small").load(data_dir(None)))
    # the runner's data is frozen: turning the view's write flag back on fails the cell
    assert labels["status"] == "error", labels["metrics"]
    assert "wrote into an input array" in labels["error"]
    assert outputs["status"] == "ok"
    assert outputs["metrics"]["top1_error"] == pytest.approx(honest)


def test_a_write_into_training_data_fails_the_cell_with_a_clear_error(faults, tmp_path):
    [record] = run_plan(["mutate-fit"], ["synthetic-small"], out=tmp_path, options=FAST,
                        progress=False)
    assert record["status"] == "error"
    assert "read-only" in record["error"] and "wrote into an input array" in record["error"]


def test_in_process_a_mutating_cell_cannot_change_the_next_cells_data(faults, tmp_path):
    dataset = get_dataset_spec("synthetic-small").load(data_dir(None))
    records = run_plan(["mutate-fit", "frequent"], ["synthetic-small"], out=tmp_path,
                       options=INLINE, progress=False)
    status = {r["method"]: r for r in records}
    assert status["mutate-fit"]["status"] == "error"
    assert "wrote into an input array" in status["mutate-fit"]["error"]
    # zeroed training labels would make class 0 the most frequent one
    assert status["frequent"]["metrics"]["top1_error"] == pytest.approx(_honest_top1(dataset))
    assert np.argmax(np.bincount(dataset.y_train)) != 0


def test_read_only_dataset_views_every_array(small):
    view = read_only_dataset(small)
    for name in ("X_train", "y_train", "X_test", "y_test"):
        assert not getattr(view, name).flags.writeable
        assert getattr(small, name).flags.writeable


def test_in_process_records_say_so_and_isolated_resume_measures_them_again(faults, tmp_path):
    from xcbench.store.results import ResultStore

    [inline] = run_plan(["frequent"], ["synthetic-small"], out=tmp_path, options=INLINE,
                        progress=False)
    assert inline["run_options"]["in_process"] is True
    assert run_plan(["frequent"], ["synthetic-small"], out=tmp_path, options=INLINE,
                    resume=True, progress=False) == []  # an in-process run reuses it
    [isolated] = run_plan(["frequent"], ["synthetic-small"], out=tmp_path, options=FAST,
                          resume=True, progress=False)
    assert isolated["key"] == inline["key"]  # the same measurement, measured again
    assert isolated["run_options"]["in_process"] is False
    assert run_plan(["frequent"], ["synthetic-small"], out=tmp_path, options=FAST,
                    resume=True, progress=False) == []
    assert len(ResultStore(tmp_path).records()) == 2


def test_reuse_from_lends_no_in_process_record(faults, tmp_path):
    run_plan(["frequent"], ["synthetic-small"], out=tmp_path / "a", options=INLINE,
             progress=False)
    records = run_plan(["frequent"], ["synthetic-small"], out=tmp_path / "b", options=FAST,
                       resume=True, reuse_from=[tmp_path / "a"], progress=False)
    assert len(records) == 1 and records[0]["run_options"]["in_process"] is False


#: methods quick enough on synthetic-small (a few seconds each), and the module each needs
READ_ONLY_METHODS = {"ova": None, "softmax": None, "hsm": None, "label_embedding_tree": None,
                     "st": None, "sklearn:sklearn.linear_model.LogisticRegression": None,
                     "nxc-plt": "napkinxc", "omikuji-bonsai": "omikuji",
                     "vw-oaa": "vowpalwabbit"}


@pytest.mark.parametrize("method", list(READ_ONLY_METHODS))
def test_methods_fit_and_score_on_frozen_sparse_inputs(method, small):
    """The runner's data is read-only down to its base arrays: built-in methods and peers
    work on it without copies of their own (all 20 were checked this way, dense and CSR)."""
    import dataclasses

    if READ_ONLY_METHODS[method]:
        pytest.importorskip(READ_ONLY_METHODS[method])
    sparse = dataclasses.replace(small, X_train=sp.csr_matrix(small.X_train),
                                 X_test=sp.csr_matrix(small.X_test))
    for name in ("X_train", "y_train", "X_test", "y_test"):
        freeze(getattr(sparse, name))
    [result] = measure_cell(Cell(method, (), "synthetic-small", 0), sparse, INLINE)
    assert result["metrics"]["top1_error"] < 0.5
