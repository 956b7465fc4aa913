"""Declarative dataset recipes (TOML files in ``recipes/``) and the loader they share.

A recipe names its sources (file, URL, SHA-256), a builder (``builders.py``) and the
builder's parameters. Loading a recipe: processed cache hit -> done; else fetch and verify
each source, build, and store the result in the processed cache.
"""
from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

from .builders import get_builder
from .cache import cache_entry_exists, cache_key, load_cached, save_cached
from .dataset import Dataset, DatasetSpec, Source
from .fetch import DataError, fetch

RECIPE_DIR = Path(__file__).parent / "recipes"
_ARRAYS = ("X_train", "y_train", "X_test", "y_test")


def _source(table: dict) -> Source:
    fallback = table.get("fallback")
    return Source(filename=table["filename"], url=table.get("url"), sha256=table.get("sha256"),
                  role=table.get("role", ""), fallback=_source(fallback) if fallback else None)


def spec_from_recipe(path: str | Path) -> DatasetSpec:
    """A DatasetSpec from one TOML recipe file; DataError names a malformed recipe."""
    path = Path(path)
    try:
        recipe = tomllib.loads(path.read_text(encoding="utf-8"))
        get_builder(recipe["builder"])
        return DatasetSpec(
            name=recipe["name"], task=recipe["task"], description=recipe["description"],
            loader=load_recipe_dataset, citation=recipe.get("citation", ""),
            licence=recipe.get("licence", ""),
            sources=[_source(s) for s in recipe.get("sources", [])],
            format=recipe.get("format", ""), split=recipe.get("split", ""),
            preprocessing=recipe.get("preprocessing", ""),
            params={"builder": recipe["builder"], **recipe.get("params", {})},
            version=str(recipe.get("version", "1")),
        )
    except (KeyError, ValueError, tomllib.TOMLDecodeError) as exc:
        raise DataError(f"malformed dataset recipe {path}: {type(exc).__name__}: {exc}") from exc


def builtin_recipes() -> list[DatasetSpec]:
    """Specs of every recipe shipped in ``recipes/``."""
    return [spec_from_recipe(p) for p in sorted(RECIPE_DIR.glob("*.toml"))]


def _builder(spec: DatasetSpec):
    """(build function, key_extras or None, the builder's params) of a recipe spec."""
    params = dict(spec.params)
    build, extras = get_builder(params.pop("builder"))
    return build, extras, params


def _identity(spec: DatasetSpec, data_dir: Path) -> dict:
    """What the processed data depends on: recipe, params, expected hashes, builder extras."""
    _, extras, params = _builder(spec)
    return {"name": spec.name, "version": spec.version, "params": params,
            "sources": [(s.role, s.filename, s.sha256) for s in spec.sources],
            **(extras(params, data_dir) if extras else {})}


def is_cached(spec: DatasetSpec, data_dir: Path) -> bool:
    """Whether the processed arrays of a recipe dataset are in the cache already."""
    if spec.loader is not load_recipe_dataset:
        return False
    try:
        return cache_entry_exists(spec.name, cache_key(_identity(spec, data_dir)))
    except DataError:  # e.g. PTB without GloVe: its key cannot be known
        return False


def load_recipe_dataset(spec: DatasetSpec, data_dir: Path) -> Dataset:
    """Load a recipe's dataset from the processed cache, building it on a miss."""
    identity = _identity(spec, data_dir)
    key = cache_key(identity)
    cached = load_cached(spec.name, key)
    if cached is None:
        paths, hashes = {}, {}
        for source in spec.sources:
            path, digest = fetch(source, data_dir)
            paths[source.role or source.filename] = path
            hashes[source.role or source.filename] = digest
        build, _, params = _builder(spec)
        arrays, n_classes, info = build(paths, params, data_dir)
        missing = [a for a in _ARRAYS if a not in arrays]
        if missing:
            raise DataError(f"builder for {spec.name} returned no {missing}")
        meta = {"n_classes": int(n_classes), "source_sha256": hashes, "info": info}
        save_cached(spec.name, key, {k: arrays[k] for k in _ARRAYS}, meta)
        cached = load_cached(spec.name, key)
    arrays, meta = cached
    checksum = "sha256:" + hashlib.sha256(json.dumps(
        {"identity": identity, "sources": meta["source_sha256"]}, sort_keys=True,
        default=str).encode()).hexdigest()[:16]
    info = {**meta["info"], "source_sha256": meta["source_sha256"], "processed_key": key}
    return Dataset(name=spec.name, X_train=arrays["X_train"], y_train=arrays["y_train"],
                   X_test=arrays["X_test"], y_test=arrays["y_test"],
                   n_classes=meta["n_classes"], checksum=checksum, version=spec.version,
                   info=info)
