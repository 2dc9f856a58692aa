"""aeon-style assertion manifests: validate, evaluate an output, track regression states, bootstrap.

Source: spec 002 (aeon-skill-evals, "Manifest format", "Regression detection", "Bootstrap mode", "Output").

A manifest is a YAML or JSON mapping ``skill name -> assertions``::

    token-movers:
      min_words: 200
      required_patterns: ["Top movers", "24h"]
      forbidden_patterns: ["I cannot", "as an AI"]
      must_cite_source: true
      min_distinct_items: 5
    narrative-tracker:
      required_sections: ["TRANSITIONS", "POSITIONS", "MAP"]
      must_have_position_call: true

Assertion types (:data:`ASSERTION_TYPES`): ``min_words``/``max_words`` (whitespace-separated words),
``required_patterns``/``forbidden_patterns`` (case-insensitive substrings), ``required_sections`` (a markdown
header line ``#..`` whose text contains the section name, case-insensitive), ``must_cite_source`` (an http(s)
URL), ``must_cite_paper`` (an arXiv link/id or a DOI), ``min_distinct_items`` (distinct list items, ``-``/``*``/
``1.`` lines, normalised), ``output_pattern`` (a regex searched over the whole output), custom binary checks
``must_<name>: true`` (built in: :data:`CUSTOM_CHECKS`; or defined per manifest under ``custom_checks: {name:
regex}``), and ``numeric_checks: [{pattern, min, max}]`` (every number captured by the pattern's first group must
lie in [min, max], and at least one must be found).

Regexes from manifests run through the third-party ``regex`` package with a per-call timeout
(:data:`REGEX_TIMEOUT_S`): a catastrophic-backtracking pattern such as ``(a+)+$`` becomes a finding ("timed out")
instead of hanging the run. ``validate`` additionally flags nested quantifiers up front. Chosen over a subprocess
with a timeout (costly per call, no partial results) and over rejecting patterns statically only (a heuristic
misses forms like ``(a|aa)+``).

Regression states per assertion against the prior run, kept in ``evals-state.json`` (written atomically):
``NEW_FAIL`` (passing last run, failing now; severity from the prior pass streak), ``NEW_PASS``, ``CHRONIC``
(failing > 3 consecutive runs after having passed), ``STABLE_FAIL`` (never passed), ``FAIL`` (failing 2–3 runs),
``PASS``.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import regex
import yaml

from evallab import _fileio as F
from evallab._results import Measure, results
from evallab.errors import ManifestError

REGEX_TIMEOUT_S = F.REGEX_TIMEOUT_S
CHRONIC_AFTER = 3  # failing > 3 consecutive runs
BOOTSTRAP_RUNS = 5
LIST_TYPES = ("required_patterns", "forbidden_patterns", "required_sections")
INT_TYPES = ("min_words", "max_words", "min_distinct_items")
BOOL_TYPES = ("must_cite_source", "must_cite_paper")
ASSERTION_TYPES = (*INT_TYPES, *LIST_TYPES, *BOOL_TYPES, "output_pattern", "numeric_checks", "custom_checks",
                   "enabled")
#: built-in custom binary checks (per skill family), name -> regex searched case-insensitively
CUSTOM_CHECKS = {
    "must_have_position_call": r"\b(long|short|buy|sell|hold|overweight|underweight|neutral)\b",
    "must_name_drivers": r"\bdriv(er|ers|en by)\b",
}
#: bootstrap's default forbidden list: refusals, hedging filler, hallucination markers
DEFAULT_FORBIDDEN = ["I cannot", "I can't help", "as an AI", "as a language model", "I'm sorry, but",
                     "I don't have access", "lorem ipsum", "[citation needed]", "TODO", "as of my last update"]
_URL = re.compile(r"https?://\S+", re.I)
_PAPER = re.compile(r"arxiv\.org/(abs|pdf)/\d{4}\.\d{4,5}|\barxiv:\s*\d{4}\.\d{4,5}|\b10\.\d{4,9}/\S+", re.I)
# linear-time: no adjacent unbounded quantifiers, no quantifier that can cross a newline; trailing " #" and blanks
# of a header are trimmed in Python (see _headers)
_HEADER = re.compile(r"^ {0,3}#{1,6}[ \t]+([^\n]*)$", re.M)
_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+([^\n]+)$", re.M)


def _headers(text: str) -> list[str]:
    """Markdown ATX headers of ``text`` (closing ``#``s and blanks trimmed), in linear time."""
    out = []
    for h in _HEADER.findall(text):
        h = h.rstrip(" \t")
        h = h.rstrip("#") if h.endswith("#") and (h.rstrip("#").endswith((" ", "\t")) or not h.rstrip("#")) else h
        out.append(h.strip())
    return [h for h in out if h]


# ----------------------------------------------------------------------------------------------- load/validate
nested_quantifier = F.nested_quantifier


def _compile(p: str, path: str, skill: str, fld: str) -> None:
    try:
        F.compile_regex(p)
    except regex.error as exc:
        raise ManifestError(f"regex {p!r} does not compile: {exc}", path, skill, fld) from None


def parse_manifest(doc: object, path: str = "<memory>") -> dict[str, dict]:
    """Validate a decoded manifest. Returns ``{skill: assertions}`` (``enabled: false`` skills kept).

    Raises
    ------
    ManifestError
        naming the file, the skill and the field: not a mapping, an unknown assertion type, a wrong type (negative
        or non-integer counts, min_words > max_words, a non-list or empty pattern, a non-boolean check), a regex
        that does not compile, a ``must_*`` check with no definition, a bad numeric check.
    """
    if not isinstance(doc, dict) or not doc:
        raise ManifestError(f"top level is {type(doc).__name__}; expected a non-empty mapping skill -> assertions",
                            path)
    out = {}
    for skill, a in doc.items():
        skill = str(skill)
        if not isinstance(a, dict):
            raise ManifestError(f"is {type(a).__name__}; expected a mapping of assertions", path, skill)
        customs = a.get("custom_checks", {}) or {}
        if not isinstance(customs, dict):
            raise ManifestError("expected a mapping name -> regex", path, skill, "custom_checks")
        for k, v in customs.items():
            if not isinstance(v, str) or not v:
                raise ManifestError("expected a non-empty regex string", path, skill, f"custom_checks.{k}")
            _compile(v, path, skill, f"custom_checks.{k}")
        for k, v in a.items():
            if k in INT_TYPES:
                if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                    raise ManifestError(f"{v!r}; expected a non-negative integer", path, skill, k)
            elif k in LIST_TYPES:
                if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
                    raise ManifestError(f"{v!r}; expected a list of non-empty strings", path, skill, k)
            elif k in BOOL_TYPES or k == "enabled":
                if not isinstance(v, bool):
                    raise ManifestError(f"{v!r}; expected true or false", path, skill, k)
            elif k == "output_pattern":
                if not isinstance(v, str) or not v:
                    raise ManifestError(f"{v!r}; expected a regex string", path, skill, k)
                _compile(v, path, skill, k)
            elif k == "numeric_checks":
                if not isinstance(v, list):
                    raise ManifestError("expected a list of {pattern, min, max}", path, skill, k)
                for i, c in enumerate(v):
                    f = f"numeric_checks[{i}]"
                    if not isinstance(c, dict) or not isinstance(c.get("pattern"), str):
                        raise ManifestError("expected {pattern: regex with a number group, min, max}", path,
                                            skill, f)
                    _compile(c["pattern"], path, skill, f"{f}.pattern")
                    for b in ("min", "max"):
                        if b in c and (isinstance(c[b], bool) or not isinstance(c[b], (int, float))):
                            raise ManifestError(f"{c[b]!r}; expected a number", path, skill, f"{f}.{b}")
                    if "min" not in c and "max" not in c:
                        raise ManifestError("needs 'min' and/or 'max'", path, skill, f)
            elif k == "custom_checks":
                pass
            elif k.startswith("must_"):
                if not isinstance(v, bool):
                    raise ManifestError(f"{v!r}; expected true or false", path, skill, k)
                if v and k not in CUSTOM_CHECKS and k not in customs:
                    raise ManifestError(f"custom check {k!r} has no definition; add it under custom_checks "
                                        f"(built in: {sorted(CUSTOM_CHECKS)})", path, skill, k)
            else:
                raise ManifestError(f"unknown assertion type; expected one of {list(ASSERTION_TYPES)} or "
                                    "must_<check>", path, skill, k)
        if isinstance(a.get("min_words"), int) and isinstance(a.get("max_words"), int) and \
                a["min_words"] > a["max_words"]:
            raise ManifestError(f"min_words {a['min_words']} > max_words {a['max_words']}", path, skill,
                                "min_words")
        out[skill] = dict(a)
    return out


def load_manifest(path: str | Path) -> dict[str, dict]:
    """Read a YAML (``.yaml``/``.yml``) or JSON manifest (UTF-8, a byte-order mark accepted).

    Raises
    ------
    ManifestError
        A missing path or one that is not a regular file (directory, FIFO, device: refused before opening); bad
        UTF-8 (line named); a syntax error (line named); a skill name or key given twice (PyYAML and JSON would
        keep the last one silently; the line of both is named for YAML); any error of :func:`parse_manifest`.
    """
    path = Path(path)
    what = "an assertion manifest (mapping skill -> assertions)"
    text = F.read_text(path, what, ManifestError, missing="no such manifest file")
    if path.suffix.lower() == ".json":
        doc = F.parse_json(text, path, what, ManifestError)
    else:
        doc = F.parse_yaml(text, path, what, ManifestError)
    return parse_manifest(doc, str(path))


def lint_manifest(manifest: Mapping[str, dict]) -> list[str]:
    """Warnings that do not make a manifest invalid: regexes with nested quantifiers (catastrophic
    backtracking risk)."""
    out = []
    for skill, a in manifest.items():
        pats = [("output_pattern", a.get("output_pattern"))]
        pats += [(f"custom_checks.{k}", v) for k, v in (a.get("custom_checks") or {}).items()]
        pats += [(f"numeric_checks[{i}].pattern", c.get("pattern")) for i, c in enumerate(a.get("numeric_checks")
                                                                                            or [])]
        for fld, p in pats:
            if isinstance(p, str) and nested_quantifier(p):
                out.append(f"{skill}: {fld}: regex {p!r} nests quantifiers (catastrophic backtracking risk); "
                           f"evaluation is capped at {REGEX_TIMEOUT_S} s")
    return out


# ------------------------------------------------------------------------------------------------- evaluation
@dataclass
class AssertionResult:
    """One assertion on one output. ``passed`` is ``None`` when it could not be evaluated (``error`` says why,
    e.g. a regex timeout)."""

    skill: str
    assertion: str
    type: str
    passed: bool | None
    detail: str = ""
    error: str | None = None


def _search(pattern: str, text: str, flags: int = 0):
    return F.search(pattern, text, flags, timeout=REGEX_TIMEOUT_S)


def evaluate(skill: str, assertions: Mapping, text: str) -> list[AssertionResult]:
    """Evaluate one output text against one skill's assertions (never raises on a regex: a timeout or error is
    an :class:`AssertionResult` with ``passed=None``)."""
    out: list[AssertionResult] = []
    low = text.lower()
    words = len(text.split())

    def add(aid, typ, ok, detail="", error=None):
        out.append(AssertionResult(skill, aid, typ, ok, detail, error))

    def rx(aid, typ, pattern, flags=0, want=True):
        try:
            m = _search(pattern, text, flags)
        except TimeoutError:
            add(aid, typ, None, error=f"regex {pattern!r} timed out after {REGEX_TIMEOUT_S} s (catastrophic "
                                       "backtracking?)")
            return
        add(aid, typ, (m is not None) == want, f"match at {m.start()}" if m else "no match")

    if "min_words" in assertions:
        add("min_words", "min_words", words >= assertions["min_words"], f"{words} words (min "
                                                                          f"{assertions['min_words']})")
    if "max_words" in assertions:
        add("max_words", "max_words", words <= assertions["max_words"], f"{words} words (max "
                                                                          f"{assertions['max_words']})")
    for p in assertions.get("required_patterns", []):
        add(f"required_patterns[{p}]", "required_patterns", p.lower() in low, "present" if p.lower() in low
            else "absent")
    for p in assertions.get("forbidden_patterns", []):
        i = low.find(p.lower())
        add(f"forbidden_patterns[{p}]", "forbidden_patterns", i < 0,
            "absent" if i < 0 else f"matched on line {text.count(chr(10), 0, i) + 1}")
    headers = [h.lower() for h in _headers(text)]
    for sec in assertions.get("required_sections", []):
        ok = any(sec.lower() in h for h in headers)
        add(f"required_sections[{sec}]", "required_sections", ok, "present" if ok else "missing")
    if assertions.get("must_cite_source"):
        add("must_cite_source", "must_cite_source", bool(_URL.search(text)), f"{len(_URL.findall(text))} URL(s)")
    if assertions.get("must_cite_paper"):
        add("must_cite_paper", "must_cite_paper", bool(_PAPER.search(text)), "arXiv/DOI link" if
            _PAPER.search(text) else "no arXiv/DOI link")
    if "min_distinct_items" in assertions:
        items = {re.sub(r"\W+", " ", x).strip().lower() for x in _ITEM.findall(text)} - {""}
        add("min_distinct_items", "min_distinct_items", len(items) >= assertions["min_distinct_items"],
            f"{len(items)} distinct items (min {assertions['min_distinct_items']})")
    if "output_pattern" in assertions:
        rx("output_pattern", "output_pattern", assertions["output_pattern"])
    customs = {**CUSTOM_CHECKS, **(assertions.get("custom_checks") or {})}
    for k, v in assertions.items():
        if k.startswith("must_") and k not in BOOL_TYPES and v:
            rx(f"custom:{k}", "custom", customs[k], regex.I)
    for i, c in enumerate(assertions.get("numeric_checks") or []):
        aid = f"numeric_checks[{i}]"
        try:
            ms = F.finditer(c["pattern"], text, timeout=REGEX_TIMEOUT_S)
        except TimeoutError:
            add(aid, "numeric", None, error=f"regex {c['pattern']!r} timed out after {REGEX_TIMEOUT_S} s")
            continue
        nums = []
        for m in ms:
            g = m.group(1) if m.groups() else m.group(0)
            try:
                nums.append(float(str(g).replace(",", "")))
            except (TypeError, ValueError):
                pass
        lo, hi = c.get("min", -math.inf), c.get("max", math.inf)
        bad = [x for x in nums if not lo <= x <= hi]
        add(aid, "numeric", bool(nums) and not bad,
            f"{len(nums)} number(s); out of [{lo}, {hi}]: {bad[:5]}" if nums else "no number found")
    return out


def results_frame(results: Sequence[AssertionResult]) -> pd.DataFrame:
    cols = ["skill", "assertion", "type", "passed", "detail", "error"]
    return pd.DataFrame([{c: getattr(r, c) for c in cols} for r in results], columns=cols)


# ------------------------------------------------------------------------------------------ regression state
def severity(pass_streak: int) -> str:
    """Severity of a NEW_FAIL from the prior consecutive pass streak: >= 20 high, 5–19 medium, else low."""
    return "high" if pass_streak >= 20 else "medium" if pass_streak >= 5 else "low"


def regression_state(prev: Mapping | None, passed: bool) -> tuple[str, str, dict]:
    """The state of one assertion given its prior record and this run's result.

    ``prev`` = ``{"last", "pass_streak", "fail_streak", "ever_passed", "runs"}`` or ``None`` (first run).
    Returns ``(state, severity, new_record)``; severity is "" except for NEW_FAIL (from the prior pass streak)
    and CHRONIC ("high").
    """
    p = dict(prev or {})
    runs = int(p.get("runs", 0)) + 1
    ps, fs = int(p.get("pass_streak", 0)), int(p.get("fail_streak", 0))
    ever = bool(p.get("ever_passed", False))
    last = p.get("last")
    if passed:
        state, sev = ("NEW_PASS" if last is False else "PASS"), ""
        rec = dict(last=True, pass_streak=ps + 1, fail_streak=0, ever_passed=True, runs=runs)
    else:
        fs2 = fs + 1
        if last is True:
            state, sev = "NEW_FAIL", severity(ps)
        elif not ever:
            state, sev = "STABLE_FAIL", ""
        elif fs2 > CHRONIC_AFTER:
            state, sev = "CHRONIC", "high"
        else:
            state, sev = "FAIL", ""
        rec = dict(last=False, pass_streak=0, fail_streak=fs2, ever_passed=ever, runs=runs,
                   prior_pass_streak=ps if last is True else p.get("prior_pass_streak", 0))
    return state, sev, rec


STATE_VERSION = 1


def load_state(path: str | Path) -> dict:
    """Read ``evals-state.json`` (``{}`` content when the file does not exist).

    Raises
    ------
    ManifestError
        A path that exists but is not a regular file (refused before opening), bad UTF-8, a truncated or
        malformed file — and never overwrites it.
    """
    path = Path(path)
    if not os.path.lexists(path):
        return {"version": STATE_VERSION, "skills": {}}
    text = F.read_text(path, "an evals-state.json file; left untouched", ManifestError)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ManifestError(f"state file is not valid JSON: {exc.msg} (line {exc.lineno}); left untouched — fix "
                            "or move it", str(path)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("skills"), dict):
        raise ManifestError("state file: expected {\"version\", \"skills\": {...}}; left untouched", str(path),
                            field="skills")
    for sk, v in doc["skills"].items():
        if not isinstance(v, dict) or not isinstance(v.get("assertions", {}), dict):
            raise ManifestError("state entry is not {\"assertions\": {...}}; left untouched", str(path), sk,
                                "assertions")
        for aid, r in v.get("assertions", {}).items():
            if not isinstance(r, dict) or not isinstance(r.get("runs", 0), int) or \
                    r.get("last") not in (True, False, None):
                raise ManifestError(f"state of assertion {aid!r} is malformed; left untouched", str(path), sk,
                                    "assertions")
    return doc


def write_state(state: Mapping, path: str | Path) -> Path:
    """Write the state atomically (temp file in the same folder + ``os.replace``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


#: the measures of :attr:`EvalRun.skills`: assertions evaluated per skill, and how many failed or could not be
#: evaluated
SKILL_MEASURES = [
    Measure("assertions", "Assertions", "count", note=None),
    Measure("failed", "Failed", "count", n="assertions", n_unit="assertions", note=None),
    Measure("not_evaluated", "Not evaluated", "count", n="assertions", n_unit="assertions", note=None),
]


@dataclass
class EvalRun:
    """Result of :func:`run_eval`: per-assertion table with states (plain), per-skill summary (a
    :class:`~evallab.Results` with :data:`SKILL_MEASURES`), coverage gaps."""

    results: pd.DataFrame
    skills: pd.DataFrame
    coverage_gaps: list[str] = field(default_factory=list)
    no_output: list[str] = field(default_factory=list)
    lint: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """The aeon-style text summary (spec 002, "Output"): one heading per state, each followed by its own
        details and nothing else's — a failing assertion under FAIL (new or still failing), NEW_PASS, CHRONIC and
        STABLE_FAIL under theirs, and the assertions that could not be evaluated under NOT_EVALUATED."""
        s, res = self.skills, self.results
        lines = [f"Checked {len(s)} skills against their manifests",
                 f"PASS ({int((s['status'] == 'PASS').sum())})"]
        nf = res[res["state"] == "NEW_FAIL"]
        lines.append(f"FAIL ({int((s['status'] == 'FAIL').sum())}; {nf['skill'].nunique()} NEW)")
        for r in nf.itertuples():
            lines.append(f"  {r.skill} — {r.assertion}: {r.detail}; pass streak before failure: "
                         f"{r.prior_pass_streak} runs; severity: {r.severity}")
        still = res[res["state"] == "FAIL"]
        lines += [f"  {r.skill} — {r.assertion}: still failing ({r.fail_streak} consecutive runs)"
                  for r in still.itertuples()]
        npass = res[res["state"] == "NEW_PASS"]
        lines.append(f"NEW_PASS ({npass['skill'].nunique()})")
        lines += [f"  {r.skill} — {r.assertion} back to passing" for r in npass.itertuples()]
        ch = res[res["state"] == "CHRONIC"]
        lines.append(f"CHRONIC ({ch['skill'].nunique()}) — recommend disabling until human review")
        lines += [f"  {r.skill} — failing {r.fail_streak} consecutive runs on {r.assertion}" for r in ch.itertuples()]
        sf = res[res["state"] == "STABLE_FAIL"]
        lines.append(f"STABLE_FAIL ({sf['skill'].nunique()}) — flag the manifest for review")
        lines += [f"  {r.skill} — {r.assertion}: {r.detail}" if r.detail else f"  {r.skill} — {r.assertion}"
                  for r in sf.itertuples()]
        ne = s[s["status"] == "NOT_EVALUATED"]
        err = res[res["passed"].isna()]
        lines.append(f"NOT_EVALUATED ({len(ne)}) — nothing failed but some assertions could not be evaluated")
        lines += [f"  {r.skill} — {r.not_evaluated} of {r.assertions} assertion(s) not evaluated"
                  for r in ne.itertuples()]
        lines += [f"  {r.skill} — {r.assertion}: not evaluated ({r.error})" for r in err.itertuples()]
        lines.append("COVERAGE")
        lines.append(f"  {len(self.coverage_gaps)} skill(s) have no manifest: {', '.join(self.coverage_gaps)}"
                     if self.coverage_gaps else "  every skill with output has a manifest")
        if self.coverage_gaps:
            lines.append("  Run: evallab manifests bootstrap --skill <name> OUTPUTS")
        if self.no_output:
            lines.append(f"  manifest but no output: {', '.join(self.no_output)}")
        return "\n".join(lines)


def find_outputs(outputs_dir: str | Path) -> dict[str, list[Path]]:
    """Outputs per skill under a folder: ``<dir>/<skill>/*`` (sorted by name, then modification time) or a
    single ``<dir>/<skill>.md``/``.txt``. Returns ``{skill: [paths, oldest first]}``."""
    d = Path(outputs_dir)
    if not d.is_dir():
        raise ManifestError("no such outputs folder", str(d))
    out: dict[str, list[Path]] = {}
    for p in sorted(d.iterdir()):
        if p.is_dir():
            files = sorted((f for f in p.iterdir() if f.is_file() and not f.name.startswith(".")),
                           key=lambda f: (f.name, f.stat().st_mtime))
            if files:
                out[p.name] = files
        elif p.suffix in (".md", ".txt") and not p.name.startswith("."):
            out.setdefault(p.stem, []).append(p)
    return out


def run_eval(manifest: Mapping[str, dict], outputs: Mapping[str, str | Path] | None = None, *,
             state_path: str | Path | None, installed: Sequence[str] | None = None, skill: str | None = None,
             save: bool = True, texts: Mapping[str, str] | None = None) -> EvalRun:
    """Evaluate each manifest skill's latest output, update regression states, find coverage gaps.

    Parameters
    ----------
    manifest : ``{skill: assertions}`` from :func:`load_manifest`.
    outputs : ``{skill: path of its latest output}``.
    texts : ``{skill: output text}`` instead of (or on top of) ``outputs``.
    state_path : ``evals-state.json``; read first (a malformed file raises :class:`ManifestError` and is left
        untouched), written once at the end, atomically, when ``save``. ``None`` = no state (every failing
        assertion is STABLE_FAIL/first run).
    installed : every installed skill (default: the keys of ``outputs``); those without a manifest are
        coverage gaps.
    skill : evaluate only this skill (``eval --skill=NAME``).

    Returns
    -------
    EvalRun: ``results`` (a plain table: skill, assertion, type, passed, detail, error, state, severity,
    prior_pass_streak, fail_streak, output) and ``skills`` (a :class:`~evallab.Results`: skill, ``assertions``,
    ``failed``, ``not_evaluated`` — counts, :data:`SKILL_MEASURES` —, status, worst state): ``status`` is
    FAIL when any assertion failed, else NOT_EVALUATED when any could not be evaluated (e.g. a regex timeout), else
    PASS — a skill is never reported PASS on assertions that were not checked.
    An assertion that could not be evaluated keeps its prior state record unchanged.
    """
    state = load_state(state_path) if state_path else {"version": STATE_VERSION, "skills": {}}
    outputs = {**(outputs or {}), **(texts or {})}
    names = [skill] if skill else [s for s in manifest if manifest[s].get("enabled", True) is not False]
    if skill and skill not in manifest:
        raise ManifestError(f"no manifest entry for skill {skill!r}", field=skill)
    rows, no_output = [], []
    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    for sk in names:
        if sk not in outputs:
            no_output.append(sk)
            continue
        if texts and sk in texts:
            p, text = "<text>", texts[sk]
        else:
            p = Path(outputs[sk])
            F.check_file(p, f"the latest output of skill {sk!r} (a text file)", ManifestError)
            try:
                text = p.read_text(encoding="utf-8", errors="replace").removeprefix("\ufeff")
            except OSError as exc:
                raise ManifestError(f"cannot read output: {exc.strerror}", str(p), sk) from None
        st = state["skills"].setdefault(sk, {"assertions": {}})
        for r in evaluate(sk, manifest[sk], text):
            prev = st["assertions"].get(r.assertion)
            row = dict(vars(r), output=str(p))
            if r.passed is None:
                row.update(state="NOT_EVALUATED", severity="", prior_pass_streak=(prev or {}).get("pass_streak", 0),
                           fail_streak=(prev or {}).get("fail_streak", 0))
            else:
                s, sev, rec = regression_state(prev, r.passed)
                st["assertions"][r.assertion] = rec
                row.update(state=s, severity=sev, prior_pass_streak=rec.get("prior_pass_streak", 0) if not r.passed
                           else 0, fail_streak=rec["fail_streak"])
            rows.append(row)
        st["last_run"] = now
        st["last_output"] = str(p)
    cols = ["skill", "assertion", "type", "passed", "detail", "error", "state", "severity", "prior_pass_streak",
            "fail_streak", "output"]
    res = pd.DataFrame(rows, columns=cols)
    order = ["CHRONIC", "NEW_FAIL", "STABLE_FAIL", "FAIL", "NOT_EVALUATED", "NEW_PASS", "PASS"]
    srows = []
    for sk, g in res.groupby("skill", sort=False):
        failed = int(g["passed"].eq(False).sum())
        srows.append(dict(skill=sk, assertions=len(g), failed=failed, not_evaluated=int(g["passed"].isna().sum()),
                          status="FAIL" if failed else "NOT_EVALUATED" if g["passed"].isna().any() else "PASS",
                          worst=min(g["state"], key=order.index)))
    skills_df = results(pd.DataFrame(srows, columns=["skill", "assertions", "failed", "not_evaluated", "status",
                                                     "worst"]), SKILL_MEASURES, keys=["skill"])
    inst = list(installed) if installed is not None else list(outputs)
    gaps = sorted(set(inst) - set(manifest))
    if save and state_path:
        state["version"] = STATE_VERSION
        write_state(state, state_path)
    return EvalRun(res, skills_df, gaps, no_output, lint_manifest({k: manifest[k] for k in names}))


def history(manifest: Mapping[str, dict], runs: Mapping[str, Sequence[str]], *, state_path: str | Path | None = None
            ) -> tuple[pd.DataFrame, EvalRun]:
    """Replay successive runs (``runs[skill][i]`` = the i-th output text, oldest first) through :func:`run_eval`,
    carrying the regression state from run to run (in ``state_path``, or a temporary file).

    Parameters
    ----------
    manifest : Mapping[str, dict]
        From :func:`load_manifest`.
    runs : Mapping[str, sequence of str]
        Skill → its outputs, oldest first (e.g. :func:`~evallab.skills.trial_outputs`).
    state_path : str or Path, optional
        Where the state is kept; ``None``: a temporary file, removed after.

    Returns
    -------
    (timeline, last)
        ``timeline``: a plain table of :func:`run_eval`'s per-assertion results of every run, with a 1-based
        ``run`` column (empty without runs); ``last``: the last run's :class:`EvalRun` (``None`` without runs).
    """
    frames, last = [], None
    with tempfile.TemporaryDirectory() as tmp:
        sp = Path(state_path) if state_path else Path(tmp) / "evals-state.json"
        n = max((len(v) for v in runs.values()), default=0)
        for i in range(n):
            texts = {k: v[i] for k, v in runs.items() if i < len(v)}
            last = run_eval(manifest, state_path=sp, texts=texts, installed=list(runs))
            frames.append(last.results.assign(run=i + 1))
    tl = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return tl, last


# -------------------------------------------------------------------------------------------------- bootstrap
def successful(text: str) -> bool:
    """An output counts as a successful run when it is non-empty and carries no default-forbidden marker."""
    low = text.lower()
    return bool(text.strip()) and not any(p.lower() in low for p in DEFAULT_FORBIDDEN)


def bootstrap(texts: Sequence[str], *, runs: int = BOOTSTRAP_RUNS, min_share: float = 0.6) -> dict:
    """A starter manifest entry from the last ``runs`` successful outputs (spec 002, "Bootstrap mode").

    ``min_words`` = floor of the 25th percentile of their word counts (numpy linear interpolation);
    ``required_sections`` = section headers found in at least ``min_share`` of them (most common first);
    ``forbidden_patterns`` = :data:`DEFAULT_FORBIDDEN`. ``texts`` oldest first. Raises :class:`ManifestError`
    when no successful output is given. The result is for review: callers print it, never save it.
    """
    ok = [t for t in texts if successful(t)][-runs:]
    if not ok:
        raise ManifestError("no successful output to bootstrap from (empty or refusal outputs only)")
    wc = [len(t.split()) for t in ok]
    heads = Counter()
    for t in ok:
        heads.update(_headers(t))
    need = math.ceil(min_share * len(ok))
    sections = [h for h, n in heads.most_common() if n >= need]
    m = {"min_words": int(math.floor(np.percentile(wc, 25)))}
    if sections:
        m["required_sections"] = sections
    m["forbidden_patterns"] = list(DEFAULT_FORBIDDEN)
    return m


def bootstrap_yaml(skill: str, texts: Sequence[str], **kw) -> str:
    """:func:`bootstrap` as YAML text with a review banner (``{skill: {...}}``)."""
    m = bootstrap(texts, **kw)
    n = len([t for t in texts if successful(t)][-kw.get("runs", BOOTSTRAP_RUNS):])
    head = (f"# Proposed manifest for {skill}, bootstrapped from its last {n} successful outputs.\n"
            "# Review before saving: assertions are observations and need a human sign-off.\n")
    return head + yaml.safe_dump({skill: m}, sort_keys=False, allow_unicode=True)


def eval_outputs(manifest: str | Path, outputs_dir: str | Path, *, state_path: str | Path | None = None,
                 skill: str | None = None) -> EvalRun:
    """Evaluate each skill's latest output in a folder against a manifest file (``evallab manifests eval``).

    Parameters
    ----------
    manifest : str or Path
        The manifest, YAML or JSON (:func:`load_manifest`).
    outputs_dir : str or Path
        ``<dir>/<skill>/<run files>`` or ``<dir>/<skill>.md`` (:func:`find_outputs`); each skill's last file is
        its latest output, and every skill found counts as installed (for the coverage gaps).
    state_path : str or Path, optional
        The regression state file, read and then updated (``None``: no state).
    skill : str, optional
        Evaluate this skill only.

    Returns
    -------
    EvalRun
        See :func:`run_eval`.

    Raises
    ------
    ManifestError
        A bad manifest or state file, a missing outputs folder, an unknown ``skill``.
    """
    m = load_manifest(manifest)
    found = find_outputs(outputs_dir)
    return run_eval(m, {k: v[-1] for k, v in found.items()}, state_path=state_path, installed=list(found),
                    skill=skill)


def bootstrap_outputs(outputs_dir: str | Path, skill: str, *, runs: int = BOOTSTRAP_RUNS) -> str:
    """A starter manifest for ``skill`` from its outputs in a folder (``evallab manifests bootstrap``), as YAML
    text with a review banner (:func:`bootstrap_yaml`; never saved).

    Parameters
    ----------
    outputs_dir : str or Path
        ``<dir>/<skill>/<run files>`` or ``<dir>/<skill>.md`` (:func:`find_outputs`), oldest first.
    skill : str
        The skill to bootstrap.
    runs : int, default 5
        Use its last ``runs`` successful outputs.

    Returns
    -------
    str

    Raises
    ------
    ManifestError
        A missing folder, no outputs for ``skill`` (the skills found are named), or no successful output.
    """
    found = find_outputs(outputs_dir)
    if skill not in found:
        raise ManifestError(f"no outputs for skill {skill!r}; found {sorted(found)}", str(outputs_dir))
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in found[skill]]
    return bootstrap_yaml(skill, texts, runs=runs)
