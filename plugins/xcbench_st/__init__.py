"""Built-in softmax trees: ``st`` (complete tree trained by TAO) and ``ast`` (adaptive
softmax tree grown by expansion steps + global TAO)."""
import xcbench
from xcbench import MethodSpec

from .adaptive import AdaptiveSoftmaxTree
from .model import SoftmaxTree

__version__ = "0.1.0"
__all__ = ["AdaptiveSoftmaxTree", "SoftmaxTree"]


@xcbench.hookimpl
def register_methods(register):
    register(MethodSpec(
        name="st",
        family="tree",
        description="softmax tree trained by TAO: oblique hard splits, k-class softmax leaves",
        factory=SoftmaxTree,
    ))
    register(MethodSpec(
        name="ast",
        family="tree",
        description="adaptive softmax tree: shallow ST grown by accepted leaf expansions + TAO",
        factory=AdaptiveSoftmaxTree,
    ))
