# The two commands: `make demo` and `make test`. Both set everything up first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
DEMO_OUT ?= demo-out

EXAMPLES := brat inception crowd bio

.PHONY: demo test bench install clean shell browser screenshot

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,agree,plot,crowd,dask]'
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
	$(BIN)/unitize report $(DEMO_OUT) --quiet
	$(BIN)/unitize report $(DEMO_OUT)-brat --quiet
	$(BIN)/unitize report $(DEMO_OUT)-labels --quiet
	@echo "HTML report (open it in a browser, no server needed): $(CURDIR)/$(DEMO_OUT)/report/index.html"
	@echo "  also $(DEMO_OUT)-brat/report/index.html (entities) and $(DEMO_OUT)-labels/report/index.html (flat labels)"
	@echo "Your own data: make shell, then unitize init --format NAME DIR (unitize formats lists the formats)"

# A shell with .venv/bin on PATH: `unitize` runs as typed in the README (exit to leave).
shell: $(VENV)/.installed $(VENV)/.installed-agree
	@echo "unitize is on PATH in this shell ($(VENV)/bin); type exit to leave."
	@PATH="$(CURDIR)/$(BIN):$$PATH" VIRTUAL_ENV="$(CURDIR)/$(VENV)" $${SHELL:-/bin/sh} -i

# The quality gates first (ruff and mypy on unitize/, configured in pyproject.toml), then the suite.
test: $(VENV)/.installed-test browser
	$(BIN)/ruff check unitize
	$(BIN)/mypy
	$(BIN)/python -m pytest

# Headless Chromium for the report's browser check (tests/report/test_browser.py): Debian's package,
# installed when missing; where apt-get cannot (not root, no archive) the check is skipped with that reason.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the report's browser check"; \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "chromium could not be installed: the browser check will be skipped"; \
	  else echo "not root or no apt-get: chromium not installed, the browser check will be skipped"; fi; }

# Remake the README's screenshot (docs/report.png) with the browser check.
screenshot: $(VENV)/.installed-test browser
	UNITIZE_SCREENSHOT=docs/report.png $(BIN)/python -m pytest -q tests/report/test_browser.py -k example_corpus

bench: $(VENV)/.installed
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) $(DEMO_OUT) $(DEMO_OUT)-labels $(EXAMPLES:%=$(DEMO_OUT)-%) .pytest_cache .hypothesis *.egg-info
