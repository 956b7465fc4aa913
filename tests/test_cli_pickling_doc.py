"""docs/pickling.md: its example runs and the unpickled model predicts as the original."""
import re
from pathlib import Path

import numpy as np

DOC = Path(__file__).resolve().parents[1] / "docs" / "pickling.md"


def test_pickling_example_runs_and_round_trips(tmp_path, monkeypatch):
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S).group(1)
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(code, str(DOC), "exec"), scope)  # noqa: S102 - our own documentation
    assert (tmp_path / "softmax.pkl").is_file()
    original = scope["model"].predict_topk(scope["ds"].X_test, 5)
    assert np.array_equal(scope["labels"], original[0])
    assert np.array_equal(scope["scores"], original[1])


def test_pickling_doc_warns_that_unpickling_runs_code():
    text = DOC.read_text()
    assert "A pickle is code, not data." in text and "Unpickle only files you wrote" in text
