# The two commands: `make demo` and `make test`. Both set everything up first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
DEMO_OUT ?= demo-out

EXAMPLES := brat inception crowd bio

.PHONY: demo test bench install clean shell

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
	$(BIN)/unitize convert unitize/examples/brat-mini/study.toml --out $(DEMO_OUT)-brat --quiet
	$(BIN)/unitize agree $(DEMO_OUT)-brat
	$(BIN)/unitize convert unitize/examples/inception-mini/study.toml --out $(DEMO_OUT)-inception --quiet
	$(BIN)/unitize agree $(DEMO_OUT)-inception
	$(BIN)/unitize convert unitize/examples/crowd-mini/study.toml --out $(DEMO_OUT)-crowd --quiet
	$(BIN)/unitize agree $(DEMO_OUT)-crowd --metric alpha --summary-metric alpha
	$(BIN)/unitize convert unitize/examples/bio-mini/study.toml --out $(DEMO_OUT)-bio --quiet
	$(BIN)/unitize agree $(DEMO_OUT)-bio
	@echo "Span tools: $(DEMO_OUT)-brat, -inception (INCEpTION TSV), -crowd (span table), -bio (CoNLL BIO); each has agreement/results.csv"
	@echo "Your own data: make shell, then unitize init --format NAME DIR (unitize formats lists the formats)"

# A shell with .venv/bin on PATH: `unitize` runs as typed in the README (exit to leave).
shell: $(VENV)/.installed $(VENV)/.installed-agree
	@echo "unitize is on PATH in this shell ($(VENV)/bin); type exit to leave."
	@PATH="$(CURDIR)/$(BIN):$$PATH" VIRTUAL_ENV="$(CURDIR)/$(VENV)" $${SHELL:-/bin/sh} -i

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest

bench: $(VENV)/.installed
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) $(DEMO_OUT) $(DEMO_OUT)-labels $(EXAMPLES:%=$(DEMO_OUT)-%) .pytest_cache .hypothesis *.egg-info
