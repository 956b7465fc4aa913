"""Shared set-up for the asv benchmarks: a fixed synthetic problem and fitted methods.

Set XCBENCH_ASV_PROFILE=full for the ALOI-shaped problem (K=1000); the default "quick"
profile uses K=200 so a whole asv run takes a couple of minutes.
"""
import os
from abc import ABC, abstractmethod

from threadpoolctl import threadpool_limits

from xcbench.data.synthetic import make_hierarchical

PROFILES = {
    "quick": dict(n_classes=200, n_features=64, n_train=6000, n_test=1000, levels=2),
    "full": dict(n_classes=1000, n_features=128, n_train=30000, n_test=5000),
}


def benchmark_data():
    """The benchmark dataset of the active profile (deterministic)."""
    profile = os.environ.get("XCBENCH_ASV_PROFILE", "quick")
    return make_hierarchical(seed=0, bayes_samples=2000, **PROFILES[profile])


def single_thread():
    """Limit BLAS to one thread, as xcbench's runner does, and return the limiter."""
    return threadpool_limits(limits=1)


class FittedModelBenchmark(ABC):
    """Base of the inference benchmarks: ``fit_all`` fits ``self.models(data)`` (a dict
    from the benchmark parameter to a fitted method); each benchmark then times one model
    single-threaded, after an untimed call that compiles what needs compiling.

    Subclasses define ``setup_cache`` themselves (``return self.fit_all()``): asv keys its
    cache by where ``setup_cache`` is written, so an inherited one would be shared.

    The class is abstract (``models``), which is what keeps asv from collecting the base
    itself as a benchmark wherever it is imported: asv skips abstract classes.
    """

    timeout = 600

    @abstractmethod
    def models(self, data) -> dict:
        """Fitted methods keyed by the benchmark parameter."""

    def fit_all(self):
        data = benchmark_data()
        with single_thread():
            return self.models(data), data

    def setup(self, cache, name):
        models, data = cache
        self.model = models[name]
        self.X, self.y = data.X_test, data.y_test
        self.x1 = self.X[:1]
        self.model.predict_topk(self.x1, 1)
        self._limiter = single_thread()

    def teardown(self, cache, name):
        self._limiter.unregister()

    def time_single_example(self, cache, name):
        self.model.predict_topk(self.x1, 1)

    def time_batch_top5(self, cache, name):
        self.model.predict_topk(self.X, 5)

    def track_top1_accuracy(self, cache, name):
        import numpy as np

        return float(np.mean(self.model.predict(self.X) == self.y))

    track_top1_accuracy.unit = "fraction"
