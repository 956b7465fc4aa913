"""``alpha="search"`` for ``st``: the l1 strength picked on a validation split, as the
softmax-tree paper did ("set according to the cross-validation (10% of the training
data)"; it reports alpha = 0.1 for ODP and ALOI and 1.0 for PTB and WIKI-Small).

Rule: hold out VALIDATION_FRACTION of the training set (seeded by ``random_state``, stratified
when every class has 2+ examples), fit the same tree with each alpha of AUTO_ALPHAS on the
rest, from the largest alpha down, stopping early at the first alpha whose validation top-1
error is higher than the previous one's (smaller alphas give denser node problems that take
longer to solve, so they are tried only while they help); keep the alpha with the lowest
validation error (ties: the larger alpha, i.e. the sparser tree), then refit on the whole
training set. The right alpha depends on the feature scale as well as on N (the
sum-of-losses objective makes alpha's weight relative to a node's data 1 / n_node); a 0.01-1
range covers the paper's choices and the shipped datasets. The default, ``alpha="auto"``, is
the rule in ``defaults.py``, which picks what this search picked on every dataset it ran on
(or a value within its validation noise) without its cost: up to len(AUTO_ALPHAS) fits on
90% of the data before the final fit (see docs/methods/softmax-tree.md for measured
times); memory: one copy of 90% of X at a time.
"""
from __future__ import annotations

import numpy as np

from xcbench.data.splits import holdout_split
from xcbench.fit_progress import report_progress

AUTO_ALPHAS = (1.0, 0.1, 0.01)
VALIDATION_FRACTION = 0.1


def search_memory(n_samples: int, n_features: int, nnz: int) -> int:
    """Bytes the search holds beyond one fit: the 90% row copy of X (dense float64 or CSR)."""
    kept = 1 - VALIDATION_FRACTION
    dense = nnz >= n_samples * n_features
    return int(kept * (8 * n_samples * n_features if dense else 12 * nnz + 8 * n_samples))


def validation_seed(random_state) -> int:
    """The split's seed: ``random_state`` if an int, else drawn from it (0 for None)."""
    if random_state is None:
        return 0
    if isinstance(random_state, (int, np.integer)):
        return int(random_state)
    return int(random_state.randint(2 ** 31 - 1))


def best_alpha(errors: dict) -> float:
    """The alpha with the lowest validation error; on ties the first listed (AUTO_ALPHAS
    runs from large to small, so the sparser tree)."""
    return min(errors, key=errors.get)


def choose_alpha(model, X, y) -> tuple[float, dict]:
    """(chosen alpha, {alpha: validation top-1 error}) for ``model`` (a SoftmaxTree with
    ``alpha="search"``) on training data (X, y); see the module docstring for the rule."""
    kept, held = holdout_split(y, VALIDATION_FRACTION, validation_seed(model.random_state))
    X_fit, y_fit, X_val, y_val = X[kept], y[kept], X[held], y[held]
    # each candidate is scored by its own top-1 error: no smoothing in its fits
    params = {**model.get_params(), "verbose": False, "smoothing": 0.0, "smoothing_floor": 0.0}
    errors = {}
    for alpha in AUTO_ALPHAS:
        report_progress(AUTO_ALPHAS.index(alpha), len(AUTO_ALPHAS), "alpha tried")
        trial = type(model)(**{**params, "alpha": alpha}).fit(X_fit, y_fit, model.n_classes_)
        predicted = trial.predict_topk(X_val, 1)[0][:, 0]
        errors[alpha] = float(np.mean(predicted != y_val))
        model._log(f"alpha={alpha}: validation top-1 error {errors[alpha]:.4f}")
        if len(errors) > 1 and errors[alpha] > list(errors.values())[-2]:
            break  # worse than the previous, larger alpha: smaller ones are not tried
    return best_alpha(errors), {str(a): e for a, e in errors.items()}
