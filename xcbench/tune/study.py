"""The tuning loop: an Optuna study whose trials are ordinary runner cells.

Each trial asks Optuna for parameters in the method's search space, runs them as cells of
``execute_plan`` (isolated process, timeout, memory cap, a record in ``OUT/results.jsonl``)
on the validation split of the dataset (``validation``), one per method seed (``repeats``),
and tells Optuna the mean objective of their records. The study lives in
``OUT/tune.journal`` (Optuna's journal file storage), so an interrupted run resumes where it
stopped: a trial left running is re-evaluated (its records are reused if they were stored)
and the budget counts the trials and seconds already spent.

Before the trials, the method's defaults are scored the same way (one more cell, outside the
budget): the reference every method gets, and the answer when no trial beats them.

Determinism: trial ``n`` is proposed by a fresh TPE sampler seeded from (seed, n), which
sees only the finished trials before it, so a seed gives the same trials, the same values
(for a method deterministic in its ``random_state``) and the same best, resumed or not.
"""
from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass, field, replace

import numpy as np

from ..contract.method_params import method_defaults, value_text
from ..contract.plugins import get_method_spec
from ..contract.search_space import check_search_space
from ..run.runner import RunOptions, check_out_dir, execute_plan
from .output import OBJECTIVE_NAMES, best_so_far_text, objective_text
from .space import suggest
from .storage import journal_storage, require_optuna
from .validation import register_validation

DEFAULT_TRIALS = 20
DEFAULT_VALIDATION_FRACTION = 0.2
#: record metrics a study may minimise
OBJECTIVES = ("top1_error", "top5_error", "perplexity_smoothed", "perplexity")
#: random trials before TPE models the results (Optuna's default)
STARTUP_TRIALS = 10
#: trials measure latency with fewer calls than a run: the objective is an accuracy metric
TUNE_OPTIONS = dict(latency_calls=100, latency_warmup=10, throughput_repeats=1,
                    keep_raw=False)


@dataclass
class TuneResult:
    """What a tuning run found: the best parameters (``{}`` and ``best_trial`` None when the
    defaults beat every trial), their validation objective, the defaults' objective (None
    when not scored or failed), every trial (number, state, value, params, seconds, record
    keys) and the files written."""

    method: str
    dataset: str
    objective: str
    best_params: dict
    best_value: float
    best_trial: int | None
    trials: list
    settings: dict
    defaults_value: float | None = None
    files: dict = field(default_factory=dict)


def tune_options(**overrides) -> RunOptions:
    """The run options of tuning trials (``TUNE_OPTIONS``), with ``overrides``."""
    return RunOptions(**{**TUNE_OPTIONS, **overrides})


def tune(method: str, dataset: str, *, trials: int | None = None,
         time_budget: float | None = None, seed: int = 0, out="xcbench-tune",
         objective: str = "top1_error", validation_fraction: float = DEFAULT_VALIDATION_FRACTION,
         space: dict | None = None, repeats: int = 1, options: RunOptions | None = None,
         defaults: bool = True, data_dir=None, progress: bool = True,
         command: str | None = None) -> TuneResult:
    """Tune ``method`` on ``dataset``'s validation split within a budget of ``trials`` trials
    or ``time_budget`` seconds of trial wall time (default ``DEFAULT_TRIALS`` trials);
    minimise ``objective``, the mean over ``repeats`` fits with the method seeds ``seed``,
    ``seed + 1``, ... (for methods whose result varies with the seed; the validation split
    and the sampler use ``seed``). ``space`` defaults to the method's declared
    ``search_space``. With ``defaults``, the method's defaults are scored first, outside the
    budget, and returned as the best when no trial beats them. Writes the trial records,
    the study and the outputs (``output``) to ``out``."""
    optuna = require_optuna()
    from .output import write_outputs

    spec = get_method_spec(method)
    space = spec_space(spec) if space is None else space
    check_search_space(space, spec)
    if objective not in OBJECTIVES:
        raise ValueError(f"objective {objective!r}: choose one of {', '.join(OBJECTIVES)}")
    if trials is not None and time_budget is not None:
        raise ValueError("give a budget of --trials or --time-budget, not both")
    if trials is None and time_budget is None:
        trials = DEFAULT_TRIALS
    if trials is not None and trials < 1 or time_budget is not None and time_budget <= 0:
        raise ValueError("the budget must be at least one trial or a positive time")
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    out = check_out_dir(out)
    options = options or tune_options()
    settings = {"dataset": dataset, "objective": objective, "seed": int(seed),
                "validation_fraction": float(validation_fraction), "repeats": int(repeats),
                "space": space}
    loop = _Loop(spec, register_validation(dataset, validation_fraction, seed), settings,
                 options, out, data_dir, command, progress)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = loop.open_study()
    reference = loop.score_defaults(study) if defaults else None
    loop.finish_interrupted(study)
    while (left := loop.budget_left(study, trials, time_budget)) > 0:
        loop.run_trial(study, left if time_budget is not None else None)
    return write_outputs(loop.result(study, trials, time_budget, reference), out)


def spec_space(spec) -> dict:
    """The search space ``spec`` declares; ValueError when it declares none."""
    space = getattr(spec, "search_space", None)
    if not space:
        raise ValueError(f"method {spec.name!r} declares no search space; give one "
                         "(xcbench.tune.tune(..., space={...})) or declare it in its "
                         "MethodSpec(search_space=...)")
    return space


def trial_seed(seed: int, number: int) -> int:
    """The sampler seed of trial ``number`` of a study seeded with ``seed``."""
    return int(np.random.SeedSequence([int(seed), int(number)]).generate_state(1)[0])


class _Loop:
    """One tuning run's state: the method, validation dataset, options and output folder."""

    def __init__(self, spec, dataset_name, settings, options, out, data_dir, command,
                 progress):
        self.spec, self.dataset_name, self.settings = spec, dataset_name, settings
        self.options, self.out, self.data_dir = options, out, data_dir
        self.command, self.progress = command, progress
        self.storage = journal_storage(out)
        self.defaults_value = None  # the defaults' objective, once scored

    def open_study(self, number: int = 0):
        """The study of this method in ``OUT`` (created on first use), its sampler seeded for
        trial ``number``; ValueError if ``OUT`` holds it with other settings."""
        import optuna

        sampler = optuna.samplers.TPESampler(
            seed=trial_seed(self.settings["seed"], number), n_startup_trials=STARTUP_TRIALS)
        study = optuna.create_study(study_name=self.spec.name, storage=self.storage,
                                    sampler=sampler, direction="minimize", load_if_exists=True)
        stored = study.user_attrs.get("settings")
        if stored is None:
            study.set_user_attr("settings", self.settings)
        elif stored != json.loads(json.dumps(self.settings)):
            changed = [k for k in self.settings if stored.get(k) != json.loads(
                json.dumps(self.settings[k]))]
            raise ValueError(f"{self.out} holds a tuning study of {self.spec.name!r} with other "
                             f"settings ({', '.join(changed)} differ); resume it with the same "
                             "settings or choose another --out")
        return study

    def budget_left(self, study, trials, time_budget) -> float:
        """Trials (or seconds) of the budget not yet spent by finished trials."""
        done = _finished(study)
        if trials is not None:
            return trials - len(done)
        return time_budget - sum(t.user_attrs.get("seconds", 0.0) for t in done)

    def finish_interrupted(self, study) -> None:
        """Evaluate and finish the trials an interrupted run left running (their parameters
        were stored before they ran)."""
        from optuna.trial import Trial, TrialState

        for frozen in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            trial = Trial(study, frozen._trial_id)
            params = frozen.user_attrs.get("params")
            if params is None:  # stopped before its parameters were chosen: nothing ran
                trial.set_user_attr("status", "interrupted")
                study.tell(trial, state=TrialState.FAIL)
                continue
            self._finish(study, trial, params, self.options.timeout)

    def run_trial(self, study, seconds_left: float | None) -> None:
        """Ask for the next trial's parameters, run them, tell the study the result."""
        study = self.open_study(len(study.get_trials(deepcopy=False)))
        trial = study.ask()
        params = suggest(trial, self.settings["space"])
        trial.set_user_attr("params", params)  # what runs (floats rounded), for resuming
        timeout = self.options.timeout if seconds_left is None \
            else min(self.options.timeout, seconds_left)
        self._finish(study, trial, params, timeout)

    def _finish(self, study, trial, params: dict, timeout: float) -> None:
        """Run ``trial`` with ``params`` as a cell and tell the study its value."""
        from optuna.trial import TrialState

        records, value, status, seconds = self.score(params, timeout)
        trial.set_user_attr("params", params)
        trial.set_user_attr("seconds", seconds)
        trial.set_user_attr("status", status)
        trial.set_user_attr("records", [r["key"] for r in records])
        if value is None:
            study.tell(trial, state=TrialState.FAIL)
        else:
            study.tell(trial, value)
        if self.progress:
            self._print(study, trial.number, params, value, status)

    def score_defaults(self, study) -> float | None:
        """Score the method's defaults like a trial (outside the budget); keep the value in
        the study for the trace plot and return it (None when the cells failed)."""
        _, value, status, _ = self.score({}, self.options.timeout)
        study.set_user_attr("defaults_value", value)
        self.defaults_value = value
        if self.progress:
            print(f"{self.spec.name} defaults: {self._value_text(value, status)}",
                  file=sys.stderr, flush=True)
        return value

    def score(self, params: dict, timeout: float):
        """(records, mean objective or None, status, seconds) of ``params``: ``status`` is
        the first one not ``ok``; ``seconds`` the cells' wall time (fit + validation
        measurement, the same when records are reused on resuming), what a time budget
        counts."""
        t0 = time.perf_counter()
        records = self.evaluate(params, timeout)
        seconds = sum(r.get("wall_seconds") or 0.0 for r in records) \
            or time.perf_counter() - t0
        values = [objective_value(r, self.settings["objective"]) for r in records]
        value = None if None in values else float(np.mean(values))
        status = next((r["status"] for r in records if r["status"] != "ok"), "ok")
        return records, value, status, seconds

    def evaluate(self, params: dict, timeout: float) -> list[dict]:
        """The records of the cells of the method with ``params`` on the validation split,
        one per method seed (stored records with the same keys are reused); one record of
        status ``invalid`` when the method refuses the combination before running."""
        overrides = {k: [v] for k, v in params.items()}
        defaults = method_defaults(self.spec)
        for name in {**self.spec.param_grid, **self.spec.query_params}:
            overrides.setdefault(name, [defaults[name]])  # one cell, one measurement
        seed, repeats = self.settings["seed"], self.settings["repeats"]
        try:
            outcome = execute_plan(
                [self.spec.name], [self.dataset_name], range(seed, seed + repeats), self.out,
                {self.spec.name: overrides}, replace(self.options, timeout=max(timeout, 1.0)),
                resume=True, data_dir=self.data_dir, progress=False, command=self.command)
        except ValueError as exc:  # values the method refuses together: nothing ran
            return [{"status": "invalid", "key": None, "error": str(exc), "wall_seconds": 0.0}]
        found = outcome.records + outcome.reused
        if len(found) != repeats:
            raise RuntimeError(f"a trial gave {len(found)} records, expected {repeats}")
        return sorted(found, key=lambda r: r["seed"])

    def _value_text(self, value, status) -> str:
        """``top-1 error 12.3%`` (as `xcbench run` prints it), or the failed status."""
        objective = self.settings["objective"]
        return (f"{OBJECTIVE_NAMES[objective]} {objective_text(objective, value)}"
                if value is not None else status.upper())

    def _print(self, study, number, params, value, status) -> None:
        """One line per trial: its parameters, value and the best so far (the defaults'
        when they are better than every trial)."""
        shown = " ".join(f"{k}={value_text(v)}" for k, v in params.items())
        trial = study.best_trial if _completed(study) else None
        best = best_so_far_text(self.settings["objective"],
                                (trial.value, trial.number) if trial else None,
                                self.defaults_value)
        print(f"{self.spec.name} trial {number}: {shown}: {self._value_text(value, status)}"
              f"{best}", file=sys.stderr, flush=True)

    def result(self, study, trials, time_budget, reference) -> TuneResult:
        complete = _completed(study)
        if not complete and reference is None:
            raise RuntimeError(f"no trial of {self.spec.name!r} finished ok; see the errors "
                               f"in {self.out}/results.jsonl (xcbench report --out {self.out})")
        best = min(complete, key=lambda t: (t.value, t.number)) if complete else None
        rows = [{"number": t.number, "state": t.state.name, "value": t.value,
                 "params": t.user_attrs.get("params", dict(t.params)),
                 "seconds": t.user_attrs.get("seconds"), "status": t.user_attrs.get("status"),
                 "records": t.user_attrs.get("records", [])} for t in _finished(study)]
        budget = {"trials": trials} if trials is not None else {"seconds": time_budget}
        settings = {**self.settings, "budget": budget, "validation_dataset": self.dataset_name}
        if best is None or reference is not None and reference <= best.value:
            return TuneResult(self.spec.name, self.settings["dataset"],
                              self.settings["objective"], {}, reference, None, rows, settings,
                              reference)
        return TuneResult(self.spec.name, self.settings["dataset"], self.settings["objective"],
                          best.user_attrs["params"], best.value, best.number, rows, settings,
                          reference)


def _finished(study) -> list:
    from optuna.trial import TrialState

    return study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL))


def _completed(study) -> list:
    from optuna.trial import TrialState

    return study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))


def objective_value(record: dict, objective: str) -> float | None:
    """The objective of an ``ok`` record, or None (a failed trial) when the cell failed or
    the value is missing or not finite."""
    if record["status"] != "ok":
        return None
    value = (record.get("metrics") or {}).get(objective)
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None
