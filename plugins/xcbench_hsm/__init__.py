"""Built-in hierarchical softmax (``hsm``): Huffman (or k-means) label tree, SGD- or
LIBLINEAR-trained nodes, and four decoders (exact, greedy, beam, exact top-k by best-first
search); ``"auto"`` defaults resolved from the data (``defaults``)."""
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
        description="hierarchical softmax on a k-means or Huffman tree (LIBLINEAR or SGD "
                    "nodes; defaults resolved from the data); decoders exact/greedy/topk/beam",
        factory=HierarchicalSoftmax,
        # one fit measured with every decoder; `--param hsm:beam=1,5,20` sweeps the width
        query_params={"decoder": ["exact", "greedy", "topk", "beam"], "beam": [10]},
    ))
