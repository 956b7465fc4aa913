"""Built-in online tree learners, compiled with numba: LOMtree (``lomtree``)."""
import xcbench
from xcbench import MethodSpec

from .lomtree import LOMTree

__version__ = "0.1.0"
__all__ = ["LOMTree"]


@xcbench.hookimpl
def register_methods(register):
    register(MethodSpec(
        name="lomtree", family="tree", factory=LOMTree,
        description="LOMtree: online logarithmic-depth tree with leaf recycling (numba)"))
