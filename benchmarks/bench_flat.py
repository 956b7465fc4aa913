"""asv benchmarks of the flat baselines (ova, softmax): inference speed and accuracy."""
import xcbench

from .common import FittedModelBenchmark


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
