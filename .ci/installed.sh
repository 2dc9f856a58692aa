#!/usr/bin/env bash
# The installed package, as a user gets it (issue 30): build the wheel and sdist from this checkout (`twine check`),
# install the wheel with the pinned constraints into a fresh venv OUTSIDE the checkout, then in an empty temporary
# folder: `evallab init`, `evallab report` (every report ok, offline), `evallab import` + `evallab run` of one
# notebook on the imported table, `evallab --help` for every command — and check that nothing was written under
# site-packages (nor a lock file left in the study). Run by `make test` (make test-installed); needs the checkout's
# .venv (make venv: build, twine and hatchling come with the dev extra). The llama extra is not needed.
#
# Offline: after the install, the runs go through `unshare -rn` (a network namespace with loopback only) when
# allowed, else with every proxy variable pointing at a closed port.
# KEEP=1 keeps the temporary folder.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VPY="${VPY:-$ROOT/.venv/bin/python}"
BASE_PY="$("$VPY" -c 'import sys; print(sys._base_executable)')"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/evallab-installed.XXXXXX")"
case "$TMP" in "$ROOT"/*) echo "installed.sh: temporary folder $TMP is inside the checkout" >&2; exit 1;; esac
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$TMP"' EXIT
t0=$(date +%s)
step() { printf '[installed %4ss] %s\n' "$(( $(date +%s) - t0 ))" "$*"; }

step "build wheel + sdist -> $TMP/dist"
"$VPY" -m build --no-isolation --outdir "$TMP/dist" "$ROOT" >"$TMP/build.log" 2>&1 || { cat "$TMP/build.log"; exit 1; }
"$VPY" -m twine check --strict "$TMP"/dist/*
WHEEL="$(ls "$TMP"/dist/evallab-*.whl)"

step "fresh venv $TMP/venv, pip install $(basename "$WHEEL") -c constraints.txt"
"$BASE_PY" -m venv "$TMP/venv"
BIN="$TMP/venv/bin"
# the dependencies' wheels are kept in a folder keyed by the wheel's requirements and the constraints (the first run
# downloads them, later runs install from it without an index)
KEY="$( ("$VPY" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); m = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]; print("\n".join(l for l in z.read(m[0]).decode().splitlines() if l.startswith("Requires-Dist")))' "$WHEEL"; cat "$ROOT/constraints.txt"; \
        "$BIN/python" -c 'import sys, platform; print(sys.implementation.cache_tag, platform.machine())') \
        | sha256sum | cut -c1-16)"
WH="${EVALLAB_WHEELHOUSE:-${XDG_CACHE_HOME:-$HOME/.cache}/evallab/wheels/installed-$KEY}"
if [ ! -f "$WH/.complete" ]; then
  step "downloading the dependencies into $WH (once)"
  rm -rf "$WH.tmp" && mkdir -p "$WH.tmp"
  "$BIN/python" -m pip download --quiet --disable-pip-version-check -c "$ROOT/constraints.txt" -d "$WH.tmp" "$WHEEL"
  rm -f "$WH.tmp"/evallab-*.whl && touch "$WH.tmp/.complete" && rm -rf "$WH" && mv "$WH.tmp" "$WH"
fi
# pip compiles the bytecode at install; PYTHONDONTWRITEBYTECODE below keeps the runs from adding any, so
# site-packages must stay exactly as pip left it (an uncompiled install is faster to make but twice as slow to run)
"$BIN/python" -m pip install --quiet --disable-pip-version-check --no-index --find-links "$WH" \
  -c "$ROOT/constraints.txt" "$WHEEL"
SITE="$("$BIN/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
touch "$TMP/installed.stamp"
sleep 1

# a user's machine: its own home, caches and state; the checkout is not on any path
export HOME="$TMP/home" XDG_CACHE_HOME="$TMP/home/.cache" XDG_STATE_HOME="$TMP/home/.local/state" \
  XDG_CONFIG_HOME="$TMP/home/.config" XDG_DATA_HOME="$TMP/home/.local/share" MPLBACKEND=Agg PYTHONDONTWRITEBYTECODE=1
unset PYTHONPATH EVALLAB_DATA EVALLAB_REPORTS EVALLAB_CACHE EVALLAB_STATE VIRTUAL_ENV || true
mkdir -p "$HOME"
export PATH="$BIN:$PATH"
OFF=()
if unshare -rn sh -c 'ip link set lo up' 2>/dev/null; then  # no network but loopback (the kernels' sockets)
  OFF=(unshare -rn sh -c 'ip link set lo up && exec "$@"' sh); offline="unshare -rn: loopback only"; else
  export HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 ALL_PROXY=http://127.0.0.1:9 \
    http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 all_proxy=http://127.0.0.1:9 NO_PROXY= no_proxy=
  offline="proxies at a closed port"
fi
run() { "${OFF[@]}" "$@"; }

mkdir -p "$TMP/empty" && cd "$TMP/empty"
step "evallab --version; evallab init study ($offline)"
run evallab --version
run evallab init study
cd study
if run evallab init . >"$TMP/refused.txt" 2>&1; then echo "init over an existing study did not refuse" >&2; exit 1; fi
grep -q "would overwrite" "$TMP/refused.txt"

step "evallab report (every report of the study's reports.yaml)"
run evallab report --jobs "${JOBS:-2}" | tee "$TMP/report.txt"
want="$(grep -c '^- name:' reports.yaml)"
got="$(grep -c '^ok ' "$TMP/report.txt" || true)"
[ "$got" = "$want" ] || { echo "reports ok: $got of $want" >&2; exit 1; }
test -f reports/index.html

step "evallab import (bundled AlpacaEval annotations) + evallab run 01 on the imported table"
FMT="$("$BIN/python" -c 'from evallab.paths import data_dir; print(data_dir("formats"))')"
run evallab import "$FMT/alpaca_eval/alpaca-7b__alpaca_eval_gpt4__annotations.json" --out data/verdicts.csv
run evallab run notebooks/01_judge_agreement.ipynb --out reports/mine --name mine -p verdicts_path data/verdicts.csv \
  -p n_resamples 200
test -f reports/mine/mine.html

step "evallab --help for every command"
"$BIN/python" - <<'EOF'
import subprocess
import sys

import typer.main

from evallab.cli import app

def walk(cmd, path):  # typer's own click: a group is what lists commands
    yield path
    if hasattr(cmd, "list_commands"):
        ctx = cmd.make_context("evallab", [], resilient_parsing=True)
        for name in cmd.list_commands(ctx):
            yield from walk(cmd.get_command(ctx, name), [*path, name])

n = 0
for path in walk(typer.main.get_command(app), []):
    r = subprocess.run(["evallab", *path, "--help"], capture_output=True, text=True)
    if r.returncode != 0 or "Usage:" not in r.stdout:
        sys.exit(f"evallab {' '.join(path)} --help: exit {r.returncode}\n{r.stdout}{r.stderr}")
    n += 1
print(f"{n} help pages: evallab and", ", ".join(" ".join(p) for p in walk(typer.main.get_command(app), []) if p))
EOF

step "nothing written under site-packages, no lock left in the study"
written="$(find "$SITE" -newer "$TMP/installed.stamp" -print)"
[ -z "$written" ] || { echo "written under site-packages:" >&2; echo "$written" >&2; exit 1; }
locks="$(find . -name '*.lock' -o -name '*.lock.owner')"
[ -z "$locks" ] || { echo "lock files left: $locks" >&2; exit 1; }
step "installed package ok"
