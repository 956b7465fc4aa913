"""asv benchmarks of hierarchical softmax: the four decoders' speed, rows scored per
prediction and top-1 accuracy, on the dense benchmark problem (SGD nodes), on a sparse one
whose weights are hashed, and with the defaults resolved from the data."""
import xcbench
from xcbench.data.synthetic import make_sparse_hierarchical

from .common import FittedModelBenchmark, single_thread

DECODERS = ["exact", "greedy", "topk", "beam"]  # beam: width 10, the default


class HSMDecoders(FittedModelBenchmark):
    """One fitted HSM (k-means tree, so it learns the synthetic classes), four decoders."""

    params = (DECODERS,)
    param_names = ["decoder"]

    def setup_cache(self):
        return self.fit_all()

    def models(self, data):
        model = xcbench.make_method("hsm", tree="kmeans", solver="sgd", lr=0.01, epochs=5,
                                    random_state=0)
        model.fit(data.X_train, data.y_train, n_classes=data.n_classes)
        return {decoder: model for decoder in self.params[0]}

    def setup(self, cache, decoder):
        super().setup(cache, decoder)
        self.model.set_params(decoder=decoder)

    def track_rows_scored_per_example(self, cache, decoder):
        return float(self.model.path_cost(self.X).mean())

    track_rows_scored_per_example.unit = "rows"


class HSMSparseHashed(HSMDecoders):
    """HSM on a sparse problem (K=2000, D~18K, ~16 nonzeros a row) with its weights hashed
    into 2^22 slots: single CSR rows cost O(nnz x path) for greedy/topk."""

    def setup_cache(self):
        data = make_sparse_hierarchical(n_classes=2000, bayes_samples=200, seed=0)
        with single_thread():
            model = xcbench.make_method("hsm", solver="sgd", lr=0.05, epochs=3, bits=22,
                                        random_state=0)
            model.fit(data.X_train, data.y_train, n_classes=data.n_classes)
        return {decoder: model for decoder in DECODERS}, data


class HSMSparseDefaults(HSMDecoders):
    """HSM with its defaults on the same sparse problem: the rules pick LIBLINEAR nodes on
    a balanced k-means tree (up to 100 classes under a last node) and the direct table."""

    def setup_cache(self):
        data = make_sparse_hierarchical(n_classes=2000, bayes_samples=200, seed=0)
        with single_thread():
            model = xcbench.make_method("hsm", random_state=0)
            model.fit(data.X_train, data.y_train, n_classes=data.n_classes)
        return {decoder: model for decoder in DECODERS}, data
