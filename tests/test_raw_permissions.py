"""Raw output files honour the umask like every other file (issue 61 item 10)."""
import os
import stat

import numpy as np
import pytest

from xcbench.store.results import ResultStore


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_raw_files_get_the_permissions_the_umask_gives(tmp_path, umask):
    previous = os.umask(umask)
    try:
        store = ResultStore(tmp_path)
        raw = store.save_raw("abcd", {"labels": np.zeros((2, 1), dtype=np.int64),
                                      "y": np.zeros(2, dtype=np.int64)})
        plain = tmp_path / "plain"
        plain.write_text("")
    finally:
        os.umask(previous)
    written = [p for p in (tmp_path / "raw").iterdir()]
    assert (tmp_path / raw) in written and len(written) >= 2  # with its labels files
    for path in written:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == 0o666 & ~umask == stat.S_IMODE(plain.stat().st_mode), path.name
