"""Conformance checks for method plugins, like scikit-learn's ``check_estimator``.

Third-party authors check a method (a registered name, a ``MethodSpec`` or a factory) in
their own tests, either all at once::

    report = check_method("my-method")   # raises on the first failing check
    print(report)                        # what each check checked, what it could not

or one pytest test per check, with expected failures and their reasons::

    @parametrize_with_checks(["my-method"], expected_failures={"check_pickle": "why"})
    def test_conformance(check):
        check()

Each check raises AssertionError naming what was wrong. Checks that only read a fitted
model share one fit per method (``Subject.fitted``); the others fit their own.
"""
from __future__ import annotations

import pickle
from typing import Callable, Iterator

import numpy as np

from .contract.conformance import *  # noqa: F401,F403 - the check functions, importable from here
from .contract.conformance import ALL_CHECKS, CHECK_NAMES, N_CLASSES
from .data.synthetic import make_hierarchical
from .contract.method import MethodSpec


def gaussian_problem(seed=0):
    """The default conformance problem: 12 hierarchical Gaussian classes in 8 dimensions,
    as (X_train, y_train, X_test, y_test)."""
    ds = make_hierarchical(n_classes=N_CLASSES, n_features=8, n_train=360, n_test=80,
                           levels=2, spread=6.0, shrink=0.5, noise=0.5, bayes_samples=200,
                           seed=seed)
    return ds.X_train, ds.y_train, ds.X_test, ds.y_test


def word_id_problem(seed=0):
    """A conformance problem for text methods: X holds 3 word ids per row (non-negative
    integers), the first of which usually names the class; 12 classes."""
    rng = np.random.default_rng(seed)

    def sample(n):
        y = rng.integers(0, N_CLASSES, size=n)
        first = np.where(rng.random(n) < 0.9, y, rng.integers(0, 40, size=n))
        X = np.column_stack([first, 12 + y // 3, rng.integers(0, 40, size=n)])
        return X.astype(np.float64), y.astype(np.int64)

    return (*sample(360), *sample(80))


def _factory(method, params) -> Callable:
    from .contract.plugins import get_method_spec

    if isinstance(method, str):
        method = get_method_spec(method)
    if isinstance(method, MethodSpec):
        spec = method
        return lambda **extra: spec.make(**{**params, **extra})
    return lambda **extra: method(**{**params, **extra})


def _label(method, params) -> str:
    name = method if isinstance(method, str) else getattr(method, "name", None) \
        or getattr(method, "__name__", type(method).__name__)
    return name + (f"({','.join(f'{k}={v}' for k, v in sorted(params.items()))})"
                   if params else "")


class Subject:
    """A method under test: its factory, the problem data, and one shared fit."""

    def __init__(self, method, params: dict | None = None,
                 problem: Callable = gaussian_problem):
        self.label = _label(method, params or {})
        self.factory = _factory(method, params or {})
        self._problem, self._data, self._fitted = problem, None, None

    @property
    def data(self):
        """(X_train, y_train, X_test, y_test), generated on first use."""
        if self._data is None:
            self._data = self._problem()
        return self._data

    def fresh_data(self):
        """A new copy of (X_train, y_train, X_test, y_test), whatever earlier checks of this
        process did to ``data``."""
        return self._problem()

    def make(self, seed=0):
        """An unfitted method, seeded when it takes ``random_state``."""
        try:
            return self.factory(random_state=seed)
        except (TypeError, ValueError):  # the method takes no random_state
            return self.factory()

    def fit(self, X=None, y=None, seed=0):
        """A new fit (on the training data unless X, y are given)."""
        X_train, y_train = self.data[:2]
        return self.make(seed).fit(X_train if X is None else X, y_train if y is None else y,
                                   n_classes=N_CLASSES)

    def fitted(self):
        """The fit shared by the read-only checks (seed 0, dense float64 training data); a
        fit that raised raises the same error again without refitting."""
        if getattr(self, "_fit_error", None) is not None:
            raise self._fit_error
        if self._fitted is None:
            try:
                self._fitted = self.fit()
            except Exception as exc:  # noqa: BLE001 - each check that needs it reports it
                self._fit_error = exc
                raise
            try:
                self._pristine = pickle.dumps(self._fitted)
            except Exception:  # noqa: BLE001 - check_pickle reports it
                self._pristine = None
        return self._fitted

    def pristine(self):
        """A copy of the shared fit as it was before any prediction (a new fit when the
        model cannot be pickled)."""
        self.fitted()
        return self.fit() if self._pristine is None else pickle.loads(self._pristine)


def method_checks(method, params: dict | None = None, problem: Callable = gaussian_problem,
                  subject: Subject | None = None) -> Iterator[tuple[str, Callable[[], None]]]:
    """(check name, callable) for every conformance check of one method; the callables
    share one Subject, hence one fit for the read-only checks."""
    subject = subject or Subject(method, params, problem)
    for check in ALL_CHECKS:
        yield check.__name__, (lambda c=check: c(subject))


def _unknown(names, what):
    unknown = sorted(set(names) - set(CHECK_NAMES))
    if unknown:
        raise ValueError(f"unknown check(s) {', '.join(unknown)} in {what}; "
                         f"checks are: {', '.join(CHECK_NAMES)}")


def check_description(name: str) -> str:
    """The first sentence-paragraph of check ``name``'s docstring, on one line."""
    import inspect

    doc = inspect.getdoc(dict(zip(CHECK_NAMES, ALL_CHECKS))[name]) or ""
    return " ".join(doc.split("\n\n")[0].split())


class CheckReport(list):
    """What ``check_method`` checked: a list of the names of the checks that passed, in
    the order run, with ``method`` (its label), ``skipped`` (the names left out),
    ``notes`` ({check name: what it could not check, e.g. no probability model}) and
    ``failed`` ({check name: the AssertionError text}). ``str(report)`` lists every check
    with what it checks."""

    def __init__(self, method: str):
        super().__init__()
        self.method, self.skipped, self.notes, self.failed = method, [], {}, {}

    @property
    def ok(self) -> bool:
        """Whether no check failed."""
        return not self.failed

    def __str__(self) -> str:
        lines = []
        for name in CHECK_NAMES:
            if name in self.failed:
                lines.append(f"FAIL  {name}: {self.failed[name]}")
            elif name in self.notes:
                lines.append(f"pass  {name}: {self.notes[name]}")
            elif name in self:
                lines.append(f"pass  {name}: {check_description(name)}")
            elif name in self.skipped:
                lines.append(f"skip  {name}")
        return "\n".join(lines + [self.summary()])

    def summary(self) -> str:
        """One line: how many checks passed, had nothing to check, were skipped, failed."""
        ran = len(self) + len(self.failed)
        return (f"{self.method}: {len(self)} of {ran} checks run passed"
                + (f" ({len(self.notes)} with nothing to check)" if self.notes else "")
                + (f", {len(self.skipped)} skipped" if self.skipped else "")
                + (f"; FAILED: {', '.join(self.failed)}" if self.failed else ""))


def failure_text(exc: BaseException) -> str:
    """What a failed check reports: an AssertionError's text, else the error's type and
    text."""
    return str(exc) if isinstance(exc, AssertionError) else f"raised {type(exc).__name__}: {exc}"


def check_outcome(check: Callable[[], str | None], passthrough=()) -> tuple[str, str | None]:
    """Run one check: ("pass", its note or None) or ("fail", ``failure_text``). Any error
    fails the check except the exception types in ``passthrough``, which propagate."""
    try:
        return "pass", check()
    except passthrough:
        raise
    except Exception as exc:  # noqa: BLE001 - any error fails this check, the rest run
        return "fail", failure_text(exc)


def run_checks(method, params: dict | None = None, skip: tuple[str, ...] = (),
               problem: Callable = gaussian_problem, stop_at_failure: bool = True,
               on_result: Callable[[str, str, str], None] | None = None,
               run_one: Callable[[str, Callable], tuple[str, str | None]] | None = None
               ) -> CheckReport:
    """Run the conformance checks on a method and return a CheckReport; with
    ``stop_at_failure`` raise AssertionError naming the first failing check, else record
    every failure in the report. ``on_result(name, "pass" | "fail", text)`` is called after
    each check (for progress output). ``run_one(name, check)`` runs one check and returns
    what ``check_outcome`` does; by default the checks run in this process (``xcbench
    check`` runs each in its own, see ``xcbench.cli.check_isolation``)."""
    _unknown(skip, "skip")
    report = CheckReport(_label(method, params or {}))
    for name, check in method_checks(method, params, problem):
        if name in skip:
            report.skipped.append(name)
            continue
        try:
            outcome, text = run_one(name, check) if run_one else ("pass", check())
        except Exception as exc:  # noqa: BLE001 - any error fails this check, the rest run
            outcome, text = "fail", failure_text(exc)
            if stop_at_failure:
                raise AssertionError(f"{name} failed for {method!r}: {text}") from exc
        if outcome == "fail" and stop_at_failure:
            raise AssertionError(f"{name} failed for {method!r}: {text}")
        if outcome == "fail":
            report.failed[name] = text
        else:
            report.append(name)
            if text:
                report.notes[name] = text
        if on_result:
            on_result(name, outcome, text or check_description(name))
    return report


def check_method(method, params: dict | None = None, skip: tuple[str, ...] = (),
                 problem: Callable = gaussian_problem) -> CheckReport:
    """Run every conformance check on a method (registered name, MethodSpec or factory)
    and return a CheckReport: the list of the names of the checks that passed, which
    says (``print(report)``) what each checked and what it could not (``notes``).

    ``params`` are hyperparameters passed to the factory; ``skip`` names checks to leave out
    (say why in your tests); ``problem()`` returns the (X_train, y_train, X_test, y_test)
    the checks use, with labels in 0..11 (``word_id_problem`` for text methods). Raises
    AssertionError naming the first failing check.
    """
    return run_checks(method, params, skip, problem)


def parametrize_with_checks(methods, expected_failures=None,
                            problem: Callable = gaussian_problem):
    """A pytest parametrize decorator: one test per (method, check), the test taking
    ``check`` (call it with no argument), ids ``<method>-<check name>``.

    ``methods``: names, MethodSpecs or factories, or (method, params) pairs.
    ``expected_failures``: {check name: reason}, or a function method -> such a dict; those
    checks are marked xfail with the reason (non-strict: fixed ones show as XPASS).
    """
    import pytest

    params = []
    for entry in methods:
        method, kw = entry if isinstance(entry, tuple) else (entry, {})
        xfail = (expected_failures(method) if callable(expected_failures)
                 else expected_failures) or {}
        _unknown(xfail, "expected_failures")
        subject = Subject(method, kw, problem)
        for name, check in method_checks(method, subject=subject):
            marks = [pytest.mark.xfail(reason=xfail[name])] if name in xfail else []
            params.append(pytest.param(check, id=f"{subject.label}-{name}", marks=marks))
    return pytest.mark.parametrize("check", params)
