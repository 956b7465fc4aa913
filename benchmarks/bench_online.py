"""asv benchmarks of the online trees (lomtree, recall_tree): inference speed and accuracy."""
import numpy as np

import xcbench

from .common import benchmark_data, single_thread

PARAMS = {"lomtree": {"passes": 5, "lr": 0.1}, "recall_tree": {"passes": 3}}


class OnlineTreeInference:
    """Single-example and batch inference, and top-1 accuracy, of fitted online trees."""

    params = (list(PARAMS),)
    param_names = ["method"]
    timeout = 600

    def setup_cache(self):
        data = benchmark_data()
        with single_thread():
            models = {name: xcbench.make_method(name, random_state=0, **params).fit(
                data.X_train, data.y_train, n_classes=data.n_classes)
                for name, params in PARAMS.items()}
        return models, data

    def setup(self, cache, method):
        models, data = cache
        self.model = models[method]
        self.X, self.y = data.X_test, data.y_test
        self.x1 = self.X[:1]
        self.model.predict_topk(self.x1, 1)  # compile outside the timing
        self._limiter = single_thread()

    def teardown(self, cache, method):
        self._limiter.unregister()

    def time_single_example(self, cache, method):
        self.model.predict_topk(self.x1, 1)

    def time_batch_top5(self, cache, method):
        self.model.predict_topk(self.X, 5)

    def track_top1_accuracy(self, cache, method):
        return float(np.mean(self.model.predict(self.X) == self.y))

    track_top1_accuracy.unit = "fraction"
