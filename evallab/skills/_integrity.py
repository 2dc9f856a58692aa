"""The integrity rules I1–I10 of keryx judge scenarios (spec 000, "The anti-gaming requirement" and the rules
after it), each returning :class:`IntegrityFinding` s.

- ``rule_i1`` … ``rule_i10`` (:data:`RULES`) and :func:`integrity_findings` — every rule on every scenario.
- :func:`findings_frame` — findings as a plain table; :func:`findings_summary` — their counts per rule and
  severity, a :class:`~evallab.Results` whose count carries its :class:`~evallab.Measure`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from evallab._results import Measure, Results, results
from evallab.skills._grading import ECHO_PREFIX, _check_all, grade_answer
from evallab.skills._scenario_schema import CALIBRATION_KEYS, EvalSpec, EvalSpecError, Scenario

#: answer-key phrasing that tells a model how to word its answer (rule I5)
ANSWER_KEY_PHRASES = ("verbatim", "exact sentence", "exact phrase", "open your answer", "begin your answer with",
                      "start your answer with", "word for word", "word-for-word", "use the exact words",
                      "include the phrase", "your answer must contain")


@dataclass
class IntegrityFinding:
    """One integrity finding. ``severity``: ``fail`` (breaks the rule), ``not-checkable`` (input missing, e.g.
    no SKILL.md body), ``note`` (informational)."""

    skill: str
    scenario: str
    rule: str
    severity: str
    message: str
    path: str = ""

    def __str__(self) -> str:
        return f"{self.path or self.skill}: [{self.rule}] {self.skill}/{self.scenario}: {self.severity}: " \
               f"{self.message}"


def findings_frame(findings: Iterable[IntegrityFinding]) -> pd.DataFrame:
    """Findings as a plain DataFrame with columns skill, scenario, rule, severity, message, path."""
    cols = ["skill", "scenario", "rule", "severity", "message", "path"]
    return pd.DataFrame([{c: getattr(f, c) for c in cols} for f in findings], columns=cols)


#: the measure of :func:`findings_summary`
SUMMARY_MEASURES = [Measure("findings", "Findings", "count", note=None)]


def findings_summary(findings: Iterable[IntegrityFinding] | pd.DataFrame) -> Results:
    """How many findings each rule gave, per severity.

    Parameters
    ----------
    findings : iterable of IntegrityFinding, or DataFrame
        From :func:`integrity_findings` (or :func:`findings_frame` of them).

    Returns
    -------
    Results
        One row per (rule, severity) that has a finding, rules in :data:`RULES` order (then any other rule, e.g.
        AG), severities fail, not-checkable, note: ``rule``, ``severity``, ``findings`` (count). Measure
        :data:`SUMMARY_MEASURES`; empty when there is no finding.
    """
    f = findings if isinstance(findings, pd.DataFrame) else findings_frame(findings)
    out = f.groupby(["rule", "severity"]).size().rename("findings").reset_index()
    order = {r: i for i, r in enumerate(RULES)}
    sev = {s: i for i, s in enumerate(("fail", "not-checkable", "note"))}
    out = out.assign(_r=out["rule"].map(lambda r: order.get(r, len(order))),
                     _s=out["severity"].map(lambda s: sev.get(s, len(sev))))
    out = out.sort_values(["_r", "rule", "_s", "severity"]).drop(columns=["_r", "_s"]).reset_index(drop=True)
    return results(out, SUMMARY_MEASURES, keys=["rule", "severity"])


def _f(spec: EvalSpec, s: Scenario, rule: str, msg: str, sev: str = "fail") -> IntegrityFinding:
    return IntegrityFinding(spec.skill_id, s.id, rule, sev, msg, spec.path)


def rule_i1(spec: EvalSpec, s: Scenario) -> list[IntegrityFinding]:
    """I1: the scenario fails when graded against the empty answer ``""`` (judge never reached)."""
    g = grade_answer(s, "", judge=None) if s.judge else grade_answer(s, "")
    return [] if not g.passed else [_f(spec, s, "I1", "the empty answer passes the deterministic expectations")]


def rule_i2(spec: EvalSpec, s: Scenario) -> list[IntegrityFinding]:
    """I2: fails against the echo answer. A judge scenario's echo verdict comes from its recording (rule AG);
    here only the deterministic part is checked, which a judge scenario may leave to the judge."""
    echo = ECHO_PREFIX + s.prompt
    det = _check_all(s, echo)
    if s.judge is None and all(det):
        return [_f(spec, s, "I2", "the echo answer passes every deterministic expectation")]
    return []


def rule_i3(spec: EvalSpec, s: Scenario) -> list[IntegrityFinding]:
    """I3: a non-judge scenario has a positive (contains/regex) expectation the prompt does not already match; a
    judge scenario has a non-empty rubric, >= 1 pass criterion and four pairwise-different calibration answers."""
    if s.judge is None:
        pos = [e for e in s.deterministic if e.grader in ("contains", "regex")]
        probe = Scenario(s.id, s.prompt, s.strictness, pos, skill_id=s.skill_id)
        if not any(not ok for ok in _check_all(probe, s.prompt)):
            return [_f(spec, s, "I3", "no positive contains/regex expectation that the prompt does not already "
                                      "match")]
        return []
    out = []
    if not s.judge.rubric.strip():
        out.append(_f(spec, s, "I3", "empty rubric"))
    if not any(p.strip() for p in s.judge.pass_criteria):
        out.append(_f(spec, s, "I3", "no non-empty pass criterion"))
    c = s.calibration
    vals = [getattr(c, k) if c else "" for k in CALIBRATION_KEYS]
    if not all(v.strip() for v in vals) or len({v.strip() for v in vals}) < 4:
        out.append(_f(spec, s, "I3", "calibration answers are not four non-empty pairwise-different strings"))
    return out


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _shingles(words: list[str], n: int = 6) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def rule_i4(spec: EvalSpec, s: Scenario) -> list[IntegrityFinding]:
    """I4: the prompt shares no 6-word sequence (lowercased, split on ``[a-z0-9]+``) with the SKILL.md body."""
    if spec.skill_md is None:
        return [_f(spec, s, "I4", "not checkable: no SKILL.md body (only the frontmatter is available)",
                   "not-checkable")]
    shared = _shingles(_words(s.prompt)) & _shingles(_words(spec.skill_md))
    if shared:
        ex = " ".join(sorted(shared)[0])
        return [_f(spec, s, "I4", f"the prompt shares {len(shared)} 6-word sequence(s) with SKILL.md, e.g. "
                                  f"{ex!r}")]
    return []


def rule_i5(spec: EvalSpec, s: Scenario) -> list[IntegrityFinding]:
    """I5: SKILL.md contains no answer-key phrasing (:data:`ANSWER_KEY_PHRASES`)."""
    if spec.skill_md is None:
        return [_f(spec, s, "I5", "not checkable: no SKILL.md body", "not-checkable")]
    low = spec.skill_md.lower()
    hits = [p for p in ANSWER_KEY_PHRASES if p in low]
    return [_f(spec, s, "I5", f"SKILL.md contains answer-key phrasing {hits}")] if hits else []


def rule_i6(spec: EvalSpec, s: Scenario) -> list[IntegrityFinding]:
    """I6: every anti_patterns token appears (case-insensitive) in the skill's SKILL.md."""
    if not s.anti_patterns:
        return []
    if spec.skill_md is None:
        return [_f(spec, s, "I6", "not checkable: no SKILL.md body", "not-checkable")]
    low = spec.skill_md.lower()
    miss = [t for t in s.anti_patterns if t.lower() not in low]
    return [_f(spec, s, "I6", f"anti_patterns {miss} never appear in SKILL.md")] if miss else []


def rule_i7(spec: EvalSpec, s: Scenario) -> list[IntegrityFinding]:
    """I7: every anti_patterns token appears (case-insensitive) in calibration.known_wrong."""
    kw = (s.calibration.known_wrong if s.calibration else "").lower()
    miss = [t for t in s.anti_patterns if t.lower() not in kw]
    return [_f(spec, s, "I7", f"anti_patterns {miss} do not appear in calibration.known_wrong")] if miss else []


def rule_i7b(spec: EvalSpec, s: Scenario) -> list[IntegrityFinding]:
    """I7b: every anti_patterns token is >= 4 characters long or contains a non-letter character."""
    bad = [t for t in s.anti_patterns if len(t) < 4 and t.isalpha()]
    return [_f(spec, s, "I7b", f"anti_patterns {bad} are short bare words; name the specific form")] if bad else []


def rule_i7c(spec: EvalSpec, s: Scenario) -> list[IntegrityFinding]:
    """I7c: every anti_patterns token appears (case-insensitive) in the judge's rubric or a fail criterion."""
    if not s.anti_patterns:
        return []
    j = s.judge
    text = ((j.rubric + "\n" + "\n".join(j.fail_criteria)) if j else "").lower()
    miss = [t for t in s.anti_patterns if t.lower() not in text]
    return [_f(spec, s, "I7c", f"anti_patterns {miss} are not in the judge's rubric or fail_criteria")] \
        if miss else []


def rule_i8(spec: EvalSpec, s: Scenario) -> list[IntegrityFinding]:
    """I8: a judge scenario carries no not-contains expectation."""
    if s.judge and any(e.grader == "not-contains" for e in s.expected_behavior):
        return [_f(spec, s, "I8", "a judge scenario carries a not-contains expectation; use fail_criteria")]
    return []


def rule_i9(spec: EvalSpec, s: Scenario) -> list[IntegrityFinding]:
    """I9: every stack-pack behaviour scenario is a judge scenario."""
    return [] if s.judge else [_f(spec, s, "I9", "a behaviour scenario without a judge expectation")]


_NEGATION = re.compile(
    r"\b(is|are)\s+(not|never)\s+(a\s+|itself\s+a\s+|by\s+itself\s+a\s+)?(fail|failure|failing)\b"
    r"|\bnot\s+(count|counted|counts)\s+as\s+(a\s+)?fail|\b(do|does|should)\s+not\s+fail\b"
    r"|\b(don'?t|doesn'?t)\s+fail\b|\bnot\s+a\s+failure\b|\bnever\s+a\s+failure\b", re.I)


def rule_i10(spec: EvalSpec, s: Scenario) -> list[IntegrityFinding]:
    """I10: no fail_criteria entry is a negation-only note — one whose every clause (sentences, and parts split
    on `` -- `` or ``;``) only says what is NOT a failure (e.g. a standalone "Mentioning X only to warn against
    it is not a failure.")."""
    out = []
    for i, fc in enumerate(s.judge.fail_criteria if s.judge else ()):
        clauses = [x for x in re.split(r"(?<=[.!?])\s+|\s+--\s+|\s+—\s+|;\s+", fc.strip()) if x.strip()]
        if clauses and all(_NEGATION.search(x) for x in clauses):
            out.append(_f(spec, s, "I10", f"fail_criteria[{i}] is a negation-only note ({fc[:80]!r}); fold it "
                                          "into the fail criterion it qualifies"))
    return out


RULES: dict[str, Callable[[EvalSpec, Scenario], list[IntegrityFinding]]] = {
    "I1": rule_i1, "I2": rule_i2, "I3": rule_i3, "I4": rule_i4, "I5": rule_i5, "I6": rule_i6, "I7": rule_i7,
    "I7b": rule_i7b, "I7c": rule_i7c, "I8": rule_i8, "I9": rule_i9, "I10": rule_i10}


def integrity_findings(specs: EvalSpec | Mapping[str, EvalSpec] | Iterable[EvalSpec],
                       rules: Sequence[str] | None = None) -> list[IntegrityFinding]:
    """Run the integrity rules I1–I10 (not AG, see :func:`~evallab.skills.ag_findings`) on every scenario.

    Raises
    ------
    EvalSpecError
        A regex expectation that runs past the time bound on the prompt or echo answer, naming the file, the
        scenario and the field.
    """
    if isinstance(specs, EvalSpec):
        specs = [specs]
    elif isinstance(specs, Mapping):
        specs = list(specs.values())
    out = []
    for spec in specs:
        for s in spec.scenarios:
            for name in rules or RULES:
                try:
                    out.extend(RULES[name](spec, s))
                except EvalSpecError as exc:  # a regex that timed out: name the file it came from
                    if exc.path is None:
                        exc.path = spec.path
                        exc.message = exc.message.removeprefix(f"skill {s.skill_id}: ")
                    raise
    return out
