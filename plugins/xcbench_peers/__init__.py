"""Peer plugins wrapping other libraries' implementations, so the same runner measures them
with the same metrics: napkinXC's hierarchical softmax and probabilistic label tree
(``nxc-hsm``, ``nxc-plt``; ``pip install -e ".[napkinxc]"``). Methods are registered even
when their library is missing; fitting one then raises an ImportError saying what to install.
"""
import xcbench
from xcbench import MethodSpec

from .napkinxc_methods import NapkinHSM, NapkinPLT

__version__ = "0.1.0"


@xcbench.hookimpl
def register_methods(register):
    register(MethodSpec(
        name="nxc-hsm", family="tree", factory=NapkinHSM,
        description="napkinXC hierarchical softmax (k-means tree, LIBLINEAR nodes) [extra: napkinxc]"))
    register(MethodSpec(
        name="nxc-plt", family="tree", factory=NapkinPLT,
        description="napkinXC probabilistic label tree (k-means tree, LIBLINEAR nodes) [extra: napkinxc]"))
