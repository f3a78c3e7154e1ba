"""Inference backends. Each adapter module imports its own stack; this package imports none.

``load(config)`` builds the backend a :class:`~copygram.config.BackendConfig` describes::

    backend = load(BackendConfig(backend="llamacpp", model="default", n_ctx=4096))
    backend = load({"backend": "llamacpp", "n_ctx": 4096})  # same: read by copygram.config

The config is read and checked by :mod:`copygram.config` (one reader, one key check); each
adapter makes its own device decision, resolves the model (a catalog name through
:func:`copygram.catalog.resolve_model`, which fetches it on first use), checks the file and caps
``n_ctx`` at the model's trained context, which is also its default, up to 32768
(:func:`copygram.backends._common.cap_context`). A backend that can copy its KV cache out
(llama.cpp) gets a store of recent prompts' snapshots of ``prefix_cache_mb``
(:mod:`copygram.backends.prefix_store`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from copygram.backends._common import default_threads
from copygram.backends.base import Backend, BatchProfile, Logits
from copygram.backends.prefix_store import PrefixStore, Snapshots
from copygram.config import BACKEND_KEYS, BACKENDS, BackendConfig, parse_backend_config
from copygram.errors import MissingDependencyError, missing_dependency

__all__ = ["BACKENDS", "BACKEND_KEYS", "Backend", "BackendConfig", "BatchProfile", "Logits",
           "default_threads",
           "load"]


def _import(module: str, extra: str) -> object:
    try:
        return importlib.import_module(module)
    except MissingDependencyError:
        raise
    except ImportError as exc:
        raise missing_dependency(exc.name or module, extra) from exc


def load(config: BackendConfig | Mapping[str, object] | None = None) -> Backend:
    """Build the backend ``config`` describes (default: the default model on llama.cpp) and load
    its model: ~0.3 s for llama.cpp, ~15 s for Transformers from a GGUF; keep the result.

    A mapping holds backend keys only and is checked by
    :func:`copygram.config.parse_backend_config` first (for a whole config with session keys,
    use :func:`copygram.config.parse_config` and pass its ``backend``).

    Raises :class:`~copygram.errors.ConfigError` for unknown keys or bad values (before anything
    loads), :class:`~copygram.errors.BackendError` for a missing model file or an unavailable
    device, :class:`~copygram.errors.MissingDependencyError` for a missing extra.
    """
    if config is None:
        config = BackendConfig()
    elif isinstance(config, Mapping):
        config = parse_backend_config(config)
    elif not isinstance(config, BackendConfig):
        raise TypeError(
            f"load takes a BackendConfig or a mapping of backend keys, not {config!r}; read a "
            "TOML file with copygram.config.parse_config(path) and pass its .backend"
        )
    if config.backend == "llamacpp":
        mod = _import("copygram.backends.llamacpp", "llamacpp")
        backend: Backend = mod.LlamaCppBackend.from_config(config)  # type: ignore[attr-defined]
    else:
        mod = _import("copygram.backends.transformers", "transformers")
        backend = mod.TransformersBackend.from_config(config)  # type: ignore[attr-defined]
    if isinstance(backend, Snapshots) and config.prefix_cache_bytes:
        backend.prefix_store = PrefixStore(config.prefix_cache_bytes)
    return backend
