"""``C="auto"`` of hsm's LIBLINEAR nodes: the regularisation chosen on held-out rows.

The good C of an L2 logistic regression depends on the scale of the features (a feature
scaled by s needs C scaled by 1 / s^2 for the same model) and on how many rows each class
has against how many features, neither of which one constant serves: at C = 30 (the
rule's constant) hsm is 10 points worse than at C = 3,000 on ALOI (27 colour features with
mean ||x||^2 = 0.8) and 4 points worse on leaves100 (mean ||x||^2 = 0.12), and 10 points
worse than at C = 0.03 on the dense synthetic set (30 rows per class in 128 dimensions).

So with LIBLINEAR nodes and labels about equally frequent, ``fit`` chooses C on held-out
training rows (``xcbench.contract.holdout``: the whole model, every other setting as
resolved, fitted on a sample of the classes at each C of a walk along ``LADDER`` from the
rule's constant, which is kept unless clearly beaten). Skewed labels (next-word data) are
not probed: a class sample of Zipf-distributed data is mostly rare classes, unlike the
data; their C is the rule's 3 / mean ||x||^2 (``defaults.resolve``), measured on the PTB
sets themselves.

On dense rows the tree's shape matters as much as C: the rule's balanced spherical k-means
tree (Parabel's and napkinXC's, made for sparse rows) lost 8.8 points of top-1 error to an
unbalanced Euclidean k-means tree on the dense synthetic set, and ties it on ALOI. So when
the tree is left at "auto" too, the rows are dense and the sample has more classes than
one last node holds, the same sample scores a C walk for each of ``tree_candidates`` and
keeps the rule's tree unless the other is clearly better at the C its walk kept.
Measurements:
docs/methods/hsm.md ("C chosen on the data", "The tree on dense rows").
"""
from __future__ import annotations

#: the values of C the probe may try, a decade apart; it starts at the rule's constant
LADDER = (0.003, 0.03, 0.3, 3.0, 30.0, 300.0, 3000.0, 30000.0, 300000.0)


def tree_candidates(rule_tree: str) -> list[str]:
    """The trees the probe compares on dense rows: the rule's first (kept unless clearly
    beaten), then the unbalanced Euclidean k-means tree."""
    return [rule_tree] + [t for t in ("kmeans",) if t != rule_tree]
