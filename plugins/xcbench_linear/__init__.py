"""Built-in flat baselines: one-vs-all (``ova``) and multinomial logistic regression (``softmax``).

Both are trained by scikit-learn and predict with one matrix product per chunk of rows plus
``argpartition``; no Python loop over classes.
"""
import xcbench
from xcbench import MethodSpec

from .linear import OneVsAll, Softmax

__version__ = "0.1.0"
__all__ = ["OneVsAll", "Softmax"]


@xcbench.hookimpl
def register_methods(register):
    register(MethodSpec(
        name="ova",
        family="flat",
        description="one-vs-all logistic regression (scikit-learn), O(KD) per prediction",
        factory=OneVsAll,
        param_grid={"C": [1.0]},
    ))
    register(MethodSpec(
        name="softmax",
        family="flat",
        description="multinomial logistic regression (scikit-learn lbfgs), O(KD) per prediction",
        factory=Softmax,
        param_grid={"C": [1.0]},
    ))
