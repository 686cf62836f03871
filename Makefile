# The two commands: `make demo` and `make test`. Both set everything up first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
DEMO_OUT ?= demo-out

.PHONY: demo test bench install clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,agree,plot]'
	touch $@

$(VENV)/.installed-agree: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[agree,plot]'
	touch $@

install: $(VENV)/.installed

demo: $(VENV)/.installed $(VENV)/.installed-agree
	$(BIN)/unitize convert unitize/examples/tdb-mini/study.toml --out $(DEMO_OUT)
	$(BIN)/unitize agree $(DEMO_OUT) --plot
	@echo "Inspect it with: $(BIN)/unitize info $(DEMO_OUT)"
	@echo "Agreement summary (thesis Table 22 layout): $(DEMO_OUT)/agreement/summary.md (plots: $(DEMO_OUT)/agreement/plots/)"
	$(BIN)/unitize convert unitize/examples/labels-mini/study.toml --out $(DEMO_OUT)-labels
	$(BIN)/unitize agree $(DEMO_OUT)-labels --metric alpha,fleiss,cohen --summary-metric alpha
	@echo "Flat labels: $(BIN)/unitize info $(DEMO_OUT)-labels; agreement: $(DEMO_OUT)-labels/agreement/results.csv"

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest

bench: $(VENV)/.installed
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) $(DEMO_OUT) $(DEMO_OUT)-labels .pytest_cache .hypothesis *.egg-info
