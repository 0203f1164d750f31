# Two commands for a fresh machine: `make render` and `make test`. Both create .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: render test scanner bench clean

$(BIN)/gen: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	@touch $@

render: $(BIN)/gen
	$(BIN)/gen render policies --out deploy

test: $(BIN)/gen
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest -q

# checkov, the security scanner of tests/test_security_scan.py, in its own environment.
scanner: .venv-scan/bin/checkov

.venv-scan/bin/checkov:
	$(PYTHON) -m venv .venv-scan
	.venv-scan/bin/pip install --quiet --upgrade pip
	.venv-scan/bin/pip install --quiet 'checkov>=3.2,<4'

bench: $(BIN)/gen
	$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python benchmarks/bench.py

clean:
	rm -rf $(VENV) .venv-scan deploy
