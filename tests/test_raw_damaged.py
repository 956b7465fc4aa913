"""Issue 61 item 4: one truncated or byte-flipped raw file, in the compact or the old
format, must not stop ``report``, ``report --recompute`` or ``compare``: each warns naming
the file and its record, and leaves that record out of what needs the raw file (before:
RawFileError from report/significance.py, exit 2, no report)."""
import json
import shutil

import numpy as np
import pytest

from xcbench.cli import main
from xcbench.store.results import ResultStore

RUN = ["run", "--methods", "ova,softmax", "--dataset", "synthetic-small", "--seeds", "0",
       "--latency-calls", "5", "--quiet", "--no-report", "--in-process"]


@pytest.fixture(scope="module")
def compact_store(tmp_path_factory):
    out = tmp_path_factory.mktemp("damaged") / "compact"
    assert main([*RUN, "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def old_store(compact_store):
    """The same records with raw files in the old format (int64, float64, y in each)."""
    out = compact_store.parent / "old"
    shutil.copytree(compact_store, out)
    store = ResultStore(out)
    records = []
    for record in store.records():
        raw = store.load_raw(record)
        np.savez_compressed(out / "raw" / f"{record['key']}.npz",
                            labels=raw["labels"].astype(np.int64), y=raw["y"].astype(np.int64),
                            scores=np.zeros(raw["labels"].shape),
                            **{k: raw[k].astype(np.float64) for k in ("log_p", "path_cost")
                               if k in raw})
        records.append({**record, "raw": f"raw/{record['key']}.npz"})
    for path in (out / "raw").glob("*.*.npz"):
        path.unlink()
    store.path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return out


def damaged_copy(store, tmp_path, how):
    """A copy of ``store`` with the first record's raw file damaged; (copy, file, key)."""
    out = tmp_path / store.name
    shutil.copytree(store, out)
    record = ResultStore(out).records()[0]
    path = ResultStore(out).raw_file(record)
    data = bytearray(path.read_bytes())
    if how == "truncated":
        data = data[:len(data) // 2]
    else:  # one byte flipped inside the compressed arrays
        data[len(data) // 3] ^= 0xFF
    path.write_bytes(bytes(data))
    return out, path, record["key"]


@pytest.mark.parametrize("how", ["truncated", "flipped"])
@pytest.mark.parametrize("fmt", ["compact_store", "old_store"])
def test_report_and_recompute_warn_and_go_on(request, tmp_path, capsys, fmt, how):
    out, path, key = damaged_copy(request.getfixturevalue(fmt), tmp_path, how)
    for extra in ([], ["--recompute"]):
        with pytest.warns(UserWarning, match=rf"{path.name}.*record {key}") as caught:
            assert main(["report", "--out", str(out), "--no-html", *extra]) == 0
        said = " ".join(str(w.message) for w in caught)
        if extra:
            assert "stored metrics are kept" in said
            assert "recomputed the metrics of 1 record(s)" in capsys.readouterr().out
    text = (out / "report.md").read_text()
    assert "n/a" in text  # the damaged record's row has no paired test


@pytest.mark.parametrize("how", ["truncated", "flipped"])
@pytest.mark.parametrize("fmt", ["compact_store", "old_store"])
def test_compare_warns_and_leaves_the_cell_untested(request, tmp_path, capsys, fmt, how):
    good = request.getfixturevalue(fmt)
    out, path, key = damaged_copy(good, tmp_path, how)
    with pytest.warns(UserWarning, match=rf"{path.name}.*record {key}.*left out"):
        assert main(["compare", str(good), str(out)]) == 0
    text = capsys.readouterr().out
    assert "0 of 1 tested cell(s)" in text  # the other cell is still tested


def test_a_damaged_shared_test_labels_file_names_it(compact_store, tmp_path):
    out = tmp_path / "c"
    shutil.copytree(compact_store, out)
    [shared] = (out / "raw").glob("testlabels-*.npz")
    shared.write_bytes(shared.read_bytes()[:50])
    with pytest.warns(UserWarning, match=rf"{shared.name}.*record "):
        assert main(["report", "--out", str(out), "--no-html", "--recompute"]) == 0
