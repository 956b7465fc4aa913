"""Data reliability probes: changed sources, corrupt cache entries, failed downloads."""
import bz2
import socket

import numpy as np
import pytest

import xcbench
from xcbench.data import Source, get_dataset_spec, hashmemo
from xcbench.data.cache import CorruptCacheWarning, cache_dir
from xcbench.data.fetch import ChecksumError, DataError, fetch
from xcbench.data.readers import FormatError
from xcbench.data.status import dataset_status


def _write_aloi(data_dir, seed):
    """A small LIBSVM file at the unpinned aloi source path (200 rows, 10 classes)."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(200):
        feats = " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(rng.random(128)) if v > 0.5)
        lines.append(f"{i % 10} {feats}")
    (data_dir / "aloi").mkdir(exist_ok=True)
    (data_dir / "aloi" / "aloi.scale.bz2").write_bytes(bz2.compress("\n".join(lines).encode()))


@pytest.fixture
def aloi_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XCBENCH_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "data"
    data.mkdir()
    _write_aloi(data, seed=0)
    return data


def _entry_folder(ds):
    return cache_dir() / f"{ds.name}-{ds.info['processed_key']}"


def test_replaced_unpinned_source_gives_new_arrays_and_hash(aloi_dir, monkeypatch):
    """aloi pins no hash: the first file used is recorded, a replacement is refused until
    accepted with XCBENCH_ACCEPT_NEW_SOURCE=1 (issue 34), then gives new arrays and hash."""
    from xcbench.data.fetch import ACCEPT_NEW_SOURCE, ChecksumError

    monkeypatch.delenv(ACCEPT_NEW_SOURCE, raising=False)
    old = xcbench.load_dataset("aloi", aloi_dir)
    old_X, old_hash = np.array(old.X_train), old.info["source_sha256"]["data"]
    _write_aloi(aloi_dir, seed=1)
    with pytest.raises(ChecksumError, match="not the file first used"):
        xcbench.load_dataset("aloi", aloi_dir)
    monkeypatch.setenv(ACCEPT_NEW_SOURCE, "1")
    new = xcbench.load_dataset("aloi", aloi_dir)
    assert new.info["source_sha256"]["data"] != old_hash
    assert new.info["source_sha256"]["data"] == hashmemo.sha256_of(
        aloi_dir / "aloi" / "aloi.scale.bz2")
    assert not np.array_equal(np.asarray(new.X_train), old_X)
    assert new.checksum != old.checksum


def test_unchanged_source_is_hashed_once(aloi_dir, monkeypatch):
    xcbench.load_dataset("aloi", aloi_dir)
    calls = []
    real = hashmemo.sha256_of
    monkeypatch.setattr(hashmemo, "sha256_of", lambda p: calls.append(p) or real(p))
    xcbench.load_dataset("aloi", aloi_dir)
    assert calls == []  # source and cache files: hashes come from the memo


def _truncate(path):
    path.write_bytes(path.read_bytes()[:-40])


def _flip_last_byte(path):
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [
    lambda f: _truncate(f / "X_train.npy"),
    lambda f: (f / "y_test.npy").unlink(),
    lambda f: _flip_last_byte(f / "X_test.npy"),
    lambda f: (f / "meta.json").unlink(),
    lambda f: (f / "meta.json").write_text("{not json"),
], ids=["truncated-npy", "missing-npy", "bad-checksum", "missing-meta", "unreadable-meta"])
def test_corrupt_cache_entry_is_detected_and_rebuilt(aloi_dir, damage):
    spec = get_dataset_spec("aloi")
    good = xcbench.load_dataset("aloi", aloi_dir)
    expected = np.array(good.X_test)
    folder = _entry_folder(good)
    del good
    assert dataset_status(spec, aloi_dir) == "cached"
    damage(folder)
    assert dataset_status(spec, aloi_dir) == "local"  # not "cached"
    with pytest.warns(CorruptCacheWarning, match=str(folder)):
        again = xcbench.load_dataset("aloi", aloi_dir)
    np.testing.assert_array_equal(np.asarray(again.X_test), expected)
    assert dataset_status(spec, aloi_dir) == "cached"


def test_failed_download_leaves_no_empty_folder(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = tmp_path / "data"
    with pytest.raises(DataError):
        fetch(Source("aloi/deep/f.bz2", url=f"http://127.0.0.1:{port}/f.bz2"), data)
    assert not data.exists()


def _one_sentence_with_fix(message):
    body = message.rstrip(".")
    assert "\n" not in message and ". " not in body, f"more than one sentence: {message!r}"
    assert any(w in message for w in ("delete", "place", "fix", "put")), \
        f"no fix in {message!r}"


def test_data_errors_are_one_sentence_with_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("XCBENCH_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "f.txt").write_bytes(b"abc")
    with pytest.raises(ChecksumError) as err:
        fetch(Source("f.txt", sha256="1" * 64), tmp_path)
    _one_sentence_with_fix(str(err.value))
    with pytest.raises(DataError) as err:
        fetch(Source("x/y.csv"), tmp_path)
    _one_sentence_with_fix(str(err.value))
    _one_sentence_with_fix(str(FormatError(tmp_path / "a.svm", 3, "label 'x' is not a number")))
