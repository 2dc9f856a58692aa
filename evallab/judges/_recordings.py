"""Judge recordings in the keryx format: load, validate, write, digest, and turn into verdict tables (public names
re-exported by :mod:`evallab.judges`; the judge runner writes them, replay and the AG check of
:mod:`evallab.skills` read them).

Format (spec 000, "Recording the calibration"; data/keryx/SOURCE.md)::

    {"judgePromptVersion": "2026-09-25.1", "judge": "deepseek", "judgeModel": "deepseek-chat",
     "recordedAt": "2026-09-25T05:35:39.062Z",
     "entries": [{"scenarioId": "...", "kind": "echo", "requestDigest": "<sha256 hex>",
                  "samples": [{"verdict": "pass"|"fail", "reason": "...", "error": "..."?}, ...]}]}

The older single-verdict form (an entry with ``verdict``/``reason`` and no ``samples``, e.g. keryx's
``go__go-code-review.json`` at prompt version 2026-09-24.1) is read as one sample and flagged ``legacy``.

The request digest is ``sha256(prompt_version + "\\0" + system + "\\0" + user)`` in hex (spec 000, keryx rule).
Recordings written by evallab carry the same fields plus an ``evallab`` object (base URL, prompt kind, run
metadata); its presence allows kinds beyond keryx's canned-answer kinds (e.g. ``item@anchor_set#order``) and the
tidy verdict vocabulary (pairwise ``1``/``2``/``tie``). API keys never appear.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from evallab import _fileio as F
from evallab import verdicts as V
from evallab.errors import RecordingError

#: the canned answer kinds a keryx recording may hold (``empty`` is never sent to the judge)
KINDS = ("empty", "echo", "vague", "known-wrong", "subtle-wrong", "injection", "stuffed", "known-right")


def request_digest(prompt_version: str, system: str, user: str) -> str:
    """keryx's request digest: sha256 hex of ``prompt_version + "\\0" + system + "\\0" + user`` (UTF-8)."""
    return hashlib.sha256(f"{prompt_version}\0{system}\0{user}".encode()).hexdigest()


@dataclass
class Sample:
    """One recorded judge reply: ``verdict`` ``pass``/``fail`` or ``None`` (unparsed; ``error`` says why)."""

    verdict: str | None
    reason: str = ""
    error: str | None = None
    #: evallab's optional sample fields (:data:`SAMPLE_EXTRAS`: the reasoning — or its digest and length —, the
    #: failure kind, where the verdict was read), written as they are and ignored by keryx
    extra: dict = field(default_factory=dict)


#: optional sample fields evallab writes beside keryx's (camelCase, as the format's other fields)
SAMPLE_EXTRAS = ("reasoning", "reasoningSha256", "reasoningChars", "failureKind", "verdictSource")


@dataclass
class Entry:
    """The recorded samples of one canned answer (``kind``) of one scenario."""

    scenario_id: str
    kind: str
    request_digest: str
    samples: list[Sample] = field(default_factory=list)
    legacy: bool = False  # single-verdict entry of the older format

    @property
    def unanimous(self) -> bool:
        """True when every sample parsed and all verdicts agree."""
        return bool(self.samples) and all(s.error is None and s.verdict for s in self.samples) and \
            len({s.verdict for s in self.samples}) == 1


@dataclass
class Recording:
    """A whole recording file."""

    judge_prompt_version: str
    judge: str
    judge_model: str
    recorded_at: str
    entries: list[Entry] = field(default_factory=list)
    path: str | None = None
    extra: dict = field(default_factory=dict)

    def entry(self, scenario_id: str, kind: str) -> Entry | None:
        for e in self.entries:
            if e.scenario_id == scenario_id and e.kind == kind:
                return e
        return None

    def by_digest(self) -> dict[str, Entry]:
        return {e.request_digest: e for e in self.entries}


def _need(obj: dict, key: str, typ: type | tuple, path: str, where: str) -> object:
    if key not in obj:
        raise RecordingError(f"{where}: missing field '{key}'", path=path, column=key)
    v = obj[key]
    if not isinstance(v, typ):
        tn = typ.__name__ if isinstance(typ, type) else "/".join(t.__name__ for t in typ)
        raise RecordingError(f"{where}: field '{key}' is {type(v).__name__}; expected {tn}", path=path, column=key)
    return v


#: verdicts allowed in a recording written by evallab (it carries an ``evallab`` object): the tidy vocabulary, so
#: pairwise runs (``1``/``2``/``tie``, the ORIGINAL output index) can be recorded too; kinds are free there
EXTENDED_VERDICTS = ("pass", "warn", "fail", "1", "2", "tie")


def _sample(obj: object, path: str, where: str, allowed: tuple[str, ...] = ("pass", "fail"),
            row: int | None = None) -> Sample:
    """One sample; ``verdict`` must be one of ``allowed`` (case-insensitive) or null (unparsed, ``error`` says
    why). Raises :class:`RecordingError` naming the entry, the sample and the value otherwise."""
    if not isinstance(obj, dict):
        raise RecordingError(f"{where}: a sample is {type(obj).__name__}; expected an object", path=path, row=row)
    verdict = obj.get("verdict")
    if verdict is not None and not isinstance(verdict, str):
        raise RecordingError(f"{where}: 'verdict' is {type(verdict).__name__}; expected a string", path=path,
                             row=row, column="verdict")
    v = verdict.strip().lower() if isinstance(verdict, str) else None
    err = obj.get("error")
    if v is not None and v not in allowed:
        raise RecordingError(f"{where}: unknown verdict {verdict!r}; expected one of {list(allowed)}, or null with "
                             "an 'error' for an unparsed reply", path=path, row=row, column="verdict")
    if v is None and not err:
        err = "no verdict recorded"
    reason = obj.get("reason", "")
    return Sample(v, reason if isinstance(reason, str) else str(reason), str(err) if err else None,
                  {k: obj[k] for k in SAMPLE_EXTRAS if obj.get(k) is not None})


def parse_recording(doc: object, path: str = "<memory>") -> Recording:
    """Validate a decoded recording document.

    Raises
    ------
    RecordingError
        Naming the file, the entry (1-based, with its ``scenarioId/kind``), the sample and the field: a wrong
        shape or type, an unknown kind, a malformed digest, an unknown verdict (e.g. ``'PASS!'``), or a
        (scenarioId, kind) recorded twice (both entries named).
    """
    if not isinstance(doc, dict):
        raise RecordingError(f"top level is {type(doc).__name__}; expected an object", path=path)
    pv = _need(doc, "judgePromptVersion", str, path, "recording")
    judge = doc.get("judge", "")
    model = doc.get("judgeModel", "")
    at = doc.get("recordedAt", "")
    raw_entries = _need(doc, "entries", list, path, "recording")
    extended = isinstance(doc.get("evallab"), dict)  # written by evallab: free kinds, tidy verdicts
    allowed = EXTENDED_VERDICTS if extended else ("pass", "fail")
    entries, seen = [], {}
    for i, e in enumerate(raw_entries, start=1):
        where = f"entry {i}"
        if not isinstance(e, dict):
            raise RecordingError(f"{where} is {type(e).__name__}; expected an object", path=path, row=i)
        sid = _need(e, "scenarioId", str, path, where)
        kind = _need(e, "kind", str, path, f"{where} ({sid})")
        where = f"entry {i} ({sid}/{kind})"
        if kind not in KINDS and not extended:
            raise RecordingError(f"{where}: unknown kind {kind!r}; expected one of {list(KINDS)}", path=path,
                                 row=i, column="kind")
        dg = _need(e, "requestDigest", str, path, where)
        if len(dg) != 64 or any(c not in "0123456789abcdef" for c in dg):
            raise RecordingError(f"{where}: requestDigest {dg!r} is not a sha256 hex digest", path=path, row=i,
                                 column="requestDigest")
        if (sid, kind) in seen:
            raise RecordingError(f"{where}: duplicated (scenarioId, kind), first recorded as entry {seen[sid, kind]}; "
                                 "expected one entry per scenario and kind", path=path, row=i, column="kind")
        seen[sid, kind] = i
        if "samples" in e:
            raw = _need(e, "samples", list, path, where)
            samples = [_sample(s, path, f"{where} sample {j}", allowed, i) for j, s in enumerate(raw, start=1)]
            legacy = False
        elif "verdict" in e:
            samples, legacy = [_sample(e, path, where, allowed, i)], True
        else:
            raise RecordingError(f"{where}: neither 'samples' nor 'verdict'", path=path, row=i, column="samples")
        entries.append(Entry(sid, kind, dg, samples, legacy))
    extra = {k: v for k, v in doc.items() if k not in ("judgePromptVersion", "judge", "judgeModel", "recordedAt",
                                                       "entries")}
    return Recording(pv, str(judge), str(model), str(at), entries, path, extra)


def load_recording(path: str | Path) -> Recording:
    """Read one recording file (UTF-8, a byte-order mark accepted).

    Raises
    ------
    RecordingError
        A missing path or one that is not a regular file (directory, FIFO, device: refused before opening); bad
        UTF-8 or JSON (line named); a key repeated within an object; any error of :func:`parse_recording`.
    """
    path = Path(path)
    doc = F.load_json(path, "a keryx judge recording (JSON object with 'entries')", RecordingError,
                      missing="no such recording file")
    return parse_recording(doc, str(path))


def load_recordings(folder: str | Path) -> dict[str, Recording]:
    """Every ``*.json`` recording in ``folder``, keyed by file stem (``<pack>__<skill>``).

    Raises
    ------
    RecordingError
        ``folder`` missing or not a folder; any error of :func:`load_recording` (a ``*.json`` that is a
        directory or FIFO included).
    """
    folder = F.check_folder(folder, "a folder of keryx judge recordings (*.json)", RecordingError,
                            missing="no such recordings folder")
    return {p.stem: load_recording(p) for p in sorted(folder.glob("*.json"))}


def to_json(rec: Recording) -> dict:
    """The JSON document of a recording (samples form; ``error`` only when set)."""
    def sample(s: Sample) -> dict:
        d = {"verdict": s.verdict, "reason": s.reason}
        if s.error:
            d["error"] = s.error
        d.update(s.extra)
        return d

    doc = {"judgePromptVersion": rec.judge_prompt_version, "judge": rec.judge, "judgeModel": rec.judge_model,
           "recordedAt": rec.recorded_at or _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds"),
           "entries": [{"scenarioId": e.scenario_id, "kind": e.kind, "requestDigest": e.request_digest,
                        "samples": [sample(s) for s in e.samples]} for e in rec.entries]}
    doc.update(rec.extra)
    return doc


def write_recording(rec: Recording, path: str | Path) -> Path:
    """Write a recording atomically (temp file + rename), stable key order, 2-space indent."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(to_json(rec), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


#: gold verdict expected of each canned answer kind by the anti-gaming table (spec 000): only known-right passes
EXPECTED = {"empty": "fail", "echo": "fail", "vague": "fail", "known-wrong": "fail", "subtle-wrong": "fail",
            "injection": "fail", "stuffed": "fail", "known-right": "pass"}


def to_verdicts(recordings: dict[str, Recording] | list[Recording], *, dataset: str = "keryx") -> pd.DataFrame:
    """Tidy verdict table of recordings: one row per sample.

    ``item_id`` = ``<scenarioId>/<kind>``, ``subset`` = the file stem (``<pack>__<skill>``), ``judge`` = the
    recording's judge label, ``model`` = judgeModel, ``strategy`` = judgePromptVersion, ``order`` = "",
    ``sample`` = index, ``gold`` = the kind's expected verdict (:data:`EXPECTED`).
    """
    recs = recordings.items() if isinstance(recordings, dict) else \
        [(Path(r.path).stem if r.path else str(i), r) for i, r in enumerate(recordings)]
    rows = []
    for stem, r in recs:
        for e in r.entries:
            for j, s in enumerate(e.samples):
                rows.append({"item_id": f"{e.scenario_id}/{e.kind}", "dataset": dataset, "subset": stem,
                             "judge": r.judge or "judge", "model": r.judge_model or pd.NA,
                             "strategy": r.judge_prompt_version, "anchor_set": "none", "order": "", "sample": j,
                             "verdict": s.verdict, "gold": EXPECTED.get(e.kind), "error": s.error,
                             "scenario_id": e.scenario_id, "kind": e.kind, "reason": s.reason})
    if not rows:
        return V.empty()
    out = V.coerce(pd.DataFrame(rows))
    V.warn_snapshots(out, source="recordings")  # one judge label recorded with several judgeModel values
    return out
