"""The model flags the benchmarks share (copygram.bench.model_args)."""

from __future__ import annotations

import argparse

import pytest

from copygram.bench import e2e
from copygram.bench.model_args import add_model_arguments, session_config
from copygram.config import BackendConfig, parse_config
from copygram.errors import ConfigError


def _parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_model_arguments(parser)
    return parser.parse_args(list(argv))


def test_device_and_dtype_reach_the_session_config() -> None:
    assert "device" not in session_config(_parsed()) and "dtype" not in session_config(_parsed())
    config = session_config(_parsed("--backend", "transformers", "--device", "cuda",
                                    "--dtype", "float32"))
    assert config["device"] == "cuda" and config["dtype"] == "float32"
    parsed = parse_config({**config, "mode": "program"})
    assert parsed.backend.device == "cuda" and parsed.backend.dtype == "float32"
    # llama.cpp's weights are the GGUF's: a dtype is refused where the config is built.
    with pytest.raises(ConfigError, match="dtype"):
        parse_config(session_config(_parsed("--dtype", "bfloat16")))


def test_bench_e2e_takes_device_and_dtype() -> None:
    parser = argparse.ArgumentParser()
    e2e.add_arguments(parser)
    args = parser.parse_args(["--backend", "transformers", "--device", "cpu",
                              "--dtype", "bfloat16"])
    assert (args.device, args.dtype) == ("cpu", "bfloat16")
    config = BackendConfig(backend=args.backend, model=args.model, device=args.device,
                           dtype=args.dtype)
    assert (config.device, config.dtype) == ("cpu", "bfloat16")
