"""Shared test setup: the data directory points at ../shared/data when it exists."""
import os
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
if "XCBENCH_DATA_DIR" not in os.environ and SHARED_DATA.is_dir():
    os.environ["XCBENCH_DATA_DIR"] = str(SHARED_DATA)


@pytest.fixture(scope="session", autouse=True)
def _private_processed_cache(tmp_path_factory):
    """Tests write processed datasets to a throw-away cache, never the user's."""
    if "XCBENCH_CACHE_DIR" not in os.environ:
        os.environ["XCBENCH_CACHE_DIR"] = str(tmp_path_factory.mktemp("processed"))


@pytest.fixture
def shared_data() -> Path:
    """The shared real-data folder; the test is skipped when it is absent."""
    path = Path(os.environ.get("XCBENCH_DATA_DIR", SHARED_DATA))
    if not path.is_dir():
        pytest.skip(f"shared data folder {path} is absent (set XCBENCH_DATA_DIR)")
    return path


@pytest.fixture
def fresh_plugins():
    """Reload the plugin manager before and after the test (for in-process registrations)."""
    from xcbench.contract.plugins import reset_plugin_manager

    reset_plugin_manager()
    yield
    reset_plugin_manager()
