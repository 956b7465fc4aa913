"""Built-in flat baselines: one-vs-all (``ova``) and multinomial logistic regression (``softmax``).

Both are trained by L-BFGS (the chunked joint solve of ``chunked_lbfgs``, or scikit-learn) and
predict from W^T stored (D, K): one BLAS product per chunk of dense rows, O(nnz K) per CSR row,
then ``argpartition``; no Python loop over classes.
"""
import xcbench
from xcbench import MethodSpec

from .linear import OneVsAll, Softmax

__version__ = "0.1.0"
__all__ = ["OneVsAll", "Softmax"]


#: what `xcbench tune` searches (docs/tuning.md): the L2 strength (inverse), up to 1e4
#: (leaves100 and the ALOI histograms need 1e3-1e4, docs/methods/flat.md)
C_SEARCH_SPACE = {"C": {"low": 1e-3, "high": 1e4, "log": True}}


@xcbench.hookimpl
def register_methods(register):
    register(MethodSpec(
        name="ova",
        family="flat",
        description="one-vs-all logistic regression (joint L-BFGS), O(K nnz) per prediction",
        factory=OneVsAll,
        search_space=C_SEARCH_SPACE,
    ))
    register(MethodSpec(
        name="softmax",
        family="flat",
        description="multinomial logistic regression (L-BFGS), O(K nnz) per prediction",
        factory=Softmax,
        search_space=C_SEARCH_SPACE,
    ))
