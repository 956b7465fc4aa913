"""Built-in hierarchical softmax (``hsm``): Huffman (or k-means) label tree, SGD- or
LIBLINEAR-trained nodes, and three decoders (exact, greedy/beam, exact top-k by best-first
search)."""
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
        description="hierarchical softmax on a Huffman or k-means tree (SGD or LIBLINEAR "
                    "nodes); decoders exact/greedy/topk",
        factory=HierarchicalSoftmax,
        query_params={"decoder": ["exact", "greedy", "topk"]},
    ))
