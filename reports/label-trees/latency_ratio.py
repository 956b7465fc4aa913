"""Single-example latency of the label trees vs one-vs-all on PTB, interleaved in one process.

Latency does not depend on how well the weights are trained (the same tree shape, the same
K x D product), so the models are fitted cheaply here (first 100,000 training rows, one pass or
one L-BFGS iteration) with all K = 6,719 classes, then timed in ROUNDS rounds; each round times
CALLS single-row predict_topk(x, 1) calls per model, models in turn, so machine load hits all
of them alike; BLAS and numba run single-threaded, as in the runner's latency timing. Prints
each round's p50 per model and the p50 ratios to ova.

Usage: XCBENCH_DATA_DIR=... python latency_ratio.py
"""
import numba
import numpy as np
from threadpoolctl import threadpool_limits

from xcbench import load_dataset, make_method
from xcbench.run.measure import interleaved_p50

ROUNDS, CALLS, ROWS = 5, 1000, 100_000

ds = load_dataset("ptb")
X, y = ds.X_train[:ROWS], ds.y_train[:ROWS]
models = {
    "ova": make_method("ova", max_iter=1),
    "label_embedding_tree (softmax)": make_method("label_embedding_tree", loss="softmax",
                                                  epochs=1, random_state=0),
    "label_embedding_tree (tree)": make_method("label_embedding_tree", loss="tree", epochs=1,
                                               random_state=0),
    # solver stated: on this subset the solver rule would pick LIBLINEAR nodes, which the
    # full-data fit of the report's table does not (there: SGD)
    "label_tree (softmax)": make_method("label_tree", loss="softmax", solver="sgd", epochs=1,
                                        random_state=0),
}
for m in models.values():
    m.fit(X, y, n_classes=ds.n_classes)
threadpool_limits(1)  # single-threaded timing, as the runner measures latency
numba.set_num_threads(1)
p50 = interleaved_p50(models, {name: ds.X_test for name in models}, ROUNDS, CALLS)
print(f"p50 (ms) per round, {ROUNDS} rounds x {CALLS} calls, models interleaved:")
for name, values in p50.items():
    ratios = np.array(p50["ova"]) / np.array(values)
    print(f"  {name:32s} {' '.join(f'{v:.4f}' for v in values)}   ova/this: median "
          f"{np.median(ratios):.1f}x (min {ratios.min():.1f}x, max {ratios.max():.1f}x)")
