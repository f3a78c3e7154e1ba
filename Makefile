# The two commands of the README: `make demo` (an edit with the default model) and `make test`.
.PHONY: demo test bootstrap lint

VENV ?= .venv

bootstrap:
	@bash scripts/bootstrap.sh

demo: bootstrap
	$(VENV)/bin/copygram edit examples/fizzbuzz.py -i "Make fizzbuzz return the strings instead of printing them" --show-program

test: bootstrap
	$(VENV)/bin/mypy --strict src tests
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/python -m pytest

lint: bootstrap
	$(VENV)/bin/mypy --strict src tests
	$(VENV)/bin/ruff check src tests
