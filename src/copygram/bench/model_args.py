"""The model options the benchmarks that run edits share (``bench quality``, ``bench repeat``):
one set of flags, and the one place they become a session config."""

from __future__ import annotations

import argparse

from copygram.config import route_arguments
from copygram.config.backend import DEVICES, DTYPES


def add_device_arguments(parser: argparse.ArgumentParser) -> None:
    """``--device`` and ``--dtype``: where the model runs and, on transformers, its weights'
    dtype (config keys ``device`` and ``dtype``, checked when the backend config is built)."""
    parser.add_argument("--device", choices=DEVICES, default="auto",
                        help="where the model runs (config key device; default auto: CUDA where "
                             "torch sees a GPU)")
    parser.add_argument("--dtype", choices=DTYPES, default="auto",
                        help="backend transformers: the weights' dtype (config key dtype; "
                             "default auto: float32 on a CPU, bfloat16 on CUDA)")


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """``--model``, ``--backend``, ``--device``, ``--dtype``, ``--n-ctx``, ``--n-threads``,
    ``--batch-invariant``, ``--cost-curve``, ``--prefix-cache-mb`` and ``--route``
    (repeatable)."""
    parser.add_argument("--model", default="default",
                        help="a catalog model name or a .gguf path (default: the default model)")
    parser.add_argument("--backend", default="llamacpp", choices=("llamacpp", "transformers"))
    add_device_arguments(parser)
    parser.add_argument("--n-ctx", type=int, default=None,
                        help="context length (default: the backend's, the model's trained "
                             "context)")
    parser.add_argument("--n-threads", type=int, default=None,
                        help="CPU threads (default: the backend's)")
    parser.add_argument("--batch-invariant", choices=("auto", "true", "false"), default="auto",
                        help="llama.cpp on a CPU: batch-invariant kernels, so batched rows equal "
                             "one-token steps (config key batch_invariant, default auto; "
                             "docs/config.md)")
    parser.add_argument("--cost-curve", default=None, metavar="KERNEL_JSON",
                        help="price forwards on this machine's curve, a kernel.json that "
                             "`copygram bench kernel` wrote (config key cost_curve; default: "
                             "the built-in curve)")
    parser.add_argument("--prefix-cache-mb", type=int, default=None,
                        help="llama.cpp: host memory for snapshots of recent prompts' KV (config "
                             "key prefix_cache_mb; default 512, 0 keeps the live cache alone)")
    parser.add_argument("--route", action="append", default=[], metavar="KEY=VALUE",
                        help="a [route] key for every approach (the baseline's prompt is rewrite "
                             "mode's), the value as in TOML, a bare word as a string; "
                             "repeatable, e.g. --route prompt_order=document_first")


def session_config(args: argparse.Namespace) -> dict[str, object]:
    """The session config the flags of :func:`add_model_arguments` name (no ``mode``: each
    approach sets its own)."""
    config: dict[str, object] = {"backend": args.backend, "model": args.model}
    for key in ("device", "dtype"):
        if getattr(args, key) != "auto":
            config[key] = getattr(args, key)
    if args.n_ctx:
        config["n_ctx"] = args.n_ctx
    if args.n_threads:
        config["n_threads"] = args.n_threads
    if args.prefix_cache_mb is not None:
        config["prefix_cache_mb"] = args.prefix_cache_mb
    table: dict[str, object] = {}  # the config's [route] table
    if args.cost_curve:
        table["cost_curve"] = args.cost_curve
    if args.backend == "llamacpp":
        table["batch_invariant"] = {"auto": "auto", "true": True, "false": False}[
            args.batch_invariant]
    table.update(route_arguments(args.route))
    if table:
        config["route"] = table
    return config
