# Two commands for a fresh machine: `make render` and `make test`. Both create .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: render test lint clean

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

clean:
	rm -rf $(VENV) deploy
