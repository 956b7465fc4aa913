"""asv benchmarks of hierarchical softmax: the three decoders' speed, and top-1 accuracy."""
import xcbench

from .common import FittedModelBenchmark


class HSMDecoders(FittedModelBenchmark):
    """One fitted HSM (k-means tree, so it learns the synthetic classes), three decoders."""

    params = (["exact", "greedy", "topk"],)
    param_names = ["decoder"]

    def setup_cache(self):
        return self.fit_all()

    def models(self, data):
        model = xcbench.make_method("hsm", tree="kmeans", lr=0.01, epochs=5, random_state=0)
        model.fit(data.X_train, data.y_train, n_classes=data.n_classes)
        return {decoder: model for decoder in self.params[0]}

    def setup(self, cache, decoder):
        super().setup(cache, decoder)
        self.model.set_params(decoder=decoder)

    def track_nodes_per_example(self, cache, decoder):
        self.model.predict_topk(self.X, 1)
        return self.model.stats()["nodes_per_prediction"]

    track_nodes_per_example.unit = "nodes"
