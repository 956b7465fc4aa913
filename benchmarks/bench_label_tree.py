"""asv benchmarks of label trees: inference speed, top-1 accuracy and path cost of
label_tree (tree loss, independent, softmax, and node-by-node LIBLINEAR training with exact
weights) and label_embedding_tree (tree loss, softmax)."""
import numpy as np

import xcbench

from .common import FittedModelBenchmark

CONFIGS = {
    "tree-loss": ("label_tree", {}),
    "independent": ("label_tree", {"loss": "independent"}),
    "embedding": ("label_embedding_tree", {"embedding_dim": 32}),
    "softmax": ("label_tree", {"loss": "softmax"}),
    "embedding-softmax": ("label_embedding_tree", {"embedding_dim": 32, "loss": "softmax"}),
    "liblinear-csr": ("label_tree", {"solver": "liblinear", "loss": "independent",
                                     "bits": "csr", "C": 0.1}),
}


class LabelTreeInference(FittedModelBenchmark):
    """One fitted model per configuration (k-means structure, depth 2)."""

    params = (list(CONFIGS),)
    param_names = ["config"]

    def setup_cache(self):
        return self.fit_all()

    def models(self, data):
        fitted = {}
        for key, (name, params) in CONFIGS.items():
            fitted[key] = xcbench.make_method(name, random_state=0, **params).fit(
                data.X_train, data.y_train, n_classes=data.n_classes)
        return fitted

    def track_vectors_per_prediction(self, cache, config):
        return float(np.mean(self.model.path_cost(self.X)))

    track_vectors_per_prediction.unit = "vectors"
