"""Peer plugins wrapping other libraries' implementations, so the same runner measures them
with the same metrics: napkinXC's hierarchical softmax and probabilistic label tree
(``nxc-hsm``, ``nxc-plt``; ``pip install -e ".[napkinxc]"``), and fastText's hierarchical
softmax and softmax on word-id datasets such as ``ptb-words`` (``fasttext-hs``,
``fasttext-softmax``; ``pip install -e ".[fasttext]"``), and Vowpal Wabbit's log_multi,
recall tree and one-against-all (``vw-lomtree``, ``vw-recall-tree``, ``vw-oaa``;
``pip install -e ".[vw]"``), and Omikuji's Parabel and Bonsai label trees
(``omikuji-parabel``, ``omikuji-bonsai``; ``pip install -e ".[omikuji]"``). Methods are
registered even when their library is missing (``xcbench list methods`` marks them not
installed), and declare it (``MethodSpec.requires``): a run, suite or tuning naming one is
then refused before any cell runs, with the install command.
"""
import xcbench
from xcbench import MethodSpec

from .fasttext_methods import FastTextClassifier
from .napkinxc_methods import NapkinHSM, NapkinPLT
from .omikuji_methods import OmikujiBonsai, OmikujiParabel
from .vw_methods import VWLogMulti, VWOneAgainstAll, VWRecallTree

__version__ = "0.1.0"


def _needs(extra: str, module: str) -> dict:
    """The ``requires`` and ``install`` of a method wrapping ``module`` (xcbench[extra])."""
    return {"requires": (module,), "install": f"pip install 'xcbench[{extra}]'"}


@xcbench.hookimpl
def register_methods(register):
    register(MethodSpec(
        name="nxc-hsm", family="tree", factory=NapkinHSM,
        description="napkinXC hierarchical softmax (k-means tree, LIBLINEAR nodes) [extra: napkinxc]",
        **_needs("napkinxc", "napkinxc")))
    register(MethodSpec(
        name="nxc-plt", family="tree", factory=NapkinPLT,
        description="napkinXC probabilistic label tree (k-means tree, LIBLINEAR nodes) [extra: napkinxc]",
        **_needs("napkinxc", "napkinxc")))
    register(MethodSpec(
        name="vw-lomtree", family="tree", factory=VWLogMulti,
        description="Vowpal Wabbit --log_multi (its LOMtree) [extra: vw]",
        **_needs("vw", "vowpalwabbit")))
    register(MethodSpec(
        name="vw-recall-tree", family="tree", factory=VWRecallTree,
        description="Vowpal Wabbit --recall_tree, logistic loss [extra: vw]",
        **_needs("vw", "vowpalwabbit")))
    register(MethodSpec(
        name="vw-oaa", family="flat", factory=VWOneAgainstAll,
        description="Vowpal Wabbit --oaa, logistic loss, probabilities [extra: vw]",
        **_needs("vw", "vowpalwabbit")))
    register(MethodSpec(
        name="omikuji-parabel", family="tree", factory=OmikujiParabel,
        description="Omikuji Parabel: balanced 2-means label trees, 3 trees [extra: omikuji]",
        **_needs("omikuji", "omikuji")))
    register(MethodSpec(
        name="omikuji-bonsai", family="tree", factory=OmikujiBonsai,
        description="Omikuji Bonsai: wide shallow k-means label trees (k=100, depth 3) "
                    "[extra: omikuji]",
        **_needs("omikuji", "omikuji")))
    register(MethodSpec(
        name="fasttext-hs", family="tree", factory=FastTextHS,
        description="fastText hierarchical softmax on word ids (ptb-words) [extra: fasttext]",
        **_needs("fasttext", "fasttext")))
    register(MethodSpec(
        name="fasttext-softmax", family="flat", factory=FastTextSoftmax,
        description="fastText softmax on word ids (ptb-words) [extra: fasttext]",
        **_needs("fasttext", "fasttext")))


class FastTextHS(FastTextClassifier):
    """fastText with hierarchical softmax (its own Huffman tree over label counts)."""

    def __init__(self, dim=50, epoch=5, lr=0.1, word_ngrams=1, positional=True,
                 proba_threshold=1e-6, threads=1, random_state=None):
        super().__init__("hs", dim, epoch, lr, word_ngrams, positional, proba_threshold,
                         threads, random_state)


class FastTextSoftmax(FastTextClassifier):
    """fastText with a full softmax output layer."""

    def __init__(self, dim=50, epoch=5, lr=0.1, word_ngrams=1, positional=True,
                 proba_threshold=1e-6, threads=1, random_state=None):
        super().__init__("softmax", dim, epoch, lr, word_ngrams, positional, proba_threshold,
                         threads, random_state)
