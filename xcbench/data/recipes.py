"""Declarative dataset recipes (TOML files in ``recipes/``) and the loader they share.

A recipe names its sources (file, URL, SHA-256), a builder (``builders.py``) and the
builder's parameters. Loading a recipe: processed cache hit -> done; else fetch and verify
each source, build, and store the result in the processed cache.

The cache key holds the SHA-256 of each source file actually present (remembered while the
file is unchanged), so replacing a source file, pinned or not, gives a new key and a rebuild;
a pinned source that is absent is keyed on its pinned hash (a download must match it).
"""
from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

from .builders import get_builder
from .cache import cache_dir, cache_entry_state, cache_key, load_cached, save_cached
from .dataset import Dataset, DatasetSpec, Source
from .fetch import DataError, fetch, local_source
from .hashmemo import file_sha256

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
        raise DataError(f"malformed dataset recipe {path} ({type(exc).__name__}: {exc}): "
                        f"fix it after the recipes shipped in xcbench/data/recipes/.") from exc


def builtin_recipes() -> list[DatasetSpec]:
    """Specs of every recipe shipped in ``recipes/``."""
    return [spec_from_recipe(p) for p in sorted(RECIPE_DIR.glob("*.toml"))]


def _builder(spec: DatasetSpec):
    """(build function, key_extras or None, the builder's params) of a recipe spec."""
    params = dict(spec.params)
    build, extras = get_builder(params.pop("builder"))
    return build, extras, params


def _role(source: Source) -> str:
    return source.role or source.filename


def _source_hashes(spec: DatasetSpec, data_dir: Path) -> dict[str, str | None]:
    """The SHA-256 each source will have: of the local file when present, else the pinned
    hash, else None (unknown until downloaded)."""
    hashes = {}
    for source in spec.sources:
        local = local_source(source, data_dir)
        hashes[_role(source)] = (file_sha256(local[1], cache_dir()) if local is not None
                                 else source.sha256)
    return hashes


def _identity(spec: DatasetSpec, data_dir: Path, hashes: dict) -> dict:
    """What the processed data depends on: recipe, params, source hashes, builder extras."""
    _, extras, params = _builder(spec)
    return {"name": spec.name, "version": spec.version, "params": params,
            "sources": [(s.role, s.filename, hashes[_role(s)]) for s in spec.sources],
            **(extras(params, data_dir) if extras else {})}


def is_cached(spec: DatasetSpec, data_dir: Path) -> bool:
    """Whether intact processed arrays of a recipe dataset, built from the source files as
    they are now, are in the cache already (a corrupt entry does not count)."""
    if spec.loader is not load_recipe_dataset:
        return False
    try:
        hashes = _source_hashes(spec, data_dir)
        if None in hashes.values():  # an unpinned source must be downloaded first
            return False
        return cache_entry_state(spec.name, cache_key(_identity(spec, data_dir, hashes))) == "ok"
    except DataError:  # e.g. PTB without GloVe: its key cannot be known
        return False


def load_recipe_dataset(spec: DatasetSpec, data_dir: Path) -> Dataset:
    """Load a recipe's dataset from the processed cache, building it on a miss."""
    hashes = _source_hashes(spec, data_dir)
    for source in spec.sources:
        if hashes[_role(source)] is None:  # unpinned and absent: download to know its hash
            hashes[_role(source)] = fetch(source, data_dir)[1]
    identity = _identity(spec, data_dir, hashes)
    key = cache_key(identity)
    cached = load_cached(spec.name, key)
    if cached is None:
        paths, hashes = {}, {}
        for source in spec.sources:
            paths[_role(source)], hashes[_role(source)] = fetch(source, data_dir)
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
