"""``ReplayJudge``: answer requests offline from keryx-format recordings, by request digest.

A request is looked up by its digest (``sha256(prompt_version + "\\0" + system + "\\0" + user)``, spec 000) and
answered with the recorded sample of its ``metadata["sample"]`` index. A request with no recorded answer — an
unknown digest (the prompt, rubric, answer or prompt version changed since recording), or a sample index beyond
the recorded samples — raises :class:`ReplayMissError` naming it: never a silent live call, never a made-up verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from evallab.errors import EvallabError, ReplayMissError
from evallab.judges._prompts import request_digest
from evallab.judges._recordings import Entry, Recording, load_recording, load_recordings
from evallab.judges._types import JudgeReply, JudgeRequest


def _collect(sources) -> list[Recording]:
    recs: list[Recording] = []
    for src in sources:
        if isinstance(src, Recording):
            recs.append(src)
        elif isinstance(src, Mapping):
            recs.extend(src.values())
        elif isinstance(src, (str, Path)):
            p = Path(src)
            recs.extend(load_recordings(p).values() if p.is_dir() else [load_recording(p)])
        elif isinstance(src, Iterable):
            recs.extend(_collect(src))
        else:
            raise EvallabError(f"ReplayJudge: cannot read recordings from {type(src).__name__}; expected a "
                               "Recording, a recording file or a folder of them")
    return recs


class ReplayJudge:
    """A judge that answers from recordings.

    Parameters
    ----------
    *recordings : Recording, path to a recording file or folder, dict of recordings, or lists of these
    label : str, optional
        ``judge`` column (default: the recordings' ``judge`` label).
    model : str, optional
        ``model`` column (default: the recordings' ``judgeModel``).

    Raises
    ------
    EvallabError
        No recording given; ``RecordingError`` for an unreadable file.
    """

    def __init__(self, *recordings, label: str | None = None, model: str | None = None) -> None:
        recs = _collect(recordings)
        if not recs:
            raise EvallabError("ReplayJudge: no recordings given (or the folder holds no *.json)")
        self.recordings = recs
        self._by_digest: dict[str, tuple[Recording, Entry]] = {}
        for r in recs:
            for e in r.entries:
                self._by_digest.setdefault(e.request_digest, (r, e))
        self.label = label or next((r.judge for r in recs if r.judge), "replay")
        self.model = model or next((r.judge_model for r in recs if r.judge_model), "")
        self.prompt_versions = sorted({r.judge_prompt_version for r in recs})
        self.stats_hits = 0

    def __repr__(self) -> str:
        return f"ReplayJudge({len(self.recordings)} recordings, {len(self._by_digest)} entries, label={self.label!r})"

    def __len__(self) -> int:
        return len(self._by_digest)

    def lookup(self, request: JudgeRequest) -> tuple[Recording, Entry]:
        """The (recording, entry) answering ``request``; raises :class:`ReplayMissError` naming it."""
        digest = request_digest(request)
        hit = self._by_digest.get(digest)
        if hit is None:
            meta = request.metadata
            what = ", ".join(f"{k}={meta[k]!r}" for k in ("scenario_id", "kind", "item_id", "anchor_set", "order",
                                                          "sample") if k in meta)
            stale = "" if request.prompt_version in self.prompt_versions else (
                f"; the recordings use prompt version(s) {self.prompt_versions}, the request "
                f"{request.prompt_version!r}")
            raise ReplayMissError(f"no recorded answer for request {digest[:12]}… ({what or 'no metadata'}){stale}; "
                                  "re-record it with a live judge (evallab judge ... --record PATH, or "
                                  "evallab judge-check ... --record DIR)")
        return hit

    async def judge(self, request: JudgeRequest) -> JudgeReply:
        """The recorded sample ``metadata["sample"]`` (0-based) of the request's entry.

        Raises
        ------
        ReplayMissError
            Unknown digest, or fewer recorded samples than the index asked for.
        """
        rec, entry = self.lookup(request)
        j = int(request.metadata.get("sample", 0) or 0)
        if j >= len(entry.samples):
            raise ReplayMissError(f"{rec.path or 'recording'}: entry {entry.scenario_id}/{entry.kind} holds "
                                  f"{len(entry.samples)} sample(s); sample {j} was asked for — record more samples")
        s = entry.samples[j]
        self.stats_hits += 1
        return JudgeReply(raw=s.reason, verdict=s.verdict, reason=s.reason, model=rec.judge_model or None,
                          error=s.error, cached=True)
