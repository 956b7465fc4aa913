"""``sklearn:`` methods: any importable scikit-learn-style classifier, measured like every
xcbench method without writing a plugin.

``sklearn:sklearn.linear_model.SGDClassifier`` (a full import path; a class of scikit-learn
itself may also be named alone, ``sklearn:SGDClassifier``) is a method whose parameters are
the estimator's own (``--param sklearn:sklearn.linear_model.SGDClassifier:alpha=1e-5``). The
estimator must be a classifier with ``fit`` and ``predict_proba`` or ``decision_function``;
anything else is refused with :class:`NotAClassifier`. See ``adapter`` for how it is measured.

Naming an import path imports that module, which runs its code (even under ``--dry-run``),
so only packages of installed distributions are imported: the path's top-level package
must be one an installed distribution provides (as ``importlib.metadata`` lists them). A
module that merely sits in the working folder or next to a suite file is refused before
anything is imported; install it (``pip install -e .`` for your own code) to name it.
"""
from __future__ import annotations

import functools
import importlib

from xcbench.contract.hookspecs import hookimpl
from xcbench.contract.method import MethodSpec

from .adapter import SklearnClassifier, adapter_class

__version__ = "0.1.0"
__all__ = ["PREFIX", "NotAClassifier", "SklearnClassifier", "check_installed",
           "import_classifier", "is_sklearn_name", "sklearn_spec"]

PREFIX = "sklearn:"
EXAMPLE = "sklearn:sklearn.linear_model.LogisticRegression"
#: the family of method names this plugin answers through ``resolve_method`` (shown by
#: ``xcbench plugins`` and ``xcbench list methods``)
RESOLVES = (f"{PREFIX}PATH", "any scikit-learn-style classifier by import path, e.g. "
            f"{EXAMPLE} or sklearn:SGDClassifier")


class NotAClassifier(ValueError):
    """A ``sklearn:`` name that does not import, or names no usable classifier."""


def is_sklearn_name(name: str) -> bool:
    """Whether ``name`` is an ``sklearn:`` method name."""
    return isinstance(name, str) and name.startswith(PREFIX)


def _short_name(name: str) -> str | None:
    """The public import path (``sklearn.linear_model.SGDClassifier``) of scikit-learn's
    estimator called ``name`` (no dots), if there is one."""
    from sklearn.utils import all_estimators

    for found, cls in all_estimators():
        if found == name:
            public = "sklearn." + cls.__module__.split(".")[1]
            module = importlib.import_module(public)
            return f"{public}.{name}" if getattr(module, name, None) is cls \
                else f"{cls.__module__}.{name}"
    return None


@functools.lru_cache(maxsize=1)
def _installed_packages() -> frozenset[str]:
    """The top-level packages the installed distributions provide."""
    from importlib.metadata import packages_distributions

    return frozenset(packages_distributions())


def check_installed(path: str) -> None:
    """NotAClassifier unless the top-level package of import path ``path`` comes from an
    installed distribution (nothing is imported to find out)."""
    top = path.split(".")[0]
    if top not in _installed_packages():
        raise NotAClassifier(
            f"{PREFIX}{path}: {top!r} is not a package of an installed distribution; "
            f"{PREFIX} imports only installed packages (importing runs a module's code), "
            "never a module of the working folder or a suite's folder: install it "
            "(pip install -e . for your own code) or write a plugin")


def _unknown_short_name(name: str):
    """Raise NotAClassifier for a bare class name scikit-learn does not have, naming its
    classifiers close to it (``SGDClasifier`` -> did you mean sklearn:SGDClassifier?)."""
    from sklearn.utils import all_estimators

    from xcbench.suggest import close_matches

    found = close_matches(name, [n for n, _ in all_estimators(type_filter="classifier")],
                           n=2, cutoff=0.8)
    hint = (f"did you mean {' or '.join(PREFIX + f for f in found)}?" if found else
            f"give the class's import path, e.g. {EXAMPLE}")
    raise NotAClassifier(f"{PREFIX}{name}: scikit-learn has no estimator {name!r}; {hint}")


def _missing_attribute_hint(module, name: str) -> str:
    """``"; did you mean sklearn:pkg.mod.Close?"`` for the public names of ``module`` close
    to ``name``; empty when none is."""
    from xcbench.suggest import close_matches

    found = close_matches(name, [n for n in dir(module) if not n.startswith("_")], n=2,
                           cutoff=0.8)
    return ("; did you mean " + " or ".join(f"{PREFIX}{module.__name__}.{f}" for f in found)
            + "?") if found else ""


def import_classifier(path: str) -> type:
    """The classifier class at import path ``path`` (``package.module.Class``);
    NotAClassifier saying why when it cannot be imported or is not a classifier with
    ``fit`` and ``predict_proba`` or ``decision_function``."""
    module_name, _, class_name = path.rpartition(".")
    if not module_name:
        raise NotAClassifier(f"{PREFIX}{path}: give the class's import path, e.g. {EXAMPLE}")
    check_installed(module_name)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise NotAClassifier(f"{PREFIX}{path}: cannot import module {module_name!r} "
                             f"({type(exc).__name__}: {exc})") from None
    target = getattr(module, class_name, None)
    if target is None:
        raise NotAClassifier(f"{PREFIX}{path}: module {module_name!r} has no {class_name!r}"
                             + _missing_attribute_hint(module, class_name))
    if not isinstance(target, type):
        raise NotAClassifier(f"{PREFIX}{path} is a {type(target).__name__}, not an estimator "
                             f"class; name a classifier class, e.g. {EXAMPLE}")
    if not _is_classifier(target):
        kind = _estimator_kind(target)
        raise NotAClassifier(f"{PREFIX}{path} is {kind}, not a classifier; {PREFIX} takes a "
                             "scikit-learn classifier (fit, and predict_proba or "
                             f"decision_function), e.g. {EXAMPLE}")
    missing = [m for m in ("fit",) if not callable(getattr(target, m, None))]
    if missing or not any(callable(getattr(target, m, None))
                          for m in ("predict_proba", "decision_function")):
        raise NotAClassifier(f"{PREFIX}{path} has no fit, or neither predict_proba nor "
                             "decision_function, so its classes cannot be ranked")
    return target


def _is_classifier(cls: type) -> bool:
    from sklearn.base import ClassifierMixin, is_classifier

    if issubclass(cls, ClassifierMixin):
        return True
    try:
        return is_classifier(cls())
    except Exception:  # noqa: BLE001 - cannot be built without arguments: not usable here
        return False


def _estimator_kind(cls: type) -> str:
    from sklearn.base import ClusterMixin, RegressorMixin, TransformerMixin

    for mixin, kind in ((RegressorMixin, "a regressor"), (ClusterMixin, "a clusterer"),
                        (TransformerMixin, "a transformer")):
        if issubclass(cls, mixin):
            return kind
    return "not a scikit-learn classifier"


@hookimpl
def resolve_method(name):
    """The spec of an ``sklearn:`` name (NotAClassifier when unusable), else None."""
    return sklearn_spec(name) if is_sklearn_name(name) else None


@functools.lru_cache(maxsize=None)
def sklearn_spec(name: str) -> MethodSpec:
    """The MethodSpec of ``sklearn:PATH`` (NotAClassifier when PATH is not usable): flat
    family, the estimator's parameters and defaults, no default grid."""
    if not is_sklearn_name(name):
        raise NotAClassifier(f"{name!r} is not an {PREFIX} name (e.g. {EXAMPLE})")
    path = name[len(PREFIX):]
    if path and "." not in path:
        path = _short_name(path) or _unknown_short_name(path)
    cls = adapter_class(path, import_classifier(path))
    doc = (cls.estimator_class.__doc__ or "").strip().splitlines()
    return MethodSpec(name=name, family="flat",
                      description=f"scikit-learn's {path}" + (f": {doc[0].rstrip('.')}"
                                                               if doc else ""),
                      factory=cls, plugin="sklearn")
