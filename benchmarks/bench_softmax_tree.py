"""asv benchmarks of the softmax trees (st, ast): single-example and batch inference, top-1
accuracy, and the decision nodes an example passes (tracks that a tree stays log-depth)."""
import xcbench

from .common import FittedModelBenchmark


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
        self.model.predict_topk(self.X, 1)
        return self.model.stats()["nodes_per_prediction"]

    track_nodes_per_example.unit = "nodes"
