"""Which model, on which backend and device: :class:`BackendConfig`, checked when built. What
only a loaded model can tell (a model file missing, a GPU absent, the model's trained context) is
the backend adapter's to check (:func:`copygram.backends.load`)."""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from copygram import catalog
from copygram.config.checks import check_choice, check_int, invalid
from copygram.config.options import ROUTE, normalise
from copygram.errors import ConfigError

__all__ = ["BACKENDS", "DEVICES", "DTYPES", "BackendConfig", "BackendName", "BatchInvariance",
           "DType", "Device"]

BackendName = Literal["llamacpp", "transformers"]
Device = Literal["auto", "cpu", "cuda"]
DType = Literal["auto", "float32", "bfloat16", "float16"]
# True: required (a load that cannot give it fails); "auto": where it costs nothing; False: off.
BatchInvariance = bool | Literal["auto"]

BACKENDS: Final[tuple[BackendName, ...]] = ("llamacpp", "transformers")
DEVICES: Final[tuple[Device, ...]] = ("auto", "cpu", "cuda")
DTYPES: Final[tuple[DType, ...]] = ("auto", "float32", "bfloat16", "float16")


@dataclass(frozen=True)
class BackendConfig:
    """Which model, on which backend and device (docs/config.md, "Backend keys").

    ``model`` is a catalog name or alias (:mod:`copygram.catalog`), the path of a ``.gguf`` file,
    or for Transformers a Hugging Face model folder or hub name (``org/name``). ``n_ctx`` and
    ``n_threads`` are ``None`` for the backend's default (:mod:`copygram.backends`)."""

    backend: BackendName = "llamacpp"
    model: str = "default"
    device: Device = "auto"
    dtype: DType = "auto"
    n_ctx: int | None = None
    n_threads: int | None = None
    # llama.cpp RPC servers ("host:port", each a `copygram rpc-server`) that hold the model's
    # layers, split by their free memory: a model too large for this machine (docs/scale.md).
    rpc_servers: tuple[str, ...] = ()
    # Host memory (MiB) for snapshots of recent prompts' KV beside the live cache, restored when
    # a prompt shares more with one of them (backends.prefix_store). None: the backend's default
    # (llama.cpp 512; Transformers has none: 0).
    prefix_cache_mb: int | None = None
    # A batched forward's rows equal one-token steps bit for bit (llama.cpp on a CPU): the
    # output of drafted decoding is then plain greedy's on every run (docs/config.md). "auto":
    # where the build and device give it at no cost, checked when the model loads.
    batch_invariant: BatchInvariance = field(default="auto", metadata=ROUTE)
    # A kernel.json that `copygram bench kernel` wrote on this machine: the draft sizer prices
    # forwards on it instead of the built-in curve (backends.curves). None: the built-in one.
    cost_curve: str | None = field(default=None, metadata=ROUTE)

    def __post_init__(self) -> None:
        if isinstance(self.backend, dict):  # a TOML [backend] table
            raise ConfigError(
                "config key 'backend' is a table; write the backend keys (backend, model, "
                "device, dtype, n_ctx, n_threads, rpc_servers, prefix_cache_mb) at the top level of the config, and "
                "batch_invariant and cost_curve in its [route] table"
            )
        backend = check_choice("backend", self.backend, BACKENDS)
        dtype = check_choice("dtype", self.dtype, DTYPES)
        if backend == "llamacpp" and dtype != "auto":
            raise invalid("dtype", dtype, "'auto' with backend 'llamacpp' (a GGUF file fixes "
                           "llama.cpp's weight types; dtype applies to backend 'transformers')")
        invariant = _check_invariance(self.batch_invariant)
        if invariant is True and backend != "llamacpp":
            raise invalid("batch_invariant", invariant, "false with backend 'transformers' "
                           "(batch-invariant kernels exist here for llama.cpp on a CPU; "
                           "Transformers re-decides near-ties instead, see tie_tolerance)")
        if invariant is True and self.device == "cuda":
            raise invalid("batch_invariant", invariant, "false with device 'cuda' (llama.cpp's "
                           "CUDA kernels change with the batch size; use device 'cpu')")
        servers = _check_rpc_servers(self.rpc_servers)
        if servers and backend != "llamacpp":
            raise invalid("rpc_servers", list(servers), "[] with backend 'transformers' (RPC "
                           "servers hold llama.cpp layers; use backend 'llamacpp')")
        if invariant == "auto" and (backend != "llamacpp" or self.device == "cuda"):
            invariant = False  # no batch-invariant kernels there: say so in the parsed config
        checked: dict[str, object] = {
            "backend": backend,
            "model": _check_model(self.model, backend),
            "device": check_choice("device", self.device, DEVICES),
            "dtype": dtype,
            "n_ctx": None if self.n_ctx is None else check_int("n_ctx", self.n_ctx, minimum=1),
            "n_threads": (None if self.n_threads is None
                          else check_int("n_threads", self.n_threads, minimum=1)),
            "rpc_servers": servers,
            "prefix_cache_mb": _check_prefix_cache(self.prefix_cache_mb, backend),
            "batch_invariant": invariant,
            "cost_curve": None if self.cost_curve is None else _check_cost_curve(self.cost_curve),
        }
        normalise(self, checked)

    @property
    def prefix_cache_bytes(self) -> int:
        """``prefix_cache_mb`` in bytes (resolved: never ``None`` once checked)."""
        return (self.prefix_cache_mb or 0) << 20

    @property
    def is_catalog_model(self) -> bool:
        """Whether ``model`` names a catalog entry (or alias) rather than a path or hub name."""
        return _is_catalog_name(self.model)


def _check_cost_curve(value: object) -> str:
    """A ``cost_curve`` setting as the path of an existing file (``~`` expanded)."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip():
        raise invalid("cost_curve", value, "the path of a kernel.json that `copygram bench "
                       "kernel --out DIR` wrote")
    path = Path(value).expanduser()
    if not path.is_file():
        raise ConfigError(f"cost_curve {value!r}: no such file; write one with `copygram bench "
                          "kernel --backend BACKEND --model MODEL --out DIR` on this machine and "
                          "pass DIR/kernel.json")
    return str(path)


_ENDPOINT = re.compile(r"([^\s:,/]+):(\d{1,5})")


def _check_rpc_servers(value: object) -> tuple[str, ...]:
    """``rpc_servers`` as a tuple of ``host:port`` strings: a list (a TOML array) or one string
    of comma-separated endpoints, as llama.cpp's ``--rpc`` takes them; each named once."""
    allowed = ('a list of "host:port" endpoints of `copygram rpc-server` processes, e.g. '
               '["192.168.1.20:50052", "192.168.1.21:50052"] (IPv4 or host names; port 1-65535)')
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
        raise invalid("rpc_servers", value, allowed)
    servers = tuple(i.strip() for i in items if i.strip())
    for endpoint in servers:
        match = _ENDPOINT.fullmatch(endpoint)
        if match is None or not 1 <= int(match.group(2)) <= 65535:
            raise invalid("rpc_servers", value, allowed + f"; {endpoint!r} is not one")
    if len(set(servers)) != len(servers):
        raise invalid("rpc_servers", value, allowed + ", each endpoint once")
    if len(servers) > _MAX_RPC_SERVERS:
        raise invalid("rpc_servers", value, allowed + f", at most {_MAX_RPC_SERVERS}")
    return servers


# GGML_RPC_MAX_SERVERS in ggml-rpc.h.
_MAX_RPC_SERVERS: Final = 16


def _check_invariance(value: object) -> BatchInvariance:
    if value == "auto" and isinstance(value, str):
        return "auto"
    if not isinstance(value, bool):
        raise invalid("batch_invariant", value, "true, false or \"auto\"")
    return value


_HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def _is_catalog_name(model: str) -> bool:
    return model in catalog.ALIASES or model in catalog.model_names()


def _check_model(value: object, backend: str) -> str:
    """A model setting as a string: a catalog name or alias, a ``.gguf`` path (``os.PathLike``
    values are paths), or for Transformers an existing folder or a hub name."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)  # type: ignore[no-any-return]
    allowed = (f"a catalog name ({', '.join(catalog.model_names())}; 'default' = "
               f"{catalog.ALIASES['default']}) or the path of a .gguf file")
    if backend == "transformers":
        allowed += ", or a Hugging Face model folder or hub name (org/name)"
    if not isinstance(value, str) or not value.strip():
        raise invalid("model", value, allowed)
    if _is_catalog_name(value) or value.lower().endswith(".gguf"):
        return value
    if backend == "transformers" and (Path(value).expanduser().is_dir()
                                      or _HUB_NAME.fullmatch(value)):
        return value
    close = difflib.get_close_matches(value, [*catalog.model_names(), *catalog.ALIASES], n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise invalid("model", value, allowed + hint)


DEFAULT_PREFIX_CACHE_MB: Final = 512
"""llama.cpp's ``prefix_cache_mb`` where the config sets none: ~18k prompt tokens of
Qwen2.5-Coder-1.5B's KV (28 KiB a token), a few recent prompts of files of real size."""


def _check_prefix_cache(value: object, backend: str) -> int:
    if value is None:
        return DEFAULT_PREFIX_CACHE_MB if backend == "llamacpp" else 0
    mb = check_int("prefix_cache_mb", value, minimum=0, note=" (0 keeps the live cache alone)")
    if mb and backend != "llamacpp":
        raise invalid("prefix_cache_mb", mb, "0 with backend 'transformers' (snapshots of the "
                      "KV cache exist for llama.cpp; Transformers keeps its live cache alone)")
    return mb
