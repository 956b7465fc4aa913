"""Built-in learned M-ary tree (Jernite, Choromanska & Sontag 2017): ``mary_tree``, an M-ary
tree of node softmaxes whose label placement is learned with the node classifiers."""
import xcbench
from xcbench import MethodSpec

from .model import MaryTree

__version__ = "0.1.0"
__all__ = ["MaryTree"]


#: what `xcbench tune` searches (docs/tuning.md): arity, step size and epochs, the input
#: representation (and its size), the decoder
MARY_TREE_SEARCH_SPACE = {
    "arity": {"low": 2, "high": 64, "log": True, "int": True},
    "lr": {"low": 1e-3, "high": 1.0, "log": True},
    "epochs": {"low": 1, "high": 10, "int": True},
    "representation": {"choices": ["identity", "linear"]},
    "d_r": {"low": 16, "high": 256, "log": True, "int": True,
            "when": {"representation": "linear"}},
    "decoder": {"choices": ["exact", "greedy"]},
}


@xcbench.hookimpl
def register_methods(register):
    register(MethodSpec(
        name="mary_tree",
        family="tree",
        description="learned M-ary tree: node softmaxes + AssignLabels rebuilds (fixed controls: "
                    "tree=random, tree=huffman); defaults resolved from the data; exact "
                    "branch-and-bound, greedy or beam decoding",
        factory=MaryTree,
        # one fit measured with every decoder; `--param mary_tree:beam=1,5,20` sweeps the width
        query_params={"decoder": ["exact", "greedy", "beam"], "beam": [10]},
        search_space=MARY_TREE_SEARCH_SPACE,
    ))
