"""Built-in online tree learners, compiled with numba: LOMtree (``lomtree``) and Recall
Tree (``recall_tree``)."""
import xcbench
from xcbench import MethodSpec

from .lomtree import LOMTree
from .recall_tree import RecallTree

__version__ = "0.1.0"
__all__ = ["LOMTree", "RecallTree"]


@xcbench.hookimpl
def register_methods(register):
    register(MethodSpec(
        name="lomtree", family="tree", factory=LOMTree,
        description="LOMtree: online logarithmic-depth tree with leaf recycling (numba)"))
    register(MethodSpec(
        name="recall_tree", family="tree", factory=RecallTree,
        description="Recall Tree: routers + candidate sets + one-against-some scorers (numba)"))
