"""Suite files: a benchmark as one TOML file (methods with parameter grids, datasets, seeds,
run options), read with the standard library's ``tomllib``.

A suite is a list of *runs*, each what one ``xcbench run`` command would do: methods x their
parameter grid x datasets x seeds, under one set of run options. Top-level ``datasets``,
``seeds`` and ``[options]`` are the defaults every run inherits::

    name = "small"
    description = "st vs softmax on letter"
    expected_wall = "6 min on 2 cores"
    datasets = ["letter"]
    seeds = [0, 1, 2]

    [options]            # timeout, threads, fit_threads, latency_calls, memory_limit
    timeout = 1800

    [[runs]]
    methods = ["softmax", "st"]
    [runs.params.st]     # a build parameter grid; "a+b" keys sweep values together
    "k+depth" = [[50, 5], [100, 7]]
    [runs.query.hsm]     # query parameters: measured on one fit, one record each
    decoder = ["greedy", "topk"]

Top-level ``[params.METHOD]`` / ``[query.METHOD]`` tables are values every run listing that
method shares; a run's own value of a parameter (alone or in an ``a+b`` key) replaces them.

``out`` (the results folder) and ``reuse_from`` (folders whose records of the same
measurements by the same code ``--resume`` copies in: ``xcbench.run.reuse_from``) are
paths relative to the suite file.

Named suites ship beside this module (``quick``, ``standard``, ``scaling``); ``load_suite``
takes a path or one of those names. ``--only NAME`` keeps the cells of one method or dataset.
"""
from __future__ import annotations

from .cells import (newest_per_planned, plan_vs_records, planned_test, stored_cell_seconds,
                    suite_cells)
from .spec import (NAMED_SUITES, Suite, SuiteError, SuiteRun, load_suite, named_suite_path,
                   parse_suite)

__all__ = ["NAMED_SUITES", "Suite", "SuiteError", "SuiteRun", "load_suite", "named_suite_path",
           "parse_suite", "newest_per_planned", "plan_vs_records", "planned_test",
           "stored_cell_seconds", "suite_cells"]
