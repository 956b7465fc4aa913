"""Importing a peer's optional library, with an error that says how to install it."""
import importlib


def require(module: str, library: str, pip_name: str, extra: str):
    """Import ``module``; ImportError naming the library, its pip package and xcbench extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{library} is not installed: pip install {pip_name} "
                          f"(or xcbench[{extra}])") from exc
