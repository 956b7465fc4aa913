"""Bring your own data: ``--dataset file:[FORMAT:]TRAIN[:TEST]`` (xcbench/data/user_files.py)."""
import json
import pickle

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from xcbench.cli import main
from xcbench.data import get_dataset_spec, load_dataset
from xcbench.data.fetch import DataError
from xcbench.data.readers import FormatError
from xcbench.data.user_files import UserFileWarning, parse_file_name, split_rows


def _problem(n=240, n_classes=4, d=6, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.normal(size=(n, d)) + 3.0 * np.eye(n_classes, d)[y]
    return X, y


@pytest.fixture
def svm_files(tmp_path):
    X, y = _problem()
    dump_svmlight_file(X[:200], y[:200] + 10, str(tmp_path / "train.svm"))  # zero-based indices
    dump_svmlight_file(X[200:], y[200:] + 10, str(tmp_path / "test.svm"))
    return tmp_path


def _run(tmp_path, dataset, *extra):
    out = tmp_path / "out"
    code = main(["run", "--dataset", dataset, "--methods", "ova", "--in-process", "--out",
                 str(out), "--latency-calls", "5", "--quiet", "--no-report", *extra])
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return code, records


def test_run_on_svmlight_train_and_test_files(svm_files, monkeypatch):
    monkeypatch.chdir(svm_files)  # relative paths resolve against the current directory
    code, (record,) = _run(svm_files, "file:train.svm:test.svm")
    assert code == 0 and record["status"] == "ok"
    assert record["dataset"] == "file:train.svm:test.svm"
    assert "train.svm + test.svm" in record["dataset_description"]
    stats = record["dataset_stats"]
    assert (stats["n_train"], stats["n_test"], stats["n_classes"]) == (200, 40, 4)
    assert stats["n_features"] == 6  # zero-based file: no column dropped
    assert record["metrics"]["top1_error"] < 0.5
    assert len(record["dataset_sources"]) == 2


def test_one_file_is_split_80_20_the_same_way_every_time(svm_files):
    spec = get_dataset_spec(f"file:{svm_files / 'train.svm'}")
    a, b = spec.load(svm_files), spec.load(svm_files)
    assert (a.X_train.shape[0], a.X_test.shape[0]) == (160, 40)
    assert a.checksum == b.checksum and np.array_equal(a.y_test, b.y_test)
    assert np.array_equal(a.X_test, b.X_test)
    assert np.array_equal(np.bincount(a.y_test), [10, 10, 10, 10])  # stratified
    assert "80/20" in spec.split and "seed 0" in spec.split


def test_split_falls_back_to_random_when_a_class_has_one_example():
    y = np.array([0] * 20 + [1] * 20 + [2])
    train, test = split_rows(y)
    assert len(test) == 9 and len(np.intersect1d(train, test)) == 0
    assert np.array_equal(split_rows(y)[1], test)


def test_checksum_follows_the_file_bytes_and_resume_reuses_records(svm_files, tmp_path):
    name = f"file:{svm_files / 'train.svm'}:{svm_files / 'test.svm'}"
    before = load_dataset(name).checksum
    code, first = _run(tmp_path, name)
    _, again = _run(tmp_path, name, "--resume")
    assert code == 0 and first[0]["status"] == "ok"
    assert len(again) == 1  # nothing re-run
    X, y = _problem(seed=1)
    dump_svmlight_file(X[200:], y[200:] + 10, str(svm_files / "test.svm"))
    assert load_dataset(name).checksum != before


def test_csv_with_header_and_label_column_and_without_header(tmp_path):
    X, y = _problem(n=100)
    letters = np.array(list("abcd"))[y]
    lines = ["f1,f2,label,f3,f4,f5,f6"] + [
        ",".join([f"{X[i, 0]}", f"{X[i, 1]}", letters[i], *map(str, X[i, 2:])])
        for i in range(100)]
    (tmp_path / "with_header.csv").write_text("\n".join(lines) + "\n")
    plain = "\n".join(",".join([letters[i], *map(str, X[i])]) for i in range(100))
    (tmp_path / "plain.txt").write_text(plain + "\n")
    named = load_dataset(f"file:{tmp_path / 'with_header.csv'}")
    sniffed = load_dataset(f"file:{tmp_path / 'plain.txt'}")
    assert named.n_classes == sniffed.n_classes == 4
    assert named.X_train.shape == sniffed.X_train.shape == (80, 6)
    assert np.allclose(named.X_train, sniffed.X_train)


def test_xc_repository_format_and_explicit_format(tmp_path):
    body = ["4 3 3", "0 0:1.0 2:0.5", "1 1:1.0", "2 2:2.0", "0 0:0.9"]
    (tmp_path / "data.txt").write_text("\n".join(body) + "\n")
    (tmp_path / "test.data").write_text("2 3 3\n1 1:0.8\n0 0:1.1\n")
    ds = load_dataset(f"file:xc:{tmp_path / 'data.txt'}:{tmp_path / 'test.data'}")
    assert get_dataset_spec(f"file:{tmp_path / 'data.txt'}").format == "xc"  # sniffed header
    assert (ds.n_classes, ds.X_train.shape, list(ds.y_test)) == (3, (4, 3), [1, 0])


def test_labels_of_different_types_in_the_two_files_are_compared_as_text(tmp_path):
    (tmp_path / "a.csv").write_text("x,1.0\nx,2.0\n7,3.0\n7,4.0\n")
    (tmp_path / "b.csv").write_text("7,3.5\n7,1.0\n")
    ds = load_dataset(f"file:{tmp_path / 'a.csv'}:{tmp_path / 'b.csv'}")
    assert ds.n_classes == 2 and list(ds.y_test) == [0, 0]  # "7" sorts before "x"


def test_test_labels_unseen_in_training_are_dropped_and_counted(tmp_path):
    X, y = _problem(n=60)
    dump_svmlight_file(X[:50], y[:50], str(tmp_path / "a.svm"))
    dump_svmlight_file(X[50:], np.r_[y[50:58], 99, 98], str(tmp_path / "b.svm"))
    with pytest.warns(UserFileWarning, match="dropped 2 of 10"):
        ds = load_dataset(f"file:{tmp_path / 'a.svm'}:{tmp_path / 'b.svm'}")
    assert len(ds.y_test) == 8 and ds.stats["test_dropped_unseen_label"] == 2


def test_malformed_file_names_file_line_and_problem(tmp_path):
    (tmp_path / "bad.svm").write_text("1 1:0.5 2:1\n2 3:x\n")
    with pytest.raises(FormatError, match=r"bad\.svm:2: feature '3:x'"):
        load_dataset(f"file:{tmp_path / 'bad.svm'}")
    (tmp_path / "bad.csv").write_text("label,a,b\n1,2,3\n2,oops,4\n")
    with pytest.raises(FormatError, match=r"bad\.csv:3: column 'a' holds non-numeric 'oops'"):
        load_dataset(f"file:{tmp_path / 'bad.csv'}")


@pytest.mark.parametrize("fmt, text", [("svm", ""), ("vw", "\n\n"), ("csv", ""),
                                       ("csv", "label,a,b\n")])
def test_an_empty_file_is_named_as_empty(tmp_path, fmt, text):
    """An empty training file gave an IndexError traceback; an empty test file said "no test
    example has a label seen in training"; an empty CSV a pandas EmptyDataError."""
    X, y = _problem(n=20)
    rows = {"svm": [f"{c} 1:{a:.3f} 2:{b:.3f}" for (a, b), c in zip(X[:, :2], y)],
            "vw": [f"{c + 1} | a:{a:.3f} b:{b:.3f}" for (a, b), c in zip(X[:, :2], y)],
            "csv": ["label,a,b"] + [f"{c},{a:.3f},{b:.3f}" for (a, b), c in zip(X[:, :2], y)]}
    full, empty = tmp_path / f"full.{fmt}", tmp_path / f"empty.{fmt}"
    full.write_text("\n".join(rows[fmt]) + "\n")
    empty.write_text(text)
    for name in (f"file:{empty}", f"file:{empty}:{full}", f"file:{full}:{empty}"):
        with pytest.raises(FormatError, match=rf"empty\.{fmt}: the file (holds no example|is "
                                              "empty)"):
            load_dataset(name)


@pytest.mark.parametrize("fmt", ["svm", "csv", "vw", "xc"])
def test_bytes_that_are_not_utf8_are_named_by_file_and_line(tmp_path, fmt):
    """Before: a bare UnicodeDecodeError naming neither the file nor the line."""
    good = {"svm": b"1 1:0.5\n2 1:1\n", "csv": b"label,a\n1,0.5\n2,1\n",
            "vw": b"1 | a\n2 | b\n", "xc": b"2 1 3\n1 0:0.5\n2 0:1\n"}[fmt]
    path = tmp_path / f"bad.{fmt}"
    path.write_bytes(good + b"1 1:0.5 caf\xe9\n")
    line = good.count(b"\n") + 1
    with pytest.raises(FormatError, match=rf"bad\.{fmt}:{line}: byte 0xe9 .*not UTF-8"):
        load_dataset(f"file:{path}:{path}" if fmt != "csv" else f"file:{path}")


def test_test_features_the_training_file_never_has_are_reported(tmp_path):
    """A test file with more features than training was silently widened (numbered
    features, always 0 in training) or truncated (named VW features): now a warning."""
    X, y = _problem(n=60)
    dump_svmlight_file(X[:50, :4], y[:50], str(tmp_path / "a.svm"))
    dump_svmlight_file(X[50:], y[50:], str(tmp_path / "b.svm"))  # 6 features
    with pytest.warns(UserFileWarning, match=r"b\.svm: the test file has 6 feature columns, "
                                             r"the training file 4; its 20 value"):
        load_dataset(f"file:{tmp_path / 'a.svm'}:{tmp_path / 'b.svm'}")
    (tmp_path / "a.vw").write_text("1 | a b\n2 | c\n1 | a\n2 | c\n")
    (tmp_path / "b.vw").write_text("1 | a new1\n2 | c new2:3\n")
    with pytest.warns(UserFileWarning, match=r"b\.vw: 2 feature name\(s\) never seen .* "
                                             "dropped"):
        ds = load_dataset(f"file:{tmp_path / 'a.vw'}:{tmp_path / 'b.vw'}")
    assert ds.X_test.shape[1] == ds.X_train.shape[1] == 3


def test_bad_names_are_explained(tmp_path):
    with pytest.raises(DataError, match="no file 'missing.svm'.*current directory"):
        get_dataset_spec("file:missing.svm")
    with pytest.raises(DataError, match="one or two file paths"):
        parse_file_name("file:a:b:c")
    (tmp_path / "mystery").write_text("hello world\n")
    with pytest.raises(DataError, match="cannot tell the file format.*file:svmlight:"):
        get_dataset_spec(f"file:{tmp_path / 'mystery'}")
    with pytest.raises(DataError, match="is a folder"):
        get_dataset_spec(f"file:{tmp_path}")
    (tmp_path / "a.svm").write_text("1 1:0.5\n")
    with pytest.raises(DataError, match="meant as the format.*did you mean 'svmlight'"):
        get_dataset_spec(f"file:svmligth:{tmp_path / 'a.svm'}")
    (tmp_path / "b.csv").write_text("label,x\n1,0.5\n")
    with pytest.raises(DataError, match="different formats .*both must be in one format"):
        get_dataset_spec(f"file:{tmp_path / 'a.svm'}:{tmp_path / 'b.csv'}")


def test_cli_exits_2_naming_a_missing_file(tmp_path, capsys):
    code = main(["run", "--dataset", "file:nowhere.svm", "--methods", "ova", "--out",
                 str(tmp_path / "out"), "--quiet"])
    assert code == 2 and "nowhere.svm" in capsys.readouterr().err


def test_spec_pickles_and_loads_in_a_child(svm_files):
    spec = pickle.loads(pickle.dumps(get_dataset_spec(f"file:{svm_files / 'train.svm'}")))
    assert spec.load(svm_files).n_classes == 4


def test_isolated_run_from_a_fresh_process(svm_files):
    """The default run forks a child per cell; a fresh process (no OpenMP in use yet, see
    the runner) shows the file dataset reaches the child intact."""
    import subprocess
    import sys

    out = svm_files / "out"
    done = subprocess.run([sys.executable, "-m", "xcbench.cli", "run", "--dataset",
                           "file:train.svm:test.svm", "--methods", "ova", "--out", str(out),
                           "--latency-calls", "5", "--quiet", "--no-report"],
                          cwd=svm_files, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (record,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert record["status"] == "ok" and record["dataset_stats"]["n_test"] == 40


def test_a_file_dataset_in_a_folder_gets_a_report_and_a_description(tmp_path, monkeypatch, capsys):
    """The dataset name holds '/' and ':': plot file names are made safe, and `describe`
    knows file: names."""
    from sklearn.datasets import dump_svmlight_file

    from xcbench.cli import main

    rng = np.random.default_rng(0)
    X, y = rng.random((60, 4)), np.arange(60) % 3
    (tmp_path / "d").mkdir()
    dump_svmlight_file(X, y, str(tmp_path / "d" / "train.svm"))
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--dataset", "file:d/train.svm", "--methods", "ova", "--in-process",
                 "--out", "out", "--latency-calls", "5"]) == 0
    assert any(p.name.startswith("error_vs_latency-file_d_train.svm")
               for p in (tmp_path / "out").iterdir())
    assert main(["describe", "file:d/train.svm"]) == 0
    assert "train.svm" in capsys.readouterr().out


def _csv(path, header, rows):
    path.write_text("\n".join([",".join(header)] + [",".join(map(str, r)) for r in rows]) + "\n")
    return path


def test_csv_test_columns_are_matched_by_header_name(tmp_path):
    """A test CSV whose header lists the features in another order was read by position
    (silently wrong); now its columns follow the training file's, with a warning."""
    rows = [(i % 3, float(i), float(-i), 100.0 + i) for i in range(30)]
    _csv(tmp_path / "train.csv", ["label", "a", "b", "c"], rows)
    _csv(tmp_path / "same.csv", ["label", "a", "b", "c"], rows[:9])
    # a cyclic order of three features (c, a, b): unlike a swap of two, it is not its own
    # inverse, so reading it through the inverse permutation gives other columns
    _csv(tmp_path / "cycled.csv", ["c", "label", "a", "b"],
         [(c, y, a, b) for y, a, b, c in rows[:9]])
    same = load_dataset(f"file:{tmp_path / 'train.csv'}:{tmp_path / 'same.csv'}")
    with pytest.warns(UserFileWarning, match="matched by header name"):
        cycled = load_dataset(f"file:{tmp_path / 'train.csv'}:{tmp_path / 'cycled.csv'}")
    assert same.X_test[1].tolist() == [1.0, -1.0, 101.0]  # a, b, c of the second row
    assert np.array_equal(same.X_test, cycled.X_test)
    _csv(tmp_path / "other.csv", ["label", "a", "b", "d"], rows[:9])
    with pytest.raises(DataError, match=r"missing: \['c'\], not in training: \['d'\]"):
        load_dataset(f"file:{tmp_path / 'train.csv'}:{tmp_path / 'other.csv'}")
    (tmp_path / "bare.csv").write_text("0,1.0,2.0\n1,3.0,4.0\n")
    with pytest.raises(DataError, match="starts with a header line and .*bare.csv does not"):
        load_dataset(f"file:{tmp_path / 'train.csv'}:{tmp_path / 'bare.csv'}")


def test_numeric_labels_match_across_files_whatever_their_spelling(tmp_path):
    (tmp_path / "a.csv").write_text("0.0,1.0\n1.0,2.0\n0.0,1.5\n1.0,2.5\n")
    (tmp_path / "b.csv").write_text("1,2.2\n0,0.9\n")
    ds = load_dataset(f"file:{tmp_path / 'a.csv'}:{tmp_path / 'b.csv'}")
    assert ds.n_classes == 2 and list(ds.y_test) == [1, 0]


def test_data_no_classifier_can_learn_from_is_refused_with_the_reason(tmp_path):
    (tmp_path / "one.svm").write_text("".join(f"3 1:{i}.5\n" for i in range(20)))
    with pytest.raises(DataError, match="every training example has the label 3"):
        load_dataset(f"file:{tmp_path / 'one.svm'}")
    (tmp_path / "bare.svm").write_text("".join(f"{i % 2}\n" for i in range(20)))
    with pytest.raises(DataError, match="no example has a feature value"):
        load_dataset(f"file:{tmp_path / 'bare.svm'}")
    (tmp_path / "huge.svm").write_text("1 1:0.5\n2 3000000000:1\n")
    with pytest.raises(FormatError, match=r"huge\.svm:2: feature index 3000000000 is too large"):
        load_dataset(f"file:{tmp_path / 'huge.svm'}")
    (tmp_path / "a.csv").write_text("x,1.0\ny,2.0\nx,1.5\ny,2.5\n")
    (tmp_path / "b.csv").write_text("7,2.2\n8,0.9\n")
    with pytest.raises(DataError, match=r"training labels: 'x', 'y'; test labels: 7, 8"):
        load_dataset(f"file:{tmp_path / 'a.csv'}:{tmp_path / 'b.csv'}")


def test_the_command_line_shows_a_warning_as_one_line(tmp_path):
    """Warnings named the library line that raised them; the command shows the message."""
    import subprocess
    import sys

    rows = [(i % 3, float(i), float(-i)) for i in range(30)]
    _csv(tmp_path / "train.csv", ["label", "a", "b"], rows)
    _csv(tmp_path / "swapped.csv", ["b", "label", "a"], [(b, y, a) for y, a, b in rows[:9]])
    dataset = f"file:{tmp_path / 'train.csv'}:{tmp_path / 'swapped.csv'}"
    done = subprocess.run([sys.executable, "-m", "xcbench.cli", "run", "--methods", "ova",
                           "--dataset", dataset, "--in-process", "--quiet", "--no-report",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "xcbench: warning: swapped.csv: the feature columns are in another order" \
        in done.stderr
    assert "(UserFileWarning)" in done.stderr and "user_files.py" not in done.stderr


def test_describe_names_a_file_dataset_as_your_files(svm_files):
    """It said "status: generated" and showed the data directory, which a file: dataset
    does not use."""
    from xcbench.cli.describe import describe_dataset

    name = f"file:{svm_files / 'train.svm'}:{svm_files / 'test.svm'}"
    text = describe_dataset(get_dataset_spec(name))
    assert "status: your-files\n" in text and "data directory" not in text
    assert "read from the files when a run loads them" in text
