"""xcbench: a benchmark suite for extreme multi-class classification.

The public API::

    import xcbench
    xcbench.list_methods()                 # registered method names
    m = xcbench.make_method("softmax", C=1.0)
    ds = xcbench.load_dataset("synthetic")  # X_train, y_train, X_test, y_test, n_classes, stats
    records = xcbench.run_plan(["ova", "softmax"], ["synthetic"], seeds=[0])
"""
from .version import __version__

from .run.fork_safety import prefer_fork_safe_numba_threading  # noqa: E402

prefer_fork_safe_numba_threading()  # before any numba parallel launch: cells run in forks

from .contract.hookspecs import hookimpl  # noqa: E402
from .contract.method import Method, MethodSpec  # noqa: E402
from .data import Dataset, DatasetSpec, Source, load_dataset  # noqa: E402
from .api import get_method_spec, list_datasets, list_methods, make_method, run_plan  # noqa: E402

__all__ = [
    "__version__", "hookimpl", "Method", "MethodSpec", "Dataset", "DatasetSpec", "Source",
    "get_method_spec", "list_methods", "list_datasets", "make_method", "load_dataset", "run_plan",
]
