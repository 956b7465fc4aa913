"""Built-in learned M-ary tree (Jernite, Choromanska & Sontag 2017): ``mary_tree``, an M-ary
tree of node softmaxes whose label placement is learned with the node classifiers."""
import xcbench
from xcbench import MethodSpec

from .model import MaryTree

__version__ = "0.1.0"
__all__ = ["MaryTree"]


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
    ))
