# evallab — the README's commands. Each target creates .venv and installs the pinned environment when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CONSTRAINTS := constraints.txt
JOBS ?= 2

.PHONY: report sweep test bench coverage lint clean venv constraints shots chromium

venv: $(STAMP)

$(STAMP): pyproject.toml $(CONSTRAINTS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24" -c $(CONSTRAINTS)
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e ".[dev,dask]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

report: $(STAMP)
	MPLBACKEND=Agg $(BIN)/evallab report --config reports.yaml --out reports --jobs $(JOBS)

# The example parameter sweep (sweeps.yaml: 6 runs of report 04) on a local Dask cluster of 2 worker processes
sweep: $(STAMP)
	MPLBACKEND=Agg $(BIN)/evallab report --config sweeps.yaml --out reports/sweep --local-cluster 2

# Chromium for the browser checks: Debian's package (Playwright's own browser download is not used)
chromium:
	test -x /usr/bin/chromium || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)

# Screenshots of reports/index.html and every report at 1280 px in headless Chromium (reports/shots/*.png), with
# the checks tests/test_browser.py makes printed per page. Run `make report` first.
shots: $(STAMP) chromium
	test -f reports/index.html || $(MAKE) report
	$(BIN)/python -m evallab.reporting.shots reports

test: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m pytest tests

bench: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m benchmarks

# Coverage of every reported interval by simulation from a known truth (benchmarks/coverage.py; ~10 min on 2 cores).
coverage: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m benchmarks.coverage

lint: $(STAMP)
	$(BIN)/ruff check evallab tests benchmarks

clean:
	rm -rf $(VENV) reports/*.html reports/*.ipynb reports/*.json reports/*.tables reports/shots

# Re-pin constraints.txt from the ranges in pyproject.toml (in a throw-away venv), then review the diff.
constraints:
	rm -rf .venv-pin && $(PYTHON) -m venv .venv-pin && .venv-pin/bin/pip install --quiet --upgrade pip
	.venv-pin/bin/pip install --quiet -e ".[dev,dask]"
	(echo "# Pinned environment used by make and CI (pip install -c constraints.txt). Regenerate with: make constraints"; \
	 .venv-pin/bin/pip freeze --exclude-editable | grep -v '^evallab') > constraints.txt
	rm -rf .venv-pin
