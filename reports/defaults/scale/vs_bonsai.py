"""``label_tree`` against Omikuji's Bonsai on one dataset, in one process (issue 32's target:
a tree with its defaults at or below Bonsai's top-1 error at <= 1/4 of its p50).

Fits ``label_tree`` (its defaults, or with ``--param NAME=VALUE``) and ``omikuji-bonsai``
(its authors' defaults) single-threaded on the training rows, then prints for each model
the fit's CPU seconds and top-1 error on the test rows (the label tree at each ``--beams``
width, a query-time setting, on the same fit), McNemar's exact test of each beam's top-1
against Bonsai's (``xcbench.stats.mcnemar_exact``), and the
single-example p50 of every model timed interleaved (``ROUNDS`` rounds of ``CALLS`` calls,
models in turn, ``xcbench.run.measure.interleaved_p50``) with each one's median ratio to
Bonsai's over the rounds. Peak memory is not measured here (both models share the
process): the runner's records hold it (``xcbench run --methods label_tree,omikuji-bonsai``).

Usage (``XCBENCH_DATA_DIR`` pointing at the data folder):
    python reports/defaults/scale/vs_bonsai.py synthetic-sparse-10k [--beams auto,1,2,5]
        [--param n_trees=1 ...] [--seed N] [--cache DIR]
``--seed N`` is the label tree's ``random_state`` (default 0); Omikuji takes no seed (its
fits differ slightly from run to run), so each seed is also a fresh fit of Bonsai.
``--cache DIR`` pickles each fitted model to DIR and reuses it on the next run (at K = 1e5
each fit takes 15-25 minutes); empty DIR after changing how either method trains.
"""
import argparse
import copy
import pickle
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from xcbench import load_dataset, make_method
from xcbench.run.measure import interleaved_p50
from xcbench.run.plan import parse_value
from xcbench.stats import mcnemar_exact

ROUNDS, CALLS = 7, 1000
PEER = "omikuji-bonsai"


def fitted(method, params, data, cache, tag=""):
    """(model, fit CPU seconds or None when loaded from ``cache``); ``tag`` names a
    seedless method's fit in the cache."""
    path = None
    if cache is not None:
        tag = ",".join(f"{k}={v}" for k, v in sorted(params.items())) or tag or "defaults"
        path = Path(cache) / f"{method}-{data.name}-{tag}.pkl"
        if path.exists():
            with open(path, "rb") as f:
                return pickle.load(f), None
    model = make_method(method, **params)
    start = time.process_time()
    model.fit(data.X_train, data.y_train, n_classes=data.n_classes)
    seconds = time.process_time() - start
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:
            pickle.dump(model, f)
    return model, seconds


def mcnemar(right_a, right_b) -> str:
    test = mcnemar_exact(right_a, right_b)
    return (f"{test.only_a} rows only it gets right, {test.only_b} only Bonsai; "
            f"McNemar p = {test.pvalue:.2g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("--beams", default="auto,1,2,5",
                        help="label_tree beam widths to measure on its one fit")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="a label_tree parameter (repeatable; default: its defaults)")
    parser.add_argument("--seed", type=int, default=0,
                        help="label_tree's random_state (default 0)")
    parser.add_argument("--cache", default=None, help="folder of pickled fitted models")
    args = parser.parse_args()
    params = {"random_state": args.seed}
    for item in args.param:
        name, value = item.split("=", 1)
        params[name] = parse_value(value)
    data = load_dataset(args.dataset)
    with threadpool_limits(1):
        # seed 0 keeps the cache name of the fits made before --seed existed
        peer, peer_fit = fitted(PEER, {}, data, args.cache,
                                tag="defaults" if args.seed == 0 else f"fit{args.seed}")
        tree, tree_fit = fitted("label_tree", params, data, args.cache)
        peer_right = peer.predict_topk(data.X_test, 1)[0][:, 0] == data.y_test
        print(f"{PEER}: top-1 error {100 * np.mean(~peer_right):.2f}%, fit CPU "
              f"{peer_fit if peer_fit is None else round(peer_fit, 1)} s", flush=True)
        resolved = getattr(tree, "resolved_params_", {})
        print(f"label_tree {params}: fit CPU {tree_fit if tree_fit is None else round(tree_fit, 1)}"
              f" s; resolved {resolved}", flush=True)
        models = {PEER: peer}
        for beam in args.beams.split(","):
            model = copy.copy(tree)  # shares the fitted arrays; beam is its own
            model.set_params(beam=parse_value(beam))
            right = model.predict_topk(data.X_test, 1)[0][:, 0] == data.y_test
            print(f"  beam {beam}: top-1 error {100 * np.mean(~right):.2f}%; "
                  f"{mcnemar(right, peer_right)}", flush=True)
            models[f"label_tree beam {beam}"] = model
        p50 = interleaved_p50(models, {key: data.X_test for key in models}, ROUNDS, CALLS)
    for key, rounds in p50.items():
        ratio = np.median(np.array(rounds) / np.array(p50[PEER]))
        print(f"{key:24s} p50 {np.median(rounds):.4f} ms, {ratio:.3f} of Bonsai's "
              f"(rounds: {' '.join(f'{x:.4f}' for x in rounds)})")


if __name__ == "__main__":
    main()
