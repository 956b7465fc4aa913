"""``softmax``'s C and temperature chosen on held-out training rows, where that is cheap.

The C rule (``defaults.resolve_C``) lands within the targets on most data but not all: on
synthetic-sparse-1k (10 training rows per class) it picks C = 1000, 2.2 points of top-1
error behind C = 10, whose probabilities are in turn too flat (perplexity 5.46 against
2.86). Both are fixed by looking at rows the model did not train on:

- **temperature**: one T > 0 dividing the scores, log p = log softmax(s / T), fitted to the
  held-out rows' log loss (temperature scaling). It never changes the ranking of classes,
  so top-1 and top-k are those of T = 1; only the probabilities move.
- **C**: the candidates are the rule's C times 0.01, 0.1 and 1 (powers of ten, kept in
  [C_MIN, C_MAX]); each is fitted on the training rows minus a seeded held-out fifth, and
  its temperature fitted on the held-out rows. Among the candidates whose held-out top-1
  errors are within one standard error of the fewest (the one-standard-error rule: closer
  than that is noise), the one with the lowest held-out log loss at its temperature wins.
  Nothing above the rule's C is tried: on every measured dataset where the rule was off,
  its C was too large (synthetic-sparse-1k: best at C / 100; leaves100: C / 10), and no C
  above it was better by more than 0.4 points (letter, where the floor binds). Held-out
  fits see a fifth fewer rows, which can favour a weaker penalty than the full data needs:
  on aloi27d-438 (seed 1) C = 10^4 had 5 points fewer held-out errors than the rule's 1000,
  but on the test rows 0.2 points more, at a perplexity of 26.0 against 17.1.

Then the chosen C is fitted on all training rows and predicts with T. The search costs up to
three fits on 80% of the rows, so it runs only when one fit's work, stored values x classes,
is at most ``SEARCH_WORK`` and scikit-learn's lbfgs is the solver (the N x K matrix fits in
memory, so the held-out scores, a fifth of it, do too), and when at least
``MIN_HELD_OUT_ROWS`` rows can be held out. Otherwise C is the rule's and T = 1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp
from sklearn.utils import check_random_state

from .defaults import C_MAX, C_MIN

SEARCH_WORK = 1e9  # stored values x classes (aloi27d-438: 5.2e8 fits; aloi27d: 1.2e9)
HELD_OUT_FRACTION = 0.2
MIN_HELD_OUT_ROWS = 200
C_FACTORS = (0.01, 0.1, 1.0)  # nothing above the rule's C (see the module docstring)
T_BOUNDS = (0.02, 50.0)


def search_is_cheap(n_samples: int, nnz: int, n_classes: int, solver: str) -> bool:
    """Whether held-out choices run: small work, in-memory solver, enough rows to hold out."""
    return (solver != "chunked-lbfgs" and nnz * n_classes <= SEARCH_WORK
            and int(n_samples * HELD_OUT_FRACTION) >= MIN_HELD_OUT_ROWS)


def candidate_Cs(rule_C: float) -> list[float]:
    """The rule's C times each of C_FACTORS, clipped to [C_MIN, C_MAX], distinct, ascending."""
    return sorted({float(min(max(rule_C * f, C_MIN), C_MAX)) for f in C_FACTORS})


def split_rows(n_samples: int, random_state) -> tuple[np.ndarray, np.ndarray]:
    """(training rows, held-out rows), sorted: a seeded fifth of the rows held out
    (``random_state`` None holds out the same rows as 0, so a default fit is repeatable)."""
    rng = check_random_state(0 if random_state is None else random_state)
    order = rng.permutation(n_samples)
    n_held = int(n_samples * HELD_OUT_FRACTION)
    return np.sort(order[n_held:]), np.sort(order[:n_held])


@dataclass(frozen=True)
class HeldOutScore:
    """One candidate's held-out result: top-1 errors, and the mean log loss at its
    temperature (rows of classes the fit never saw left out)."""
    errors: int
    log_loss: float
    temperature: float


def score_held_out(scores: np.ndarray, columns: np.ndarray,
                   temperature: float | None = None) -> HeldOutScore:
    """Score rows' (n, K_seen) scores against their true columns (-1: a class the held-out
    fit never saw, an error whatever the scores). ``temperature`` None fits it
    (``fit_temperature``); a number is used as given."""
    seen = columns >= 0
    errors = int(np.count_nonzero(~seen))
    if not seen.any():
        return HeldOutScore(errors, math.inf, 1.0 if temperature is None else temperature)
    s, c = scores[seen], columns[seen]
    errors += int(np.count_nonzero(s.argmax(axis=1) != c))
    T = fit_temperature(s, c) if temperature is None else float(temperature)
    return HeldOutScore(errors, _mean_log_loss(s, c, T), T)


def best_candidate(results: dict[float, HeldOutScore], n_rows: int) -> float:
    """The C of lowest log loss among those whose errors on the ``n_rows`` held-out rows
    are within one binomial standard error, sqrt(n p (1 - p)), of the fewest."""
    fewest = min(r.errors for r in results.values())
    p = fewest / n_rows
    close = [C for C, r in results.items()
             if r.errors <= fewest + math.sqrt(n_rows * p * (1 - p))]
    return min(close, key=lambda C: (results[C].log_loss, results[C].errors))


def fit_temperature(scores: np.ndarray, columns: np.ndarray) -> float:
    """T in T_BOUNDS minimising the mean log loss of log softmax(scores / T) on the rows
    whose class the model knows (columns >= 0); 1.0 when there are none."""
    seen = columns >= 0
    if not seen.any():
        return 1.0
    s, c = scores[seen], columns[seen]
    lo, hi = (math.log(b) for b in T_BOUNDS)
    found = minimize_scalar(lambda log_t: _mean_log_loss(s, c, math.exp(log_t)),
                            bounds=(lo, hi), method="bounded", options={"xatol": 1e-3})
    return float(math.exp(found.x))


def _mean_log_loss(scores: np.ndarray, columns: np.ndarray, temperature: float) -> float:
    scaled = scores / temperature
    return float(np.mean(logsumexp(scaled, axis=1) - scaled[np.arange(len(columns)), columns]))
