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

# Kapitan, the render baseline of benchmarks/bench.py, in its own environment (its pins are its own).
.venv-kapitan/bin/kapitan:
	$(PYTHON) -m venv .venv-kapitan
	.venv-kapitan/bin/pip install --quiet --upgrade pip
	.venv-kapitan/bin/pip install --quiet 'kapitan>=0.36,<0.37'

# Measures gen as `pip install .` gives it, in .venv-bench, against Kapitan in its own environment.
bench: .venv-kapitan/bin/kapitan
	$(PYTHON) benchmarks/bench.py --kapitan .venv-kapitan/bin/kapitan

clean:
	rm -rf $(VENV) .venv-scan .venv-kapitan .venv-bench .venv-ab deploy
