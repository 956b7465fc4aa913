"""How each cell is measured: the run options, checked when they are made."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..metrics import DEFAULT_SMOOTHING_EPSILON
from ..store.results import KEYED_OPTIONS
from .memory import default_memory_limit

MIN_MEMORY_LIMIT = 64 * 2 ** 20


@dataclass
class RunOptions:
    """How each cell is measured. Values are checked when the options are made (scikit-learn
    parameter constraints), so a bad option fails before any cell runs."""

    timeout: float = 1800.0
    threads: int = 1
    fit_threads: int | None = None  # threads while fitting; None: the same as ``threads``
    latency_calls: int = 1000
    latency_warmup: int = 50
    throughput_repeats: int = 3
    throughput_budget: float = 60.0  # seconds; no further batch repeat once reached
    topk: int = 5
    smoothing_epsilon: float = DEFAULT_SMOOTHING_EPSILON
    isolate: bool = True
    memory_limit: int | None = None  # bytes a cell may use; None: a share of available RAM
    keep_raw: bool = True  # write OUT/raw/<key>.npz beside each ok record
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        from numbers import Integral, Real

        from sklearn.utils._param_validation import Interval, validate_parameter_constraints

        constraints = {
            "timeout": [Interval(Real, 0, None, closed="neither")],
            "threads": [Interval(Integral, 1, None, closed="left")],
            "fit_threads": [Interval(Integral, 1, None, closed="left"), None],
            "latency_calls": [Interval(Integral, 1, None, closed="left")],
            "latency_warmup": [Interval(Integral, 0, None, closed="left")],
            "throughput_repeats": [Interval(Integral, 1, None, closed="left")],
            "throughput_budget": [Interval(Real, 0, None, closed="neither")],
            "topk": [Interval(Integral, 1, None, closed="left")],
            "smoothing_epsilon": [Interval(Real, 0, 1, closed="neither")],
            "isolate": ["boolean"],
            # below ~64 MB a capped child cannot even start its threads (it stalls until the
            # timeout instead of failing), so smaller limits are refused up front
            "memory_limit": [Interval(Integral, MIN_MEMORY_LIMIT, None, closed="left"), None],
            "keep_raw": ["boolean"],
            "extra": [dict],
        }
        validate_parameter_constraints(constraints, asdict(self), caller_name="RunOptions")

    def keyed(self) -> dict:
        """The options that change measurements (part of each record's key); ``fit_threads``
        equal to ``threads`` is the default (None), so both spellings give one key."""
        keyed = {k: getattr(self, k) for k in KEYED_OPTIONS}
        if keyed.get("fit_threads") == self.threads:
            keyed["fit_threads"] = None
        return keyed

    def effective_memory_limit(self) -> int | None:
        """``memory_limit``, or the default share of the available RAM."""
        return self.memory_limit or default_memory_limit()
