"""Built-in hierarchical softmax (``hsm``): Huffman (or k-means) label tree, SGD- or
LIBLINEAR-trained nodes, and four decoders (exact, greedy, beam, exact top-k by best-first
search); ``"auto"`` defaults resolved from the data (``defaults``)."""
import xcbench
from xcbench import MethodSpec

from .model import HierarchicalSoftmax

__version__ = "0.1.0"
__all__ = ["HierarchicalSoftmax"]


#: what `xcbench tune` searches (docs/tuning.md): the tree, its arity, the node solver and
#: that solver's own parameters, the decoder
HSM_SEARCH_SPACE = {
    "tree": {"choices": ["huffman", "balanced", "kmeans", "kmeans_balanced"]},
    "arity": {"low": 2, "high": 64, "log": True, "int": True},
    "solver": {"choices": ["sgd", "liblinear"]},
    "lr": {"low": 1e-4, "high": 0.1, "log": True, "when": {"solver": "sgd"}},
    "epochs": {"low": 1, "high": 10, "int": True, "when": {"solver": "sgd"}},
    "C": {"low": 1e-2, "high": 1e2, "log": True, "when": {"solver": "liblinear"}},
    "decoder": {"choices": ["exact", "greedy", "topk"]},
}


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
        search_space=HSM_SEARCH_SPACE,
    ))
