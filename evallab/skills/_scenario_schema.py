"""keryx judge scenarios: the ``evals.json`` schema, validated, and the readers of one file and of a pack tree.

Source: spec 000 ("Write a rubric (judge) eval scenario"), section "The schema" (keryx,
``src/gdskills/governance/{eval,judge}.ts``), and ``data/keryx/SOURCE.md``.

- :class:`EvalSpec` / :class:`Scenario` / :class:`Expectation` / :class:`Calibration` — one skill's scenarios.
- :func:`parse_evals` / :func:`load_evals` / :func:`load_tree` — read and validate ``evals.json``
  (:class:`EvalSpecError` names the file, the scenario id and the field).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import regex

from evallab import _fileio as F
from evallab.errors import DataError, EvalSpecError

GRADERS = ("contains", "regex", "not-contains", "judge")
DETERMINISTIC = ("contains", "regex", "not-contains")
STRICTNESS = ("low", "medium", "high")
CALIBRATION_KEYS = ("known_right", "known_wrong", "vague", "subtle_wrong")


# ----------------------------------------------------------------------------------------------------- schema
@dataclass(frozen=True)
class Expectation:
    """One ``expected_behavior`` entry: a deterministic grader with ``value`` or a judge rubric."""

    grader: str
    value: str | None = None
    rubric: str = ""
    pass_criteria: tuple[str, ...] = ()
    fail_criteria: tuple[str, ...] = ()


@dataclass(frozen=True)
class Calibration:
    """The four hand-written calibration answers of a judge scenario."""

    known_right: str
    known_wrong: str
    vague: str
    subtle_wrong: str


@dataclass
class Scenario:
    """A behaviour scenario of a skill."""

    id: str
    prompt: str
    strictness: str
    expected_behavior: list[Expectation]
    calibration: Calibration | None = None
    anti_patterns: list[str] = field(default_factory=list)
    skill_id: str = ""

    @property
    def judge(self) -> Expectation | None:
        """The judge expectation, or ``None``."""
        return next((e for e in self.expected_behavior if e.grader == "judge"), None)

    @property
    def deterministic(self) -> list[Expectation]:
        return [e for e in self.expected_behavior if e.grader != "judge"]


@dataclass
class EvalSpec:
    """One skill's ``evals.json`` plus what is known of its SKILL.md.

    ``skill_md`` is the SKILL.md body when available (``None`` when only the frontmatter was shipped, as in the
    bundled keryx data — rules I4/I5/I6 then report "not checkable").
    """

    path: str
    pack: str
    skill: str
    triggers: dict
    scenarios: list[Scenario]
    skill_md: str | None = None
    frontmatter: str | None = None

    @property
    def skill_id(self) -> str:
        return f"{self.pack}/{self.skill}" if self.pack else self.skill

    @property
    def recording_name(self) -> str:
        """keryx's recording file stem ``<pack>__<skill>``."""
        return f"{self.pack}__{self.skill}" if self.pack else self.skill

    def scenario(self, sid: str) -> Scenario | None:
        return next((s for s in self.scenarios if s.id == sid), None)


def _str(obj: dict, key: str, path: str, sid: str | None, fld: str, *, required: bool = True,
         nonempty: bool = True) -> str | None:
    if key not in obj:
        if required:
            raise EvalSpecError("missing; expected a non-empty string", path, sid, fld)
        return None
    v = obj[key]
    if not isinstance(v, str):
        raise EvalSpecError(f"is {type(v).__name__}; expected a string", path, sid, fld)
    if nonempty and not v.strip():
        raise EvalSpecError("is empty; expected a non-empty string", path, sid, fld)
    return v


def _str_list(v: object, path: str, sid: str | None, fld: str, *, min_len: int = 0) -> list[str]:
    if not isinstance(v, list):
        raise EvalSpecError(f"is {type(v).__name__}; expected a list of strings", path, sid, fld)
    if len(v) < min_len:
        raise EvalSpecError(f"has {len(v)} entries; expected at least {min_len}", path, sid, fld)
    for i, x in enumerate(v):
        if not isinstance(x, str):
            raise EvalSpecError(f"entry {i} is {type(x).__name__}; expected a string", path, sid, f"{fld}[{i}]")
        if not x.strip():
            raise EvalSpecError(f"entry {i} is empty; expected a non-empty string", path, sid, f"{fld}[{i}]")
    return list(v)


def _expectation(e: object, i: int, path: str, sid: str) -> Expectation:
    fld = f"expected_behavior[{i}]"
    if not isinstance(e, dict):
        raise EvalSpecError(f"is {type(e).__name__}; expected an object", path, sid, fld)
    g = e.get("grader")
    if g not in GRADERS:
        raise EvalSpecError(f"grader {g!r}; expected one of {list(GRADERS)}", path, sid, f"{fld}.grader")
    if g == "judge":
        if "value" in e:
            raise EvalSpecError("a judge expectation carries no 'value' (rubric/pass_criteria/fail_criteria "
                                "replace it)", path, sid, f"{fld}.value")
        rubric = _str(e, "rubric", path, sid, f"{fld}.rubric")
        if "pass_criteria" not in e:
            raise EvalSpecError("missing; expected a list of >= 1 non-empty strings", path, sid,
                                f"{fld}.pass_criteria")
        pc = _str_list(e["pass_criteria"], path, sid, f"{fld}.pass_criteria", min_len=1)
        fc = _str_list(e.get("fail_criteria", []), path, sid, f"{fld}.fail_criteria")
        return Expectation("judge", None, rubric, tuple(pc), tuple(fc))
    value = _str(e, "value", path, sid, f"{fld}.value", nonempty=True)
    if g == "regex":
        try:
            F.compile_regex(value)
        except regex.error as exc:
            raise EvalSpecError(f"regex {value!r} does not compile: {exc}", path, sid, f"{fld}.value") from None
        if F.nested_quantifier(value):
            raise EvalSpecError(f"regex {value!r} nests quantifiers (catastrophic backtracking risk); expected a "
                                "pattern without a quantified group that itself holds a quantifier", path, sid,
                                f"{fld}.value")
    return Expectation(g, value)


def parse_evals(doc: object, path: str = "<memory>", *, pack: str = "", skill: str = "",
                skill_md: str | None = None, frontmatter: str | None = None) -> EvalSpec:
    """Validate a decoded ``evals.json`` (spec 000, "The schema").

    Raises
    ------
    EvalSpecError
        naming the file, the scenario id and the field: wrong top-level shape, bad triggers, a scenario without
        id/prompt, a duplicated id (naming both positions), an unknown grader, a regex that does not compile (with
        the ``regex`` package) or nests quantifiers (``(a+)+``: catastrophic backtracking), a deterministic expectation
        without value, more than one judge expectation, a judge expectation with a value / empty rubric / no pass
        criterion, a judge scenario without calibration or with an empty or repeated calibration answer, an
        empty anti_patterns entry.
    """
    if not isinstance(doc, dict):
        raise EvalSpecError(f"top level is {type(doc).__name__}; expected an object with 'scenarios'", path)
    triggers = doc.get("triggers", {})
    if not isinstance(triggers, dict):
        raise EvalSpecError(f"is {type(triggers).__name__}; expected an object {{positive, negative}}", path,
                            None, "triggers")
    for k in ("positive", "negative"):
        if k in triggers:
            _str_list(triggers[k], path, None, f"triggers.{k}")
    if "scenarios" not in doc:
        raise EvalSpecError("missing; expected a list of scenarios", path, None, "scenarios")
    raw = doc["scenarios"]
    if not isinstance(raw, list):
        raise EvalSpecError(f"is {type(raw).__name__}; expected a list", path, None, "scenarios")
    sid_of = f"{pack}/{skill}" if pack else skill
    scenarios, seen = [], {}
    for n, s in enumerate(raw):
        if not isinstance(s, dict):
            raise EvalSpecError(f"scenario {n} is {type(s).__name__}; expected an object", path, None,
                                f"scenarios[{n}]")
        sid = _str(s, "id", path, f"#{n}", "id")
        if sid in seen:
            raise EvalSpecError(f"duplicated scenario id: scenarios[{seen[sid]}] and scenarios[{n}] both use it; "
                                "expected unique ids", path, sid, "id")
        seen[sid] = n
        prompt = _str(s, "prompt", path, sid, "prompt")
        strict = s.get("strictness", "high")
        if strict not in STRICTNESS:
            raise EvalSpecError(f"{strict!r}; expected one of {list(STRICTNESS)}", path, sid, "strictness")
        eb = s.get("expected_behavior")
        if not isinstance(eb, list) or not eb:
            raise EvalSpecError(f"is {type(eb).__name__ if eb is not None else 'missing'}; expected a non-empty "
                                "list of expectations", path, sid, "expected_behavior")
        exps = [_expectation(e, i, path, sid) for i, e in enumerate(eb)]
        judges = [i for i, e in enumerate(exps) if e.grader == "judge"]
        if len(judges) > 1:
            raise EvalSpecError(f"{len(judges)} judge expectations (at {judges}); at most one is allowed", path,
                                sid, f"expected_behavior[{judges[1]}].grader")
        cal = None
        if "calibration" in s or judges:
            c = s.get("calibration")
            if c is None:
                raise EvalSpecError("missing; a judge scenario must carry calibration {known_right, known_wrong, "
                                    "vague, subtle_wrong}", path, sid, "calibration")
            if not isinstance(c, dict):
                raise EvalSpecError(f"is {type(c).__name__}; expected an object", path, sid, "calibration")
            vals = [_str(c, k, path, sid, f"calibration.{k}") for k in CALIBRATION_KEYS]
            for i in range(4):
                for j in range(i + 1, 4):
                    if vals[i].strip() == vals[j].strip():
                        raise EvalSpecError(f"identical to calibration.{CALIBRATION_KEYS[i]}; the four answers "
                                            "must be pairwise different", path, sid,
                                            f"calibration.{CALIBRATION_KEYS[j]}")
            cal = Calibration(*vals)
        anti = _str_list(s.get("anti_patterns", []), path, sid, "anti_patterns")
        scenarios.append(Scenario(sid, prompt, strict, exps, cal, anti, sid_of))
    return EvalSpec(path, pack, skill, dict(triggers), scenarios, skill_md, frontmatter)


def _read_json(path: Path, err: type[DataError] = EvalSpecError, expected: str = "a JSON document") -> object:
    """A JSON file (UTF-8, byte-order mark accepted); refuses a missing path, a non-regular file (before opening
    it), bad UTF-8 (line named), bad JSON (line and column named) and a key repeated within an object."""
    return F.load_json(path, expected, err, missing="no such file")


def _skill_body(md: str) -> str:
    """SKILL.md without its ``---`` frontmatter block."""
    m = re.match(r"\A---\s*\n.*?\n---\s*(\n|\Z)", md, re.S)
    return md[m.end():] if m else md


def load_evals(path: str | Path, *, skill_md: str | Path | None = None) -> EvalSpec:
    """Read and validate one ``evals.json``.

    The pack and skill are taken from a ``stacks/<pack>/skills/<skill>/evals.json`` layout when present (else the
    parent folder name is the skill). ``skill_md``: a SKILL.md path; by default ``SKILL.md`` beside the file is
    used when it exists (its body feeds I4/I5/I6); ``SKILL.frontmatter.md`` is read as frontmatter only. Every
    file may start with a UTF-8 byte-order mark.

    Raises
    ------
    EvalSpecError
        A missing path or one that is not a regular file (directory, FIFO, device: refused before opening), a
        file that is not UTF-8 or not valid JSON (line named) or repeats a key, any error of :func:`parse_evals`;
        likewise for a SKILL.md / SKILL.frontmatter.md that is present but not a readable regular UTF-8 file.
    """
    path = Path(path)
    doc = _read_json(path, expected="a keryx evals.json object with 'scenarios'")
    parts = path.resolve().parts
    pack, skill = "", path.resolve().parent.name
    if len(parts) >= 5 and parts[-3] == "skills":
        pack = parts[-4]
    md = Path(skill_md) if skill_md else path.parent / "SKILL.md"
    body = None
    if skill_md or os.path.lexists(md):
        body = _skill_body(F.read_text(md, "the skill's SKILL.md (markdown)", EvalSpecError))
    fm_path = path.parent / "SKILL.frontmatter.md"
    fm = F.read_text(fm_path, "SKILL.md frontmatter (markdown)", EvalSpecError) if os.path.lexists(fm_path) \
        else None
    return parse_evals(doc, str(path), pack=pack, skill=skill, skill_md=body, frontmatter=fm)


def load_tree(root: str | Path) -> dict[str, EvalSpec]:
    """Every ``stacks/*/skills/*/evals.json`` under ``root`` (or ``root`` itself if it holds ``stacks``), keyed
    by recording name ``<pack>__<skill>``.

    Raises
    ------
    EvalSpecError
        ``root`` missing or not a folder; the first malformed file (see :func:`load_evals`); two files with the
        same recording name (both named: one would silently replace the other).
    """
    root = F.check_folder(root, "a folder holding stacks/<pack>/skills/<skill>/evals.json", EvalSpecError)
    files = sorted(root.glob("stacks/*/skills/*/evals.json")) or sorted(root.glob("**/evals.json"))
    out = {}
    for f in files:
        spec = load_evals(f)
        if spec.recording_name in out:
            raise EvalSpecError(f"skill {spec.recording_name!r} is also defined by {out[spec.recording_name].path}; "
                                "expected one evals.json per <pack>__<skill>", path=str(f))
        out[spec.recording_name] = spec
    return out
