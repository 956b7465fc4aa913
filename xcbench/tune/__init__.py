"""Fair tuning: ``xcbench tune METHOD --dataset D --trials N``. Trials are runner cells
scored on a validation split of the training rows (``validation``), proposed by an Optuna
study in the method's declared search space (``space``), resumable from ``OUT/tune.journal``
(``study``); the best parameters are written as a ``--param`` line and a params file
(``output``, ``params_file``)."""
from .params_file import merge_params_files, read_params_file
from ..contract.search_space import check_search_space
from .study import DEFAULT_TRIALS, OBJECTIVES, TuneResult, tune, tune_options

__all__ = ["DEFAULT_TRIALS", "OBJECTIVES", "TuneResult", "check_search_space",
           "merge_params_files", "read_params_file", "tune", "tune_options"]
