import bz2
import gzip

import numpy as np
import pytest

from xcbench.data.readers import (FormatError, encode_labels, read_csv, read_svmlight,
                                  read_vw_multiclass, read_xc)


def write(path, text, opener=open):
    with opener(path, "wt") as f:
        f.write(text)
    return path


def test_svmlight_reads_and_reports_bad_line(tmp_path):
    good = write(tmp_path / "a.svm", "1 1:0.5 3:2\n0 2:1\n")
    X, y = read_svmlight(good, n_features=3)
    assert X.shape == (2, 3) and y.tolist() == [1, 0] and X[0, 2] == 2
    bad = write(tmp_path / "b.svm", "1 1:0.5\n2 1:x\n")
    with pytest.raises(FormatError, match=r"b.svm:2: .*not integer-index:number"):
        read_svmlight(bad)


def test_svmlight_nan_and_non_integer_label(tmp_path):
    with pytest.raises(FormatError, match=r"nan.svm:2: .*NaN"):
        read_svmlight(write(tmp_path / "nan.svm", "1 1:0.5\n0 1:nan\n"))
    with pytest.raises(FormatError, match=r"lab.svm:2: label 1.5"):
        read_svmlight(write(tmp_path / "lab.svm", "1 1:0.5\n1.5 1:1\n"))


def test_svmlight_truncated_compressed_file(tmp_path):
    full = bz2.compress(b"1 1:0.5 2:1\n" * 2000)
    path = tmp_path / "t.svm.bz2"
    path.write_bytes(full[: len(full) // 2])
    with pytest.raises(FormatError, match="t.svm.bz2"):
        read_svmlight(path)


def test_xc_format(tmp_path):
    path = write(tmp_path / "x.txt", "3 4 5\n0 0:1 3:0.5\n4 1:2\n2 2:1\n")
    X, y, k = read_xc(path)
    assert X.shape == (3, 4) and y.tolist() == [0, 4, 2] and k == 5
    with pytest.raises(FormatError, match=r"h.txt:1: expected a header"):
        read_xc(write(tmp_path / "h.txt", "0 0:1\n"))
    with pytest.raises(FormatError, match=r"m.txt:3: multiclass data needs exactly one label"):
        read_xc(write(tmp_path / "m.txt", "2 4 5\n0 0:1\n1,2 1:1\n"))
    with pytest.raises(FormatError, match=r"r.txt:3: label 7 is outside 0..4"):
        read_xc(write(tmp_path / "r.txt", "2 4 5\n0 0:1\n7 1:1\n"))
    with pytest.raises(FormatError, match=r"n.txt: header says N=3"):
        read_xc(write(tmp_path / "n.txt", "3 4 5\n0 0:1\n"))
    with pytest.raises(FormatError, match=r"f.txt:3: .*not integer-index"):
        read_xc(write(tmp_path / "f.txt", "2 4 5\n0 0:1\n1 a:1\n"))


def test_vw_multiclass(tmp_path):
    train = write(tmp_path / "train.vw", "1 |f 0:0.5 7:1\n3 'tag|a word other:2\n")
    X, y, index = read_vw_multiclass(train)
    assert y.tolist() == [0, 2] and X.shape[0] == 2
    assert X[0, 7] == 1 and X[1, index["other"]] == 2
    test = write(tmp_path / "test.vw", "2 | word unseen\n")
    Xt, yt, _ = read_vw_multiclass(test, feature_index=index)
    assert Xt.nnz == 1 and yt.tolist() == [1]
    with pytest.raises(FormatError, match=r"bad.vw:2: label 0 is outside 1..K"):
        read_vw_multiclass(write(tmp_path / "bad.vw", "1 | a\n0 | b\n"))
    with pytest.raises(FormatError, match=r"nobar.vw:1: no '\|'"):
        read_vw_multiclass(write(tmp_path / "nobar.vw", "1 a b\n"))


def test_csv_reports_non_numeric_cell(tmp_path):
    path = write(tmp_path / "d.csv", "y,a,b\nA,1,2\nB,3,x\n")
    with pytest.raises(FormatError, match=r"d.csv:3: column 'b' holds non-numeric 'x'"):
        read_csv(path, label_column="y")
    X, labels = read_csv(write(tmp_path / "ok.csv.gz", "y,a\nA,1\nB,2\n", gzip.open), "y")
    assert X.tolist() == [[1.0], [2.0]] and labels.tolist() == ["A", "B"]


def test_encode_labels_sorted():
    (a, b), classes = encode_labels(np.array(["b", "a"]), np.array(["c"]))
    assert a.tolist() == [1, 0] and b.tolist() == [2] and classes.tolist() == ["a", "b", "c"]
