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

test: bootstrap
	$(VENV)/bin/mypy --strict src tests
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/python -m pytest

lint: bootstrap
	$(VENV)/bin/mypy --strict src tests
	$(VENV)/bin/ruff check src tests
