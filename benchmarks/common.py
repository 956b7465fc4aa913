"""Shared set-up for the asv benchmarks: a fixed synthetic problem and fitted methods.

Set XCBENCH_ASV_PROFILE=full for the ALOI-shaped problem (K=1000); the default "quick"
profile uses K=200 so a whole asv run takes a couple of minutes.
"""
import os

from threadpoolctl import threadpool_limits

from xcbench.data.synthetic import make_hierarchical

PROFILES = {
    "quick": dict(n_classes=200, n_features=64, n_train=6000, n_test=1000, levels=2),
    "full": dict(n_classes=1000, n_features=128, n_train=30000, n_test=5000),
}


def benchmark_data():
    """The benchmark dataset of the active profile (deterministic)."""
    profile = os.environ.get("XCBENCH_ASV_PROFILE", "quick")
    return make_hierarchical(seed=0, bayes_samples=2000, **PROFILES[profile])


def single_thread():
    """Limit BLAS to one thread, as xcbench's runner does, and return the limiter."""
    return threadpool_limits(limits=1)
