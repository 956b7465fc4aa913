"""asv benchmarks of label trees: inference speed, top-1 accuracy and path cost of
label_tree (the defaults by rule, the paper's tree loss, independent, softmax, node-by-node
LIBLINEAR training with exact weights, beam widths and a 3-tree ensemble) and
label_embedding_tree (tree loss, softmax)."""
import numpy as np

import xcbench

from .common import FittedModelBenchmark

SGD = {"solver": "sgd", "structure": "kmeans", "branching": "sqrt"}
CONFIGS = {
    "defaults": ("label_tree", {}),
    "one-vs-rest-greedy": ("label_tree", {"beam": 1, "n_trees": 1}),
    "one-vs-rest-beam3": ("label_tree", {"beam": 3, "n_trees": 1}),
    "one-vs-rest-3-trees": ("label_tree", {"beam": 1, "n_trees": 3}),
    "tree-loss": ("label_tree", {**SGD, "loss": "tree"}),
    "independent": ("label_tree", {**SGD, "loss": "independent"}),
    "embedding": ("label_embedding_tree", {"embedding_dim": 32}),
    "softmax": ("label_tree", {**SGD, "loss": "softmax"}),
    "embedding-softmax": ("label_embedding_tree", {"embedding_dim": 32, "loss": "softmax"}),
    "liblinear-csr": ("label_tree", {"solver": "liblinear", "loss": "independent",
                                     "bits": "csr", "C": 0.1, "structure": "kmeans",
                                     "branching": "sqrt", "beam": 1}),
}


class LabelTreeInference(FittedModelBenchmark):
    """One fitted model per configuration of CONFIGS."""

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
