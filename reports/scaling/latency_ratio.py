"""Single-example latency at K = 1,000 vs K = 100,000 (synthetic-sparse-1k / -100k) for the
tree methods that are cheap to fit, interleaved in one process.

Each method is fitted on both datasets with this report's settings (README), then timed in
ROUNDS rounds; a round times CALLS single-row predict_topk(x, 1) calls per model, models in
turn, so machine load hits both sizes alike; single-threaded, as the runner times latency.
Prints each round's p50 per model, the median ratio p50(100k) / p50(1k) (target <= 2) and
each model's top-1 error on the test rows.

Usage: XCBENCH_DATA_DIR=... python latency_ratio.py [--cache DIR] [model ...]   (default:
lomtree hsm; the others take 10-30 min each to fit at 100k). ``--cache DIR`` pickles each
fitted model to DIR and reuses it on the next run, to re-time a changed prediction path
without refitting; empty DIR after changing how a method trains. A model is a method name,
or a key of SETTINGS that names a method with other settings (e.g.
"label_tree:branching=32"), optionally followed by query-time settings applied after
fitting (e.g. "hsm:bits=csr@decoder=greedy", which with --cache reuses the "hsm:bits=csr"
models).
"""
import pickle
import sys
from pathlib import Path

import numba
import numpy as np
from threadpoolctl import threadpool_limits

from xcbench import load_dataset, make_method
from xcbench.run.measure import interleaved_p50
from xcbench.run.plan import parse_value

ROUNDS, CALLS = 5, 1000
HSM_EXACT = {"tree": "kmeans_balanced", "solver": "liblinear", "max_leaf": 100, "C": 30,
             "bits": "csr", "prune": 0.03, "decoder": "topk"}  # LIBLINEAR nodes, exact weights
SETTINGS = {  # per model: parameters shared by both K, then per-K ones (README)
    "lomtree": ({"passes": "auto"}, {}),
    "hsm": ({"lr": 0.2, "decoder": "greedy"}, {}),
    "hsm:bits=csr": (HSM_EXACT, {}),
    "hsm:bits=csr,arity=8": ({**HSM_EXACT, "arity": 8}, {}),
    "hsm:bits=csr,arity=32": ({**HSM_EXACT, "arity": 32}, {}),
    "recall_tree": ({}, {}),
    "mary_tree": ({}, {}),
    "recall_tree:node_only=true": ({"node_only": True}, {}),
    "st": ({"init": "cluster", "alpha": 1.0, "n_iter": 1},
           {"synthetic-sparse-1k": {"depth": 6}, "synthetic-sparse-100k": {"depth": 12}}),
    "st:k=100": ({"init": "cluster", "alpha": 1.0, "n_iter": 1, "k": 100},
                 {"synthetic-sparse-1k": {"depth": 5}, "synthetic-sparse-100k": {"depth": 11}}),
    "ast": ({"init": "cluster", "k0": 100, "initial_iter": 1, "max_stages": 1,
             "global_iter": 1},
            {"synthetic-sparse-1k": {"depth0": 5}, "synthetic-sparse-100k": {"depth0": 11}}),
    "label_tree": ({}, {}),
    "label_tree:branching=32": ({"branching": 32}, {}),
    "label_tree:branching=16": ({"branching": 16}, {}),
    "label_tree:branching=48": ({"branching": 48}, {}),
    "label_tree:solver=liblinear": ({"solver": "liblinear", "loss": "independent",
                                     "bits": "csr", "C": 0.1, "branching": 64,
                                     "prune": 0.01}, {}),
    "label_embedding_tree": ({}, {}),
    "label_embedding_tree:branching=32": ({"branching": 32}, {}),
    "label_embedding_tree:branching=16": ({"branching": 16}, {}),
    "label_embedding_tree:lr=0.02": ({"lr": 0.02}, {}),
    # the defaults of the methods whose entries above set parameters (issue 31's target is
    # on the defaults; the entries "recall_tree", "mary_tree", "label_tree" and
    # "label_embedding_tree" above are the defaults already)
    "hsm:defaults": ({}, {}),
    "st:defaults": ({}, {}),
    "ast:defaults": ({}, {}),
}
args = sys.argv[1:]
if {"-h", "--help"} & set(args):
    sys.exit(__doc__ + "\nmodels: " + ", ".join(SETTINGS))
cache = Path(args.pop(args.index("--cache") + 1)) if "--cache" in args else None
if cache is not None:
    args.remove("--cache")
    cache.mkdir(parents=True, exist_ok=True)
methods = args or ["lomtree", "hsm"]
unknown = [m for m in methods if m.partition("@")[0] not in SETTINGS]
if unknown:
    sys.exit(f"unknown model(s) {unknown}; choose from: {', '.join(SETTINGS)}")
data = {name: load_dataset(name) for name in ("synthetic-sparse-1k", "synthetic-sparse-100k")}
models = {}
for method in methods:
    fitted, _, query = method.partition("@")  # "model@decoder=greedy": a query-time setting
    shared, per_k = SETTINGS[fitted]
    for name, ds in data.items():
        saved = cache / f"{fitted}-{name}.pkl" if cache is not None else None
        if saved is not None and saved.exists():
            m = pickle.loads(saved.read_bytes())
            print(f"loaded {fitted} on {name} from {saved}", flush=True)
        else:
            m = make_method(fitted.split(":")[0], random_state=0, **shared,
                            **per_k.get(name, {}))
            m.fit(ds.X_train, ds.y_train, n_classes=ds.n_classes)
            if saved is not None:
                saved.write_bytes(pickle.dumps(m, protocol=5))
            print(f"fitted {fitted} on {name}", flush=True)
        if query:
            m.set_params(**{k: parse_value(v) for k, v in
                            (item.split("=", 1) for item in query.split(","))})
        models[(method, name)] = m
threadpool_limits(1)
numba.set_num_threads(1)
p50 = interleaved_p50(models, {key: data[key[1]].X_test for key in models}, ROUNDS, CALLS)
print(f"p50 (ms) per round, {ROUNDS} rounds x {CALLS} calls, models interleaved:")
for method in methods:
    small, large = p50[(method, "synthetic-sparse-1k")], p50[(method, "synthetic-sparse-100k")]
    ratios = np.array(large) / np.array(small)
    print(f"  {method} 1k: {' '.join(f'{v:.4f}' for v in small)}  100k: "
          f"{' '.join(f'{v:.4f}' for v in large)}  ratio median {np.median(ratios):.2f} "
          f"(min {ratios.min():.2f}, max {ratios.max():.2f})")
errors = {key: float(np.mean(m.predict(data[key[1]].X_test) != data[key[1]].y_test))
          for key, m in models.items()}
print("top-1 error on the test rows:")
for method in methods:
    print(f"  {method} 1k: {100 * errors[(method, 'synthetic-sparse-1k')]:.1f}%  100k: "
          f"{100 * errors[(method, 'synthetic-sparse-100k')]:.1f}%")
