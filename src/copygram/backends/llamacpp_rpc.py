"""llama.cpp's RPC backend: one model's layers held and computed by other processes, on this
machine or others (``rpc_servers`` in the config; docs/scale.md).

Each server is a ``copygram rpc-server`` (:func:`serve`): ggml's own RPC server
(``ggml_backend_rpc_start_server``, the code of llama.cpp's ``rpc-server`` binary) over the CPU
device of the same llama-cpp-python build as the client, so both sides run the same patched
kernels and speak the same protocol version. The client registers each server with ggml
(``ggml_backend_rpc_add_server``) and loads the model with those devices: llama.cpp splits the
layers across them by their free memory and keeps only the token embeddings here. Every forward
is then one round trip per server in layer order, and the logits rows it asks for come back
whole (a vocabulary of floats each).

Costs: registering a server is one connection and a handshake (milliseconds on a LAN); loading
sends the weights to the servers (their size over the network, once per load). ggml aborts the
process when it cannot reach a server, so a server is first checked with a plain TCP connection
(:func:`check_reachable`) and an unreachable one is a :class:`BackendError`; a server that dies
while a model uses it still ends the client process (ggml's ``RPC_STATUS_ASSERT``).
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import sys
import threading
from collections.abc import Sequence
from typing import Final

from copygram.backends._common import TILED_MATMUL_ENV
from copygram.errors import BackendError, missing_dependency

try:
    import llama_cpp
    from llama_cpp._ggml import libggml
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_dependency("llama_cpp", "llamacpp") from exc

__all__ = ["check_reachable", "devices_for", "local_gpu", "registered", "serve"]

# enum ggml_backend_dev_type (ggml-backend.h)
_CPU, _GPU, _IGPU = 0, 1, 2
_CONNECT_TIMEOUT_S: Final = 5.0

_lib = libggml
for _name, _args, _res in (
    ("ggml_backend_reg_by_name", [ctypes.c_char_p], ctypes.c_void_p),
    ("ggml_backend_reg_name", [ctypes.c_void_p], ctypes.c_char_p),
    ("ggml_backend_reg_get_proc_address", [ctypes.c_void_p, ctypes.c_char_p], ctypes.c_void_p),
    ("ggml_backend_register", [ctypes.c_void_p], None),
    ("ggml_backend_reg_dev_count", [ctypes.c_void_p], ctypes.c_size_t),
    ("ggml_backend_reg_dev_get", [ctypes.c_void_p, ctypes.c_size_t], ctypes.c_void_p),
    ("ggml_backend_dev_count", [], ctypes.c_size_t),
    ("ggml_backend_dev_get", [ctypes.c_size_t], ctypes.c_void_p),
    ("ggml_backend_dev_type", [ctypes.c_void_p], ctypes.c_int),
    ("ggml_backend_dev_backend_reg", [ctypes.c_void_p], ctypes.c_void_p),
    ("ggml_backend_dev_by_type", [ctypes.c_int], ctypes.c_void_p),
):
    _fn = getattr(_lib, _name)
    _fn.argtypes, _fn.restype = _args, _res

_ADD_SERVER = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_char_p)
_START_SERVER = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                                 ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p))
_lock = threading.Lock()
# endpoint -> its devices, registered once per process (ggml keeps them until exit).
_servers: dict[str, tuple[int, ...]] = {}


def _rpc_reg() -> int:
    """ggml's RPC backend registration, or a :class:`BackendError` for a build without it."""
    llama_cpp.llama_backend_init()
    reg: int | None = _lib.ggml_backend_reg_by_name(b"RPC")
    if not reg:
        raise BackendError(
            "rpc_servers: this llama-cpp-python build has no RPC backend; `make bootstrap` "
            "builds it with one (CMAKE_ARGS=\"-DGGML_RPC=ON\"), or remove rpc_servers")
    return reg


def _proc(reg: int, name: str) -> int:
    address: int | None = _lib.ggml_backend_reg_get_proc_address(reg, name.encode())
    if not address:
        raise BackendError(f"this llama-cpp-python build's RPC backend has no {name}")
    return address


def check_reachable(endpoint: str, timeout: float = _CONNECT_TIMEOUT_S) -> None:
    """A :class:`BackendError` unless a TCP connection to ``endpoint`` (``host:port``) opens
    within ``timeout`` seconds: ggml would abort the process instead. One connect."""
    host, _, port = endpoint.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise BackendError(
            f"rpc_servers: cannot reach {endpoint} ({exc}); start `copygram rpc-server --host "
            f"HOST --port {port}` on that machine (the same copygram and llama-cpp-python build), "
            f"or remove it from rpc_servers") from exc


def registered() -> bool:
    """Whether this process has registered an RPC server (its devices stay until exit)."""
    return bool(_servers)


def _register(endpoint: str) -> tuple[int, ...]:
    with _lock:
        known = _servers.get(endpoint)
        if known is not None:
            return known
        check_reachable(endpoint)
        add_server = _ADD_SERVER(_proc(_rpc_reg(), "ggml_backend_rpc_add_server"))
        reg = add_server(endpoint.encode())
        if not reg:
            raise BackendError(f"rpc_servers: {endpoint} answered but offers no device; is it a "
                               "`copygram rpc-server`?")
        _lib.ggml_backend_register(reg)
        devices = tuple(int(_lib.ggml_backend_reg_dev_get(reg, i))
                        for i in range(_lib.ggml_backend_reg_dev_count(reg)))
        _servers[endpoint] = devices
        return devices


def _is_rpc(device: int) -> bool:
    reg = _lib.ggml_backend_dev_backend_reg(device)
    return bool(reg) and _lib.ggml_backend_reg_name(reg) == b"RPC"


def local_gpu() -> bool:
    """Whether this build offloads to a GPU of this machine. Not ``llama_supports_gpu_offload``:
    that is true for every build with the RPC backend, even on a CPU-only machine. O(devices)."""
    llama_cpp.llama_backend_init()
    return bool(_local_gpus())


def _local_gpus() -> list[int]:
    return [int(d) for d in (_lib.ggml_backend_dev_get(i)
                             for i in range(_lib.ggml_backend_dev_count()))
            if _lib.ggml_backend_dev_type(d) in (_GPU, _IGPU) and not _is_rpc(d)]


def devices_for(endpoints: Sequence[str], *, offloads: bool) -> ctypes.Array[ctypes.c_void_p]:
    """The NULL-terminated device list of a model load (``llama_model_params.devices``): every
    device of each server in ``endpoints`` (registered on first use: a connect and a
    handshake each), then this machine's GPUs where ``offloads``. With no endpoints, the local
    GPUs only: once a process has registered a server, a load that names none must not take
    its devices (llama.cpp's default is every device it knows)."""
    devices = [d for endpoint in endpoints for d in _register(endpoint)]
    if offloads:
        devices += _local_gpus()
    return (ctypes.c_void_p * (len(devices) + 1))(*devices, None)


def serve(host: str, port: int, *, threads: int, cache_dir: str | None = None) -> int:
    """Run ggml's RPC server on ``host:port`` over this machine's CPU with ``threads`` threads
    until the process is stopped (Ctrl-C, SIGTERM); returns 1 only when it could not start (the
    port taken, say). ``cache_dir``: where the server keeps tensors a client sent, so that a
    reload of the same model skips sending them again. The kernels are the client's: the
    batch-invariant setting (``GGML_CPU_TILED_MM=0``) is made here too, before any matmul."""
    os.environ.setdefault(TILED_MATMUL_ENV, "0")
    if host not in ("127.0.0.1", "localhost"):
        print(f"copygram rpc-server: listening on {host}:{port}: ggml's RPC protocol has no "
              "authentication or encryption; expose it only on a network you trust",
              file=sys.stderr)
    reg = _rpc_reg()
    start = _START_SERVER(_proc(reg, "ggml_backend_rpc_start_server"))
    cpu = _lib.ggml_backend_dev_by_type(_CPU)
    if not cpu:
        raise BackendError("this llama-cpp-python build has no CPU device")
    devices = (ctypes.c_void_p * 1)(cpu)
    # The server loop is one C call that never returns: Python's SIGINT handler would only set a
    # flag no one reads, so Ctrl-C and SIGTERM take the default action (end the process).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    cache = cache_dir.encode() if cache_dir else None
    start(f"{host}:{port}".encode(), cache, threads, 1, devices)
    return 1
