"""asv benchmarks of the learned M-ary tree: the decoders' speed (exact, greedy, beam of
10), top-1 accuracy and the children scored per prediction."""
import numpy as np

import xcbench

from .common import FittedModelBenchmark


class MaryTreeDecoders(FittedModelBenchmark):
    """One fitted learned 5-ary tree, exact, greedy and beam decoding."""

    params = (["exact", "greedy", "beam"],)
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


class MaryTreeRepresentations(FittedModelBenchmark):
    """Learned 5-ary trees whose nodes score x itself or a learned d_r = 32 map r = A x
    (computed once per example, reused at every node on the path)."""

    params = (["identity", "linear"],)
    param_names = ["representation"]

    def setup_cache(self):
        return self.fit_all()

    def models(self, data):
        return {rep: xcbench.make_method("mary_tree", arity=5, epochs=4, representation=rep,
                                         d_r=32, random_state=0).fit(
            data.X_train, data.y_train, n_classes=data.n_classes)
            for rep in self.params[0]}

    def track_vectors_scored(self, cache, representation):
        return float(np.mean(self.model.path_cost(self.X)))

    track_vectors_scored.unit = "vectors"
