"""The job runner: send judge requests, append each reply as it arrives, resume, record, show progress.

:func:`run_jobs` (sync; also works inside a running Jupyter event loop) and :func:`arun_jobs` (async) take a
judge and a list of :class:`~evallab.judges._types.JudgeRequest` and return the tidy verdict table
(:mod:`evallab.verdicts`), one row per reply.

Output and resume. With ``out=`` each reply is appended to a JSON-lines journal the moment it arrives (flushed
line by line: a crash or ``SIGKILL`` loses nothing already answered). ``out`` may be ``.jsonl`` (the journal is the
file itself), ``.parquet`` or ``.csv`` (the journal ``<out>.journal.jsonl`` is folded into ``out`` when the run
ends — also after an error — and then removed). A rerun reads ``out`` and its journal and skips a row only when
its key (:data:`evallab.verdicts.KEY`) is answered AND its stored ``sent_digest`` (:func:`sent_digest`: the
prompt version, reply kind, model, messages, temperature, seed, max tokens and extra body fields) equals the new
request's: a row whose request changed since it was written (rubric, answer, anchors, k, seed, temperature ...)
is asked again and REPLACED, and the count is reported (``RunStats.reasked``, a warning in the log). Failed calls
are retried. The output ends with one row per key, the latest: a ``.jsonl`` output that got a second row for a key
is rewritten atomically (temporary file + ``os.replace``) when the run ends.

One run per output at a time: a run holds an exclusive lock on ``<out>.lock`` (``flock`` on POSIX, so a killed
run's lock goes with its process) while it reads, appends to and folds its output, and names itself in
``<out>.lock.owner`` (pid, host, start time); both files are removed when the run ends, also after an error
(:mod:`evallab.judges._outlock`). A second run on the same output stops at once with an error naming
the holder, or waits for it (``wait=``, ``--wait``) and then resumes from what the first one wrote — so two runs
never duplicate rows nor make the same paid call twice. The reply cache is an sqlite file in WAL mode, shared
safely by processes (:mod:`evallab.judges._cache`).

Progress: a tqdm bar per run with live calls/s, cache hits, errors (unparsed + failed calls) and cost so far.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import hashlib
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evallab import verdicts as V
from evallab.errors import EvallabError, OutputBusyError
from evallab.judges import _jsoncodec as jsoncodec
from evallab.judges._prompts import request_digest
from evallab.judges._recordings import KINDS, Entry, Recording, Sample, load_recording, write_recording
from evallab.judges._types import Judge, JudgeReply, JudgeRequest

#: metadata keys that become the tidy columns of the same name
META_COLUMNS = ("item_id", "dataset", "subset", "strategy", "anchor_set", "order", "sample", "gold")
#: requests whose cached replies are looked up in one query (the judge's ``prefetch``), just before they are asked
PREFETCH_CHUNK = 256
#: columns the runner adds beyond the tidy schema
EXTRA_COLUMNS = ("prompt", "prompt_sha256", "reason", "request_digest", "sent_digest", "cached", "failed", "system_fingerprint", "raw",
                 "response_format", "verdict_logprob", "failure_kind", "verdict_source", "reasoning",
                 "reasoning_sha256", "reasoning_chars", "adapted", "reasoning_effort", "reasoning_tokens",
                 "cached_tokens")

log = logging.getLogger("evallab.judges")


@dataclass
class RunStats:
    """Counters of one run: replies written, live HTTP calls, cache hits, unparsed replies, failed calls, cost.

    ``skipped`` = rows already in ``out`` for the same request; ``reasked`` = rows in ``out`` whose request changed
    since they were written (asked again, the old row replaced); ``batch_replies`` = replies that came through the
    Batch API (``calls`` counts the completions asked one by one). ``cost_usd`` is the USD cost of this run's live
    replies, or ``None`` (unknown) when ``unpriced`` > 0 of them have no price (a model missing from the price
    table) — never a 0 that hides them.
    """

    total: int = 0
    skipped: int = 0
    reasked: int = 0
    replies: int = 0
    calls: int = 0
    cache_hits: int = 0
    unparsed: int = 0
    failed: int = 0
    cost_usd: float | None = 0.0
    unpriced: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    batch_replies: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    #: live replies with a parsed verdict (the denominator of :attr:`cost_per_verdict`)
    verdicts: int = 0
    #: rows by failure kind (``refusal``, ``empty``, ``cut``, ``reasoning_only``, ``unparsed``, ``transient``)
    failure_kinds: dict | None = None
    #: rows whose body was adapted to the model, by what was changed ("temperature 0 not sent (model default)")
    adapted: dict | None = None
    #: rows whose verdict was read from the reasoning (``verdict_from_reasoning=True``)
    from_reasoning: int = 0

    @property
    def errors(self) -> int:
        return self.unparsed + self.failed

    @property
    def cost_per_verdict(self) -> float | None:
        """USD of this run's live replies per parsed verdict among them (refusals, cut and unparsed replies are
        paid for too); ``None`` when the cost is unknown or no live reply gave a verdict."""
        if self.cost_usd is None or self.unpriced or not self.verdicts:
            return None
        return self.cost_usd / self.verdicts


def _scalar(v):
    if isinstance(v, float) and v != v:  # NaN (an empty CSV/parquet cell) → None
        return None
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    try:
        if pd.isna(v):
            return None
    except (TypeError, ValueError):
        pass
    if hasattr(v, "item"):
        return v.item()
    return json.dumps(v, ensure_ascii=False, default=str)


def reply_row(judge: Judge, request: JudgeRequest, reply: JudgeReply, digest: str | None = None,
              keryx_digest: str | None = None) -> dict:
    """One tidy row (a dict) for ``reply`` to ``request``.

    Tidy columns come from the request metadata (``strategy`` defaults to :func:`default_strategy`, ``anchor_set`` to
    ``"none"``, ``order`` to ``""``, ``sample`` to 0) and the reply; extra metadata keys are kept as columns;
    ``raw`` keeps the reply text only when the verdict is NA. ``digest``: the request's :func:`sent_digest` when
    already computed; ``keryx_digest`` its :func:`~evallab.judges._prompts.request_digest` when already computed.
    """
    m = request.metadata
    row = {
        "item_id": str(m.get("item_id", "")), "dataset": str(m.get("dataset", "") or ""),
        "subset": str(m.get("subset", "") or ""), "judge": judge.label,
        "model": reply.model or getattr(judge, "model", None) or None,
        "strategy": str(m.get("strategy") or default_strategy(request)),
        "anchor_set": str(m.get("anchor_set") or "none"), "order": str(m.get("order") or ""),
        "sample": int(m.get("sample", 0) or 0), "verdict": reply.verdict, "gold": _scalar(m.get("gold")),
        "score": getattr(reply, "score", None), "error": reply.error, "latency_s": reply.latency_s,
        "input_tokens": reply.usage.input_tokens, "output_tokens": reply.usage.output_tokens,
        "cost_usd": reply.usage.cost_usd,
        "reason": reply.reason, "request_digest": keryx_digest or request_digest(request),
        "sent_digest": digest or sent_digest(judge, request), "cached": bool(reply.cached),
        "failed": bool(reply.failed), "system_fingerprint": reply.system_fingerprint,
        "raw": reply.raw if reply.verdict is None else None,
    }
    if getattr(reply, "response_format", "text") != "text":
        row["response_format"] = reply.response_format
    if getattr(reply, "logprob", None) is not None:
        row["verdict_logprob"] = reply.logprob
    kind = getattr(reply, "failure_kind", None)
    if kind is not None:
        row["failure_kind"] = kind
    if getattr(reply, "verdict_source", "answer") != "answer":
        row["verdict_source"] = reply.verdict_source
    text = getattr(reply, "reasoning", "")
    if text:
        if getattr(judge, "keep_reasoning", True):
            row["reasoning"] = text
        else:
            row["reasoning_sha256"] = hashlib.sha256(text.encode()).hexdigest()
            row["reasoning_chars"] = len(text)
    if getattr(reply, "adapted", ""):
        row["adapted"] = reply.adapted
    if request.reasoning_effort is not None:
        row["reasoning_effort"] = request.reasoning_effort
        if not m.get("strategy"):  # a design factor: the same items at several efforts are distinct rows
            row["strategy"] += f"@{request.reasoning_effort}"
    if reply.usage.reasoning_tokens is not None:
        row["reasoning_tokens"] = reply.usage.reasoning_tokens
    if reply.usage.cached_tokens is not None:
        row["cached_tokens"] = reply.usage.cached_tokens
    for k, v in m.items():
        if k not in row:
            row[k] = _scalar(v)
    return row


def default_strategy(request: JudgeRequest) -> str:
    """The ``strategy`` of a row whose request names none: a user template's identity ``name@sha256[:12]`` (its
    prompt version is ``template:<name>:<sha256>``, :mod:`evallab.judges._templates`), else the prompt version
    (the built-in prompts: ``evallab-2026-11-29.1`` ..., as before templates)."""
    v = request.prompt_version or ""
    if v.startswith("template:") and v.count(":") >= 2:
        name, sha = v[len("template:"):].rsplit(":", 1)
        return f"{name}@{sha[:12]}"
    return v


def sent_digest(judge: Judge, request: JudgeRequest) -> str:
    """sha256 hex of what is asked: :func:`~evallab.judges._cache.canonical_json` of ``{"body", "kind",
    "prompt_version"}`` (keys sorted, a response schema's ``properties`` in the order sent) — the body sent — ``judge.body(request)`` when the judge has one (model, messages, temperature, seed, max tokens,
    extra body fields), else the same fields built from the request and ``judge.model``.

    Unlike :func:`~evallab.judges._prompts.request_digest` (the keryx digest of the prompt text, used by
    recordings) it changes with the temperature, seed, max tokens and model too; the runner's resume compares it.
    """
    encoded = getattr(judge, "encoded", None)
    if callable(encoded):  # the judge encodes what it sends once; the digest of that same string
        return encoded(request).sent_digest
    from evallab.judges._cache import canonical_json, chat_body

    body = judge.body(request) if callable(getattr(judge, "body", None)) else \
        chat_body(str(getattr(judge, "model", "") or ""), request)
    doc = {"body": body, "kind": request.kind, "prompt_version": request.prompt_version}
    return hashlib.sha256(canonical_json(doc).encode()).hexdigest()


def row_key(row: dict) -> tuple:
    """The verdict-table key of a row: (dataset, item_id, judge, strategy, anchor_set, order, sample)."""
    return (str(row.get("dataset") or ""), str(row.get("item_id") or ""), str(row.get("judge") or ""),
            str(row.get("strategy") or ""), str(row.get("anchor_set") or "none"), str(row.get("order") or ""),
            int(row.get("sample") or 0))


def request_key(judge: Judge, request: JudgeRequest) -> tuple:
    m = request.metadata
    strategy = str(m.get("strategy") or default_strategy(request))
    if request.reasoning_effort is not None and not m.get("strategy"):
        strategy += f"@{request.reasoning_effort}"
    return (str(m.get("dataset", "") or ""), str(m.get("item_id", "")), judge.label, strategy,
            str(m.get("anchor_set") or "none"), str(m.get("order") or ""), int(m.get("sample", 0) or 0))


def _output_format(out: str | Path) -> str:
    """``"jsonl"``, ``"parquet"`` or ``"csv"`` from ``out``'s suffix; :class:`EvallabError` for any other."""
    suffix = Path(out).suffix.lower()
    if suffix not in (".jsonl", ".parquet", ".csv"):
        raise EvallabError(f"{out}: unknown output format {suffix!r}; expected .parquet, .jsonl or .csv")
    return suffix[1:]


class _Output:
    """Append-as-you-go output with a JSON-lines journal (see module docstring)."""

    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)
        self.fmt = _output_format(self.out)
        self.journal = self.out if self.fmt == "jsonl" else self.out.with_name(self.out.name + ".journal.jsonl")
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.rows: dict[tuple, dict] = {}
        self.dupes = 0  # rows superseded by a later row of the same key (a .jsonl output is rewritten on close)
        self._load()
        self._fh = None

    def _load(self) -> None:
        rows: list[dict] = []
        if self.fmt != "jsonl" and self.out.exists():
            try:
                df = pd.read_parquet(self.out) if self.fmt == "parquet" else pd.read_csv(
                    self.out, dtype=str, keep_default_na=False, na_values=[""])
            except Exception as exc:  # noqa: BLE001 — any reader failure is a bad file
                raise EvallabError(f"{self.out}: cannot read the existing output to resume ({exc}); move it away "
                                   "to start afresh") from None
            rows.extend({k: _scalar(v) for k, v in r.items()} for r in df.to_dict("records"))
        if self.journal.exists():
            data = self.journal.read_bytes()
            cut = data.rfind(b"\n") + 1
            if cut < len(data):  # a line cut short by a crash: drop it (its reply is asked again)
                with open(self.journal, "r+b") as fh:
                    fh.truncate(cut)
                data = data[:cut]
            for i, line in enumerate(data.decode("utf-8").splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    rows.append(jsoncodec.loads(line))
                except ValueError:
                    raise EvallabError(f"{self.journal}, line {i}: not valid JSON; expected one reply per line "
                                       "(fix or delete the line to resume)") from None
        for r in rows:
            if r.get("order") is None:
                r["order"] = ""
            for c in ("cached", "failed"):  # CSV cells come back as text
                if isinstance(r.get(c), str):
                    r[c] = r[c] == "True"
            k = row_key(r)
            if k in self.rows:
                self.dupes += 1
            self.rows[k] = r  # the latest row of a key wins (a retry, or a re-ask after the request changed)

    def status(self, key: tuple, digest: str, keryx_digest: str) -> str:
        """``"done"`` (answered, same request), ``"changed"`` (answered for another request) or ``"todo"``.

        ``digest`` is the request's :func:`sent_digest`; a row written before that column existed is compared by
        its keryx ``request_digest`` instead.
        """
        r = self.rows.get(key)
        if r is None or r.get("failed"):
            return "todo"
        stored = r.get("sent_digest")
        same = stored == digest if stored else r.get("request_digest") == keryx_digest
        return "done" if same else "changed"

    def append(self, row: dict) -> None:
        if self._fh is None:  # an O_APPEND descriptor: one write(2) per row, nothing buffered in the process
            self._fh = os.open(self.journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        data = jsoncodec.dumps(row) + b"\n"
        while data:  # a regular file takes it whole; a short write (a signal, a full disk) is completed
            data = data[os.write(self._fh, data):]
        k = row_key(row)
        if k in self.rows:
            self.dupes += 1
        self.rows[k] = row

    def close(self) -> None:
        if self._fh is not None:
            os.close(self._fh)
            self._fh = None
        if self.fmt == "jsonl":
            if self.dupes:  # a key written twice: keep its latest row only, atomically
                tmp = self.out.with_name(self.out.name + ".tmp")
                with open(tmp, "w", encoding="utf-8") as fh:
                    for r in self.rows.values():
                        fh.write(jsoncodec.dumps_text(r) + "\n")
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, self.out)
                self.dupes = 0
            return
        if not self.journal.exists():
            return
        df = _table(list(self.rows.values()))
        tmp = self.out.with_name(self.out.name + ".tmp")
        if self.fmt == "parquet":
            try:
                df.to_parquet(tmp, index=False)
            except Exception:  # noqa: BLE001 — mixed-type extra metadata: store extras as text
                extra = [c for c in df.columns if c not in V.SCHEMA]
                df.astype({c: "string" for c in extra}).to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False)
        os.replace(tmp, self.out)
        self.journal.unlink()


def _share_groups(judge: Judge, todo: list[tuple[JudgeRequest, tuple]]):
    """Queue items ``(index, request, key)`` — or ``(index, [requests], [keys])`` for the samples of one request
    that the judge can ask in one HTTP request (``judge.can_share``: equal but for the sample index; see
    :meth:`~evallab.judges.OpenAICompatibleJudge.judge_samples`), at the index of the first of them."""
    can = getattr(judge, "can_share", None)
    if not callable(can) or not getattr(judge, "share_samples", False):
        yield from ((i, r, k) for i, (r, k) in enumerate(todo))
        return
    groups: dict[tuple, list[int]] = {}
    for i, (r, k) in enumerate(todo):
        if can(r):
            g = (k[:-1], r.temperature, r.max_tokens, r.kind, r.prompt_version, r.reasoning_effort,
                 r.thinking_budget, tuple(r.messages))
            groups.setdefault(g, []).append(i)
    first = {ix[0]: ix for ix in groups.values() if len(ix) > 1}
    grouped = {i for ix in first.values() for i in ix}
    for i, (r, k) in enumerate(todo):
        if i in first:
            yield i, [todo[j][0] for j in first[i]], [todo[j][1] for j in first[i]]
        elif i not in grouped:
            yield i, r, k


def _owner_text(owner: Path) -> str:
    try:
        doc = json.loads(owner.read_text(encoding="utf-8"))
        return f"pid {doc['pid']} on {doc['host']}, started {doc['started']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that did not name itself"


async def _lock_output(out: Path, wait: bool | float):
    """Take the exclusive lock of ``out`` (waiting up to ``wait`` seconds, forever for ``True``, not at all for
    ``False``) and name this process in ``<out>.lock.owner``; returns the lock (release it when done). Both files
    are removed on release (:mod:`evallab.judges._outlock`)."""
    import socket

    from evallab.judges._outlock import LockTimeout, OutputLock

    out.parent.mkdir(parents=True, exist_ok=True)
    lock = OutputLock(str(out) + ".lock")
    owner = Path(str(out) + ".lock.owner")
    timeout = -1 if wait is True else (0 if wait is False else float(wait))
    try:
        if timeout == 0:
            lock.acquire(timeout=0)
        else:
            await asyncio.to_thread(lock.acquire, timeout=timeout, poll_interval=0.05)
    except LockTimeout:
        raise OutputBusyError(f"{out} is being written by another run ({_owner_text(owner)}); wait for it to "
                              "finish, or pass --wait (wait=True) to resume after it") from None
    owner.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                 "started": _dt.datetime.now().astimezone().isoformat(timespec="seconds")}),
                     encoding="utf-8")
    return lock, owner


def _unlock_output(held) -> None:
    lock, owner = held
    try:
        owner.unlink(missing_ok=True)
    finally:
        lock.release()


def _table(rows: list[dict]) -> pd.DataFrame:
    if not rows:
        return V.empty()
    df = pd.DataFrame(rows)
    for c in ("cached", "failed"):
        if c in df.columns:
            df[c] = df[c].map(lambda v: v if v is None or isinstance(v, bool) else str(v) == "True").astype("boolean")
    return V.coerce(df)


def _fmt_cost(x: float | None, unpriced: int = 0) -> str:
    """``$0.0123`` / ``$12.34``; ``unknown (N unpriced)`` when some replies have no price."""
    if unpriced or x is None:
        return f"unknown ({unpriced} unpriced)" if unpriced else "unknown"
    return f"${x:.4f}" if x < 10 else f"${x:,.2f}"


class _Progress:
    def __init__(self, enabled: bool, total: int, initial: int, label: str, stats: RunStats) -> None:
        self.bar = None
        self.stats = stats
        self.t0 = time.perf_counter()
        self._last = 0.0
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=initial, desc=f"judge {label}", unit="reply", file=sys.stderr,
                            dynamic_ncols=True, mininterval=0.2)

    def update(self, force: bool = False) -> None:
        if self.bar is None:
            return
        if not force:
            self.bar.update(1)
        now = time.perf_counter()
        if force or now - self._last > 0.25:
            s = self.stats
            dt = max(now - self.t0, 1e-9)
            cost = "nothing" if not s.calls and not s.cost_usd else _fmt_cost(s.cost_usd, s.unpriced)
            self.bar.set_postfix_str(f"calls/s={s.calls / dt:.1f} hits={s.cache_hits} errors={s.errors} "
                                     f"cost={cost}", refresh=False)
            self._last = now

    def close(self) -> None:
        if self.bar is not None:
            self.update(force=True)
            self.bar.close()


async def arun_jobs(judge: Judge, requests: Sequence[JudgeRequest], *, out: str | Path | None = None,
                    progress: bool = True, record: str | Path | None = None,
                    max_in_flight: int | None = None, wait: bool | float = False, batch: bool = False,
                    poll_interval: float = 5.0) -> pd.DataFrame:
    """Async :func:`run_jobs` (same parameters); call it with ``await`` from a running event loop."""
    if out is not None:
        _output_format(out)  # before the lock file is made
    held = await _lock_output(Path(out), wait) if out is not None else None
    try:
        return await _arun_jobs(judge, requests, out=out, progress=progress, record=record,
                                max_in_flight=max_in_flight, batch=batch, poll_interval=poll_interval)
    finally:
        if held is not None:
            _unlock_output(held)


async def _arun_jobs(judge: Judge, requests: Sequence[JudgeRequest], *, out, progress, record,
                     max_in_flight, batch=False, poll_interval=5.0) -> pd.DataFrame:
    if batch and out is None:
        raise EvallabError("a Batch API run needs out= (the batch id is kept beside the output to resume)")
    requests = list(requests)
    prepare = getattr(judge, "prepare", None)
    if prepare is not None and requests:  # e.g. detect the structured-output dialect: it enters sent_digest
        await prepare(requests[0])
    keys = [request_key(judge, r) for r in requests]
    seen: dict[tuple, int] = {}
    for i, k in enumerate(keys):
        if not k[1]:
            raise EvallabError(f"request {i + 1}: metadata has no 'item_id'; every request needs one")
        g = requests[i].metadata.get("gold")
        if g is not None and V.norm_label(_scalar(g)) not in (None, *V.VERDICTS):  # the table would refuse it
            raise EvallabError(f"request {i + 1} (item_id {k[1]!r}): metadata gold {g!r}; expected one of "
                               f"{list(V.VERDICTS)} or empty (NA)")
        if k in seen:
            raise EvallabError(f"requests {seen[k] + 1} and {i + 1} have the same key {dict(zip(V.KEY, k, strict=True))}; "
                               "vary 'sample' (repeats), 'order' or 'anchor_set'")
        seen[k] = i
    sink = _Output(out) if out is not None else None
    results: dict[tuple, dict] = {}
    todo = []
    reasked = 0
    digests: dict[tuple, str] = {}
    keryx: dict[tuple, str] = {}
    resuming = sink is not None and bool(sink.rows)  # else every request is new: digests are taken as replies come
    for r, k in zip(requests, keys, strict=True):
        state = "todo"
        if resuming:
            digests[k] = sent_digest(judge, r)
            keryx[k] = request_digest(r)
            state = sink.status(k, digests[k], keryx[k])
        if state == "done":
            results[k] = sink.rows[k]
        else:
            reasked += state == "changed"
            todo.append((r, k))
    stats = RunStats(total=len(requests), skipped=len(requests) - len(todo), reasked=reasked)
    if reasked:
        log.warning("%s: %d row(s) asked again because their request changed since they were written (prompt, "
                    "anchors, temperature, seed, max tokens or model); their old rows are replaced", out, reasked)
    prefetch = getattr(judge, "prefetch", None)
    if not callable(prefetch) or batch:
        prefetch = None
    # cache lookups in chunks of PREFETCH_CHUNK requests, each just before the workers reach it: one query per
    # chunk, not one per request, and the first request is sent without waiting for the whole run to be encoded
    ahead = [0]
    bar = _Progress(progress, len(requests), stats.skipped, judge.label, stats)
    jstats = getattr(judge, "stats", None)
    calls0 = getattr(jstats, "calls", 0)
    queue: asyncio.Queue = asyncio.Queue()
    for item in _share_groups(judge, todo) if not batch else ((i, r, k) for i, (r, k) in enumerate(todo)):
        queue.put_nowait(item)
    # twice the judge's concurrency: a worker busy writing its row never leaves an HTTP slot idle
    n_workers = max(1, min(len(todo), max_in_flight or 2 * getattr(judge, "max_concurrency", 16)))
    t0 = time.perf_counter()

    def record_reply(req: JudgeRequest, key: tuple, reply: JudgeReply) -> None:
        row = reply_row(judge, req, reply, digests.get(key), keryx.get(key))
        results[key] = row
        if sink is not None:
            sink.append(row)
        stats.replies += 1
        stats.cache_hits += bool(reply.cached)
        stats.failed += bool(reply.failed)
        stats.unparsed += reply.verdict is None and not reply.failed
        kind = getattr(reply, "failure_kind", None)
        if kind is not None:
            fk = stats.failure_kinds if stats.failure_kinds is not None else {}
            fk[kind] = fk.get(kind, 0) + 1
            stats.failure_kinds = fk
        if getattr(reply, "adapted", ""):
            ad = stats.adapted if stats.adapted is not None else {}
            ad[reply.adapted] = ad.get(reply.adapted, 0) + 1
            stats.adapted = ad
        stats.from_reasoning += getattr(reply, "verdict_source", "answer") == "reasoning"
        if not reply.cached:
            u = reply.usage
            if u.cost_usd is not None:
                stats.cost_usd += u.cost_usd
            elif not reply.failed:
                stats.unpriced += 1
            stats.input_tokens += u.input_tokens or 0
            stats.output_tokens += u.output_tokens or 0
            stats.reasoning_tokens += getattr(u, "reasoning_tokens", None) or 0
            stats.cached_tokens += getattr(u, "cached_tokens", None) or 0
            stats.verdicts += reply.verdict is not None
        stats.calls = getattr(jstats, "calls", 0) - calls0
        bar.update()

    async def worker() -> None:
        while True:
            try:
                i, req, key = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if prefetch is not None and i >= ahead[0]:
                ahead[0] = i + PREFETCH_CHUNK
                prefetch([r for r, _ in todo[i:ahead[0]]])
            if isinstance(req, list):  # samples of one request, asked together (judge.judge_samples)
                for r, k, reply in zip(req, key, await judge.judge_samples(req), strict=True):
                    record_reply(r, k, reply)
            else:
                record_reply(req, key, await judge.judge(req))

    tasks = [] if batch else [asyncio.ensure_future(worker()) for _ in range(n_workers)]
    try:
        if batch and todo:
            from evallab.judges._batch import run_openai_batch

            n0 = stats.replies
            await run_openai_batch(judge, todo, Path(str(out) + ".batch.json"), record_reply,
                                   poll_interval=poll_interval, progress=progress,
                                   batch_discount=getattr(judge, "batch_discount", 0.5))
            stats.batch_replies = stats.replies - n0
            stats.calls = getattr(jstats, "calls", 0) - calls0
        if tasks:
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for t in pending:
                t.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
            for t in done:
                if t.exception() is not None:
                    raise t.exception()
    finally:
        for t in tasks:
            t.cancel()
        stats.calls = getattr(jstats, "calls", 0) - calls0
        stats.seconds = time.perf_counter() - t0
        bar.close()
        flush = getattr(getattr(judge, "cache", None), "flush", None)
        if flush is not None:
            flush()
        if sink is not None:
            sink.close()
        if record is not None:
            write_run_recording(judge, requests, keys, results, record)
    ordered = [results[k] for k in keys if k in results]
    df = _table(ordered)
    if stats.unpriced:
        stats.cost_usd = None
    df.attrs["run"] = stats.__dict__ | {"errors": stats.errors, "cost_per_verdict": stats.cost_per_verdict}
    return df


def run_jobs(judge: Judge, requests: Sequence[JudgeRequest], *, out: str | Path | None = None,
             progress: bool = True, record: str | Path | None = None,
             max_in_flight: int | None = None, wait: bool | float = False, batch: bool = False,
             poll_interval: float = 5.0) -> pd.DataFrame:
    """Run judge requests and return the tidy verdict table (one row per reply, in request order).

    Parameters
    ----------
    judge : Judge
        e.g. :class:`~evallab.judges.OpenAICompatibleJudge` or :class:`~evallab.judges.ReplayJudge`.
    requests : sequence of JudgeRequest
        Each with ``metadata["item_id"]``; metadata ``dataset, subset, strategy, anchor_set, order, sample, gold``
        become the tidy columns, other keys extra columns. Keys (:data:`evallab.verdicts.KEY`) must be unique.
    out : path, optional
        ``.parquet``, ``.jsonl`` or ``.csv``: every reply is appended as it arrives; rows already there for the
        same request (same :func:`sent_digest`) are skipped (resume), rows whose request changed are asked again
        and replaced, failed calls are retried; the file ends with one row per key.
    progress : bool
        Show a tqdm bar (calls/s, cache hits, errors, cost).
    record : path, optional
        Write (or update) a keryx-format recording of this run's replies there (:func:`write_run_recording`).
    max_in_flight : int, optional
        Worker count (default: twice the judge's ``max_concurrency``, or 32; the judge itself bounds the
        requests in flight).
    wait : bool or float
        When another run holds ``out``'s lock: ``False`` stops at once with :class:`OutputBusyError` naming the
        holder; ``True`` waits for it (then resumes from its rows); a number waits that many seconds at most.
    batch : bool
        Send the requests still to answer through the OpenAI Batch API (:mod:`evallab.judges._batch`; needs
        ``out``, beside which the batch id is kept so a restarted run resumes the same batch); cost at the batch
        price (``judge.batch_discount``, default 0.5).
    poll_interval : float
        Seconds between batch status polls.

    Returns
    -------
    DataFrame
        The tidy verdict table plus ``reason, request_digest, sent_digest, cached, failed, system_fingerprint,
        raw`` and extra metadata columns; ``df.attrs["run"]`` holds the :class:`RunStats` of this run (rows
        skipped, rows re-asked because their request changed, calls, cache hits, errors, cost, seconds).

    Raises
    ------
    EvallabError
        Duplicate keys or a request without ``item_id``; :class:`OutputBusyError` when another run holds ``out``; :class:`~evallab.judges._client.JudgeFatalError` (e.g.
        HTTP 401) or :class:`~evallab.judges._replay.ReplayMissError` stop the run at once — rows already answered
        are kept in ``out``.
    """
    async def main() -> pd.DataFrame:
        try:
            return await arun_jobs(judge, requests, out=out, progress=progress, record=record,
                                   max_in_flight=max_in_flight, wait=wait, batch=batch,
                                   poll_interval=poll_interval)
        finally:
            close = getattr(judge, "aclose", None)
            if close is not None:
                await close()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with ThreadPoolExecutor(1) as ex:  # inside Jupyter's running loop: run on a loop of our own
        return ex.submit(asyncio.run, main()).result()


def _entry_ids(meta: dict, order: str, anchor_set: str) -> tuple[str, str]:
    sid = str(meta.get("scenario_id") or meta.get("item_id"))
    kind = str(meta.get("kind") or meta.get("answer_kind") or "item")
    if anchor_set not in ("", "none"):
        kind += f"@{anchor_set}"
    if order:
        kind += f"#{order}"
    return sid, kind


#: verdict-table columns kept in a recording's samples (:data:`evallab.judges._recordings.SAMPLE_EXTRAS`)
_RECORDED_EXTRAS = (("reasoning", "reasoning"), ("reasoning_sha256", "reasoningSha256"),
                    ("reasoning_chars", "reasoningChars"), ("failure_kind", "failureKind"),
                    ("verdict_source", "verdictSource"))


def write_run_recording(judge: Judge, requests: Sequence[JudgeRequest], keys: Sequence[tuple],
                        rows: dict[tuple, dict], path: str | Path) -> Path:
    """Write the replies of a run as a keryx-format recording at ``path`` (merged into an existing one).

    One entry per distinct request digest (``scenarioId`` = metadata ``scenario_id`` or ``item_id``; ``kind`` =
    metadata ``kind`` or ``"item"``, suffixed ``@<anchor_set>`` and ``#<order>`` when set), samples in ``sample`` order with
    ``verdict``, ``reason`` and ``error``. An ``evallab`` object records the prompt kind and base URL (never a key).

    Rows whose call failed (``failed=True``: no reply after the retries) are not recorded — replaying them is a
    :class:`~evallab.judges._replay.ReplayMissError`, not an unparsed reply. A recording stores samples by
    position, so an entry keeps samples ``0..n-1`` only while they are contiguous: samples after a missing index
    are dropped (and counted in a warning), never shifted onto a lower index. An entry left with no sample is not
    written.
    """
    path = Path(path)
    versions = sorted({r.prompt_version for r in requests})
    if len(versions) > 1:
        raise EvallabError(f"{path}: one recording holds one prompt version; this run mixes {versions}")
    base = load_recording(path) if path.exists() else None
    entries: dict[str, Entry] = {}
    ids: dict[tuple[str, str], str] = {}
    if base is not None and base.judge_prompt_version in versions:
        for e in base.entries:
            entries[e.request_digest] = e
            ids[(e.scenario_id, e.kind)] = e.request_digest
    grouped: dict[str, dict[int, Sample]] = {}
    first: dict[str, JudgeRequest] = {}
    dropped: list[str] = []
    for req, k in zip(requests, keys, strict=True):
        row = rows.get(k)
        if row is None or row.get("failed") is True or str(row.get("failed")) == "True":
            continue
        dg = row.get("request_digest") or request_digest(req)
        extra = {camel: _scalar(row.get(col)) for col, camel in _RECORDED_EXTRAS if _scalar(row.get(col)) is not None}
        s = Sample(row.get("verdict"), str(row.get("reason") or ""), row.get("error"), extra)
        if s.verdict is None and not s.error:
            s.error = "no verdict"
        grouped.setdefault(dg, {})[int(row.get("sample") or 0)] = s
        first.setdefault(dg, req)
    for dg, samples in grouped.items():
        req = first[dg]
        sid, kind = _entry_ids(req.metadata, str(req.metadata.get("order") or ""),
                               str(req.metadata.get("anchor_set") or "none"))
        if ids.get((sid, kind), dg) != dg:
            kind = f"{kind}~{dg[:8]}"
        old = entries.get(dg)
        merged = {i: s for i, s in enumerate(old.samples)} if old is not None else {}
        merged.update(samples)
        n = 0
        while n in merged:  # contiguous from 0: a sample is replayed by its position
            n += 1
        if n < len(merged):
            dropped.append(f"{sid}/{kind}: sample(s) {sorted(i for i in merged if i > n)} (sample {n} missing)")
        if n == 0:
            continue
        entries[dg] = Entry(sid, kind, dg, [merged[i] for i in range(n)])
        ids[(sid, kind)] = dg
    if dropped:
        log.warning("%s: %d entr%s recorded without the samples after a missing one: %s", path, len(dropped),
                    "y" if len(dropped) == 1 else "ies", "; ".join(dropped[:5]) + (" ..." if len(dropped) > 5 else ""))
    kinds = {r.kind for r in requests}
    extra = {"evallab": {"promptKind": "/".join(sorted(kinds)),
                         "baseUrl": getattr(judge, "base_url", None),
                         "keryxKinds": all(e.kind in KINDS for e in entries.values())}}
    rec = Recording(versions[0] if versions else "", judge.label, getattr(judge, "model", "") or "",
                    _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                    list(entries.values()), extra=extra)
    return write_recording(rec, path)


def usage_summary(df: pd.DataFrame, by: Sequence[str] = ("judge", "model")) -> pd.DataFrame:
    """Totals per judge: replies, live calls, cache hits, unparsed, failed, tokens, cost (USD), mean latency (s).

    Parameters
    ----------
    df : DataFrame
        A verdict table from :func:`run_jobs` (``cached``/``failed`` columns optional).

    Returns
    -------
    DataFrame
        Columns ``by + [replies, live_calls, cache_hits, unparsed, failed, input_tokens, output_tokens, cost_usd,
        unpriced, mean_latency_s, cost_per_verdict]`` (and ``reasoning_tokens``, ``cached_tokens`` when the table
        has them); ``cost_usd`` counts every reply (cached ones at what they cost when made) and is NA when any
        answered reply of the group has no price (``unpriced`` counts them); failed calls cost nothing here;
        ``cost_per_verdict`` is ``cost_usd`` over the replies with a parsed verdict (NA when none).
    """
    by = [c for c in by if c in df.columns]
    d = df.assign(_cached=df["cached"].fillna(False).astype(bool) if "cached" in df else False,
                  _failed=df["failed"].fillna(False).astype(bool) if "failed" in df else False)
    d["_unparsed"] = d["verdict"].isna() & ~d["_failed"]
    cost = pd.to_numeric(d["cost_usd"], errors="coerce") if "cost_usd" in d else pd.Series(float("nan"), d.index)
    d["_unpriced"] = cost.isna() & ~d["_failed"]
    d["_cost"] = cost.where(~d["_failed"], 0.0)
    g = d.groupby(by, dropna=False) if by else d.groupby(lambda _: "all")
    out = g.agg(replies=("item_id", "size"), cache_hits=("_cached", "sum"), unparsed=("_unparsed", "sum"),
                failed=("_failed", "sum"), input_tokens=("input_tokens", "sum"),
                output_tokens=("output_tokens", "sum"),
                cost_usd=("_cost", lambda c: c.sum() if c.notna().all() else float("nan")),
                unpriced=("_unpriced", "sum"),
                mean_latency_s=("latency_s", "mean"),
                **{c: (c, "sum") for c in ("reasoning_tokens", "cached_tokens") if c in d}).reset_index()
    out.insert(len(by) + 1, "live_calls", out["replies"] - out["cache_hits"])
    parsed = out["replies"] - out["unparsed"] - out["failed"]
    out["cost_per_verdict"] = (out["cost_usd"] / parsed.where(parsed > 0)).astype(float)
    return out


def parse_judge_spec(spec: str) -> dict:
    """A judge named in one string (``--judge``): ``"MODEL@BASE_URL"`` or ``"replay:PATH"``.

    The split is at the LAST ``@`` followed by ``http://`` or ``https://``, so model ids may hold ``@`` and ``:``.

    Parameters
    ----------
    spec : str
        ``MODEL@BASE_URL`` (e.g. ``gpt-4o-mini@https://api.openai.com/v1``) or ``replay:PATH`` (keryx-format
        recordings, a file or a folder of them).

    Returns
    -------
    dict
        ``{"model", "base_url"}`` or ``{"replay_dir"}``.

    Raises
    ------
    EvallabError
        Any other shape, or ``replay:`` without a path.
    """
    spec = spec.strip()
    if spec.startswith("replay:"):
        path = spec[len("replay:"):]
        if not path:
            raise EvallabError("--judge replay: needs a path, e.g. replay:recordings/")
        return {"replay_dir": path}
    for scheme in ("@https://", "@http://"):
        i = spec.rfind(scheme)
        if i > 0:
            return {"model": spec[:i], "base_url": spec[i + 1:]}
    raise EvallabError(f"--judge {spec!r}; expected MODEL@BASE_URL (e.g. gpt-4o-mini@https://api.openai.com/v1) "
                       "or replay:PATH")


def make_judge(base_url: str = "", model: str = "", api_key_env: str = "", *, label: str | None = None,
               cache_dir: str | Path | None = None, replay_dir: str | Path | None = None, spec: str = "",
               refresh_cache: bool = False, prompt=None, **kw) -> Judge:
    """Build a judge from notebook/CLI literals.

    Parameters
    ----------
    base_url, model, api_key_env : str
        A live OpenAI-compatible judge (:class:`~evallab.judges.OpenAICompatibleJudge`); ``api_key_env`` is the
        NAME of the variable holding the key ("" = no key).
    label : str, optional
        The ``judge`` column.
    cache_dir : path, optional
        Folder of the reply cache ``judges.sqlite`` (default ``$EVALLAB_CACHE``, else ``.evallab-cache/`` of the
        checkout or study folder the current folder is in, else the user cache folder: :mod:`evallab.paths`).
        ``cache`` in ``kw`` overrides it: ``None`` or ``False`` runs without a cache, a path is the cache file, a
        :class:`~evallab.judges.Cache` is used as is.
    replay_dir : path, optional
        Answer offline from the keryx-format recordings in this folder/file (:class:`~evallab.judges.ReplayJudge`)
        instead of a live endpoint.
    spec : str, optional
        ``MODEL@BASE_URL`` or ``replay:PATH`` (:func:`parse_judge_spec`), instead of ``base_url`` and ``model``
        (or ``replay_dir``).
    refresh_cache : bool, default False
        Ignore the cached replies (every request goes live) and overwrite them.
    prompt : str, Path or PromptTemplate, optional
        The judge's prompt: a Jinja2 template file (rendered sandboxed; :mod:`evallab.judges._templates`), a
        built-in name (``vanilla``, ``rules``, ``pointwise``) or a template. Kept as ``judge.prompt``;
        :func:`~evallab.judges.judge_items` renders every item with it (a prompt passed to ``judge_items`` wins)
        and the rows carry its identity: ``prompt`` (``name@sha256[:12]``), ``prompt_sha256`` and, for a template
        file, ``strategy`` = ``name@sha256[:12]`` — two templates are two design cells. Requests built by hand and
        sent with :func:`run_jobs` are not re-rendered.
    **kw
        Passed to :class:`~evallab.judges.OpenAICompatibleJudge` (timeout, max_concurrency, max_retries, prices,
        cache, structured, ``param_adapt`` — the explicit override of how refused parameters are sent, e.g.
        ``{"max_tokens": "max_completion_tokens", "temperature": None}`` —, ``verdict_from_reasoning``,
        ``keep_reasoning`` ...); ignored by a replay judge.

    Returns
    -------
    Judge
        A :class:`~evallab.judges.ReplayJudge` or an :class:`~evallab.judges.OpenAICompatibleJudge`.

    Raises
    ------
    EvallabError
        Neither ``base_url`` nor ``replay_dir`` given, ``base_url`` without ``model``, or a ``spec`` of another
        shape.
    DataError
        ``prompt`` neither a built-in name nor a usable template file (one line naming it).
    """

    template = None
    if prompt is not None:
        from evallab.judges._templates import prompt_template

        template = prompt_template(prompt)
    judge = _make_judge(base_url, model, api_key_env, label=label, cache_dir=cache_dir, replay_dir=replay_dir,
                        spec=spec, refresh_cache=refresh_cache, **kw)
    if template is not None:
        judge.prompt = template
    return judge


def _make_judge(base_url, model, api_key_env, *, label, cache_dir, replay_dir, spec, refresh_cache, **kw) -> Judge:
    from evallab.judges._cache import Cache
    from evallab.judges._client import OpenAICompatibleJudge
    from evallab.judges._replay import ReplayJudge

    if spec:
        parsed = parse_judge_spec(spec)
        replay_dir = parsed.get("replay_dir", replay_dir)
        base_url, model = parsed.get("base_url", base_url), parsed.get("model", model)
    if replay_dir:
        return ReplayJudge(replay_dir, label=label or None, model=model or None)
    if not base_url:
        raise EvallabError("no judge configured: give a live OpenAI-compatible endpoint (command line: --judge "
                           "MODEL@BASE_URL, or --base-url and --model; notebooks: judge_base_url and judge_model) or "
                           "a replay folder of recordings")
    if not model:
        raise EvallabError(f"judge_base_url {base_url!r} given without judge_model; expected a model id")
    cache = kw.pop("cache", True)
    if cache is True:
        from evallab.paths import _cache_dir

        cache = Path(cache_dir or _cache_dir()) / "judges.sqlite"
    if isinstance(cache, (str, os.PathLike)):
        cache = Cache(cache, read=not refresh_cache)
    elif cache is False:
        cache = None
    return OpenAICompatibleJudge(base_url, model, api_key_env=api_key_env or None, label=label or None,
                                 cache=cache, **kw)


def cost_text(run: dict) -> str:
    """A run's cost in words (:attr:`RunStats.cost_usd` of ``df.attrs["run"]``): ``$0.0123``; ``nothing (no live
    call)`` for a run answered from the cache or the output; ``unknown (N replies without a price; pass
    --prices)`` when some live replies have no price.

    Parameters
    ----------
    run : dict
        The run's counters, ``df.attrs["run"]`` of :func:`run_jobs`.

    Returns
    -------
    str
    """
    n = int(run.get("unpriced", 0) or 0)
    if n or run.get("cost_usd") is None:
        return f"unknown ({n} repl{'y' if n == 1 else 'ies'} without a price; pass --prices)"
    if not run.get("calls") and not run.get("batch_replies") and not run.get("cost_usd"):
        return "nothing (no live call)"
    return _fmt_cost(run["cost_usd"])


def describe_run(run: dict) -> str:
    """One sentence of what a run did, from its counters (``df.attrs["run"]`` of :func:`run_jobs`): rows already
    in the output, rows asked again because their request changed, HTTP calls (retries included), replies through
    the Batch API, cache hits, unparsed replies, failed calls and the cost (:func:`cost_text`).

    Parameters
    ----------
    run : dict
        The run's counters.

    Returns
    -------
    str
    """
    batch = f"{run['batch_replies']} replies through the Batch API, " if run.get("batch_replies") else ""
    text = (f"{run.get('skipped', 0)} rows already there, {run.get('reasked', 0)} asked again (request changed), "
            f"{run.get('calls', 0)} HTTP calls (retries included), {batch}{run.get('cache_hits', 0)} cache hits, "
            f"{run.get('unparsed', 0)} unparsed, {run.get('failed', 0)} failed, cost {cost_text(run)}")
    if run.get("cost_per_verdict") is not None:
        text += f" (${run['cost_per_verdict']:.6f} per parsed verdict)"
    kinds = {k: n for k, n in (run.get("failure_kinds") or {}).items() if k not in ("unparsed", "transient")}
    if kinds:
        text += "; no verdict: " + ", ".join(f"{n} {k.replace('_', '-')}" for k, n in sorted(kinds.items()))
    if run.get("from_reasoning"):
        text += f"; {run['from_reasoning']} verdicts read from the reasoning (verdict_from_reasoning)"
    if run.get("reasoning_tokens"):
        text += f"; {run['reasoning_tokens']} reasoning tokens"
    if run.get("cached_tokens"):
        text += f", {run['cached_tokens']} cached prompt tokens"
    for what, n in sorted((run.get("adapted") or {}).items()):
        text += f"; sent otherwise than asked in {n} row{'s' if n != 1 else ''}: {what}"
    return text


__all__ = ["OutputBusyError", "RunStats", "arun_jobs", "cost_text", "describe_run", "make_judge", "parse_judge_spec", "reply_row", "run_jobs", "sent_digest", "usage_summary",
           "write_run_recording"]
