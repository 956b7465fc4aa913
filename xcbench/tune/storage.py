"""Where a tuning folder keeps its Optuna studies: one journal file, ``OUT/tune.journal``
(append-only, so a killed run loses at most the trial it was running)."""
from __future__ import annotations

from pathlib import Path

STORAGE_FILE = "tune.journal"


def require_optuna():
    """The optuna module; ImportError saying how to install it when it is missing."""
    try:
        import optuna
    except ImportError:
        raise ImportError("xcbench tune needs Optuna: pip install 'xcbench[tune]'") from None
    return optuna


def journal_storage(out):
    """The Optuna storage of the studies in ``out``: the journal file ``STORAGE_FILE``."""
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    return JournalStorage(JournalFileBackend(str(Path(out) / STORAGE_FILE)))
