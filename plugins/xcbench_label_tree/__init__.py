"""Built-in label trees (Bengio, Weston & Grangier 2010): ``label_tree`` (one linear scorer
per node, tree-loss or independent training) and ``label_embedding_tree`` (node scores in a
learned d_e-dimensional embedding of x)."""
import xcbench
from xcbench import MethodSpec

from .model import LabelEmbeddingTree, LabelTree

__version__ = "0.1.0"
__all__ = ["LabelTree", "LabelEmbeddingTree"]


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
        query_params={"beam": ["auto"]},
    ))
    register(MethodSpec(
        name="label_embedding_tree",
        family="tree",
        description="label embedding tree: z = Wx once, node scores z.V_s, W and V trained "
                    "jointly on the tree loss, beam search, ensembles",
        factory=LabelEmbeddingTree,
        query_params={"beam": ["auto"]},
    ))
