"""The validation dataset a tuning run scores its trials on: a seeded hold-out of the
training rows of a registered dataset, registered in this process under its own name so
the runner loads, caches, checks and records it like any other dataset.

Its loader keeps only the training rows: the test rows of the dataset are dropped as soon
as it is loaded, before any trial runs (``tests/test_tune.py`` poisons them to show it).
"""
from __future__ import annotations

import hashlib

from ..data import Dataset, DatasetSpec, get_dataset_spec
from ..data.splits import holdout_split
from ..contract.hookspecs import hookimpl
from ..contract.plugins import get_plugin_manager, register_plugin

#: name of the in-process plugin that registers validation datasets
PLUGIN_NAME = "xcbench-tune-validation"
_specs: dict[str, DatasetSpec] = {}


def validation_name(dataset: str, fraction: float, seed: int) -> str:
    """The registered name of ``dataset``'s validation split, e.g. ``val0.2~seed0:letter``
    (a prefix, so the split of ``file:...`` data is not taken for a file name)."""
    return f"val{fraction:g}~seed{seed}:{dataset}"


def register_validation(dataset: str, fraction: float = 0.2, seed: int = 0) -> str:
    """Register the validation split of ``dataset`` (``fraction`` of its training rows held
    out with ``seed``; the rest are the trials' training rows); return its name."""
    if not 0 < fraction < 1:
        raise ValueError(f"the validation fraction must be in (0, 1), got {fraction}")
    parent = get_dataset_spec(dataset)  # KeyError naming the registered ones, before work
    name = validation_name(dataset, fraction, seed)
    _specs[name] = DatasetSpec(
        name=name, task=parent.task, loader=_load_validation,
        description=f"validation split of {dataset}: {fraction:g} of its training rows held "
                    f"out (seed {seed}) as test rows, the others for training; its test rows "
                    "are never used",
        params={"parent": dataset, "fraction": fraction, "seed": seed})
    if get_plugin_manager().get_plugin(PLUGIN_NAME) is None:
        register_plugin(_Registrar(), name=PLUGIN_NAME)
    return name


class _Registrar:
    """The in-process plugin registering every validation split made in this process."""

    @hookimpl
    def register_datasets(self, register):
        for spec in _specs.values():
            register(spec)


def validation_split(dataset: Dataset, fraction: float, seed: int, name: str) -> Dataset:
    """``dataset``'s training rows split into a training and a held-out (test) part."""
    kept, held = holdout_split(dataset.y_train, fraction, seed)
    X, y = dataset.X_train, dataset.y_train
    key = f"{dataset.checksum}|validation|{fraction!r}|{seed}".encode()
    return Dataset(name=name, X_train=X[kept], y_train=y[kept], X_test=X[held],
                   y_test=y[held], n_classes=dataset.n_classes,
                   checksum=hashlib.sha256(key).hexdigest()[:16], version=dataset.version,
                   info={"validation_of": dataset.name, "validation_fraction": fraction,
                         "validation_seed": seed,
                         "source_sha256": dataset.info.get("source_sha256", {})})


def _load_validation(spec: DatasetSpec, data_dir) -> Dataset:
    p = spec.params
    full = get_dataset_spec(p["parent"]).load(data_dir)
    full.X_test = full.y_test = None  # the test rows go no further than this line
    return validation_split(full, p["fraction"], p["seed"], spec.name)
