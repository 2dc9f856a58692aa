"""MeowKit-style rubric files and composition presets: parse, validate, weighted verdict, anchor-set variants.

Source: MeowKit rubric library (``data/meowkit``; spec "Rubric Library", ``rules/rubric-rules.md``,
``rubrics/schema.md``, ``skill-rubric/references/calibration-guide.md``).

- :func:`parse_rubric`, :func:`parse_preset` — read one file into a :class:`Rubric` / :class:`Preset`, keeping
  the 1-based line of every field, section and anchor.
- :func:`validate_rubric`, :func:`validate_preset`, :func:`validate_library` — every rule a file can show, as
  :class:`RubricFinding` rows naming file, line, code and rule. Upstream ``validate-rubric.sh`` checks: ≤200 lines, the
  5 frontmatter fields in the first 20 lines, name = file name, the section headings in order, ≥1 PASS + ≥1 FAIL
  example (rule 1) with the parity rule (rule 4), ``applies_to`` values, preset weights summing to 1.0 ± 0.01
  (rule 2). evallab adds: PASS/FAIL alternation by example number (rule 5), example numbering and the
  heading-vs-``**Verdict:**`` agreement, the Grading table's PASS/WARN/FAIL rows, non-empty and concrete
  anti-pattern lists (rule 7), instruction-like text (rule 10), the pruned ``frontend-app`` preset (rule 8),
  ``weight_default``/preset weights outside [0, 1], an unknown ``hard_fail_threshold``, a preset naming a rubric
  that does not exist, a rubric listed twice, and a preset rubric whose ``applies_to`` misses the preset's.
  :func:`validate_files` validates any mix of rubric files, preset files and library folders.
- :func:`preset_verdict` — the weighted verdict of a preset with hard-fail propagation (rule 3);
  :func:`score_preset` finds the preset by name or file and validates it first.
- :func:`anchor_set`, :func:`rubric_anchor_set` — anchor-set variants (``none``, ``balanced``,
  ``balanced-fail-first``, ``pass-only``, ``fail-only``, ``fail-last``, ``shuffled-<seed>``), the ids written
  to the verdict table's ``anchor_set`` column.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from evallab import _fileio as F
from evallab.errors import DataError, EvallabError, RubricError
from evallab.paths import data_dir

#: verdict levels in increasing severity (rule 3 compares "at or above")
LEVELS = ("PASS", "WARN", "FAIL")
#: score of each level in the weighted average (PASS 1, WARN 0.5, FAIL 0)
LEVEL_SCORE = {"PASS": 1.0, "WARN": 0.5, "FAIL": 0.0}
THRESHOLDS = ("WARN", "FAIL")
APPLIES_TO = ("frontend", "backend", "fullstack", "cli", "library", "data-pipeline")
RUBRIC_FIELDS = ("name", "version", "weight_default", "applies_to", "hard_fail_threshold")
PRESET_FIELDS = ("name", "version", "applies_to", "description", "rubrics")
SECTIONS = ("Intent", "Criteria", "Grading", "Anti-patterns", "Few-Shot Examples")
MAX_LINES = 200
FRONTMATTER_WITHIN = 20
WEIGHT_TOLERANCE = 0.01
#: rule 8: the pruned default frontend preset (v2.0.0)
FRONTEND_APP_RUBRICS = frozenset({"product-depth", "functionality", "design-quality", "originality"})
#: rule 7: rubrics that must carry a fixed anti-pattern list
ANTI_SLOP_RUBRICS = ("originality", "design-quality")

#: rule 10: instruction-like patterns rejected in rubric text (case-insensitive regular expressions)
INSTRUCTION_PATTERNS = (
    r"\bignore\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|preceding)\s+"
    r"(?:instructions?|prompts?|rules?|messages?)",
    r"\bdisregard\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|preceding|system)\b",
    r"\bforget\s+(?:all\s+|everything\s+)?(?:the\s+)?(?:previous|prior|above)\s+instructions?",
    r"\byou\s+are\s+now\b",
    r"\bnew\s+instructions?\s*:",
    r"\b(?:reveal|print|show)\s+(?:your|the)\s+system\s+prompt",
    r"\b(?:always|must)\s+(?:return|answer|respond(?:\s+with)?|output|grade)\s+[\"'`*]*pass\b",
    r"\bact\s+as\s+(?:an?\s+)?(?:different|new|unrestricted)\b",
    r"<\s*/?\s*(?:system|assistant)\s*>",
    r"\boverride\s+(?:the\s+)?(?:rubric|grading|verdict|instructions?)\b",
)
_INSTRUCTION_RE = [re.compile(p, re.IGNORECASE) for p in INSTRUCTION_PATTERNS]
#: rule 7: subjective wording that makes an anti-pattern a judgment call instead of a fixed signature
VAGUE_ANTI_PATTERN = re.compile(
    r"\b(?:feels?|vibes?|looks\s+(?:generic|bad|off|ugly|cheap|meh|wrong)|not\s+great|could\s+be\s+better|"
    r"somewhat|kind\s+of|sort\s+of|maybe|might|if\s+appropriate|at\s+the\s+evaluator'?s\s+discretion)\b",
    re.IGNORECASE)
_EXAMPLE_RE = re.compile(r"^###\s+Example\s+(\S+)\s*(?:—|–|-|:)\s*([A-Za-z]+)\b(.*)$")
_SEMVER_RE = re.compile(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$")
_KEBAB_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class RubricFinding:
    """One rule violation in a rubric or preset file.

    Attributes
    ----------
    path : the file.
    line : 1-based line where the problem shows (the heading, field or anchor), or 0 for the whole file.
    code : stable short id, e.g. ``anchor-parity``, ``weight-sum``, ``unknown-rubric`` (see :data:`CODES`).
    rule : the rule it enforces: ``R1``..``R10`` (rubric-rules.md), ``schema`` (schema.md) or ``evallab``
        (an addition over upstream).
    message : what is wrong and what was expected.
    """

    path: str
    line: int
    code: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: [{self.code}/{self.rule}] {self.message}"


#: finding code -> rule it enforces
CODES = {
    "file-too-long": "schema", "frontmatter-missing": "schema", "frontmatter-yaml": "schema",
    "field-missing": "schema", "field-late": "schema", "name-mismatch": "schema", "name-not-kebab": "schema",
    "version-not-semver": "schema", "weight-out-of-range": "evallab", "applies-to-invalid": "schema",
    "unknown-threshold": "evallab", "title-missing": "schema", "title-multiple": "schema",
    "section-missing": "schema", "section-order": "schema", "grading-incomplete": "evallab",
    "anti-patterns-empty": "R7", "anti-pattern-vague": "R7", "anchor-verdicts": "R1", "anchor-parity": "R4",
    "anchor-alternation": "R5", "anchor-numbering": "evallab", "anchor-verdict-mismatch": "evallab",
    "anchor-fields": "evallab", "instruction-like": "R10", "weight-sum": "R2", "unknown-rubric": "evallab",
    "duplicate-rubric": "evallab", "rubric-not-applicable": "evallab", "frontend-app-pruned": "R8",
    "rubrics-empty": "schema",
}


@dataclass(frozen=True)
class RubricAnchor:
    """One few-shot example of a rubric: ``### Example <number> — <verdict>``.

    ``verdict`` is the heading's level upper-cased (``PASS``/``WARN``/``FAIL``); ``stated`` the ``**Verdict:**``
    line's value ('' when absent); ``text`` the example body (Artifact/Verdict/Reasoning lines); ``line`` the
    heading's 1-based line.
    """

    number: str
    verdict: str
    text: str
    line: int
    stated: str = ""


@dataclass
class Rubric:
    """A parsed rubric file (schema.md). ``lines`` maps field/section names to their 1-based line."""

    path: str
    meta: dict
    title: str
    sections: dict[str, str]
    anchors: list[RubricAnchor]
    anti_patterns: list[str]
    grading: dict[str, str]
    lines: dict[str, int] = field(default_factory=dict)
    n_lines: int = 0

    @property
    def name(self) -> str:
        return str(self.meta.get("name", Path(self.path).stem))

    @property
    def weight_default(self) -> float:
        return float(self.meta.get("weight_default", float("nan")))

    @property
    def hard_fail_threshold(self) -> str:
        return str(self.meta.get("hard_fail_threshold", "FAIL")).upper()

    @property
    def applies_to(self) -> list[str]:
        v = self.meta.get("applies_to") or []
        return [str(x) for x in v] if isinstance(v, list) else [str(v)]

    def criteria(self) -> list[str]:
        """The ``## Criteria`` bullets."""
        return _bullets(self.sections.get("Criteria", ""))


@dataclass
class Preset:
    """A parsed composition preset: ``rubrics`` as (name, weight, line) in file order."""

    path: str
    meta: dict
    rubrics: list[tuple[str, float, int]]
    lines: dict[str, int] = field(default_factory=dict)
    body: str = ""

    @property
    def name(self) -> str:
        return str(self.meta.get("name", Path(self.path).stem))

    @property
    def weights(self) -> dict[str, float]:
        return {n: w for n, w, _ in self.rubrics}


# --------------------------------------------------------------------------------------------- parsing
def _read(path: str | Path) -> list[str]:
    """Lines of a rubric/preset file: a regular UTF-8 file, byte-order mark accepted. Raises :class:`RubricError`
    (missing, not a regular file — refused before opening —, unreadable, bad UTF-8 with its line)."""
    return F.read_text(path, "a rubric or preset markdown file", RubricError,
                       missing="file not found; expected a rubric or preset markdown file").splitlines()


def _frontmatter(lines: list[str], path: str) -> tuple[dict | None, dict[str, int], int, list[RubricFinding]]:
    """(meta, key->line, index of the line after the closing ---, findings)."""
    if not lines or lines[0].strip() != "---":
        return None, {}, 0, [_f(path, 1, "frontmatter-missing",
                                "no YAML frontmatter: the file must start with a '---' line")]
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        return None, {}, 0, [_f(path, 1, "frontmatter-missing", "frontmatter opened with '---' is never closed")]
    text = "\n".join(lines[1:end])
    try:
        meta = yaml.load(text, Loader=F._yaml_loader()) or {}  # noqa: S506 - SafeLoader refusing repeated keys
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        problem = getattr(exc, "problem", exc)
        if isinstance(problem, str) and "(first on line " in problem:  # a repeated key: lines of the file
            problem = re.sub(r"\(first on line (\d+)\)", lambda m: f"(first on line {int(m.group(1)) + 1})",
                             problem)
        return None, {}, end + 1, [_f(path, line, "frontmatter-yaml", f"frontmatter is not valid YAML: "
                                                                     f"{problem}")]
    if not isinstance(meta, dict):
        return None, {}, end + 1, [_f(path, 2, "frontmatter-yaml", "frontmatter must be a YAML mapping")]
    keys = {}
    for i in range(1, end):
        m = re.match(r"^([A-Za-z_][\w-]*)\s*:", lines[i])
        if m and m.group(1) not in keys:
            keys[m.group(1)] = i + 1
    return meta, keys, end + 1, []


def _f(path: str, line: int, code: str, message: str) -> RubricFinding:
    return RubricFinding(str(path), int(line), code, CODES[code], message)


def _bullets(text: str) -> list[str]:
    return [ln.strip()[2:].strip() for ln in text.splitlines() if re.match(r"^\s*[-*]\s+\S", ln)]


def _body(lines: list[str], start: int) -> tuple[str, list[tuple[int, str]], dict[str, int], dict[str, str],
                                                   list[tuple[int, str]]]:
    """Headings outside code fences: (title, h1 list, section->line, section->text, h3 list)."""
    h1: list[tuple[int, str]] = []
    h2: list[tuple[int, str]] = []
    h3: list[tuple[int, str]] = []
    fence = False
    for i in range(start, len(lines)):
        s = lines[i]
        if s.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        if s.startswith("# "):
            h1.append((i + 1, s[2:].strip()))
        elif s.startswith("## "):
            h2.append((i + 1, s[3:].strip()))
        elif s.startswith("### "):
            h3.append((i + 1, s))
    sec_line: dict[str, int] = {}
    sec_text: dict[str, str] = {}
    for j, (ln, name) in enumerate(h2):
        stop = h2[j + 1][0] - 1 if j + 1 < len(h2) else len(lines)
        if name not in sec_line:
            sec_line[name] = ln
            sec_text[name] = "\n".join(lines[ln:stop])
    return (h1[0][1] if h1 else ""), h1, sec_line, sec_text, h3


def parse_rubric(path: str | Path) -> Rubric:
    """Parse a rubric file (schema.md) without judging it; see :func:`validate_rubric` for the rules.

    Raises
    ------
    RubricError
        When the file is missing or not UTF-8. A missing or broken frontmatter gives ``meta == {}``.
    """
    path = str(path)
    lines = _read(path)
    meta, keys, start, _ = _frontmatter(lines, path)
    title, _h1, sec_line, sec_text, _h3 = _body(lines, start)
    anchors = _anchors(lines, sec_line, sec_text)
    grading = {}
    for ln in sec_text.get("Grading", "").splitlines():
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].strip("* ").upper() in LEVELS:
            grading[cells[0].strip("* ").upper()] = cells[1]
    lines_map = dict(keys)
    lines_map.update({f"## {k}": v for k, v in sec_line.items()})
    return Rubric(path, meta or {}, title, sec_text, anchors, _bullets(sec_text.get("Anti-patterns", "")),
                  grading, lines_map, len(lines))


def _anchors(lines: list[str], sec_line: dict[str, int], sec_text: dict[str, str]) -> list[RubricAnchor]:
    if "Few-Shot Examples" not in sec_line:
        return []
    first = sec_line["Few-Shot Examples"]  # 1-based line of the heading; body starts at index `first`
    body = sec_text["Few-Shot Examples"].splitlines()
    out = []
    heads = [(k, m) for k, ln in enumerate(body) if (m := _EXAMPLE_RE.match(ln))]
    for j, (k, m) in enumerate(heads):
        stop = heads[j + 1][0] if j + 1 < len(heads) else len(body)
        text = "\n".join(body[k + 1:stop]).strip()
        stated = re.search(r"\*\*Verdict:\*\*\s*([A-Za-z]+)", text)
        out.append(RubricAnchor(m.group(1), m.group(2).upper(), text, first + 1 + k,
                                stated.group(1).upper() if stated else ""))
    return out


def parse_preset(path: str | Path) -> Preset:
    """Parse a composition preset (schema.md "Composition Preset Schema").

    Raises
    ------
    RubricError
        When the file is missing or not UTF-8. Malformed ``rubrics`` entries are kept with weight NaN.
    """
    path = str(path)
    lines = _read(path)
    meta, keys, start, _ = _frontmatter(lines, path)
    meta = meta or {}
    entry_lines = [i + 1 for i in range(start) if re.match(r"^\s*-\s*name\s*:", lines[i])]
    rubrics = []
    raw = meta.get("rubrics") or []
    if isinstance(raw, list):
        for j, r in enumerate(raw):
            ln = entry_lines[j] if j < len(entry_lines) else keys.get("rubrics", 1)
            if isinstance(r, dict):
                w = r.get("weight")
                try:
                    w = float(w)
                except (TypeError, ValueError):
                    w = float("nan")
                rubrics.append((str(r.get("name", "")), w, ln))
            else:
                rubrics.append((str(r), float("nan"), ln))
    return Preset(path, meta, rubrics, dict(keys), "\n".join(lines[start:]))


# --------------------------------------------------------------------------------------------- validation
def _instruction_findings(path: str, lines: list[str]) -> list[RubricFinding]:
    out = []
    for i, ln in enumerate(lines):
        for rx in _INSTRUCTION_RE:
            m = rx.search(ln)
            if m:
                out.append(_f(path, i + 1, "instruction-like",
                              f"instruction-like text {m.group(0)!r}: rubric files are DATA, not instructions "
                              f"(rule 10)"))
                break
    return out


def _check_applies_to(path: str, value, line: int) -> list[RubricFinding]:
    if not isinstance(value, list) or not value:
        return [_f(path, line, "applies-to-invalid", f"applies_to must be a non-empty list from {list(APPLIES_TO)}; "
                                                    f"got {value!r}")]
    bad = [v for v in value if str(v) not in APPLIES_TO]
    if bad:
        return [_f(path, line, "applies-to-invalid", f"unknown applies_to value(s) {bad}; expected values from "
                                                    f"{list(APPLIES_TO)}")]
    return []


def validate_rubric(path: str | Path) -> list[RubricFinding]:
    """Check one rubric file against every rule a file can show.

    Returns
    -------
    list of RubricFinding, in line order; empty when the file is clean.

    Raises
    ------
    RubricError
        When the file is missing or not UTF-8 text.
    """
    path = str(path)
    lines = _read(path)
    meta, keys, start, out = _frontmatter(lines, path)
    if len(lines) > MAX_LINES:
        out.append(_f(path, MAX_LINES + 1, "file-too-long", f"{len(lines)} lines; a rubric file must be "
                                                            f"≤{MAX_LINES} lines"))
    out += _instruction_findings(path, lines)
    if meta is not None:
        for k in RUBRIC_FIELDS:
            if k not in meta:
                out.append(_f(path, 1, "field-missing", f"frontmatter field '{k}' is missing; required: "
                                                        f"{list(RUBRIC_FIELDS)}"))
            elif keys.get(k, 0) > FRONTMATTER_WITHIN:
                out.append(_f(path, keys[k], "field-late", f"frontmatter field '{k}' must be within the first "
                                                           f"{FRONTMATTER_WITHIN} lines"))
        stem = Path(path).stem
        if "name" in meta:
            if str(meta["name"]) != stem:
                out.append(_f(path, keys.get("name", 1), "name-mismatch",
                              f"name '{meta['name']}' must equal the file name without .md ('{stem}')"))
            elif not _KEBAB_RE.match(stem):
                out.append(_f(path, keys.get("name", 1), "name-not-kebab", f"name '{stem}' must be kebab-case"))
        if "version" in meta and not _SEMVER_RE.match(str(meta["version"])):
            out.append(_f(path, keys.get("version", 1), "version-not-semver",
                          f"version {meta['version']!r} is not SemVer (e.g. 1.0.0)"))
        if "weight_default" in meta:
            w = meta["weight_default"]
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not 0.0 <= float(w) <= 1.0:
                out.append(_f(path, keys.get("weight_default", 1), "weight-out-of-range",
                              f"weight_default {w!r} must be a number in [0.0, 1.0]"))
        if "applies_to" in meta:
            out += _check_applies_to(path, meta["applies_to"], keys.get("applies_to", 1))
        if "hard_fail_threshold" in meta and str(meta["hard_fail_threshold"]) not in THRESHOLDS:
            out.append(_f(path, keys.get("hard_fail_threshold", 1), "unknown-threshold",
                          f"hard_fail_threshold {meta['hard_fail_threshold']!r} is unknown; expected one of "
                          f"{list(THRESHOLDS)}"))
    title, h1, sec_line, sec_text, _h3 = _body(lines, start)
    if not h1:
        out.append(_f(path, start + 1, "title-missing", "no '# Title' heading; a rubric has a single H1"))
    elif len(h1) > 1:
        out.append(_f(path, h1[1][0], "title-multiple", f"second H1 '{h1[1][1]}'; a rubric has a single H1"))
    present = [s for s in SECTIONS if s in sec_line]
    for s in SECTIONS:
        if s not in sec_line:
            out.append(_f(path, len(lines), "section-missing", f"required section '## {s}' is missing; required "
                                                               f"in order: {list(SECTIONS)}"))
    seen = sorted(present, key=lambda s: sec_line[s])
    if seen != present:
        bad = next(s for s, e in zip(seen, present, strict=True) if s != e)
        out.append(_f(path, sec_line[bad], "section-order",
                      f"section '## {bad}' is out of order; required order: {list(SECTIONS)}"))
    rub = parse_rubric(path) if meta is not None or sec_line else None
    if "Grading" in sec_line and rub is not None:
        missing = [lv for lv in LEVELS if lv not in rub.grading]
        if missing:
            out.append(_f(path, sec_line["Grading"], "grading-incomplete",
                          f"the Grading table has no {missing} row(s); it needs PASS, WARN and FAIL definitions"))
    if "Anti-patterns" in sec_line and rub is not None:
        ap_line = sec_line["Anti-patterns"]
        if not rub.anti_patterns:
            extra = " (rule 7: this rubric's anti-slop list is fixed)" if Path(path).stem in ANTI_SLOP_RUBRICS else ""
            out.append(_f(path, ap_line, "anti-patterns-empty", "the Anti-patterns section has no bullet; it needs "
                                                                "a fixed list of named auto-FAIL signatures" + extra))
        body = sec_text["Anti-patterns"].splitlines()
        for k, ln in enumerate(body):
            if not re.match(r"^\s*[-*]\s+\S", ln):
                continue
            item = ln.strip()[2:].strip()
            words = re.findall(r"[\w`'\"{}/<>.-]+", item)
            m = VAGUE_ANTI_PATTERN.search(item)
            if len(words) < 3 or m:
                why = f"subjective wording {m.group(0)!r}" if m else "fewer than 3 words"
                out.append(_f(path, ap_line + 1 + k, "anti-pattern-vague",
                              f"anti-pattern {item!r} is not a fixed, concrete signature ({why}); rule 7 wants "
                              f"deterministic patterns"))
    if "Few-Shot Examples" in sec_line and rub is not None:
        out += _anchor_findings(path, rub, sec_line["Few-Shot Examples"])
    return sorted(out, key=lambda f: (f.line, f.code))


def _anchor_findings(path: str, rub: Rubric, sec: int) -> list[RubricFinding]:
    out = []
    a = rub.anchors
    n_pass = sum(x.verdict == "PASS" for x in a)
    n_fail = sum(x.verdict == "FAIL" for x in a)
    if n_pass == 0 or n_fail == 0:
        out.append(_f(path, sec, "anchor-verdicts", f"{n_pass} PASS and {n_fail} FAIL examples; rule 1 needs at least "
                                                    f"one of each"))
    elif (n_pass + n_fail < 4 and abs(n_pass - n_fail) > 1) or (n_pass + n_fail >= 4 and n_pass != n_fail):
        need = "equal counts at 4+ anchors" if n_pass + n_fail >= 4 else "counts within ±1 under 4 anchors"
        out.append(_f(path, sec, "anchor-parity", f"{n_pass} PASS vs {n_fail} FAIL examples; rule 4 needs {need}"))
    for x in a:
        if x.verdict not in LEVELS:
            out.append(_f(path, x.line, "anchor-verdict-mismatch",
                          f"Example {x.number} has verdict {x.verdict!r}; expected PASS, WARN or FAIL"))
        elif x.stated and x.stated != x.verdict:
            out.append(_f(path, x.line, "anchor-verdict-mismatch",
                          f"Example {x.number} heading says {x.verdict} but its **Verdict:** line says {x.stated}"))
        missing = [k for k in ("Artifact", "Verdict", "Reasoning") if f"**{k}:**" not in x.text]
        if missing:
            out.append(_f(path, x.line, "anchor-fields", f"Example {x.number} lacks {['**' + m + ':**' for m in missing]}"
                                                         f"; each anchor needs Artifact, Verdict and Reasoning"))
    nums = [x.number for x in a]
    if nums and nums != [str(i) for i in range(1, len(nums) + 1)]:
        bad = next((x for i, x in enumerate(a) if x.number != str(i + 1)), a[0])
        out.append(_f(path, bad.line, "anchor-numbering", f"examples are numbered {nums}; expected 1, 2, 3, ... in "
                                                          f"order"))
    else:
        for i, x in enumerate(a[:4]):  # calibration guide: examples 1-4 must alternate; a 5th may break it
            want = "PASS" if i % 2 == 0 else "FAIL"
            if x.verdict in ("PASS", "FAIL") and x.verdict != want:
                out.append(_f(path, x.line, "anchor-alternation",
                              f"Example {x.number} is {x.verdict}; rule 5 alternates by number (odd = PASS, "
                              f"even = FAIL) for examples 1-4"))
                break
    return out


def validate_preset(path: str | Path, rubrics_dir: str | Path | None = None) -> list[RubricFinding]:
    """Check one composition preset.

    Parameters
    ----------
    path : the preset file.
    rubrics_dir : folder holding the rubric files it may name; default the preset's parent's parent
        (``rubrics/composition-presets/x.md`` → ``rubrics/``).

    Returns
    -------
    list of RubricFinding; empty when clean.
    """
    path = str(path)
    lines = _read(path)
    meta, keys, start, out = _frontmatter(lines, path)
    out += _instruction_findings(path, lines)
    rdir = Path(rubrics_dir) if rubrics_dir is not None else Path(path).resolve().parent.parent
    if meta is None:
        return out
    pre = parse_preset(path)
    for k in PRESET_FIELDS:
        if k not in meta:
            out.append(_f(path, 1, "field-missing", f"preset field '{k}' is missing; required: {list(PRESET_FIELDS)}"))
    stem = Path(path).stem
    if "name" in meta and str(meta["name"]) != stem:
        out.append(_f(path, keys.get("name", 1), "name-mismatch",
                      f"name '{meta['name']}' must equal the file name without .md ('{stem}')"))
    if "version" in meta and not _SEMVER_RE.match(str(meta["version"])):
        out.append(_f(path, keys.get("version", 1), "version-not-semver",
                      f"version {meta['version']!r} is not SemVer (e.g. 1.0.0)"))
    if "applies_to" in meta:
        out += _check_applies_to(path, meta["applies_to"], keys.get("applies_to", 1))
    if "rubrics" in meta and not pre.rubrics:
        out.append(_f(path, keys.get("rubrics", 1), "rubrics-empty", "rubrics must be a non-empty list of "
                                                                     "{name, weight}"))
    seen: set[str] = set()
    total = 0.0
    weights_ok = True
    pre_apply = set(str(x) for x in meta.get("applies_to") or []) if isinstance(meta.get("applies_to"), list) else set()
    for name, w, ln in pre.rubrics:
        if name in seen:
            out.append(_f(path, ln, "duplicate-rubric", f"rubric '{name}' is listed twice"))
        seen.add(name)
        if not np.isfinite(w) or not 0.0 < w <= 1.0:
            weights_ok = False
            out.append(_f(path, ln, "weight-out-of-range", f"weight of '{name}' is {w!r}; expected a number in "
                                                           f"(0.0, 1.0]"))
        else:
            total += w
        rfile = rdir / f"{name}.md"
        if not name or not rfile.is_file():
            out.append(_f(path, ln, "unknown-rubric", f"rubric '{name}' does not exist (no {rfile})"))
        elif pre_apply:
            try:
                r = parse_rubric(rfile)
                if r.applies_to and not pre_apply & set(r.applies_to):
                    out.append(_f(path, ln, "rubric-not-applicable",
                                  f"rubric '{name}' applies to {r.applies_to}, none of the preset's "
                                  f"{sorted(pre_apply)}"))
            except RubricError:
                pass
    if pre.rubrics and weights_ok and abs(total - 1.0) > WEIGHT_TOLERANCE + 1e-9:
        out.append(_f(path, keys.get("rubrics", 1), "weight-sum",
                      f"weights sum to {total:.4g}; rule 2 needs 1.0 ± {WEIGHT_TOLERANCE}"))
    if stem == "frontend-app" and pre.rubrics and set(seen) != FRONTEND_APP_RUBRICS:
        out.append(_f(path, keys.get("rubrics", 1), "frontend-app-pruned",
                      f"frontend-app loads {sorted(seen)}; rule 8 fixes it to {sorted(FRONTEND_APP_RUBRICS)}"))
    return sorted(out, key=lambda f: (f.line, f.code))


def library_files(root: str | Path | None = None) -> tuple[list[Path], list[Path]]:
    """Rubric files and preset files of a library folder (default the bundled ``data/meowkit/rubrics``).

    Rubric files are ``<root>/*.md`` except ``schema.md`` and ``RUBRICS_INDEX.md``; presets are
    ``<root>/composition-presets/*.md``.

    Raises
    ------
    RubricError
        ``root`` missing or not a folder, or a ``composition-presets`` that exists but is not a folder.
    """
    root = Path(root) if root else data_dir("meowkit") / "rubrics"
    F.check_folder(root, "a folder of rubric .md files", RubricError,
                   missing="rubric library folder not found; expected a folder of rubric .md files")
    if os.path.lexists(root / "composition-presets"):
        F.check_folder(root / "composition-presets", "a folder of composition preset .md files", RubricError)
    skip = {"schema.md", "RUBRICS_INDEX.md", "README.md"}
    rubrics = sorted(p for p in root.glob("*.md") if p.name not in skip)
    presets = sorted((root / "composition-presets").glob("*.md"))
    return rubrics, presets


def findings_table(findings: Iterable[RubricFinding]) -> pd.DataFrame:
    """Findings as a DataFrame with columns path, line, code, rule, message."""
    rows = [f.__dict__ for f in findings]
    return pd.DataFrame(rows, columns=["path", "line", "code", "rule", "message"])


def validate_library(root: str | Path | None = None) -> pd.DataFrame:
    """Validate every rubric and preset of a library folder; return :func:`findings_table` (empty = clean)."""
    rubrics, presets = library_files(root)
    root = Path(root) if root else data_dir("meowkit") / "rubrics"
    found: list[RubricFinding] = []
    for p in rubrics:
        found += validate_rubric(p)
    for p in presets:
        found += validate_preset(p, root)
    return findings_table(found)


@dataclass
class Library:
    """The parsed rubric library: rubrics and presets by name."""

    rubrics: dict[str, Rubric]
    presets: dict[str, Preset]


def load_library(root: str | Path | None = None, *, strict: bool = True) -> Library:
    """Parse every rubric and preset of a library folder.

    Raises
    ------
    RubricError
        With ``strict`` (default), when any file has a finding (the first one is named; see
        :func:`validate_library` for all). Always: a missing library folder, a file that is not a regular UTF-8
        file, and two rubrics (or two presets) with the same ``name`` — both files named, since one would
        silently replace the other.
    """
    if strict:
        t = validate_library(root)
        if len(t):
            f = t.iloc[0]
            raise RubricError(f"[{f['code']}/{f['rule']}] {f['message']} ({len(t)} finding(s) in the library)",
                              path=str(f["path"]), row=int(f["line"]))
    rubrics, presets = library_files(root)
    return Library(_by_name(map(parse_rubric, rubrics), "rubric"), _by_name(map(parse_preset, presets), "preset"))


def _by_name(parsed: Iterable[Rubric | Preset], what: str) -> dict:
    """Parsed files by ``name``; a name used twice is refused, naming both files."""
    out: dict = {}
    for x in parsed:
        if x.name in out:
            raise RubricError(f"duplicated {what} name {x.name!r}: also used by {out[x.name].path}; expected one "
                              f"{what} per name", path=x.path, row=x.lines.get("name"), column="name")
        out[x.name] = x
    return out


# --------------------------------------------------------------------------------------------- verdict
@dataclass
class PresetVerdict:
    """The overall verdict of a preset.

    Attributes
    ----------
    verdict : ``PASS``/``WARN``/``FAIL``.
    score : weighted average of the rubric scores (PASS 1, WARN 0.5, FAIL 0), in [0, 1].
    hard_failed : rubrics whose verdict is at or above their ``hard_fail_threshold`` (rule 3).
    table : one row per rubric: rubric, weight, verdict, score, hard_fail_threshold, hard_fail.
    """

    verdict: str
    score: float
    hard_failed: list[str]
    table: pd.DataFrame


def preset_verdict(preset: Preset, verdicts: Mapping[str, str], rubrics: Mapping[str, Rubric] | None = None, *,
                   pass_at: float = 0.8, warn_at: float = 0.5) -> PresetVerdict:
    """Weighted verdict of a composition with hard-fail propagation (spec "Hard-Fail Propagation", rule 3).

    Any rubric whose verdict is at or above its ``hard_fail_threshold`` (order PASS < WARN < FAIL) makes the
    whole FAIL, whatever the weighted average. Otherwise the weighted score (PASS 1, WARN 0.5, FAIL 0) gives
    PASS when ≥ ``pass_at``, WARN when ≥ ``warn_at``, else FAIL — these two cut points are evallab's defaults
    (MeowKit fixes only the hard-fail rule).

    Parameters
    ----------
    preset : the composition.
    verdicts : rubric name → ``PASS``/``WARN``/``FAIL`` (case-insensitive) for every rubric of the preset.
    rubrics : parsed rubrics by name (their ``hard_fail_threshold``, default ``FAIL`` when the field is absent);
        default the bundled library. Every rubric of the preset must be here.

    Raises
    ------
    RubricError
        Naming the preset file and the rubric's line in it: when a preset rubric has no verdict, a verdict is not
        PASS/WARN/FAIL, the rubric is not in ``rubrics`` (a preset naming a missing rubric is never silently
        given a threshold), or its ``hard_fail_threshold`` is not one of :data:`THRESHOLDS`.
    """
    if rubrics is None:
        rubrics = load_library(strict=False).rubrics
    rows = []
    for name, w, ln in preset.rubrics:
        if name not in verdicts:
            raise RubricError(f"no verdict for rubric '{name}'; expected one for each of {list(preset.weights)}",
                              path=preset.path, row=ln)
        v = str(verdicts[name]).upper()
        if v not in LEVELS:
            raise RubricError(f"verdict {verdicts[name]!r} for '{name}' is unknown; expected one of {list(LEVELS)}",
                              path=preset.path, row=ln)
        if name not in rubrics:
            raise RubricError(f"rubric '{name}' is not in the rubric library ({len(rubrics)} rubric(s): "
                              f"{sorted(rubrics)}); expected a rubric file '{name}.md' for each preset rubric",
                              path=preset.path, row=ln)
        r = rubrics[name]
        thr = r.hard_fail_threshold
        if thr not in THRESHOLDS:
            at = f"{r.path}:{r.lines.get('hard_fail_threshold', 1)}"
            raise RubricError(f"rubric '{name}' has hard_fail_threshold {r.meta.get('hard_fail_threshold')!r} "
                              f"({at}); expected one of {list(THRESHOLDS)}", path=preset.path, row=ln)
        rows.append(dict(rubric=name, weight=w, verdict=v, score=LEVEL_SCORE[v], hard_fail_threshold=thr,
                         hard_fail=LEVELS.index(v) >= LEVELS.index(thr)))
    t = pd.DataFrame(rows)
    wsum = float(t["weight"].sum())
    score = float((t["weight"] * t["score"]).sum() / wsum) if wsum > 0 else float("nan")
    hard = t.loc[t["hard_fail"], "rubric"].tolist()
    if hard:
        verdict = "FAIL"
    else:
        verdict = "PASS" if score >= pass_at else "WARN" if score >= warn_at else "FAIL"
    return PresetVerdict(verdict, score, hard, t)


def _is_preset(path: Path) -> bool:
    """A preset file (in a ``composition-presets`` folder, or with a ``rubrics:`` list near its top), not a rubric."""
    return path.parent.name == "composition-presets" or "rubrics:" in path.read_text(encoding="utf-8")[:2000]


def validate_files(paths: Sequence[str | Path] | None = None, *, rubrics_dir: str | Path | None = None
                   ) -> list[RubricFinding]:
    """Validate rubric files, preset files and library folders (``evallab rubrics validate``).

    Parameters
    ----------
    paths : sequence of str or Path, optional
        Each a library folder (:func:`validate_library`), a preset file (in a ``composition-presets`` folder or
        with a ``rubrics:`` list in its first 2,000 characters; :func:`validate_preset`) or a rubric file
        (:func:`validate_rubric`). ``None`` or empty: the bundled library.
    rubrics_dir : str or Path, optional
        The folder of the rubrics a preset names (default: the preset's grandparent folder).

    Returns
    -------
    list of RubricFinding
        Every finding, file by file in the order given (empty: all clean).

    Raises
    ------
    RubricError, OSError
        A library folder that is missing; a file that cannot be read.
    """
    found: list[RubricFinding] = []
    for p in list(paths or []) or [None]:
        p = None if p is None else Path(p)
        if p is None or p.is_dir():
            found += [RubricFinding(**r) for r in validate_library(p).to_dict("records")]
        elif _is_preset(p):
            found += validate_preset(p, rubrics_dir)
        else:
            found += validate_rubric(p)
    return found


@dataclass
class PresetScore:
    """What :func:`score_preset` found.

    Attributes
    ----------
    preset : Preset
        The preset scored.
    findings : list of RubricFinding
        The preset's findings against the library (:func:`validate_preset`); when any, no verdict is given.
    verdict : PresetVerdict or None
        The weighted verdict (:func:`preset_verdict`), ``None`` when the preset has findings.
    """

    preset: Preset
    findings: list[RubricFinding]
    verdict: PresetVerdict | None


def score_preset(preset: str | Path, verdicts: Mapping[str, str], *, library: str | Path | None = None
                 ) -> PresetScore:
    """The weighted verdict of a preset named in the library or given as a file (``evallab rubrics verdict``),
    after validating the preset against the library's rubrics.

    Parameters
    ----------
    preset : str or Path
        A preset's name in the library, or a preset file.
    verdicts : mapping of str to str
        Rubric name → ``PASS``/``WARN``/``FAIL`` for every rubric of the preset.
    library : str or Path, optional
        The rubric library folder (default: the bundled ``data/meowkit/rubrics``).

    Returns
    -------
    PresetScore
        The preset, its findings, and the verdict when it has none.

    Raises
    ------
    EvallabError
        An unknown preset name that is not a file either (the known names are listed).
    RubricError
        See :func:`preset_verdict` (a missing or unknown verdict, a rubric not in the library).
    """
    lib = load_library(library, strict=False)
    pre = lib.presets.get(str(preset)) or (parse_preset(preset) if Path(preset).is_file() else None)
    if pre is None:
        raise EvallabError(f"unknown preset {str(preset)!r}; known: {sorted(lib.presets)} (or give a file)")
    found = validate_preset(pre.path, library or data_dir("meowkit") / "rubrics")
    if found:
        return PresetScore(pre, found, None)
    return PresetScore(pre, [], preset_verdict(pre, verdicts, lib.rubrics))


# --------------------------------------------------------------------------------------------- anchor sets
VARIANTS = ("none", "balanced", "balanced-fail-first", "pass-only", "fail-only", "fail-last")


@dataclass(frozen=True)
class AnchorExample:
    """A labelled example for a judge prompt: ``text``, ``verdict`` (``pass``/``fail``), ``source`` id."""

    text: str
    verdict: str
    source: str = ""


def _check_variant(variant: str) -> int | None:
    if variant in VARIANTS:
        return None
    m = re.fullmatch(r"shuffled-(\d+)", variant)
    if m:
        return int(m.group(1))
    raise DataError(f"unknown anchor-set variant {variant!r}; expected one of {list(VARIANTS)} or 'shuffled-<seed>'",
                    column="anchor_set")


def is_mixed(variant: str) -> bool:
    """Whether an anchor-set variant shows both PASS and FAIL examples (all but none, pass-only, fail-only)."""
    return variant not in ("none", "pass-only", "fail-only")


def check_mixed_k(k: int, variant: str = "balanced") -> None:
    """Raise :class:`DataError` unless ``k`` (anchors per set) is even and ≥ 2, as a mixed variant needs.

    An odd ``k`` would make "balanced" lean one way (k=1 is the same single PASS example as pass-only, so
    inflation would be exactly 0).
    """
    if k < 2 or k % 2:
        raise DataError(f"anchor set {variant!r} needs an even number of anchors k >= 2 (k/2 PASS and k/2 FAIL); "
                        f"got k={k}", column="k")


def anchor_set(variant: str, passes: Sequence, fails: Sequence, k: int | None = None, *,
               salt: int | None = None) -> list:
    """Arrange labelled examples into an anchor-set variant.

    Parameters
    ----------
    variant : ``none`` (no anchors); ``balanced`` (alternating, PASS first: P F P F — rule 5);
        ``balanced-fail-first`` (F P F P); ``pass-only`` (k PASS); ``fail-only`` (k FAIL); ``fail-last``
        (grouped: the k/2 PASS then the k/2 FAIL — FAIL last primes FAIL, spec "Position bias");
        ``shuffled-<seed>`` (k/2 PASS and k/2 FAIL in an order drawn with ``numpy.random.default_rng(seed)``, or
        ``default_rng([seed, salt])`` when ``salt`` is given — e.g. a hash of the item, so orders vary by item).
    passes, fails : the PASS and FAIL examples in preference order (any objects); the first ``k/2`` of each are
        used by the mixed variants, the first ``k`` of one verdict by the one-sided ones.
    k : total anchors. Mixed variants (all but ``none``, ``pass-only``, ``fail-only``) need an even ``k ≥ 2``
        (k/2 PASS and k/2 FAIL, so "balanced" leans neither way); default ``2 * min(len(passes), len(fails))``.
        One-sided variants take any ``k ≥ 1``; their default is every example of their verdict
        (``len(passes)`` / ``len(fails)``), which may differ from the mixed default — pass ``k`` explicitly (as
        :func:`evallab.experiments.run_experiment` does) for every variant to show the same number of examples.

    Returns
    -------
    list of the chosen examples in presentation order (empty for ``none``).

    Raises
    ------
    DataError
        On an unknown variant, a mixed variant with an odd ``k`` or ``k < 2``, or too few examples of a verdict.
    """
    seed = _check_variant(variant)
    if variant == "none":
        return []
    if k is None:
        k = 2 * min(len(passes), len(fails)) if variant not in ("pass-only", "fail-only") else \
            (len(passes) if variant == "pass-only" else len(fails))
    if k < 1:
        raise DataError(f"anchor set {variant!r} needs at least one example; got k={k}", column="anchor_set")
    if variant == "pass-only":
        n_p, n_f = k, 0
    elif variant == "fail-only":
        n_p, n_f = 0, k
    else:
        check_mixed_k(k, variant)
        n_p = n_f = k // 2
    if len(passes) < n_p or len(fails) < n_f:
        raise DataError(f"anchor set {variant!r} with k={k} needs {n_p} PASS and {n_f} FAIL examples; got "
                        f"{len(passes)} and {len(fails)}", column="anchor_set")
    P, F = list(passes[:n_p]), list(fails[:n_f])
    if variant in ("pass-only",):
        return P
    if variant == "fail-only":
        return F
    if variant == "fail-last":
        return P + F
    if variant == "balanced":
        return [x for pair in _zip_longest(P, F) for x in pair]
    if variant == "balanced-fail-first":
        return [x for pair in _zip_longest(F, P) for x in pair]
    rng = np.random.default_rng(seed if salt is None else [seed, int(salt)])
    both = P + F
    return [both[i] for i in rng.permutation(len(both))]


def _zip_longest(a: list, b: list) -> list[list]:
    return [[*a[i:i + 1], *b[i:i + 1]] for i in range(max(len(a), len(b)))]


def rubric_anchor_set(rubric: Rubric, variant: str, k: int | None = None) -> list[AnchorExample]:
    """Anchor-set variant built from a rubric's own few-shot examples (PASS and FAIL ones; WARN ignored).

    The example text is the anchor's body (Artifact / Verdict / Reasoning); ``source`` is
    ``<rubric>#Example <n>``. One-sided variants over a rubric with one PASS and one FAIL example have one anchor.
    """
    ex = [AnchorExample(a.text, a.verdict.lower(), f"{rubric.name}#Example {a.number}") for a in rubric.anchors
          if a.verdict in ("PASS", "FAIL")]
    return anchor_set(variant, [e for e in ex if e.verdict == "pass"], [e for e in ex if e.verdict == "fail"], k)
