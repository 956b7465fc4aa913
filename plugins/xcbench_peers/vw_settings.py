"""Vowpal Wabbit settings chosen by a rule from the problem's shape, so a VW peer is
configured the same way on every dataset instead of with one fixed ``-b 18``.

**Bits.** VW keeps one table of 2^bits weights and gives each sub-model of a reduction its
own slice: a feature's hash is multiplied by the reduction's parameters-per-weight, rounded
up to a power of two (VW's ``parse_args.cc``: "force wpp to be a power of 2"), so each
sub-model has 2^bits / wpp buckets. The sub-models are (VW's ``set_params_per_weight``):

- ``log_multi``: K - 1 node regressors (``log_multi.cc``: ``max_predictors = k - 1``);
- ``recall_tree``: its 2^max_depth - 1 routers plus K class scorers (``recall_tree.cc``:
  ``max_routers + k``; max_depth defaults to ceil(log2 K));
- ``oaa``: K binary classifiers.

Every feature can reach every sub-model (all rows pass the root), so the rule gives each
sub-model 2 buckets per feature: bits = log2(wpp) + ceil(log2 D) + 1. It never goes below
VW's default 18 nor above ``MAX_BITS`` = 26: VW's default update stores 4 floats per
weight (adaptive, normalized), so 2^26 weights take 1 GiB, the budget we allow one peer on
a shared machine (VW's own ALOI demo, 1,000 classes, also uses ``-b 26``). Above the cap
the slices shrink and hash collisions return: ``stats()["settings"]`` shows the bits used.

**Passes.** As VW's demos do for that data size: on ~10^5 examples (``demo/recall_tree``,
ALOI) up to 80 passes with VW's holdout (every 10th example is held out, not trained on)
and early termination after 3 passes without holdout improvement (VW's defaults
``--holdout_period 10 --early_terminate 3``); on >= 10^6 examples (the ImageNet, ODP and
LTCB demos) one online pass over all examples.

**Learning rate.** ``-l 1``: what VW's extreme-classification demos pass to log_multi,
recall_tree and oaa (ODP, ImageNet, LTCB and the ALOI recall-tree demo).
"""
from __future__ import annotations

import math

# passes: the regime xcbench's own online learners use for passes="auto" (one source)
from xcbench.tree.passes import AUTO_MAX_PASSES as MAX_PASSES
from xcbench.tree.passes import HOLDOUT_PERIOD, LARGE_DATA  # noqa: F401 (used by the wrapper)
from xcbench.tree.passes import PATIENCE as EARLY_TERMINATE  # noqa: F401 (used by the wrapper)

MIN_BITS = 18            # VW's default -b
MAX_BITS = 26            # 2^26 weights x 16 bytes = 1 GiB
BYTES_PER_WEIGHT = 16    # VW's default update: weight + adaptive + normalized (+ spare) floats
BUCKETS_PER_FEATURE = 2
LEARNING_RATE = 1.0      # -l 1 in VW's extreme-classification demos
REDUCTIONS = ("log_multi", "recall_tree", "oaa")


def _ceil_log2(n: int) -> int:
    return max(0, math.ceil(math.log2(max(1, n))))


def params_per_weight(reduction: str, n_classes: int, max_depth: int | None = None) -> int:
    """How many sub-models the reduction keeps per feature, before VW's power-of-two rounding."""
    if reduction == "log_multi":
        return max(1, n_classes - 1)
    if reduction == "recall_tree":
        depth = _ceil_log2(n_classes) if max_depth is None else int(max_depth)
        return (2 ** depth - 1) + n_classes
    if reduction == "oaa":
        return n_classes
    raise ValueError(f"unknown VW reduction {reduction!r}; expected one of {REDUCTIONS}")


def auto_bits(reduction: str, n_features: int, n_classes: int,
              max_depth: int | None = None) -> int:
    """``-b``: log2 of VW's rounded stride plus 2 buckets per feature, within 18..26."""
    stride_bits = _ceil_log2(params_per_weight(reduction, n_classes, max_depth))
    wanted = stride_bits + _ceil_log2(n_features) + _ceil_log2(BUCKETS_PER_FEATURE)
    return min(MAX_BITS, max(MIN_BITS, wanted))


def vw_settings(n_samples: int, n_features: int, n_classes: int, reduction: str,
                max_depth: int | None = None) -> dict:
    """The rule's settings for a problem: ``bits``, ``passes`` (the most passes),
    ``holdout`` (VW's holdout and early termination on) and ``lr``."""
    for name, value in (("n_samples", n_samples), ("n_features", n_features),
                        ("n_classes", n_classes)):
        if int(value) < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    large = n_samples >= LARGE_DATA
    return {"bits": auto_bits(reduction, n_features, n_classes, max_depth),
            "passes": 1 if large else MAX_PASSES,
            "holdout": not large,
            "lr": LEARNING_RATE}


def weight_bytes(bits: int) -> int:
    """Bytes of VW's weight table for ``-b bits`` under its default update."""
    return (2 ** int(bits)) * BYTES_PER_WEIGHT
