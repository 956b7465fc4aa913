"""Built-in online tree learners, compiled with numba: LOMtree (``lomtree``) and Recall
Tree (``recall_tree``)."""
import xcbench
from xcbench import MethodSpec

from .lomtree import LOMTree
from .recall_tree import RecallTree

__version__ = "0.1.0"
__all__ = ["LOMTree", "RecallTree"]


#: what `xcbench tune` searches (docs/tuning.md): the learning rate, the update and loss,
#: and each tree's own knob (swap resistance; candidate sets and their Bernoulli bound)
LOMTREE_SEARCH_SPACE = {
    "lr": {"low": 0.05, "high": 10.0, "log": True},
    "swap_resistance": {"low": 0.1, "high": 64.0, "log": True},
    "loss": {"choices": ["absolute", "squared"]},
    "update": {"choices": ["vw", "adagrad"]},
}
RECALL_TREE_SEARCH_SPACE = {
    "lr": {"low": 0.01, "high": 10.0, "log": True},
    "max_candidates": {"low": 2, "high": 128, "log": True, "int": True},
    "bern_hyper": {"low": 0.01, "high": 10.0, "log": True},
    "node_only": {"choices": [False, True]},
    "randomized_routing": {"choices": [False, True]},
    "loss": {"choices": ["logistic", "squared"]},
}


@xcbench.hookimpl
def register_methods(register):
    register(MethodSpec(
        name="lomtree", family="tree", factory=LOMTree, search_space=LOMTREE_SEARCH_SPACE,
        description="LOMtree: online logarithmic-depth tree with leaf recycling (numba)"))
    register(MethodSpec(
        name="recall_tree", family="tree", factory=RecallTree,
        search_space=RECALL_TREE_SEARCH_SPACE,
        description="Recall Tree: routers + candidate sets + one-against-some scorers (numba)"))
