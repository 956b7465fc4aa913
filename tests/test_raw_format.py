"""The compact raw format (xcbench/store/raw_format.py): round trip against the metrics of
the outputs as a cell gives them, old-format files still read, and ``xcbench compact``'s
conversion (checked readback, kept old file when it differs, resumable)."""
import numpy as np
import pytest

from xcbench.cli import main
from xcbench.metrics import quality_metrics
from xcbench.report.recompute import recompute_record
from xcbench.store import compact, raw_format
from xcbench.store.results import ResultStore

N_CLASSES = 300  # > 127: labels need int16


def cell_outputs(seed=0, n=400, k=5):
    """Raw outputs as a cell gives them: int64 labels (-1 pads the last rows' tails),
    float64 scores and log_p (some rows uncovered), int64 support, whole-number path costs
    as float64, and the true labels."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N_CLASSES, n)
    labels = rng.integers(0, N_CLASSES, (n, k))
    labels[: n // 3, rng.integers(0, k)] = y[: n // 3]  # a third of the rows hit
    labels[-5:, 3:] = -1
    log_p = np.log(rng.uniform(1e-6, 1, n))
    log_p[::17] = -np.inf
    return {"labels": labels, "scores": rng.normal(size=(n, k)), "log_p": log_p,
            "support": rng.integers(1, N_CLASSES, n), "y": y,
            "path_cost": rng.integers(3, 900, n).astype(np.float64)}


def record_of(key, raw_name):
    return {"key": key, "status": "ok", "raw": f"raw/{raw_name}",
            "dataset_stats": {"n_classes": N_CLASSES}, "metrics": {}}


def write_old_format(store: ResultStore, key: str, arrays: dict) -> dict:
    """``raw/<key>.npz`` as the store wrote it before the compact format; its record."""
    store.raw_dir.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(store.raw_dir / f"{key}.npz", **arrays)
    return record_of(key, f"{key}.npz")


def metrics_of(arrays):
    return quality_metrics(arrays["labels"], arrays["y"], arrays["log_p"], arrays["support"],
                           N_CLASSES)


def assert_same_metrics(got, want):
    assert got.keys() == want.keys()
    for name, value in want.items():
        assert got[name] == pytest.approx(value, rel=1e-6), name


def test_compact_round_trip_gives_the_metrics_of_the_cell_outputs(tmp_path):
    store, arrays = ResultStore(tmp_path), cell_outputs()
    record = {**record_of("k1", ""), "raw": store.save_raw("k1", arrays)}
    assert record["raw"] == "raw/k1.compact.npz"
    raw = store.load_raw(record)
    recomputed = recompute_record(record, raw)
    assert_same_metrics(recomputed["metrics"], metrics_of(arrays))
    assert recomputed["metrics"]["top1_error"] == metrics_of(arrays)["top1_error"]  # exact
    assert recomputed["path_cost"]["mean"] == arrays["path_cost"].mean()
    # the smallest types, and the predictions and test labels themselves kept
    assert raw["labels"].dtype == np.int16 and np.array_equal(raw["labels"], arrays["labels"])
    assert raw["true_rank"].dtype == np.uint8 and raw["log_p"].dtype == np.float32
    assert raw["path_cost"].dtype == np.uint16 and raw["support"].dtype == np.uint16
    assert np.array_equal(raw["y"], arrays["y"]) and "scores" not in raw


def test_records_on_the_same_test_rows_share_one_test_labels_file(tmp_path):
    store = ResultStore(tmp_path)
    store.save_raw("k1", cell_outputs(seed=1))
    store.save_raw("k2", {**cell_outputs(seed=2), "y": cell_outputs(seed=1)["y"]})
    store.save_raw("k3", cell_outputs(seed=3))
    shared = sorted(store.raw_dir.glob("testlabels-*"))
    assert len(shared) == 2
    shared[0].write_bytes(b"damaged")  # a later run writes a damaged shared file again
    store.save_raw("k4", {**cell_outputs(seed=4), "y": np.load(shared[1])["y"]})
    store.save_raw("k5", {**cell_outputs(seed=5), "y": cell_outputs(seed=1)["y"]})
    store.save_raw("k6", {**cell_outputs(seed=6), "y": cell_outputs(seed=3)["y"]})
    assert all(store.load_raw(record_of(k, f"{k}.compact.npz")) is not None
               for k in ("k1", "k2", "k3", "k4", "k5", "k6"))


def test_the_compact_files_without_the_topk_file_still_give_the_metrics(tmp_path):
    store, arrays = ResultStore(tmp_path), cell_outputs()
    record = {**record_of("k1", ""), "raw": store.save_raw("k1", arrays)}
    (store.raw_dir / "k1.topk.npz").unlink()
    raw = store.load_raw(record)
    assert "labels" not in raw
    assert_same_metrics(recompute_record(record, raw)["metrics"], metrics_of(arrays))


def test_an_old_format_store_still_reads(tmp_path):
    store, arrays = ResultStore(tmp_path), cell_outputs()
    record = write_old_format(store, "k1", arrays)
    raw = store.load_raw(record)
    assert raw["labels"].dtype == np.int64 and "scores" in raw
    recomputed = recompute_record(record, raw)["metrics"]
    assert recomputed == metrics_of(arrays)  # float64 log_p: exactly the same


def test_compact_converts_an_old_store_and_removes_the_old_files(tmp_path, capsys):
    store = ResultStore(tmp_path / "a")
    nested = ResultStore(tmp_path / "a" / "nested")
    records = [write_old_format(store, "k1", cell_outputs(1)),
               write_old_format(nested, "k2", cell_outputs(2))]
    before = [s.load_raw(r) for s, r in zip((store, nested), records)]
    assert main(["compact", str(tmp_path / "a")]) == 0
    assert "2 raw file(s) compacted" in capsys.readouterr().out
    for s, r, old in zip((store, nested), records, before):
        assert not (s.raw_dir / f"{r['key']}.npz").exists()
        assert raw_format.same_outputs(old, s.load_raw(r)) is None  # read by the old name
    assert main(["compact", str(tmp_path / "a")]) == 0  # nothing left to do
    assert "0 raw file(s) compacted" in capsys.readouterr().out


def test_compact_keeps_the_old_file_when_the_readback_differs(tmp_path, monkeypatch, capsys):
    """A writer that loses precision (here: log_p to float16) must not cost the old file."""
    store = ResultStore(tmp_path)
    record = write_old_format(store, "k1", cell_outputs())
    monkeypatch.setattr(raw_format, "compact_float",
                        lambda values: np.asarray(values).astype(np.float16))
    assert main(["compact", str(tmp_path)]) == 1
    assert "log_p differs" in capsys.readouterr().out
    assert (store.raw_dir / "k1.npz").exists()
    assert not (store.raw_dir / "k1.compact.npz").exists()  # a bad copy is never read
    assert store.load_raw(record)["log_p"].dtype == np.float64


def test_compact_keeps_a_damaged_old_file(tmp_path, capsys):
    store = ResultStore(tmp_path)
    write_old_format(store, "k1", cell_outputs())
    old = store.raw_dir / "k1.npz"
    old.write_bytes(old.read_bytes()[:200])
    assert main(["compact", str(tmp_path)]) == 1
    assert f"kept {old}" in capsys.readouterr().out and old.exists()


def test_an_interrupted_compact_leaves_the_old_file_and_finishes_when_run_again(
        tmp_path, monkeypatch):
    store = ResultStore(tmp_path)
    record = write_old_format(store, "k1", cell_outputs())
    real = np.savez_compressed
    calls = []

    def interrupted(f, **arrays):
        calls.append(1)
        if len(calls) == 2:  # after the test labels, while writing the top-k file
            raise KeyboardInterrupt
        real(f, **arrays)

    monkeypatch.setattr(np, "savez_compressed", interrupted)
    with pytest.raises(KeyboardInterrupt):
        compact.compact_folder(tmp_path)
    monkeypatch.setattr(np, "savez_compressed", real)
    assert (store.raw_dir / "k1.npz").exists()
    assert not list(store.raw_dir.glob(".*tmp*")) and not list(store.raw_dir.glob("k1.*.npz"))
    assert compact.compact_folder(tmp_path).converted == 1
    assert store.load_raw(record)["labels"].dtype == np.int16


def test_ignore_superseded_lists_the_raw_files_of_older_records(tmp_path):
    store = ResultStore(tmp_path)
    common = {"schema_version": 2, "method": "m", "params": {}, "dataset": "d", "seed": 0,
              "status": "ok", "run_options": {}, "dataset_checksum": "c"}
    for key, when in (("k1", "2026-01-01"), ("k2", "2026-02-01")):
        store.save_raw(key, cell_outputs())
        store.append({**common, "key": key, "started_at": when, "raw": f"raw/{key}.npz"})
    assert [r["key"] for r in store.latest()] == ["k2"]
    assert compact.ignore_superseded(tmp_path)[0] == 1
    listed = [line for line in (store.raw_dir / ".gitignore").read_text().splitlines()
              if not line.startswith("#")]
    assert listed == ["/k1.compact.npz"]


def test_smallest_int_holds_the_values_and_refuses_fractions():
    assert smallest(np.array([-1, 127])) == np.int8
    assert smallest(np.array([0, 255])) == np.uint8
    assert smallest(np.array([-1, 70_000])) == np.int32
    assert smallest(np.array([0.0, 3.0])) == np.uint8
    assert raw_format.smallest_int(np.array([0.5])) is None
    assert raw_format.compact_float(np.array([-1e300])).dtype == np.float64


def smallest(values):
    return raw_format.smallest_int(values).dtype



@pytest.mark.parametrize("old_format", [False, True])
def test_adopt_copies_the_raw_outputs_with_their_shared_test_labels(tmp_path, old_format):
    """``run --reuse-from`` copies a record's raw files: the compact files and the test
    labels they share (else the copy could not be read), or an old file as it is."""
    source, target, arrays = ResultStore(tmp_path / "a"), ResultStore(tmp_path / "b"), \
        cell_outputs()
    record = (write_old_format(source, "k1", arrays) if old_format
              else {**record_of("k1", ""), "raw": source.save_raw("k1", arrays)})
    copied = target.adopt(record, source)
    assert copied["raw"] == record["raw"]
    before, after = source.load_raw(record), target.load_raw(copied)
    assert before.keys() == after.keys()
    assert all(np.array_equal(before[k], after[k]) for k in before)
