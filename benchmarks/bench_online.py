"""asv benchmarks of the online trees (lomtree, recall_tree): inference speed and accuracy."""
import xcbench

from .common import FittedModelBenchmark

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
