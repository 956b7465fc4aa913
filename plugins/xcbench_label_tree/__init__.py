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
        description="label tree: balanced tree over label sets (k-means / confusion spectral / "
                    "random), hinge-trained node scorers (tree loss or independent; SGD, or "
                    "LIBLINEAR node by node with exact weights), greedy descent",
        factory=LabelTree,
    ))
    register(MethodSpec(
        name="label_embedding_tree",
        family="tree",
        description="label embedding tree: z = Wx once, node scores z.V_s, W and V trained "
                    "jointly on the tree loss, greedy descent",
        factory=LabelEmbeddingTree,
    ))
