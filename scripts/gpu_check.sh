#!/usr/bin/env bash
# Issue 44's checks on a GPU machine, in one call of the `device` tool (docs/gpu.md):
#   make gpu-prepare                      # here: .whl (wheels) and .gpu (config, tokenizer)
#   device run, carry [".whl", ".gpu"]:  bash scripts/gpu_check.sh
# The random model's checks and timings per dtype (copygram bench device run) and the `cuda`
# tests, written to $OUT (device.json, device.log, pytest.log). `--device cpu` runs the same on
# a CPU (a dry run; `make gpu-prepare` with --tiny first for seconds, not minutes).
set -uo pipefail
DEVICE=${1:-cuda}
FOLDER=${COPYGRAM_DEVICE_FOLDER:-.gpu/qwen2.5-coder-1.5b}
OUT=${OUT:-build/gpu}
mkdir -p "$OUT"
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:src
else
  export PYTHONPATH=src
fi
# transformers 5.25 turns the hub's kernels on and fails to load without the `kernels` package.
export USE_HUB_KERNELS=NO PYTHONUNBUFFERED=1 COPYGRAM_DEVICE_FOLDER="$FOLDER"
PYTHON=${PYTHON:-python3}
(command -v nvidia-smi >/dev/null && nvidia-smi) > "$OUT/machine.txt" 2>&1
"$PYTHON" -m copygram bench device run --folder "$FOLDER" --device "$DEVICE" \
  --json "$OUT/device.json" 2>&1 | tee "$OUT/device.log"
status=$?
"$PYTHON" -m pytest -q -m cuda -p no:cacheprovider tests/backends/test_cuda.py 2>&1 \
  | tee "$OUT/pytest.log"
exit $(( status || $? ))
