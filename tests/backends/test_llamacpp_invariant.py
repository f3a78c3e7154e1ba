"""``batch_invariant``: the checks made before a model loads, and the real-model suite
(``invariant_suite.py``) run in a fresh process, since ggml reads its switch once per process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from copygram.catalog import get_entry, model_status
from copygram.config import parse_config
from copygram.errors import BackendError, ConfigError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("config", [
    {"backend": "transformers", "batch_invariant": True},
    {"device": "cuda", "batch_invariant": True},
    {"batch_invariant": "true"},
    {"batch_invariant": 1},
])
def test_batch_invariant_is_refused_where_it_cannot_hold(config: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match="batch_invariant"):
        parse_config(config)


def test_batch_invariant_is_auto_by_default_and_off_where_no_kernels_give_it() -> None:
    assert parse_config({}).backend.batch_invariant == "auto"
    assert parse_config({"route": {"batch_invariant": True}}).backend.batch_invariant is True
    assert parse_config({"route": {"batch_invariant": False}}).backend.batch_invariant is False
    assert parse_config({"device": "cuda"}).backend.batch_invariant is False
    assert parse_config({"backend": "transformers"}).backend.batch_invariant is False


@pytest.mark.llamacpp
def test_the_build_features_and_the_cost_curve_they_choose() -> None:
    from copygram.backends import base, llamacpp_build

    info = ("CUDA : ARCHS = 890 | USE_GRAPHS = 1 | CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 0 | "
            "REPACK = 1 | ")
    assert llamacpp_build.parse_system_info(info) == {"USE_GRAPHS", "SSE3", "AVX2", "REPACK"}
    assert llamacpp_build.cpu_profiles(llamacpp_build.parse_system_info(info)) == (
        base.LLAMACPP_CPU, base.LLAMACPP_CPU_INVARIANT)
    wide = llamacpp_build.cpu_profiles(frozenset({"AVX2", "AVX512"}))
    assert wide == (base.LLAMACPP_CPU_AVX512, base.LLAMACPP_CPU_AVX512_INVARIANT)
    # The wider build batches cheaper; only the invariant curve skips near-tie re-decision.
    assert wide[0].cost(128) < base.LLAMACPP_CPU.cost(128)
    assert wide[0].step_tolerance > 0 and wide[1].step_tolerance == 0
    built = llamacpp_build.build_features()  # this build, as make bootstrap makes it
    assert "REPACK" in built and "LLAMAFILE" not in built


@pytest.mark.llamacpp
def test_a_build_with_llamafile_or_a_gpu_is_refused_before_the_model_loads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import llama_cpp

    from copygram.backends import llamacpp_build

    with pytest.raises(BackendError, match="device 'cpu'"):
        llamacpp_build.check_invariance_build(offloads=True)
    monkeypatch.setattr(llama_cpp, "llama_print_system_info",
                        lambda: b"CPU : AVX2 = 1 | LLAMAFILE = 1 | REPACK = 1 | ")
    with pytest.raises(BackendError, match="GGML_LLAMAFILE=OFF"):
        llamacpp_build.check_invariance_build(offloads=False)


def _run(code_or_args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **env}
    return subprocess.run([sys.executable, *code_or_args], cwd=ROOT, env=environment,
                          capture_output=True, text=True, timeout=1800, check=False)


@pytest.mark.llamacpp
def test_the_real_model_suite_in_a_process_of_its_own() -> None:
    done = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider",
                 "tests/backends/invariant_suite.py"], COPYGRAM_INVARIANT_PROCESS="1")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert " passed" in done.stdout


# Qwen2.5-Coder-1.5B has Q6_K tensors, which are not repacked on x86: forcing the tiled K-quant
# matmul on makes its batched rows differ from one-token steps. (The 0.5B's K-quant tensors are all
# repacked, so the switch does not reach it.)
_TILED_MODEL = "qwen2.5-coder-1.5b"


@pytest.mark.llamacpp
def test_the_load_probe_refuses_a_process_whose_kernels_are_not_invariant() -> None:
    """With the tiled K-quant matmul forced on, a K-quant model's batched rows differ from its
    steps, with and without repacked weights, and loading it batch-invariant fails with what to
    do."""
    if not model_status(get_entry(_TILED_MODEL)).present:
        pytest.skip(f"{_TILED_MODEL} is not on this machine")
    code = ("from copygram.backends import load\n"
            "from copygram.errors import BackendError\n"
            "try:\n"
            f"    load({{'model': '{_TILED_MODEL}', 'n_ctx': 512, 'batch_invariant': True}})\n"
            "except BackendError as exc:\n"
            "    print('refused:', exc)\n")
    done = _run(["-c", code], GGML_CPU_TILED_MM="1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "refused:" in done.stdout and "GGML_CPU_TILED_MM" in done.stdout, done.stdout


_AUTO_LOAD = ("import sys\n"
              "from copygram.backends import load\n"
              "from copygram.backends.llamacpp_build import build_features, cpu_profiles\n"
              "b = load({'model': sys.argv[1], 'n_ctx': 512})\n"
              "default, invariant = cpu_profiles(build_features())\n"
              "profile = {default: 'default', invariant: 'repacked'}\n"
              "print('invariant:', b.batch_invariant, profile.get(b.batch_profile, 'other'))\n")


@pytest.mark.llamacpp
def test_auto_gives_invariance_with_the_repacked_kernels_of_the_bootstrap_build() -> None:
    """The default config asks for invariance; with llama-cpp-python built by `make bootstrap`
    (scripts/patches) a K-quant model keeps its repacked weights, at the default kernels' cost."""
    if not model_status(get_entry("qwen2.5-coder-0.5b")).present:
        pytest.skip("qwen2.5-coder-0.5b is not on this machine (a K-quant model is needed)")
    done = _run(["-c", _AUTO_LOAD, "qwen2.5-coder-0.5b"])
    assert done.returncode == 0, done.stderr[-3000:]
    assert "invariant: True repacked" in done.stdout, done.stdout + done.stderr[-3000:]


@pytest.mark.llamacpp
def test_auto_keeps_the_default_kernels_where_the_probe_fails() -> None:
    """With the tiled K-quant matmul forced on, rows are not invariant: "auto" loads anyway, with
    the default kernels and the near-tie re-decision of their profile, where True refuses."""
    if not model_status(get_entry(_TILED_MODEL)).present:
        pytest.skip(f"{_TILED_MODEL} is not on this machine")
    done = _run(["-c", _AUTO_LOAD, _TILED_MODEL], GGML_CPU_TILED_MM="1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "invariant: False default" in done.stdout, done.stdout + done.stderr[-3000:]


@pytest.mark.llamacpp
def test_a_context_too_small_for_the_probe_is_refused_when_required() -> None:
    from copygram.backends import load

    with pytest.raises(BackendError, match="too small for the load probe"):
        load({"n_ctx": 16, "batch_invariant": True})
    small = load({"n_ctx": 16})  # "auto": loads, without the claim
    try:
        assert small.batch_invariant is False  # type: ignore[attr-defined]
    finally:
        small.close()  # type: ignore[attr-defined]
