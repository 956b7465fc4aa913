"""The example third-party plugin under examples/ works through both routes."""
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import xcbench
from xcbench.contract.plugins import register_plugin
from xcbench.testing import check_method

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "xcbench-nearest-centroid"


def _installed() -> bool:
    return any(ep.name == "nearest_centroid" for ep in metadata.entry_points(group="xcbench"))


def test_example_in_process_passes_check_method(fresh_plugins, monkeypatch):
    if not _installed():
        monkeypatch.syspath_prepend(str(EXAMPLE))
        import xcbench_nearest_centroid

        register_plugin(xcbench_nearest_centroid, name="nearest_centroid")
    assert "nearest-centroid" in xcbench.list_methods()
    check_method("nearest-centroid")


@pytest.mark.skipif(not _installed(), reason="pip install ./examples/xcbench-nearest-centroid "
                                               "to test the entry-point route")
def test_installed_example_appears_in_cli():
    out = subprocess.run([sys.executable, "-m", "xcbench.cli", "list", "methods"],
                         capture_output=True, text=True, check=True).stdout
    assert "nearest-centroid" in out and "[plugin nearest_centroid]" in out
