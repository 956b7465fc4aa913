"""Run a suite: each of its runs in turn through the runner, into one results folder."""
from __future__ import annotations

import time

from .cells import suite_cells
from .spec import Suite


def execute_suite(suite: Suite, out=None, *, progress=True, command=None, say=print,
                  option_overrides=None, reuse_from=(), **plan_kwargs):
    """Run every run of ``suite`` (checked in full first: ``suite_cells``, and every method's
    optional library: ``MethodUnavailable`` before any run) into ``out``
    (default: the suite's own ``out``, else ``xcbench-results``); return one PlanOutcome
    holding the records of all runs. ``option_overrides`` (e.g. ``{"isolate": False}``)
    apply to every run's RunOptions; ``reuse_from`` folders are lent from after the suite's
    own ``reuse_from``; ``plan_kwargs`` go to ``execute_plan`` (``resume``, ``data_dir``,
    ``executor``, ...)."""
    from ...contract.availability import check_available
    from ...contract.plugins import get_method_spec
    from ..runner import PlanOutcome, execute_plan

    suite_cells(suite)  # every run's methods, parameters and options, before any work
    check_available(get_method_spec(m) for m in dict.fromkeys(
        m for run in suite.runs for m in run.methods))  # and their libraries
    out = out or suite.out or "xcbench-results"
    total = PlanOutcome([], [])
    started = time.monotonic()
    notes = []
    for i, run in enumerate(suite.runs, 1):
        if progress:
            say(f"suite {suite.name}: run {i} of {len(suite.runs)}: {run.label.split(': ')[-1]}")
        outcome = execute_plan(list(run.methods), list(run.datasets), list(run.seeds), out=out,
                               param_overrides=run.params,
                               options=run.run_options(**(option_overrides or {})),
                               progress=progress, command=command,
                               reuse_from=[*suite.reuse_from, *reuse_from], **plan_kwargs)
        total.records += outcome.records
        total.reused += outcome.reused
        if outcome.resume_note:
            notes.append(f"run {i}: {outcome.resume_note}")
    total.resume_note = "\n".join(notes) or None
    total.wall_seconds = time.monotonic() - started
    return total
