"""Validate skill-pack files of any kind at once (``evallab validate``): keryx ``evals.json`` (schema and integrity
rules I1–I10), judge recordings (format, and the AG check when the matching ``evals.json`` is among the inputs),
eval reports (the stable-pack gate), aeon manifests (schema and regex lint) and regression state files.

:func:`file_kind` tells what a file is (by name, then by content); :func:`validate_paths` checks every file (or
folder of files) and returns one :class:`FileCheck` per line of the report. It lives with the experiments because
the AG check recomputes evallab's request digests (:func:`evallab.experiments._judge_check.check_recordings`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evallab.errors import EvallabError

#: what :func:`file_kind` returns
KINDS = ("evals", "recording", "eval-report", "manifest", "state", "folder", "unknown-json")
#: the word a :class:`FileCheck` line starts with, by status
_LABEL = {"ok": "ok  ", "fail": "FAIL", "error": "ERROR", "unreadable": "ERROR", "note": "note"}


def file_kind(path: str | Path) -> str:
    """What a skill-pack file is: by its name first, then by its content.

    Parameters
    ----------
    path : str or Path
        An existing file or folder.

    Returns
    -------
    str
        One of :data:`KINDS`: ``evals`` (an ``evals.json``), ``recording`` (a judge recording), ``eval-report``,
        ``state`` (``evals-state.json``), ``manifest`` (YAML, or JSON of no other kind), ``folder``, or
        ``unknown-json`` (JSON that is not an object).

    Raises
    ------
    DataError
        A path that is not a regular file or folder (a FIFO, a device: refused before opening).
    """
    path = Path(path)
    name = path.name
    if name == "evals.json":
        return "evals"
    if name.endswith("evals-state.json") or name == "state.json":
        return "state"
    if path.suffix.lower() in (".yaml", ".yml"):
        return "manifest"
    if path.parent.name == "judge-recordings":
        return "recording"
    if path.is_dir():
        return "folder"
    from evallab import _fileio as fileio  # here: it loads pandas, which `evallab --help` should not pay for

    fileio.check_file(path, "a JSON file (evals.json, a recording or an eval report)")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return "recording" if "recording" in name else "evals" if "evals" in name else "unknown-json"
    if isinstance(doc, dict):
        if "scenarios" in doc and "triggers" in doc or "scenarios" in doc and "skillId" not in doc:
            return "evals"
        if "entries" in doc or "judgePromptVersion" in doc and "reports" not in doc and "skillId" not in doc:
            return "recording"
        if "reports" in doc or "skillId" in doc:
            return "eval-report"
        if "skills" in doc and "version" in doc:
            return "state"
        return "manifest"
    return "unknown-json"


def _kind_or_missing(p: Path) -> str:
    """:func:`file_kind`, or ``"missing"`` when nothing is there; a path that cannot be stat-ed for another reason (a
    symbolic-link loop: "Too many levels of symbolic links", permission denied) is an error naming it, as the
    loaders say it."""
    import os

    try:
        os.stat(p)
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except OSError as exc:
        raise EvallabError(f"{p}: cannot read ({exc.strerror or exc})") from None
    return file_kind(p)


def expand_paths(paths: Sequence[str | Path]) -> list[Path]:
    """Files to validate: a folder becomes its ``**/evals.json``, ``**/judge-recordings/*.json`` and
    ``**/governance/eval.json`` (or, when it holds none of those, its own ``.json``/``.yaml``/``.yml`` files);
    a file is kept. Each path once, in the order found.

    Parameters
    ----------
    paths : sequence of str or Path

    Returns
    -------
    list of Path
    """
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(p.glob("**/evals.json")) + sorted(p.glob("**/judge-recordings/*.json")) + \
                sorted(p.glob("**/governance/eval.json"))
            out.extend(found or sorted(x for x in p.glob("*") if x.suffix in (".json", ".yaml", ".yml")))
        else:
            out.append(p)
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class FileCheck:
    """One line of :func:`validate_paths`' report.

    Attributes
    ----------
    status : {"ok", "fail", "error", "unreadable", "note"}
        ``ok``: a file read and summarised; ``fail``: a finding; ``error``: a file read but refused by its schema
        (the error names the scenario, field or row); ``unreadable``: a file that could not be read at all (missing,
        not UTF-8, not JSON/YAML, empty, a symbolic-link loop, of no known kind) — bad input to the command;
        ``note``: a finding that does not count (a non-failing AG row).
    message : str
        The file and what was found.
    """

    status: str
    message: str

    @property
    def failed(self) -> bool:
        """Whether the line counts as a failure (``fail``, ``error`` or ``unreadable``)."""
        return self.status in ("fail", "error", "unreadable")

    def __str__(self) -> str:
        return f"{_LABEL[self.status]} {self.message}"


def validate_paths(paths: Sequence[str | Path]) -> list[FileCheck]:
    """Validate every file (or folder of files, :func:`expand_paths`) by its kind (:func:`file_kind`).

    ``evals.json``: schema and integrity rules I1–I10 (a rule that needs the SKILL.md body is named as not
    checkable, not failed); recordings: the format, and the AG check of each recording whose ``evals.json`` is
    among the inputs; eval reports: the stable-pack gate; manifests: schema and regex lint; state files:
    structure.

    Parameters
    ----------
    paths : sequence of str or Path

    Returns
    -------
    list of FileCheck
        In file order, each file's findings before its ``ok`` line, the AG rows last; the failures are the lines
        whose :attr:`FileCheck.failed` is true (a missing or unreadable file is one ``error`` line, and the other
        files are still checked).
    """
    from evallab import skills as S
    from evallab.judges._recordings import load_recording
    from evallab.skills._anti_gaming import ag_findings
    from evallab.skills._manifests import lint_manifest, load_state
    from evallab.skills._pack_gate import gate_verdicts

    lines: list[FileCheck] = []
    specs: dict = {}
    recs: dict = {}
    for p in expand_paths(paths):
        try:
            kind = _kind_or_missing(p)
            if kind == "missing":
                raise EvallabError(f"{p}: no such file or folder")
            if kind == "evals":
                spec = S.load_evals(p)
                specs[spec.recording_name] = spec
                fs = S.integrity_findings(spec)
                bad = [f for f in fs if f.severity == "fail"]
                nc = sorted({f.rule for f in fs if f.severity == "not-checkable"})
                lines += [FileCheck("fail", str(f)) for f in bad]
                lines.append(FileCheck("ok", f"{p}: {len(spec.scenarios)} scenarios, {len(bad)} integrity finding(s)"
                                       + (f"; not checkable (no SKILL.md body): {', '.join(nc)}" if nc else "")))
            elif kind == "recording":
                rec = load_recording(p)
                recs[p.stem] = rec
                lines.append(FileCheck("ok", f"{p}: {len(rec.entries)} entries, prompt version "
                                             f"{rec.judge_prompt_version}"))
            elif kind == "eval-report":
                reports = S.load_eval_report(p)
                v = gate_verdicts(S.pack_gate(reports))
                lines += [FileCheck("fail", f"{p}: pack gate {r.skill}: {r.failures}") for r in v.itertuples()
                          if r.verdict != "pass"]
                lines.append(FileCheck("ok", f"{p}: {len(reports)} report(s), {int((v['verdict'] == 'pass').sum())} "
                                             "pass the pack gate"))
            elif kind == "manifest":
                m = S.load_manifest(p)
                lines += [FileCheck("fail", f"{p}: {w}") for w in lint_manifest(m)]
                lines.append(FileCheck("ok", f"{p}: manifest for {len(m)} skill(s)"))
            elif kind == "state":
                st = load_state(p)
                lines.append(FileCheck("ok", f"{p}: state of {len(st['skills'])} skill(s)"))
            else:
                raise EvallabError(f"{p}: cannot tell what this file is (not JSON/YAML of a known kind)")
        except EvallabError as exc:
            # a file that could not be read at all (missing, not UTF-8, not JSON/YAML, empty, of no known kind) is bad
            # input to the command; a finding inside a file that was read names its scope, field or row
            located = any(getattr(exc, a, None) is not None for a in ("scope", "column", "row"))
            lines.append(FileCheck("error" if located else "unreadable", str(exc)))
    both = {k: specs[k] for k in recs if k in specs}
    if both:
        from evallab.experiments._judge_check import check_recordings

        chosen = {k: recs[k] for k in both}
        m = check_recordings(both, chosen)
        lines += [FileCheck("fail" if f.severity == "fail" else "note", str(f))
                  for f in ag_findings(m, both, chosen)]
    return lines


__all__ = ["KINDS", "FileCheck", "expand_paths", "file_kind", "validate_paths"]
