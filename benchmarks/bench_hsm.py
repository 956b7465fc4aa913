"""asv benchmarks of hierarchical softmax: the three decoders' speed, and top-1 accuracy."""
import numpy as np

import xcbench

from .common import benchmark_data, single_thread


class HSMDecoders:
    """One fitted HSM (k-means tree, so it learns the synthetic classes), three decoders."""

    params = (["exact", "greedy", "topk"],)
    param_names = ["decoder"]
    timeout = 600

    def setup_cache(self):
        data = benchmark_data()
        with single_thread():
            model = xcbench.make_method("hsm", tree="kmeans", lr=0.01, epochs=5,
                                        random_state=0)
            model.fit(data.X_train, data.y_train, n_classes=data.n_classes)
        return model, data

    def setup(self, cache, decoder):
        model, data = cache
        self.model = model.set_params(decoder=decoder)
        self.X, self.y = data.X_test, data.y_test
        self.x1 = self.X[:1]
        self.model.predict_topk(self.x1, 1)  # compile outside the timing
        self._limiter = single_thread()

    def teardown(self, cache, decoder):
        self._limiter.unregister()

    def time_single_example(self, cache, decoder):
        self.model.predict_topk(self.x1, 1)

    def time_batch_top5(self, cache, decoder):
        self.model.predict_topk(self.X, 5)

    def track_top1_accuracy(self, cache, decoder):
        return float(np.mean(self.model.predict(self.X) == self.y))

    track_top1_accuracy.unit = "fraction"

    def track_nodes_per_example(self, cache, decoder):
        self.model.predict_topk(self.X, 1)
        return self.model.stats()["nodes_per_prediction"]

    track_nodes_per_example.unit = "nodes"
