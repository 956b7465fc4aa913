"""asv benchmarks of the flat baselines (ova, softmax): inference speed and accuracy."""
import os

import xcbench
from xcbench.data.synthetic import make_sparse_hierarchical

from .common import FittedModelBenchmark, single_thread


def sparse_benchmark_data():
    """The sparse problem of the active profile: K=200 (quick) or 1000 (full)."""
    full = os.environ.get("XCBENCH_ASV_PROFILE", "quick") == "full"
    return make_sparse_hierarchical(n_classes=1000 if full else 200, bayes_samples=200, seed=0)


class FlatInference(FittedModelBenchmark):
    """Single-example and batch inference, and top-1 accuracy, of fitted flat models."""

    params = (["ova", "softmax"],)
    param_names = ["method"]

    def setup_cache(self):
        return self.fit_all()

    def models(self, data):
        return {name: xcbench.make_method(name, random_state=0).fit(
            data.X_train, data.y_train, n_classes=data.n_classes) for name in self.params[0]}

    def peakmem_batch_top5(self, cache, method):
        self.model.predict_topk(self.X, 5)


class FlatSparseInference(FittedModelBenchmark):
    """The same on sparse binary rows (~16 stored features of D ~ 9K at K=1000): one CSR row
    must cost O(nnz K), never O(D K). Fitted briefly (20 L-BFGS iterations): speed, not
    accuracy, is what this one watches."""

    params = (["ova", "softmax"],)
    param_names = ["method"]

    def setup_cache(self):
        data = sparse_benchmark_data()
        with single_thread():
            return self.models(data), data

    def models(self, data):
        return {name: xcbench.make_method(name, max_iter=20).fit(
            data.X_train, data.y_train, n_classes=data.n_classes) for name in self.params[0]}
