"""Choose mary_tree settings on ptb-words without its test rows: fit on the first 90% of the
training rows, report perplexity and top-1 error on the last 10% (a later stretch of the
corpus, as a validation split).

Usage: XCBENCH_DATA_DIR=... python validate.py arity=82 max_depth=2 d_r=200 epochs=2 \
           lr=0.07 tree_epochs=0.25
(``representation="embedding"`` is implied; ``random_state`` defaults to 0.)
"""
import sys
import time

import numpy as np

from xcbench import load_dataset, make_method
from xcbench.run.plan import parse_value  # the runner's --param value parser

VALIDATION_SHARE = 0.1


def main(argv):
    given = dict(kv.split("=", 1) for kv in argv)
    params = {"random_state": 0, **{k: parse_value(v) for k, v in given.items()}}
    ds = load_dataset("ptb-words")
    cut = int((1 - VALIDATION_SHARE) * ds.X_train.shape[0])
    X, y = ds.X_train[:cut], ds.y_train[:cut]
    X_val, y_val = ds.X_train[cut:], ds.y_train[cut:]
    model = make_method("mary_tree", representation="embedding", **params)
    model.fit(X[:300], y[:300], n_classes=ds.n_classes)  # compile outside the timing
    start = time.perf_counter()
    model.fit(X, y, n_classes=ds.n_classes)
    fit = time.perf_counter() - start
    perplexity = np.exp(-np.mean(model.log_proba(X_val, y_val)))
    error = np.mean(model.predict(X_val) != y_val)
    print(f"{params} train rows {cut}, validation rows {len(y_val)}: "
          f"perplexity {perplexity:.2f}, top-1 error {error:.4f}, fit {fit:.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
