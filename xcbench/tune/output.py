"""What a tuning run writes to its folder: the best parameters as a ``--param`` line and a
params file ``xcbench run --params-file`` reads, the trials as CSV, and the trial trace
(objective vs trial, every study in the folder on one plot)."""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from ..contract.method_params import value_text
from ..numbers import percent, sig3

TRACE_PLOT = "trace.png"

#: how the printed lines and the trace plot name each objective
OBJECTIVE_NAMES = {"top1_error": "top-1 error", "top5_error": "top-5 error",
                   "perplexity": "perplexity", "perplexity_smoothed": "smoothed perplexity"}


def is_error(objective: str) -> bool:
    """Whether ``objective`` is an error rate (a fraction, shown in percent)."""
    return objective.endswith("_error")


def objective_text(objective: str, value: float | None) -> str:
    """``value`` as `xcbench run` and the reports print it: errors in percent (``12.3%``),
    perplexities to three significant digits."""
    return percent(value) if is_error(objective) else sig3(value)


def best_so_far_text(objective: str, best: tuple[float, int] | None,
                     defaults: float | None) -> str:
    """`` (best 11.0%, trial 2)``: the best (value, trial number) of the trials so far, or
    the defaults' value when they are as good or better (as the result counts them); ``''``
    when there is neither."""
    if defaults is not None and (best is None or defaults <= best[0]):
        return f" (best {objective_text(objective, defaults)}, the defaults)"
    if best is None:
        return ""
    return f" (best {objective_text(objective, best[0])}, trial {best[1]})"


def best_file(out, method: str) -> Path:
    """Where the best parameters of ``method`` are written: ``OUT/best-METHOD.json``."""
    return Path(out) / f"best-{method}.json"


def param_line(method: str, params: dict) -> str:
    """``--param st:k=64 --param st:alpha=0.01``: the parameters as ``xcbench run`` options
    (values as ``value_text`` spells them; sampled floats have 3 significant digits)."""
    return " ".join(f"--param {method}:{name}={value_text(value)}"
                    for name, value in params.items())


def write_outputs(result, out):
    """Write ``best-METHOD.json``, ``trials-METHOD.csv`` and ``trace.png`` for ``result``
    (a TuneResult) into ``out``; return the result with ``files`` set."""
    from ..version import __version__

    out = Path(out)
    line = param_line(result.method, result.best_params)
    best = {"method": result.method, "params": result.best_params, "dataset": result.dataset,
            "objective": result.objective, "validation_value": result.best_value,
            "trial": result.best_trial, "defaults_validation_value": result.defaults_value,
            "trials_finished": len(result.trials),
            "settings": result.settings, "param_line": line, "xcbench_version": __version__}
    best_path = best_file(out, result.method)
    best_path.write_text(json.dumps(best, indent=2, sort_keys=False) + "\n")
    csv_path = out / f"trials-{result.method}.csv"
    write_trials_csv(csv_path, result.trials)
    plot_path = plot_traces(out, out / TRACE_PLOT)
    result.files = {"best": str(best_path), "trials": str(csv_path), "trace": str(plot_path)}
    return result


def write_trials_csv(path, trials: list) -> None:
    """One row per finished trial: number, state, value, status, seconds, each parameter,
    the keys of its records."""
    names = list(dict.fromkeys(k for t in trials for k in t["params"]))
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["trial", "state", "value", "status", "seconds", *names, "records"])
        for t in trials:
            writer.writerow([t["number"], t["state"], "" if t["value"] is None else t["value"],
                             t["status"], f"{t['seconds']:.3f}" if t["seconds"] else "",
                             *[value_text(t["params"][n]) if n in t["params"] else ""
                               for n in names], " ".join(k or "" for k in t["records"])])


def study_traces(out) -> dict:
    """{method: (settings, [(trial, value or None)], defaults' value or None)} for every
    study in ``out``."""
    import optuna
    from optuna.trial import TrialState

    from .storage import journal_storage

    storage = journal_storage(out)
    traces = {}
    for summary in optuna.get_all_study_summaries(storage, include_best_trial=False):
        study = optuna.load_study(study_name=summary.study_name, storage=storage)
        points = [(t.number, t.value if t.state == TrialState.COMPLETE else None)
                  for t in study.get_trials(deepcopy=False)
                  if t.state in (TrialState.COMPLETE, TrialState.FAIL)]
        traces[summary.study_name] = (study.user_attrs.get("settings", {}), points,
                                      study.user_attrs.get("defaults_value"))
    return traces


def plot_traces(out, path) -> Path:
    """Objective vs trial for each study in ``out`` (dots: trials, line: best so far, dashed:
    the defaults, crosses at the top: failed trials) saved to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from matplotlib.ticker import MaxNLocator

    traces = study_traces(out)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    objectives, datasets = set(), set()
    for i, (method, (settings, points, defaults)) in enumerate(sorted(traces.items())):
        objective = settings.get("objective", "objective")
        objectives.add(OBJECTIVE_NAMES.get(objective, objective)
                       + (" (%)" if is_error(objective) else ""))
        scale = 100.0 if is_error(objective) else 1.0
        datasets.add(settings.get("dataset", "?"))
        color = f"C{i % 10}"
        points = [(n, None if v is None else v * scale) for n, v in points]
        defaults = None if defaults is None else defaults * scale
        done = [(n, v) for n, v in points if v is not None]
        if done:
            ax.plot(*zip(*done), "o", color=color, alpha=0.5, markersize=4)
            best, steps = math.inf, []
            for n, v in done:
                best = min(best, v)
                steps.append((n, best))
            ax.step(*zip(*steps), where="post", color=color,
                    label=f"{method} (best trial {sig3(best)})")
        if defaults is not None:
            ax.axhline(defaults, color=color, linestyle="--", linewidth=1,
                       label=f"{method} defaults ({sig3(defaults)})")
        failed = [n for n, v in points if v is None]
        if failed:
            ax.plot(failed, [1.0] * len(failed), "x", color=color,
                    transform=ax.get_xaxis_transform(), clip_on=False)
    ax.set_xlabel("trial")
    ax.set_ylabel(" / ".join(sorted(objectives)) + " (validation)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(f"tuning on {', '.join(sorted(datasets))}: each trial, and the best so far")
    ax.grid(alpha=0.3)
    if traces:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
