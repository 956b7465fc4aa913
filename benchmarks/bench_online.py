"""asv benchmarks of the online trees (lomtree, recall_tree): inference speed and accuracy on
the dense benchmark problem, and fit time, peak memory and path cost on a sparse many-class
problem (the extreme-scale regime their hashed weights and sparse label statistics serve)."""
import numpy as np

import xcbench
from xcbench.data.synthetic import make_sparse_hierarchical

from .common import FittedModelBenchmark, single_thread

PARAMS = {"lomtree": {"passes": 5}, "recall_tree": {"passes": 3}}


class OnlineTreeInference(FittedModelBenchmark):
    """Single-example and batch inference, and top-1 accuracy, of fitted online trees."""

    params = (list(PARAMS),)
    param_names = ["method"]

    def setup_cache(self):
        return self.fit_all()

    def models(self, data):
        return {name: xcbench.make_method(name, random_state=0, **params).fit(
            data.X_train, data.y_train, n_classes=data.n_classes)
            for name, params in PARAMS.items()}


class OnlineTreeSparseFit:
    """Fit of the online trees on sparse binary data, K=2,000, D=10,000, 6,000 rows."""

    params = (list(PARAMS),)
    param_names = ["method"]
    timeout = 600

    def setup(self, name):
        self.data = make_sparse_hierarchical(n_classes=2000, n_train=6000, n_test=500,
                                             bayes_samples=10)
        self._limiter = single_thread()
        self._fit(name, rows=200)  # compiled code loaded before timing

    def teardown(self, name):
        self._limiter.unregister()

    def _fit(self, name, rows=None):
        d = self.data
        rows = rows or len(d.y_train)
        return xcbench.make_method(name, random_state=0, passes=1).fit(
            d.X_train[:rows], d.y_train[:rows], n_classes=d.n_classes)

    def time_fit(self, name):
        self._fit(name)

    def peakmem_fit(self, name):
        self._fit(name)

    def track_path_cost(self, name):
        return float(np.mean(self._fit(name).path_cost(self.data.X_test)))

    track_path_cost.unit = "vectors per prediction"
