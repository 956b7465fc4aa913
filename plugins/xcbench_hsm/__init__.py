"""Built-in hierarchical softmax (``hsm``): Huffman label tree, SGD-trained nodes, and three
decoders (exact, greedy/beam, exact top-k by best-first search)."""
import xcbench
from xcbench import MethodSpec

from .model import HierarchicalSoftmax

__version__ = "0.1.0"
__all__ = ["HierarchicalSoftmax"]


@xcbench.hookimpl
def register_methods(register):
    register(MethodSpec(
        name="hsm",
        family="tree",
        description="hierarchical softmax on a Huffman tree (SGD); decoders exact/greedy/topk",
        factory=HierarchicalSoftmax,
        query_params={"decoder": ["exact", "greedy", "topk"]},
    ))
