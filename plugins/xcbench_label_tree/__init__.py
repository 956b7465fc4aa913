"""Built-in label trees (Bengio, Weston & Grangier 2010): ``label_tree`` (one linear scorer
per node, tree-loss or independent training) and ``label_embedding_tree`` (node scores in a
learned d_e-dimensional embedding of x)."""
import xcbench
from xcbench import MethodSpec

from .model import LabelEmbeddingTree, LabelTree

__version__ = "0.1.0"
__all__ = ["LabelTree", "LabelEmbeddingTree"]


#: what `xcbench tune` searches (docs/tuning.md): the tree's structure and branching, the loss,
#: the node solver and that solver's own parameters
LABEL_TREE_SEARCH_SPACE = {
    "structure": {"choices": ["kmeans", "random"]},
    "branching": {"low": 2, "high": 128, "log": True, "int": True},
    "loss": {"choices": ["tree", "independent"]},
    "solver": {"choices": ["sgd", "liblinear"]},
    "lr": {"low": 1e-3, "high": 1.0, "log": True, "when": {"solver": "sgd"}},
    "epochs": {"low": 1, "high": 10, "int": True, "when": {"solver": "sgd"}},
    "C": {"low": 1e-2, "high": 1e2, "log": True, "when": {"solver": "liblinear"}},
}
LABEL_EMBEDDING_TREE_SEARCH_SPACE = {
    "structure": {"choices": ["kmeans", "random"]},
    "branching": {"low": 2, "high": 128, "log": True, "int": True},
    "embedding_dim": {"low": 16, "high": 512, "log": True, "int": True},
    "loss": {"choices": ["tree", "softmax"]},
    "lr": {"low": 1e-3, "high": 1.0, "log": True},
    "epochs": {"low": 1, "high": 10, "int": True},
}


@xcbench.hookimpl
def register_methods(register):
    register(MethodSpec(
        name="label_tree",
        family="tree",
        description="label tree: tree over label sets (wide unbalanced or balanced k-means / "
                    "confusion spectral / random), node scorers trained by SGD on the paper's "
                    "hinge losses or node by node with LIBLINEAR (one-vs-rest hinge / "
                    "logistic, Crammer-Singer, softmax), beam search, ensembles; defaults "
                    "by rule",
        factory=LabelTree,
        search_space=LABEL_TREE_SEARCH_SPACE,
        query_params={"beam": ["auto"]},
    ))
    register(MethodSpec(
        name="label_embedding_tree",
        family="tree",
        description="label embedding tree: z = Wx once, node scores z.V_s, W and V trained "
                    "jointly on the tree loss, beam search, ensembles",
        factory=LabelEmbeddingTree,
        search_space=LABEL_EMBEDDING_TREE_SEARCH_SPACE,
        query_params={"beam": ["auto"]},
    ))
