import bz2
import time

import numpy as np
import pytest

import xcbench
from xcbench.data.builtin import SPARSE_SCALING
from xcbench.data.fetch import ChecksumError, DataError
from xcbench.data.ptb import build_ptb_next_word
from xcbench.data.readers import FormatError
from xcbench.data.recipes import spec_from_recipe
from xcbench.data.synthetic import bayes_predict, make_hierarchical, make_sparse_hierarchical

# (name, n_train + n_test, D, K) as stated in ../shared/data/README.md
SHARED = [("letter", 20000, 16, 26), ("leaves100", 1600, 192, 100),
          ("aloi27d", 50000, 27, 1000), ("aloi27d-438", 48492, 27, 438)]


@pytest.mark.parametrize("name,n,d,k", SHARED)
def test_shared_dataset_shapes(shared_data, name, n, d, k):
    ds = xcbench.load_dataset(name, shared_data)
    st = ds.stats
    assert (st["n_train"] + st["n_test"], st["n_features"], st["n_classes"]) == (n, d, k)
    assert ds.y_train.min() >= 0 and max(ds.y_train.max(), ds.y_test.max()) < k
    assert ds.checksum.startswith("sha256:")


def test_letter_uses_standard_split(shared_data):
    st = xcbench.load_dataset("letter", shared_data).stats
    assert (st["n_train"], st["n_test"]) == (16000, 4000)


def _ptb_expected(shared_data, min_count=10, context=3):
    """K, words and examples of the ptb recipe counted straight from the text files by its
    stated rules (classes: words seen >= min_count times in train; one example per position
    after the first 3 words of a sentence whose target is a class and whose 3 context words
    all have a GloVe vector), not taken from the builder's output."""
    import lzma
    from collections import Counter

    from xcbench.data.ptb import load_glove

    def sentences(name):
        with lzma.open(shared_data / "ptb" / name, "rt", encoding="utf-8") as f:
            return [line.split() for line in f]

    train, test = sentences("ptb.train.txt.xz"), sentences("ptb.test.txt.xz")
    counts = Counter(w for s in train for w in s)
    classes = {w for w, c in counts.items() if c >= min_count}
    vectors = set(load_glove(shared_data, {w for s in train + test for w in s})[0])

    def examples(sents):
        return sum(s[i] in classes and all(w in vectors for w in s[i - context:i])
                   for s in sents for i in range(context, len(s)))

    return {"n_classes": len(classes), "n_train": examples(train), "n_test": examples(test),
            "train_words": sum(map(len, train)), "test_words": sum(map(len, test)),
            "top3": [w for w, _ in sorted(counts.items(), key=lambda wc: (-wc[1], wc[0]))[:3]]}


def test_ptb_next_word_counts_and_warm_load(shared_data):
    ds = xcbench.load_dataset("ptb", shared_data)
    st = ds.stats
    expected = _ptb_expected(shared_data)
    # the data folder's README states 887,521 train and 78,669 test words
    assert (expected["train_words"], expected["test_words"]) == (887521, 78669)
    assert st["n_features"] == 3 * 50  # 3 context words x 50-d GloVe
    for key in ("n_classes", "n_train", "n_test", "train_words", "test_words"):
        assert st[key] == expected[key], key
    assert ds.info["class_names"][:3] == expected["top3"]
    t0 = time.perf_counter()
    warm = xcbench.load_dataset("ptb", shared_data)
    assert time.perf_counter() - t0 < 2.0
    assert warm.checksum == ds.checksum and np.array_equal(warm.y_test, ds.y_test)


def _tiny_corpus(tmp_path):
    (tmp_path / "glove").mkdir()
    words = ["a", "b", "c", "d", "e"]
    rng = np.random.default_rng(0)
    lines = [w + " " + " ".join(f"{v:.3f}" for v in rng.normal(size=50)) for w in words]
    (tmp_path / "glove" / "glove.6B.50d.txt").write_text("\n".join(lines) + "\n")
    train = tmp_path / "train.txt"
    train.write_text("a b c d e\na b <unk> d e\nz a b c d\n")
    return {"train": train, "test": train}


def test_ptb_rules_on_a_tiny_corpus(tmp_path):
    paths = _tiny_corpus(tmp_path)
    params = dict(min_count=2, unk_is_class=False, context=3, missing_context="drop")
    arrays, k, info = build_ptb_next_word(paths, params, tmp_path)
    # classes: words seen >= 2 times, <unk> excluded: a b c d e
    assert k == 5 and sorted(info["class_names"]) == ["a", "b", "c", "d", "e"]
    # sentence 1: a b c -> d, b c d -> e; sentence 2: contexts hold <unk>: dropped;
    # sentence 3: z (no vector) a b -> c dropped, a b c -> d kept; no cross-sentence example
    assert len(arrays["y_train"]) == 3
    zero = build_ptb_next_word(paths, {**params, "missing_context": "zero"}, tmp_path)[0]
    assert len(zero["y_train"]) == 3 + 2 + 1  # <unk> target still not a class
    with_unk = build_ptb_next_word(paths, {**params, "unk_is_class": True, "min_count": 1},
                                   tmp_path)
    assert "<unk>" in with_unk[2]["class_names"]


def test_aloi_loader_on_a_small_local_file(tmp_path):
    rng = np.random.default_rng(0)
    lines = []
    for i in range(200):
        feats = " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(rng.random(128)) if v > 0.5)
        lines.append(f"{i % 10} {feats}")
    (tmp_path / "aloi").mkdir()
    (tmp_path / "aloi" / "aloi.scale.bz2").write_bytes(bz2.compress("\n".join(lines).encode()))
    ds = xcbench.load_dataset("aloi", tmp_path)
    assert ds.X_train.shape == (180, 128) and ds.X_test.shape == (20, 128)
    assert ds.n_classes == 10
    np.testing.assert_allclose(ds.X_train.mean(axis=0), 0, atol=1e-12)  # mean subtracted
    assert len(ds.info["source_sha256"]["data"]) == 64  # unknown upstream hash, recorded


def test_corrupt_shared_copy_is_reported(tmp_path, shared_data, monkeypatch):
    monkeypatch.setenv("XCBENCH_CACHE_DIR", str(tmp_path / "cache"))  # no processed copy
    (tmp_path / "letter").mkdir()
    original = (shared_data / "letter" / "letter-recognition.data").read_bytes()
    (tmp_path / "letter" / "letter-recognition.data").write_bytes(original[:1000])
    with pytest.raises(ChecksumError, match="expected 9b63b12c"):
        xcbench.load_dataset("letter", tmp_path)


def test_truncated_ptb_file_is_a_format_error(tmp_path, shared_data):
    from xcbench.data.ptb import read_sentences

    data = (shared_data / "ptb" / "ptb.test.txt.xz").read_bytes()
    (tmp_path / "t.txt.xz").write_bytes(data[: len(data) // 2])
    with pytest.raises(FormatError, match="truncated or corrupt"):
        read_sentences(tmp_path / "t.txt.xz")


def test_missing_dataset_files_name_the_place(tmp_path, monkeypatch):
    monkeypatch.setenv("XCBENCH_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(DataError, match=str(tmp_path / "letter" / "letter-recognition.data")):
        xcbench.load_dataset("letter", tmp_path)


def test_malformed_recipe(tmp_path):
    (tmp_path / "r.toml").write_text('name = "x"\ntask = "multiclass"\n')
    with pytest.raises(DataError, match="malformed dataset recipe"):
        spec_from_recipe(tmp_path / "r.toml")


def test_unknown_dataset_lists_registered():
    with pytest.raises(KeyError, match="registered datasets: .*letter.*synthetic"):
        xcbench.load_dataset("nope")


def test_gaussian_bayes_error_matches_the_bayes_rule():
    ds = make_hierarchical(n_classes=40, n_features=8, n_train=10, n_test=20000, levels=2,
                           spread=5.0, noise=0.8, bayes_samples=20000, seed=3)
    pred = bayes_predict(ds.X_test, ds.info["class_means"], ds.info["class_priors"],
                         ds.info["noise"])
    empirical = float((pred != ds.y_test).mean())
    se = np.sqrt(empirical * (1 - empirical) / len(pred)) + ds.info["bayes_error_se"]
    assert 0.05 < ds.info["bayes_error"] < 0.6
    assert abs(empirical - ds.info["bayes_error"]) < 4 * se


def test_synthetic_is_seeded_and_hierarchical():
    a = make_hierarchical(n_classes=27, n_features=6, n_train=50, n_test=10, bayes_samples=100)
    b = make_hierarchical(n_classes=27, n_features=6, n_train=50, n_test=10, bayes_samples=100)
    assert np.array_equal(a.X_train, b.X_train) and a.checksum == b.checksum
    means = a.info["class_means"]  # siblings (same parent: id // 3) are closer than cousins
    d = np.linalg.norm(means[:, None] - means[None], axis=2)
    sibling = d[np.arange(27)[:, None] // 3 == np.arange(27)[None] // 3]
    assert np.median(sibling[sibling > 0]) < np.median(d[d > 0])


def test_sparse_family_shapes_and_bayes():
    ds = make_sparse_hierarchical(n_classes=64, bayes_samples=500)
    assert ds.X_train.shape == (640, 672) and ds.stats["sparse"]
    assert 0.0 < ds.info["bayes_error"] < 0.5
    assert [s.params["n_classes"] for s in SPARSE_SCALING] == [1000, 10000, 100000]


def test_status_reports_cached_local_and_missing(tmp_path, shared_data, monkeypatch):
    from xcbench.data import get_dataset_spec
    from xcbench.data.status import dataset_status

    monkeypatch.setenv("XCBENCH_CACHE_DIR", str(tmp_path / "cache"))
    spec = get_dataset_spec("letter")
    assert dataset_status(spec, tmp_path) == "missing"
    assert dataset_status(get_dataset_spec("aloi"), tmp_path) == "downloadable"
    assert dataset_status(spec, shared_data) == "local"
    xcbench.load_dataset("letter", shared_data)
    assert dataset_status(spec, shared_data) == "cached"
    assert dataset_status(get_dataset_spec("synthetic"), tmp_path) == "generated"


def test_ptb_sparse_on_a_tiny_corpus(tmp_path):
    from xcbench.data.ptb_sparse import build_ptb_sparse

    (tmp_path / "train.txt").write_text("a b c d e\na b <unk> a\nz\n")
    (tmp_path / "test.txt").write_text("a b c q\nq a b c\nb c\n")
    params = {"context": 3, "missing_context": "drop", "eos": False}
    arrays, k, info = build_ptb_sparse({"train": tmp_path / "train.txt",
                                        "test": tmp_path / "test.txt"}, params)
    # every train word type is a class, most frequent first, ties alphabetical
    assert info["class_names"] == ["a", "b", "<unk>", "c", "d", "e", "z"] and k == 7
    X, y = arrays["X_train"], arrays["y_train"]
    # sentence 1: (a b c)->d, (b c d)->e; sentence 2: (a b <unk>)->a; no cross-sentence rows
    assert y.tolist() == [4, 5, 0] and X.shape == (3, 3 * 7) and X.format == "csr"
    assert np.diff(X.indptr).tolist() == [3, 3, 3] and X.dtype == np.float32
    # column p * V + w: word w at context position p (0 = earliest)
    assert X[0].indices.tolist() == [0 * 7 + 0, 1 * 7 + 1, 2 * 7 + 3]
    # test: target q is no class (dropped); context q is unknown (dropped); b c is too short
    assert arrays["y_test"].tolist() == [] and arrays["X_test"].shape == (0, 21)
    zero = build_ptb_sparse({"train": tmp_path / "train.txt", "test": tmp_path / "test.txt"},
                            {**params, "missing_context": "zero"})[0]
    assert zero["y_test"].tolist() == [3] and zero["X_test"].indices.tolist() == [7, 14 + 1]
    eos = build_ptb_sparse({"train": tmp_path / "train.txt", "test": tmp_path / "test.txt"},
                           {**params, "eos": True})
    # <eos> ends all 3 sentences: a class (tied with a, 3 times: alphabetical first) and the
    # last target of each sentence of >= 3 words
    assert eos[2]["class_names"][:3] == ["<eos>", "a", "b"] and eos[1] == 8
    assert eos[0]["y_train"].tolist() == [5, 6, 0, 1, 0]  # d e <eos> | a <eos>


def test_ptb_sparse_real_shape(shared_data):
    ds = xcbench.load_dataset("ptb-sparse", shared_data)
    st = ds.stats
    assert st["n_classes"] == 10000 and st["n_features"] == 30000 and st["sparse"]
    assert set(np.diff(ds.X_train.indptr)) == {3} and set(np.diff(ds.X_test.indptr)) == {3}
    assert ds.info["class_names"][:4] == ["the", "<unk>", "<eos>", "N"]
    # every position of a sentence + <eos> after the first 3 tokens is an example
    from xcbench.data.ptb import read_sentences

    train = read_sentences(shared_data / "ptb" / "ptb.train.txt.xz")
    assert st["n_train"] == sum(max(0, len(s) + 1 - 3) for s in train)
