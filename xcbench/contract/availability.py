"""Whether a method's optional libraries are installed, asked before anything runs.

A method that wraps another library declares the modules it imports
(``MethodSpec.requires``) and how to install them (``MethodSpec.install``, e.g.
``pip install 'xcbench[vw]'``). Planning asks :func:`unavailable_reason` for each method and
refuses the plan, with that install command, when a module cannot be found, instead of
storing an error record per cell. Modules are looked up, not imported (no import cost).
"""
from __future__ import annotations

import importlib.util
import sys


class MethodUnavailable(ValueError):
    """A method whose optional library is not installed (a usage error: exit code 2)."""


def module_available(name: str) -> bool:
    """Whether ``import name`` can find the module (``sys.modules[name] = None``, as tests
    set to simulate a missing library, counts as missing)."""
    if name in sys.modules:
        return sys.modules[name] is not None
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken __spec__
        return False


def missing_modules(spec) -> list[str]:
    """The modules ``spec``'s method requires that cannot be found here."""
    return [m for m in spec.requires if not module_available(m)]


def install_command(spec, missing) -> str:
    """The command that installs ``missing`` modules of ``spec``: its ``install``, else
    ``pip install`` of their top-level packages."""
    return spec.install or f"pip install {' '.join(m.split('.')[0] for m in missing)}"


def unavailable_reason(spec) -> str | None:
    """Why ``spec``'s method cannot run here (its missing modules and the install command),
    or None when every module it requires is found."""
    missing = missing_modules(spec)
    if not missing:
        return None
    return (f"{spec.name!r} needs {', '.join(missing)}, which is not installed: "
            f"{install_command(spec, missing)}")


def check_available(specs) -> None:
    """MethodUnavailable naming every method of ``specs`` that cannot run here, each with
    its install command; nothing when all can."""
    reasons = [r for r in map(unavailable_reason, specs) if r]
    if reasons:
        raise MethodUnavailable("method(s) not installed (nothing was run): "
                                + "; ".join(reasons))
