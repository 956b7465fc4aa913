"""asv benchmarks of the softmax trees (st, ast): single-example and batch inference, top-1
accuracy, the path cost of a prediction (tracks that a tree stays log-depth), and the two
ways to dot a CSR input row with CSR weight rows.

Run as a script for the sparse-scale measurement (one process, 1 thread):
``python benchmarks/bench_softmax_tree.py DATASET 'k=50,depth=8' [max_train_rows]``
prints fit seconds, peak RSS, top-1 test error and the p50/p99 single-example latency.
"""
import numpy as np
import scipy.sparse as sp

import xcbench

try:
    from .common import FittedModelBenchmark
except ImportError:  # run as a script
    FittedModelBenchmark = object


class SoftmaxTrees(FittedModelBenchmark):
    """One ST (k=20, depth 4, clustering init) and one AST on the benchmark problem."""

    params = (["st", "ast"],)
    param_names = ["method"]

    def setup_cache(self):
        return self.fit_all()

    def models(self, data):
        configs = {
            "st": dict(k=20, depth=4, n_iter=5, alpha=0.1, init="cluster"),
            "ast": dict(depth0=2, initial_iter=3, global_iter=2, max_stages=2, expand_iter=3,
                        alpha=0.1),
        }
        out = {}
        for name, params in configs.items():
            model = xcbench.make_method(name, random_state=0, **params)
            out[name] = model.fit(data.X_train, data.y_train, n_classes=data.n_classes)
        return out

    def track_nodes_per_example(self, cache, method):
        return float(self.model.path_cost(self.X).mean())

    track_nodes_per_example.unit = "vectors"


class CSRRowDot:
    """Score 50 CSR weight rows (~200 nonzeros each, D = 1e6) against CSR input rows
    (16 nonzeros): sorted merge / binary search per row vs scatter into a length-D buffer."""

    params = ([1, 1000], ["merge", "scatter"])
    param_names = ["rows", "kernel"]

    def setup(self, rows, kernel):
        from xcbench.tree.csr_weights import CSRWeights, scores_merge, scores_scatter

        D = 1_000_000
        rng = np.random.default_rng(0)
        W = [(np.sort(rng.choice(D, 200, replace=False)), rng.normal(size=200))
             for _ in range(50)]
        self.w = CSRWeights.from_rows(W, D)
        cols = np.sort(rng.integers(0, D, size=(rows, 16)), axis=1)  # (sp.random draws O(n D))
        X = sp.csr_matrix((np.ones(16 * rows), cols.ravel(), np.arange(0, 16 * rows + 1, 16)),
                          shape=(rows, D))
        self.xi = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data)
        self.rows = np.arange(50)
        self.merge, self.scatter, self.D = scores_merge, scores_scatter, D
        self.time_scores(rows, kernel)  # compile

    def time_scores(self, rows, kernel):
        if kernel == "merge":
            self.merge(*self.w.arrays, self.rows, np.zeros((0, 0)), *self.xi, False)
        else:
            self.scatter(*self.w.arrays, self.rows, *self.xi, self.D)


def measure(dataset: str, params: str, max_rows: int = 0) -> dict:
    """Fit st with ``params`` ('k=50,depth=8') on ``dataset``; fit time, peak RSS, error,
    single-example latency percentiles (1,000 test rows, one at a time)."""
    import resource
    import time

    from threadpoolctl import threadpool_limits

    kwargs = {}
    for item in filter(None, params.split(",")):
        key, value = item.split("=")
        kwargs[key] = value if value.isalpha() or "-" in value else (
            float(value) if "." in value else int(value))
    ds = xcbench.load_dataset(dataset)
    X, y = ds.X_train, ds.y_train
    if max_rows and max_rows < X.shape[0]:
        keep = np.random.default_rng(0).permutation(X.shape[0])[:max_rows]
        X, y = X[np.sort(keep)], y[np.sort(keep)]
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    model = xcbench.make_method("st", random_state=0, **kwargs)
    with threadpool_limits(1):
        start = time.perf_counter()
        model.fit(X, y, n_classes=ds.n_classes)
        fit_s = time.perf_counter() - start
        err = float(np.mean(model.predict(ds.X_test) != ds.y_test))
        Xt = ds.X_test[:1000]
        rows = [Xt[i:i + 1] for i in range(Xt.shape[0])]
        for r in rows[:50]:
            model.predict_topk(r, 1)
        lat = []
        for r in rows:
            t = time.perf_counter()
            model.predict_topk(r, 1)
            lat.append(time.perf_counter() - t)
    stats = model.stats()
    return {"dataset": dataset, "params": kwargs, "train_rows": X.shape[0],
            "fit_s": round(fit_s, 1), "fit_phases": stats["fit_seconds"],
            "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
            "rss_before_fit_gb": round(rss0 / 2**20, 2), "top1_error": err,
            "bayes_error": ds.info.get("bayes_error"),
            "p50_us": round(1e6 * float(np.percentile(lat, 50)), 1),
            "p99_us": round(1e6 * float(np.percentile(lat, 99)), 1),
            "path_cost_mean": _mean_path_cost(model, ds.X_test),
            "bytes": stats["bytes"], "depth": stats["depth"], "leaves": stats["leaves"]}


def _mean_path_cost(model, X):
    try:
        return float(model.path_cost(X).mean())
    except NotImplementedError:  # a version before path_cost
        return None


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(measure(sys.argv[1], sys.argv[2],
                             int(sys.argv[3]) if len(sys.argv) > 3 else 0)))
