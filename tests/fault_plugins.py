"""Fault-injection methods written as a third party would (tests register them in-process).

``Frequent`` predicts the most frequent training class first: honest, and a baseline whose
score the faulty ones below must not be able to beat by changing their inputs.
"""
import os
import subprocess
import sys
import time

import numpy as np

import xcbench


class Frequent(xcbench.Method):
    """Top-k = the k most frequent training classes; a uniform probability model."""

    def fit(self, X, y, n_classes=None):
        self.n_classes_ = int(n_classes or (np.max(y) + 1))
        counts = np.bincount(np.asarray(y), minlength=self.n_classes_)
        self.order_ = np.argsort(-counts, kind="stable")
        return self

    def predict_topk(self, X, k=1):
        k = min(k, self.n_classes_)
        n = X.shape[0]
        labels = np.tile(self.order_[:k], (n, 1)).astype(np.int64)
        return labels, np.tile(-np.arange(k, dtype=np.float64), (n, 1))

    def log_proba(self, X, y):
        return np.full(X.shape[0], -np.log(self.n_classes_))

    def stats(self):
        return {}


class Tiny(Frequent):
    """log_proba gives the true class a finite but tiny probability, exp(-800)."""

    def log_proba(self, X, y):
        return np.full(X.shape[0], -800.0)


def overwrite(array, values) -> None:
    """Write ``values`` into ``array`` however the array allows: plainly, else after turning
    its write flag back on (what a deliberate cheat would try)."""
    try:
        array[...] = values
    except ValueError:
        array.flags.writeable = True
        array[...] = values


class CheatLabels(Frequent):
    """log_proba overwrites the test labels with its own top-1 predictions."""

    def log_proba(self, X, y):
        overwrite(y, self.order_[0])
        return super().log_proba(X, y)


class CheatOutputs(Frequent):
    """predict_topk returns an array it keeps; log_proba writes the true labels into it."""

    def predict_topk(self, X, k=1):
        self.last_ = super().predict_topk(X, k)
        return self.last_

    def log_proba(self, X, y):
        labels = self.last_[0]
        if labels.shape[0] == len(y):
            labels[:, 0] = y
        return super().log_proba(X, y)


class MutateFit(Frequent):
    """fit zeroes its training data (features and labels)."""

    def fit(self, X, y, n_classes=None):
        super().fit(X, y, n_classes)
        overwrite(y, 0)
        overwrite(X.data if hasattr(X, "indptr") else X, 0)
        return self


class AlwaysFails(Frequent):
    """fit notes each fit in the file ``fits`` names (one line per fit), waits ``seconds``,
    then raises."""

    def __init__(self, fits="", seconds=0.0):
        self.fits = fits
        self.seconds = seconds

    def fit(self, X, y, n_classes=None):
        if self.fits:
            with open(self.fits, "a") as f:
                f.write(f"{os.getpid()}\n")
        time.sleep(self.seconds)
        raise RuntimeError("this method always fails")


class Spawner(Frequent):
    """fit starts a subprocess that writes its pid to ``pid_file``, then sleeps forever."""

    def __init__(self, pid_file=""):
        self.pid_file = pid_file

    def fit(self, X, y, n_classes=None):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open(self.pid_file, "w") as f:
            f.write(str(child.pid))
        time.sleep(600)
        return self


class FaultPlugin:
    @xcbench.hookimpl
    def register_methods(self, register):
        for name, cls in (("frequent", Frequent), ("cheat-labels", CheatLabels),
                          ("cheat-outputs", CheatOutputs), ("mutate-fit", MutateFit),
                          ("always-fails", AlwaysFails), ("spawner", Spawner),
                          ("tiny", Tiny)):
            register(xcbench.MethodSpec(name, "flat", cls.__doc__.splitlines()[0], cls))


def register() -> None:
    """Register the fault methods in this process."""
    from xcbench.contract.plugins import register_plugin

    register_plugin(FaultPlugin(), name="test-faults")


def spawn_and_sleep(pid_file: str) -> None:
    """Start a subprocess that sleeps, write its pid to ``pid_file``, then sleep (a cell's
    function for ``run_in_interpreter``)."""
    Spawner(pid_file).fit(None, None)
