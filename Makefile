# The two commands: `make demo` and `make test`. Both set everything up first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
DEMO_OUT ?= demo-out

U      := $(BIN)/unitize
EX     := unitize/examples
#: the demo's output folders beside $(DEMO_OUT)
EXAMPLES := brat brat-gold inception inception-as-brat crowd bio models labels

.PHONY: demo test test-fast bench install clean shell browser screenshot

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,agree,plot,crowd,dask,xmi]'
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps 'factgenie==1.2.1'
	touch $@

$(VENV)/.installed-agree: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[agree,plot]'
	touch $@

install: $(VENV)/.installed

# The tour: every command of the product on the bundled examples, one line per step saying what was made and where.
demo: $(VENV)/.installed $(VENV)/.installed-agree
	@echo "unitize demo: the bundled examples (unitize/examples/) through every command; outputs in $(DEMO_OUT)*/"
	@$(U) convert $(EX)/tdb-mini/study.toml --out $(DEMO_OUT) --quiet
	@echo "  convert          tdb-mini (DATT XML, 3 annotators)      -> $(DEMO_OUT)/units/: unit matrices; segments/, report.jsonl, manifest.json"
	@$(U) agree $(DEMO_OUT) --plot --quiet
	@echo "  agree            the default metrics                    -> $(DEMO_OUT)/agreement/summary.md (thesis Table 22), results.csv, plots/"
	@$(U) report $(DEMO_OUT) --quiet
	@echo "  report           disagreements, document by document    -> $(CURDIR)/$(DEMO_OUT)/report/index.html (open it in a browser)"
	@$(U) export $(DEMO_OUT) --to reliability-csv --quiet
	@echo "  export           coder x unit tables for R's irr        -> $(DEMO_OUT)/exports/reliability-csv/ (RAT .dat, NLTK, pygamma, ...: unitize export --help)"
	@$(U) convert $(EX)/brat-mini/study.toml --out $(DEMO_OUT)-brat --quiet
	@$(U) agree $(DEMO_OUT)-brat --quiet
	@echo "  convert, agree   brat-mini (brat, entities)             -> $(DEMO_OUT)-brat/agreement/results.csv"
	@$(U) adjudicate $(DEMO_OUT)-brat --to brat --dest $(DEMO_OUT)-brat-gold --force --quiet
	@echo "  adjudicate       majority gold, back in brat            -> $(DEMO_OUT)-brat-gold/annotations/ (review queue: $(DEMO_OUT)-brat/adjudication/review.csv)"
	@$(U) convert-format $(EX)/inception-mini/study.toml --to brat --out $(DEMO_OUT)-inception-as-brat --force --quiet
	@echo "  convert-format   inception-mini (INCEpTION TSV) as brat -> $(DEMO_OUT)-inception-as-brat/annotations/ (with annotation.conf, study.toml)"
	@$(U) convert $(EX)/models-mini/study.toml --out $(DEMO_OUT)-models --quiet
	@$(U) agree $(DEMO_OUT)-models --metric alpha-u,span-f1 --alt-test --min-instances 10 --quiet
	@echo "  agree --alt-test models-mini (3 humans, a model's runs) -> $(DEMO_OUT)-models/agreement/alt_test.csv: can the model replace a human?"
	@$(U) plan $(DEMO_OUT)-models --bootstrap 100 --quiet
	@echo "  plan             how many documents to annotate         -> $(DEMO_OUT)-models/plan/plan.csv (interval widths at 1/2x to 8x the pilot)"
	@$(U) adjudicate $(DEMO_OUT)-models --quiet
	@$(U) estimate $(DEMO_OUT)-models --humans-share 0.5 --quiet
	@echo "  estimate         the model + half the humans (PPI++)    -> $(DEMO_OUT)-models/estimate/estimates.csv (label densities, intervals); stability.csv (its runs)"
	@$(U) convert $(EX)/labels-mini/study.toml --out $(DEMO_OUT)-labels --quiet
	@$(U) agree $(DEMO_OUT)-labels --metric alpha,fleiss,cohen --summary-metric alpha --quiet
	@echo "  convert, agree   labels-mini (flat labels, CSV)         -> $(DEMO_OUT)-labels/agreement/summary.md"
	@$(U) convert $(EX)/inception-mini/study.toml --out $(DEMO_OUT)-inception --quiet
	@$(U) agree $(DEMO_OUT)-inception --quiet
	@$(U) convert $(EX)/crowd-mini/study.toml --out $(DEMO_OUT)-crowd --quiet
	@$(U) agree $(DEMO_OUT)-crowd --metric alpha --summary-metric alpha --quiet
	@$(U) convert $(EX)/bio-mini/study.toml --out $(DEMO_OUT)-bio --quiet
	@$(U) agree $(DEMO_OUT)-bio --quiet
	@echo "  convert, agree   inception-mini, crowd-mini, bio-mini   -> $(DEMO_OUT)-inception/, -crowd/, -bio/: agreement/results.csv each"
	@echo "Look around: $(U) info $(DEMO_OUT); your own data: make shell, then unitize init --format NAME DIR (unitize formats lists them)"

# A shell with .venv/bin on PATH: `unitize` runs as typed in the README (exit to leave).
shell: $(VENV)/.installed $(VENV)/.installed-agree
	@echo "unitize is on PATH in this shell ($(VENV)/bin); type exit to leave."
	@PATH="$(CURDIR)/$(BIN):$$PATH" VIRTUAL_ENV="$(CURDIR)/$(VENV)" $${SHELL:-/bin/sh} -i

# The quality gates first (ruff and mypy on unitize/, configured in pyproject.toml), then the suite.
test: $(VENV)/.installed-test browser
	$(BIN)/ruff check unitize
	$(BIN)/mypy
	$(BIN)/python -m pytest

# A developer's loop: the same gates and the suite without the browser check and the tests on ../shared's real corpora.
test-fast: $(VENV)/.installed-test
	$(BIN)/ruff check unitize
	$(BIN)/mypy
	$(BIN)/python -m pytest --fast -q

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
	rm -rf $(VENV) $(DEMO_OUT) $(EXAMPLES:%=$(DEMO_OUT)-%) .pytest_cache .hypothesis *.egg-info
