"""asv benchmarks of the learned M-ary tree: both decoders' speed, top-1 accuracy and the
children scored per prediction."""
import numpy as np

import xcbench

from .common import FittedModelBenchmark


class MaryTreeDecoders(FittedModelBenchmark):
    """One fitted learned 5-ary tree, exact and greedy decoding."""

    params = (["exact", "greedy"],)
    param_names = ["decoder"]

    def setup_cache(self):
        return self.fit_all()

    def models(self, data):
        model = xcbench.make_method("mary_tree", arity=5, epochs=4, random_state=0)
        model.fit(data.X_train, data.y_train, n_classes=data.n_classes)
        return {decoder: model for decoder in self.params[0]}

    def setup(self, cache, decoder):
        super().setup(cache, decoder)
        self.model.set_params(decoder=decoder)

    def track_children_scored(self, cache, decoder):
        return float(np.mean(self.model.path_cost(self.X)))

    track_children_scored.unit = "vectors"
