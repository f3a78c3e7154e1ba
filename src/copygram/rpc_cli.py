"""``copygram rpc-server``: hold and compute part of a model's layers for a copygram on another
machine (``rpc_servers`` in its config; docs/scale.md).

It is ggml's RPC server (what llama.cpp's ``rpc-server`` binary runs) from this machine's
llama-cpp-python build, so both sides run the same patched kernels and the same protocol
version. It runs until stopped (Ctrl-C or SIGTERM) and serves one client at a time.
"""

from __future__ import annotations

import argparse
import sys

from copygram.errors import missing_dependency


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1; 0.0.0.0 for every "
                             "interface: the protocol has no authentication, so only on a "
                             "network you trust)")
    parser.add_argument("--port", type=int, default=50052, help="TCP port (default 50052)")
    parser.add_argument("--threads", type=int, default=None,
                        help="CPU threads that compute the layers (default: physical cores - 1, "
                             "at least 1, as copygram's llama.cpp backend)")
    parser.add_argument("--cache-dir", default=None,
                        help="keep the tensors clients send here, so a reload of the same model "
                             "skips sending them again (default: no cache)")


def run(args: argparse.Namespace) -> int:
    try:
        from copygram.backends import llamacpp_rpc
        from copygram.backends._common import default_threads
    except ImportError as exc:
        raise missing_dependency("llama_cpp", "llamacpp") from exc
    if not 1 <= args.port <= 65535:
        print(f"copygram rpc-server: --port {args.port} is not a TCP port (1-65535)",
              file=sys.stderr)
        return 2
    threads = args.threads or default_threads()
    if threads < 1:
        print(f"copygram rpc-server: --threads {threads} must be at least 1", file=sys.stderr)
        return 2
    return llamacpp_rpc.serve(args.host, args.port, threads=threads, cache_dir=args.cache_dir)
