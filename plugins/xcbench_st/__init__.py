"""Built-in softmax trees: ``st`` (complete tree trained by TAO) and ``ast`` (adaptive
softmax tree grown by expansion steps + global TAO)."""
import xcbench
from xcbench import MethodSpec

from .adaptive import AdaptiveSoftmaxTree
from .model import SoftmaxTree

__version__ = "0.1.0"
__all__ = ["AdaptiveSoftmaxTree", "SoftmaxTree"]


#: what `xcbench tune` searches (docs/tuning.md): leaf size, depth, l1 strength, TAO passes,
#: initialisation and loss
ST_SEARCH_SPACE = {
    "k": {"low": 10, "high": 300, "log": True, "int": True},
    "depth": {"low": 2, "high": 12, "int": True},
    "alpha": {"low": 1e-3, "high": 10.0, "log": True},
    "n_iter": {"low": 1, "high": 20, "log": True, "int": True},
    "init": {"choices": ["random", "cluster"]},
    "loss": {"choices": ["01", "ce-beta"]},
}
AST_SEARCH_SPACE = {
    "depth0": {"low": 1, "high": 4, "int": True},
    "contraction": {"low": 0.3, "high": 0.9},
    "expand_depth": {"low": 1, "high": 3, "int": True},
    "alpha": {"low": 1e-3, "high": 10.0, "log": True},
    "init": {"choices": ["random", "cluster"]},
    "accept_error": {"choices": ["01", "ce"]},
}


@xcbench.hookimpl
def register_methods(register):
    register(MethodSpec(
        name="st",
        family="tree",
        description="softmax tree trained by TAO: oblique hard splits, k-class softmax leaves",
        factory=SoftmaxTree,
        search_space=ST_SEARCH_SPACE,
    ))
    register(MethodSpec(
        name="ast",
        family="tree",
        description="adaptive softmax tree: shallow ST grown by accepted leaf expansions + TAO",
        factory=AdaptiveSoftmaxTree,
        search_space=AST_SEARCH_SPACE,
    ))
