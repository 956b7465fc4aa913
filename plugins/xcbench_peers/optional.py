"""Importing a peer's optional library, with an error that says how to install it."""
import importlib
import os


def require(module: str, library: str, pip_name: str, extra: str):
    """Import ``module``; ImportError naming the library, its pip package and xcbench extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{library} is not installed: pip install {pip_name} "
                          f"(or xcbench[{extra}])") from exc


def cpu_threads(threads: int) -> int:
    """Threads a library uses for ``threads``: 0 = every CPU, -1 = all but one (napkinXC)."""
    cpus = os.cpu_count() or 1
    return cpus if threads == 0 else max(cpus - 1, 1) if threads < 0 else int(threads)
