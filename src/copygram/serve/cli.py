"""``copygram serve``: run the OpenAI-compatible server (docs/serve.md) on one model.

The model loads before the port opens (a bad config or a missing model fails at once, as
``copygram edit`` fails), then uvicorn serves :func:`copygram.serve.app.create_app` until Ctrl-C.
This module imports neither starlette nor uvicorn until :func:`run`, so that ``copygram --help``
works without the ``serve`` extra.
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from copygram.errors import ConfigError, missing_dependency

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from copygram.config import Config

API_KEY_ENV = "COPYGRAM_API_KEY"
SPEC_ENV = "COPYGRAM_SERVE_SPEC"  # a replica's settings, from the parent (--replicas)
ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s?#]+")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path,
                        help="TOML config (backend, model, sampling defaults; docs/config.md)")
    parser.add_argument("--model", metavar="NAME|PATH",
                        help="a catalog name or a .gguf path (overrides the config's model)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default: %(default)s, this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="default: %(default)s")
    parser.add_argument("--api-key", metavar="KEY",
                        help=f"require 'Authorization: Bearer KEY' on every request "
                             f"(default: ${API_KEY_ENV} if set)")
    parser.add_argument("--max-waiting", type=int, default=16, metavar="N",
                        help="requests queued behind the running one before 429 "
                             "(default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                        help="per-request limit, queueing included (default: %(default)s)")
    parser.add_argument("--max-body-mb", type=float, default=8.0, metavar="MB",
                        help="largest request body accepted, 413 above (default: %(default)s)")
    parser.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN",
                        dest="cors_origins",
                        help="let web pages from ORIGIN (scheme://host[:port], or '*' for "
                             "any) call the server from a browser; repeatable (default: none)")
    parser.add_argument("--replicas", type=int, default=1, metavar="N",
                        help="N server processes on the one port, each with its own model, "
                             "queue and --max-waiting (uvicorn's workers; default: "
                             "%(default)s). Threads are shared out: cores / N each, unless the "
                             "config sets n_threads")
    parser.add_argument("--log-level", default="info",
                        choices=["critical", "error", "warning", "info", "debug"])


def model_names(model: str, is_catalog: bool) -> tuple[str, list[str]]:
    """The id ``/v1/models`` lists for ``model`` and the other names requests may use: a
    catalog entry by its name (its alias too), a file by its name."""
    from copygram import catalog

    if is_catalog:
        name = catalog.ALIASES.get(model, model)
        aliases = {model, *(alias for alias, target in catalog.ALIASES.items() if target == name)}
        return name, sorted(aliases - {name})
    return Path(model).name, [model]


def _check(args: argparse.Namespace) -> None:
    if not 0 < args.port < 65536:
        raise ConfigError(f"--port {args.port}: use 1 to 65535")
    if args.replicas < 1:
        raise ConfigError(f"--replicas {args.replicas}: use 1 or more")
    if args.max_waiting < 0:
        raise ConfigError(f"--max-waiting {args.max_waiting}: use 0 or more")
    if not args.timeout > 0:
        raise ConfigError(f"--timeout {args.timeout}: use a positive number of seconds")
    if not args.max_body_mb > 0:
        raise ConfigError(f"--max-body-mb {args.max_body_mb}: use a positive number")
    for origin in args.cors_origins:
        # A browser's Origin header is exactly scheme://host[:port]: one with a path or a
        # trailing slash would never match, silently.
        if origin != "*" and not ORIGIN.fullmatch(origin):
            raise ConfigError(f"--cors-origin {origin!r}: use scheme://host[:port] with no path "
                              "or trailing slash (e.g. http://localhost:3000), or '*'")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(args: argparse.Namespace) -> int:
    from copygram.config import command_config

    _check(args)
    try:
        import uvicorn
    except ImportError as exc:
        raise missing_dependency("uvicorn", "serve") from exc
    import copygram.serve.app  # noqa: F401  without starlette: the same error, named

    parsed = command_config(args.config, model=args.model)  # checked once, before the load
    api_key = args.api_key or os.environ.get(API_KEY_ENV) or None
    if not _loopback(args.host) and not api_key:
        print(f"copygram: warning: serving on {args.host} with no API key: anyone who can "
              f"reach this address can use the model (set --api-key or ${API_KEY_ENV})",
              file=sys.stderr)
    if args.replicas > 1:
        parsed = _replica_config(parsed, args.replicas)
    spec = {"config": parsed.to_dict(), "api_key": api_key, "max_waiting": args.max_waiting,
            "timeout": args.timeout, "max_body_mb": args.max_body_mb,
            "cors_origins": args.cors_origins}
    model_id = model_names(parsed.backend.model, parsed.backend.is_catalog_model)[0]
    where = (f"copygram: serving {model_id} at http://{args.host}:{args.port}/v1"
             + (" (API key required)" if api_key else ""))
    if args.replicas == 1:
        app = build_app(parsed, spec)
        print(where, file=sys.stderr)
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level,
                    timeout_graceful_shutdown=5)
        return 0
    # uvicorn's own workers: each process loads its model in replica_app (a spawned process
    # reads the spec from the environment) and serves the one listening socket; uvicorn's
    # supervisor replaces a worker that dies.
    os.environ[SPEC_ENV] = json.dumps(spec)
    print(f"{where}, {args.replicas} replicas of {parsed.backend.n_threads} threads each "
          "(each loads its model now)", file=sys.stderr)
    uvicorn.run("copygram.serve.cli:replica_app", factory=True, workers=args.replicas,
                host=args.host, port=args.port, log_level=args.log_level,
                timeout_graceful_shutdown=5)
    return 0


def _replica_config(parsed: Config, replicas: int) -> Config:
    """The config of each of ``replicas`` processes: the model fetched once here (each would
    fetch it otherwise), and threads shared out (llama.cpp's threads spin-wait for a busy core:
    more threads than cores in all slows every replica) where the config sets none."""
    from copygram.backends._common import usable_cores
    from copygram.catalog import resolve_model

    backend = parsed.backend
    if backend.is_catalog_model:
        resolve_model(backend.model)
    cores = usable_cores()
    threads = backend.n_threads or max(1, cores // replicas)
    if threads * replicas > cores:
        print(f"copygram: warning: {replicas} replicas x {threads} threads is more than this "
              f"machine's {cores} cores; each replica will wait for the others", file=sys.stderr)
    return dataclasses.replace(parsed, backend=dataclasses.replace(backend, n_threads=threads))


def build_app(parsed: Config, spec: Mapping[str, Any]) -> Starlette:
    """The app of one server process: its model loaded (seconds) and ready for both modes;
    ``spec``'s server options (the API key, the queue, the limits)."""
    from copygram import EditSession
    from copygram.serve.app import create_app

    backend = parsed.backend
    print(f"copygram: loading {backend.model} on {backend.backend}", file=sys.stderr)
    session = EditSession.from_config(parsed)
    # A /v1/edits request may ask for program mode whatever the config's: its first one would
    # otherwise build the constraint's vocabulary view (seconds for a 151k-token vocabulary).
    session.derive(mode="program").prepare()
    model_id, aliases = model_names(backend.model, backend.is_catalog_model)
    return create_app(lambda: session, model_id=model_id, aliases=aliases,
                      api_key=spec["api_key"], max_body_bytes=int(spec["max_body_mb"] * (1 << 20)),
                      max_waiting=spec["max_waiting"], timeout_s=spec["timeout"],
                      cors_origins=spec["cors_origins"])


def replica_app() -> Starlette:
    """uvicorn's factory in each replica process (``--replicas``): :func:`build_app` of the spec
    the parent left in ``$COPYGRAM_SERVE_SPEC``."""
    from copygram.config import parse_config

    spec = json.loads(os.environ[SPEC_ENV])
    return build_app(parse_config(spec["config"]), spec)
