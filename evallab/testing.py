"""A real local OpenAI-compatible judge server for tests, demos and benchmarks.

:class:`LocalJudgeServer` serves ``POST /v1/chat/completions`` with aiohttp on 127.0.0.1 and a free port,
in a background thread (default) or a separate process (``process=True``: the server then shares neither the
event loop nor the GIL with the client, as a remote endpoint would — use it for throughput measurements). It
answers with a :class:`SimulatedJudge` whose leniency, accuracy, position bias and anchor effects are
parameters, deterministically per (seed, request content, sample index), so estimators can be checked for
recovering a bias we injected; it can hold every reply for ``latency`` seconds, answer one request at a time
(``serial=True``, like llama.cpp's server with one slot) and emulate OpenAI's rate-limit headers
(``rate_limit=``); and it injects faults (:class:`Fault`): 429 with Retry-After (seconds, an HTTP date,
``retry-after-ms``, ``x-ms-retry-after-ms``), 500/503, a dropped connection, a timeout (a reply slower than the
client waits), a malformed JSON body, empty ``choices`` or content, a reply cut by max_tokens, prose with no
verdict, a 503 echoing the API key, 400/401/403/404, refusals and quota/billing errors (OpenAI's bodies). It
speaks today's reply shapes (``reply_shape=``: content parts, ``reasoning_content``, ``reasoning``, ``thinking``,
a verdict left in the reasoning), refuses parameters with the 400 bodies OpenAI sends (``refuse_params=``, in
OpenAI's or vLLM's envelope), reports cached prompt tokens and answers ``n`` choices (``takes_n=True``). The sample index is read from the ``X-Evallab-Sample`` header only (default 0) — never from the
request's ``seed``.

Control routes (for tests): ``GET /_evallab/stats`` (requests seen, completions served, faults injected),
``POST /_evallab/reset``, ``POST /_evallab/faults`` (replace the fault list). Example::

    with LocalJudgeServer(sim=SimulatedJudge(seed=1, pass_rate=0.4), latency=0.05) as srv:
        judge = OpenAICompatibleJudge(srv.base_url, "sim-judge")
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

import httpx

from evallab.errors import ArgumentError, StateError
from evallab.judges._cache import canonical_json
from evallab.judges._prompts import anchor_headings, answer_text, shown_outputs

#: fault kinds :class:`Fault` understands
FAULT_KINDS = ("429", "500", "503", "503_echo_key", "drop", "timeout", "malformed", "empty_choices",
               "empty_content", "length_cut", "prose", "400", "401", "403", "404", "refusal", "insufficient_quota",
               "billing_hard_limit")
#: how the server writes a reply (``LocalJudgeServer(reply_shape=...)``)
REPLY_SHAPES = ("string", "parts", "reasoning_content", "reasoning", "thinking", "reasoning_only")
#: the refusal a ``"refusal"`` fault sends (OpenAI's structured-output refusal shape: ``content`` null)
REFUSAL_TEXT = "I'm sorry, I can't help with that request."
#: OpenAI's 429 body when the account is out of credit (as quoted in public bug reports, e.g. NextChat#3123)
QUOTA_BODY = {"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
                        "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}}
#: OpenAI's body when the billing hard limit is reached
BILLING_BODY = {"error": {"message": "Billing hard limit has been reached", "type": "invalid_request_error",
                          "param": None, "code": "billing_hard_limit_reached"}}
#: how a 429 fault says when to come back (``Fault.retry_header``)
RETRY_HEADERS = ("retry-after", "retry-after-date", "retry-after-ms", "x-ms-retry-after-ms")


@dataclass
class Fault:
    """A fault injected into the next ``times`` matching requests.

    Parameters
    ----------
    kind : str
        One of :data:`FAULT_KINDS`: ``"429"`` (with ``Retry-After: retry_after``), ``"500"``/``"503"``,
        ``"503_echo_key"`` (a 503 whose error message echoes the request's whole ``Authorization`` header, as a
        careless proxy might — clients must mask it before storing the message),
        ``"drop"`` (the connection is closed with no reply), ``"timeout"`` (the reply waits ``delay`` s),
        ``"malformed"`` (a 200 with a cut-off JSON body), ``"empty_choices"`` (a 200 with ``choices: []``),
        ``"empty_content"`` (a 200 whose message content is empty), ``"length_cut"`` (a 200 cut by max_tokens
        before any verdict: ``finish_reason: "length"``),
        ``"prose"`` (a 200 whose text holds no verdict), ``"400"``/``"401"``/``"403"``/``"404"``,
        ``"refusal"`` (a 200 with ``content: null`` and ``refusal``: :data:`REFUSAL_TEXT`), ``"insufficient_quota"``
        (HTTP 429 with :data:`QUOTA_BODY`), ``"billing_hard_limit"`` (HTTP 400 with :data:`BILLING_BODY`).
    times : int
        How many requests it hits (then it is used up); ``-1`` = every matching request.
    rate : float, optional
        Hit each matching request with this probability instead of the next ``times`` ones (``times`` still
        bounds the hits; draws from a generator seeded per server, so a run is reproducible).
    match : str, optional
        Only requests whose last user message contains this text.
    retry_after : float
        Seconds the 429 asks to wait.
    retry_header : str
        How the 429 says it (:data:`RETRY_HEADERS`): ``"retry-after"`` (seconds), ``"retry-after-date"`` (an HTTP
        date in ``Retry-After``; whole seconds), ``"retry-after-ms"`` (OpenAI) or ``"x-ms-retry-after-ms"``
        (Azure OpenAI), both in milliseconds.
    delay : float
        Seconds the ``timeout`` fault holds the reply.
    """

    kind: str
    times: int = 1
    match: str | None = None
    retry_after: float = 1.0
    delay: float = 5.0
    retry_header: str = "retry-after"
    rate: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ArgumentError(f"fault kind {self.kind!r}; expected one of {list(FAULT_KINDS)}")
        if self.retry_header not in RETRY_HEADERS:
            raise ArgumentError(f"retry_header {self.retry_header!r}; expected one of {list(RETRY_HEADERS)}")

    def headers(self) -> dict[str, str]:
        """The 429 headers of this fault."""
        if self.retry_header == "retry-after-date":
            import email.utils

            return {"Retry-After": email.utils.formatdate(time.time() + self.retry_after, usegmt=True)}
        if self.retry_header == "retry-after":
            return {"Retry-After": f"{self.retry_after:g}"}
        return {self.retry_header: f"{1000 * self.retry_after:g}"}


def _uniforms(*parts: object, n: int = 2) -> list[float]:
    h = hashlib.sha256("\0".join(str(p) for p in parts).encode()).digest()
    return [int.from_bytes(h[8 * i:8 * i + 8], "big") / 2.0**64 for i in range(n)]


@dataclass
class SimulatedJudge:
    """A judge with known biases, deterministic per (seed, request content, sample).

    Pointwise (a prompt built by :func:`evallab.judges.build_pointwise`):

    - baseline P(pass): ``pass_rate``; with ``truth`` (a callable ``answer_text -> "pass"/"fail"/None``) the judge
      agrees with the truth with probability ``accuracy`` (P(pass) = ``accuracy`` for a true pass,
      ``1 - accuracy`` for a true fail; ``pass_rate`` where truth is ``None``);
    - anchors: when every ``### Example <n>: PASS|FAIL`` heading under ``## Calibration examples`` is PASS,
      P(pass) is multiplied by ``1 + pass_only_inflation`` (capped at 1) — so pass_rate(pass-only) /
      pass_rate(no or balanced anchors) − 1 recovers ``pass_only_inflation`` while P(pass) stays below 1; when the
      anchors are grouped FAIL-last (all PASS examples first, then at least one FAIL, the last one FAIL), P(pass)
      is lowered by ``fail_last_priming`` (floored at 0).

    Pairwise (a prompt built by :func:`~evallab.judges.build_pairwise`): with probability
    ``position_bias`` the judge picks the first-shown output whatever the content; otherwise it picks the better
    output with probability ``accuracy`` when ``truth`` tells them apart (``truth(output) == "pass"`` for exactly
    one), else either with probability 1/2. So P(first shown) = position_bias + (1 − position_bias)/2 on
    indistinguishable pairs.

    ``reply_format``: ``"json"`` (``{"verdict", "reason"}``), ``"fenced"`` (the JSON in a ```json fence) or
    ``"free"`` (``PASS``/``FAIL``, ``[[A]]``/``[[B]]`` then a sentence).

    ``variants``: per-configuration parameters, as ``((markers, overrides), ...)`` — ``markers`` a tuple of
    strings, ``overrides`` a mapping of this class's fields (not ``variants``). A request whose system or user prompt
    contains EVERY marker of a variant (the first such variant, in order) is answered with those fields replaced —
    so one server can inject a known leniency or position bias per prompt template and anchor set (a marker
    written in the template, another in an anchor's text); a request matching no variant gets the base
    parameters. Per model name, see ``LocalJudgeServer(sims=...)``.
    """

    seed: int = 0
    accuracy: float = 0.8
    position_bias: float = 0.0
    pass_rate: float = 0.5
    pass_only_inflation: float = 0.0
    fail_last_priming: float = 0.0
    truth: Callable[[str], str | None] | None = None
    reply_format: str = "json"
    variants: tuple = ()

    def for_prompt(self, system: str, user: str) -> SimulatedJudge:
        """The judge that answers this prompt: the first variant whose markers all occur in it, else this one."""
        for markers, overrides in self.variants:
            if all(m in system or m in user for m in markers):
                return replace(self, variants=(), **dict(overrides))
        return self

    def p_pass(self, user: str) -> float:
        """P(verdict = pass) for a pointwise user prompt (see the class docstring)."""
        if self.variants and (chosen := self.for_prompt("", user)) is not self:
            return chosen.p_pass(user)
        p = self.pass_rate
        if self.truth is not None:
            ans = answer_text(user)
            t = self.truth(ans) if ans is not None else None
            if t in ("pass", "fail"):
                p = self.accuracy if t == "pass" else 1.0 - self.accuracy
        heads = [h for h in anchor_headings(user) if h in ("PASS", "FAIL")]
        if heads and all(h == "PASS" for h in heads):
            p = min(1.0, p * (1.0 + self.pass_only_inflation))
        elif heads and heads[-1] == "FAIL" and "PASS" in heads and heads == sorted(heads, key=lambda h: h == "FAIL"):
            p = max(0.0, p - self.fail_last_priming)
        return p

    def decide(self, system: str, user: str, sample: int = 0) -> tuple[str, str]:
        """(verdict, reason): pointwise ``"pass"``/``"fail"``; pairwise ``"a"``/``"b"`` (shown position)."""
        if self.variants and (chosen := self.for_prompt(system, user)) is not self:
            return chosen.decide(system, user, sample)
        u1, u2 = _uniforms(self.seed, system, user, sample)
        if "## Output (a)" in user:
            if u1 < self.position_bias:
                return "a", "simulated: first-shown output preferred"
            correct = None
            if self.truth is not None:
                outs = shown_outputs(user)
                ta, tb = self.truth(outs.get("a", "")), self.truth(outs.get("b", ""))
                if (ta == "pass") != (tb == "pass"):
                    correct = "a" if ta == "pass" else "b"
            if correct is None:
                return ("a" if u2 < 0.5 else "b"), "simulated: no content preference"
            other = "b" if correct == "a" else "a"
            return (correct if u2 < self.accuracy else other), "simulated: content judgement"
        p = self.p_pass(user)
        return ("pass" if u1 < p else "fail"), f"simulated: P(pass)={p:.3f}"

    def reply_text(self, system: str, user: str, sample: int = 0) -> str:
        verdict, reason = self.decide(system, user, sample)
        doc = json.dumps({"verdict": verdict, "reason": reason})
        if self.reply_format == "fenced":
            return f"Here is my grading.\n```json\n{doc}\n```"
        if self.reply_format == "free":
            head = {"a": "[[A]]", "b": "[[B]]"}.get(verdict, verdict.upper())
            # the reason must not name a verdict word (a free-form reply naming both pass and fail is NA)
            return f"{head}\n{reason.replace('P(pass)', 'p')}"
        return doc


class InProcessJudge:
    """The :class:`SimulatedJudge` as an in-process :class:`evallab.judges.Judge` — no server, no HTTP: each request
    is answered by ``sim.reply_text`` (sample index from ``metadata["sample"]``) and parsed by the same parser as a
    live reply (:func:`evallab.judges.parse_reply_full`). For notebooks and benchmarks that need the
    simulated judge's verdicts fast; use :class:`LocalJudgeServer` to exercise the client."""

    def __init__(self, sim: SimulatedJudge | None = None, *, label: str = "sim-judge", model: str = "sim-judge"):
        self.sim, self.label, self.model = sim or SimulatedJudge(), label, model

    async def judge(self, request):
        from evallab.judges import JudgeReply
        from evallab.judges._parsing import parse_reply_full

        text = self.sim.reply_text(request.system, request.user, int(request.metadata.get("sample", 0) or 0))
        p = parse_reply_full(text, request)
        return JudgeReply(raw=text, verdict=p.verdict, reason=p.reason or "", error=p.error, model=self.model,
                          latency_s=0.0)


@dataclass
class _Config:
    sim: SimulatedJudge
    latency: float = 0.0
    faults: list = field(default_factory=list)
    api_key: str | None = None
    served_model: str | None = None
    serial: bool = False
    backlog: int = 1024
    rate_limit: tuple[int, float] | None = None
    dialect: str | None = None
    batch_seconds: float = 1.0
    reply_shape: str = "string"
    refuse_params: tuple = ()
    error_style: str = "openai"
    cached_tokens: int = 0
    takes_n: bool = False
    sims: dict = field(default_factory=dict)

    def sim_for(self, model: str | None) -> SimulatedJudge:
        """The simulated judge answering requests for ``model`` (``sims``), else the default one."""
        return self.sims.get(str(model), self.sim) if self.sims else self.sim


#: structured-output dialects the server can emulate (``LocalJudgeServer(dialect=...)``)
DIALECTS = ("openai", "llamacpp", "ollama", "none")
#: the log-probability the server gives the verdict token of a structured reply (when logprobs are asked)
VERDICT_LOGPROB = -0.1335  # ln(0.875)


#: reasoning sentences per ``reasoning_effort`` (the simulated reasoning grows with the effort asked)
EFFORT_SENTENCES = {"minimal": 1, "low": 1, "medium": 2, "high": 4}


def reasoning_text(effort: str | None = None) -> str:
    """The simulated reasoning: :data:`EFFORT_SENTENCES` sentences for ``effort`` (2, the medium default, when
    ``None``). It names no verdict (a reply's verdict is in its final answer)."""
    return " ".join(f"Step {i + 1}: weighing the answer against the rubric." for i in
                    range(EFFORT_SENTENCES.get(str(effort), 2)))


class _App:
    """The aiohttp application and its counters (lives in the server's event loop)."""

    def __init__(self, cfg: _Config) -> None:
        self.cfg = cfg
        self.faults = [Fault(**f) if isinstance(f, dict) else f for f in cfg.faults]
        self._in_flight = 0
        self._lock = None
        import random

        self._rng = random.Random(cfg.sim.seed)
        self.reset()

    def reset(self) -> None:
        self.stats = {"requests": 0, "completions": 0, "faults": {}, "unauthorized": 0, "max_in_flight": 0,
                      "rate_limited": 0, "param_refusals": 0, "choices": 0}
        self._window = (0.0, 0)  # (start, requests) of the rate-limit window

    def _rate_limit(self):
        """``(429 response or None, headers)`` under the fixed-window limit ``cfg.rate_limit``."""
        limit, window = self.cfg.rate_limit
        now = time.monotonic()
        start, n = self._window
        if now - start >= window:
            start, n = now, 0
        left = window - (now - start)
        if n >= limit:
            self._window = (start, n)
            self.stats["rate_limited"] += 1
            return self._error(429, "Rate limit reached for requests; retry later.",
                               {"retry-after-ms": f"{1000 * left:.0f}"}), {}
        self._window = (start, n + 1)
        return None, {"x-ratelimit-limit-requests": str(limit),
                      "x-ratelimit-remaining-requests": str(limit - n - 1),
                      "x-ratelimit-reset-requests": f"{left:.3f}s"}

    def _take(self, user: str) -> Fault | None:
        for f in self.faults:
            if f.times != 0 and (f.match is None or f.match in user):
                if f.rate is not None and self._rng.random() >= f.rate:
                    continue
                if f.times > 0:
                    f.times -= 1
                return f
        return None

    def build(self):
        from aiohttp import web

        app = web.Application(client_max_size=512 * 1024**2)  # Batch API input files are large
        app.router.add_post("/v1/chat/completions", self.completions)
        app.router.add_post("/chat/completions", self.completions)
        app.router.add_get("/_evallab/stats", self.get_stats)
        app.router.add_post("/_evallab/reset", self.post_reset)
        app.router.add_post("/_evallab/faults", self.post_faults)
        app.router.add_post("/v1/files", self.post_file)
        app.router.add_get("/v1/files/{fid}/content", self.get_file)
        app.router.add_post("/v1/batches", self.post_batch)
        app.router.add_get("/v1/batches/{bid}", self.get_batch)
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
        self._tasks: set = set()
        return app

    # -- the Batch API (OpenAI's /v1/files and /v1/batches, enough for evallab's batch runs) ----------------
    def _auth_error(self, request):
        if self.cfg.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.cfg.api_key}":
            self.stats["unauthorized"] += 1
            return self._error(401, "Incorrect API key provided.")
        return None

    async def post_file(self, request):
        from aiohttp import web

        if (err := self._auth_error(request)) is not None:
            return err
        form = await request.post()
        f = form.get("file")
        if f is None or form.get("purpose") != "batch":
            return self._error(400, "expected multipart fields 'file' and purpose=batch")
        data = f.file.read()
        fid = f"file-sim-{len(self.files) + 1}"
        self.files[fid] = data
        return web.json_response({"id": fid, "object": "file", "bytes": len(data), "purpose": "batch",
                                  "filename": getattr(f, "filename", "batch.jsonl"), "created_at": int(time.time())})

    async def get_file(self, request):
        from aiohttp import web

        if (err := self._auth_error(request)) is not None:
            return err
        data = self.files.get(request.match_info["fid"])
        if data is None:
            return self._error(404, "no such file")
        return web.Response(body=data, content_type="application/jsonl")

    async def post_batch(self, request):
        from aiohttp import web

        if (err := self._auth_error(request)) is not None:
            return err
        doc = await request.json()
        data = self.files.get(doc.get("input_file_id", ""))
        if data is None or doc.get("endpoint") != "/v1/chat/completions":
            return self._error(400, "expected an uploaded input_file_id and endpoint /v1/chat/completions")
        lines = [json.loads(x) for x in data.decode().splitlines() if x.strip()]
        bid = f"batch_sim_{len(self.batches) + 1}"
        b = {"id": bid, "object": "batch", "endpoint": doc["endpoint"], "input_file_id": doc["input_file_id"],
             "completion_window": doc.get("completion_window", "24h"), "status": "in_progress",
             "output_file_id": None, "error_file_id": None, "created_at": int(time.time()),
             "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}
        self.batches[bid] = b
        self.stats["batches_created"] = self.stats.get("batches_created", 0) + 1
        self.stats["batch_lines"] = self.stats.get("batch_lines", 0) + len(lines)
        task = asyncio.ensure_future(self._process_batch(b, lines))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return web.json_response(b)

    async def _process_batch(self, b: dict, lines: list[dict]) -> None:
        out = []
        step = max(1, len(lines) // 20)
        for i, line in enumerate(lines):
            body = line.get("body") or {}
            messages = body.get("messages") or []
            system = "\n".join(m["content"] for m in messages if m["role"] == "system")
            user = "\n".join(m["content"] for m in messages if m["role"] != "system")
            m = re.search(r"-s(\d+)$", str(line.get("custom_id", "")))
            text = self.cfg.sim_for(body.get("model")).reply_text(system, user, int(m.group(1)) if m else 0)
            # the bytes of the same body sent live (the canonical JSON evallab sends)
            raw = len(canonical_json(body).encode())
            resp = {"id": f"chatcmpl-batch-{i}", "object": "chat.completion", "created": int(time.time()),
                    "model": self.cfg.served_model or body.get("model") or "sim-judge",
                    "system_fingerprint": "fp_evallab_sim",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": max(1, raw // 4), "completion_tokens": max(1, len(text) // 4),
                              "total_tokens": max(1, raw // 4) + max(1, len(text) // 4)}}
            out.append(json.dumps({"id": f"batch_req_{i}", "custom_id": line.get("custom_id"),
                                   "response": {"status_code": 200, "request_id": f"req_{i}", "body": resp},
                                   "error": None}))
            b["request_counts"]["completed"] = i + 1
            if (i + 1) % step == 0:  # spread over batch_seconds, so progress can be watched
                await asyncio.sleep(self.cfg.batch_seconds / 20)
        fid = f"file-sim-{len(self.files) + 1}"
        self.files[fid] = ("\n".join(out) + "\n").encode()
        b.update(status="completed", output_file_id=fid, completed_at=int(time.time()))

    async def get_batch(self, request):
        from aiohttp import web

        if (err := self._auth_error(request)) is not None:
            return err
        b = self.batches.get(request.match_info["bid"])
        if b is None:
            return self._error(404, "no such batch")
        return web.json_response(b)

    async def get_stats(self, request):
        from aiohttp import web

        return web.json_response(self.stats)

    async def post_reset(self, request):
        from aiohttp import web

        self.reset()
        return web.json_response({"ok": True})

    async def post_faults(self, request):
        from aiohttp import web

        self.faults = [Fault(**f) for f in await request.json()]
        return web.json_response({"ok": True})

    @staticmethod
    def _error(status: int, message: str, headers: dict | None = None):
        from aiohttp import web

        return web.json_response({"error": {"message": message, "type": "evallab_sim", "code": status}},
                                 status=status, headers=headers)

    def _param_refusal(self, doc: dict):
        """The 400 refusing the first parameter of ``cfg.refuse_params`` in the body, or ``None``. The messages
        and codes are OpenAI's (as quoted in public bug reports: "Unsupported parameter: 'max_tokens' is not
        supported with this model. Use 'max_completion_tokens' instead." / ``unsupported_parameter``; "Unsupported
        value: 'temperature' does not support 0 with this model. Only the default (1) value is supported." /
        ``unsupported_value``), in OpenAI's envelope ``{"error": {message, type: invalid_request_error, param,
        code}}`` or vLLM's (``error_style="vllm"``: ``{"object": "error", message, type: BadRequestError, param,
        code: 400}``). Temperature is refused unless it is 1."""
        from aiohttp import web

        for p in self.cfg.refuse_params:
            if p not in doc or (p == "temperature" and doc[p] == 1):
                continue
            if p == "max_tokens":
                msg, code = ("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                             "'max_completion_tokens' instead.", "unsupported_parameter")
            elif p == "temperature":
                msg, code = (f"Unsupported value: 'temperature' does not support {doc[p]:g} with this model. Only "
                             "the default (1) value is supported.", "unsupported_value")
            else:
                msg, code = f"Unsupported parameter: '{p}' is not supported with this model.", "unsupported_parameter"
            self.stats["param_refusals"] += 1
            if self.cfg.error_style == "vllm":
                body = {"object": "error", "message": msg, "type": "BadRequestError", "param": p, "code": 400}
            else:
                body = {"error": {"message": msg, "type": "invalid_request_error", "param": p, "code": code}}
            return web.json_response(body, status=400)
        return None

    def _shaped(self, message: dict, text: str, reasoning: str) -> None:
        """Write ``text`` (the final answer) and ``reasoning`` into ``message`` in ``cfg.reply_shape``."""
        shape = self.cfg.reply_shape
        if shape == "parts":  # Mistral's Magistral: a thinking part (itself a list of text chunks), then text
            message["content"] = [{"type": "thinking", "thinking": [{"type": "text", "text": reasoning}]},
                                  {"type": "text", "text": text}]
        elif shape == "reasoning_only":  # vLLM's reasoning parser that kept everything as reasoning
            message["content"] = None
            message["reasoning_content"] = f"{reasoning}\n{text}"
        elif shape in ("reasoning_content", "reasoning", "thinking"):
            message[shape] = reasoning

    async def completions(self, request):
        self.stats["requests"] += 1
        self._in_flight += 1
        self.stats["max_in_flight"] = max(self.stats["max_in_flight"], self._in_flight)
        try:
            if not self.cfg.serial:
                return await self._complete(request)
            if self._lock is None:
                self._lock = asyncio.Lock()
            async with self._lock:  # one request at a time; the others wait, their clocks running
                return await self._complete(request)
        finally:
            self._in_flight -= 1

    async def _complete(self, request):
        from aiohttp import web

        extra_headers = {}
        if self.cfg.rate_limit is not None:
            limited, extra_headers = self._rate_limit()
            if limited is not None:
                return limited
        raw = await request.read()
        if self.cfg.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.cfg.api_key}":
            self.stats["unauthorized"] += 1
            sent = request.headers.get("Authorization", "").removeprefix("Bearer ")
            # echo the rejected key, as some providers do (partly masked); clients must not store it
            return self._error(401, f"Incorrect API key provided: {sent}. You can find your API key in your "
                                    "account settings.")
        try:
            doc = json.loads(raw)
            messages = doc["messages"]
            system = "\n".join(m["content"] for m in messages if m["role"] == "system")
            user = "\n".join(m["content"] for m in messages if m["role"] != "system")
        except (ValueError, KeyError, TypeError):
            return self._error(400, "invalid request body: expected JSON with 'messages'")
        try:  # the repeat index comes from the header only; the request's seed is a model parameter
            sample = int(request.headers.get("X-Evallab-Sample") or 0)
        except ValueError:
            return self._error(400, "X-Evallab-Sample: expected an integer sample index")
        structured = False
        if self.cfg.dialect is not None:
            self.stats.setdefault("formats", {})
            rf, fmt = doc.get("response_format"), doc.get("format")
            asked = (rf or {}).get("type") if isinstance(rf, dict) else ("format" if fmt is not None else "text")
            if fmt is not None and rf is None:
                asked = "format"
            self.stats["formats"][asked] = self.stats["formats"].get(asked, 0) + 1
            d = self.cfg.dialect
            if d == "openai":
                if fmt is not None:
                    return self._error(400, "Unrecognized request argument supplied: format")
                structured = isinstance(rf, dict) and rf.get("type") in ("json_schema", "json_object")
            elif d == "llamacpp":
                if isinstance(rf, dict) and rf.get("type") == "json_schema":
                    return self._error(500, "Internal Server Error: response_format type json_schema is not "
                                            "supported")
                structured = isinstance(rf, dict) and rf.get("type") == "json_object"
            elif d == "ollama":
                structured = fmt is not None
        if self.cfg.refuse_params and (refused := self._param_refusal(doc)) is not None:
            return refused
        fault = self._take(user)
        if fault is not None:
            self.stats["faults"][fault.kind] = self.stats["faults"].get(fault.kind, 0) + 1
            k = fault.kind
            if k == "insufficient_quota":
                return web.json_response(QUOTA_BODY, status=429)
            if k == "billing_hard_limit":
                return web.json_response(BILLING_BODY, status=400)
            if k == "429":
                return self._error(429, "Rate limit reached; retry later.", fault.headers())
            if k in ("400", "401", "403", "404", "500", "503"):
                return self._error(int(k), f"simulated HTTP {k}")
            if k == "503_echo_key":
                return self._error(503, "upstream unavailable for request with Authorization: "
                                        f"{request.headers.get('Authorization', '')}")
            if k == "drop":
                request.transport.abort()
                raise asyncio.CancelledError  # nothing is sent
            if k == "timeout":
                await asyncio.sleep(fault.delay)
        if self.cfg.latency:
            await asyncio.sleep(self.cfg.latency)
        model = self.cfg.served_model or doc.get("model") or "sim-judge"
        sim = self.cfg.sim_for(doc.get("model"))
        text = sim.reply_text(system, user, sample)
        logprobs = None
        if structured:
            verdict, reason = sim.decide(system, user, sample)
            text = json.dumps({"verdict": verdict, "reason": reason}, separators=(",", ":"))
            if doc.get("logprobs"):
                toks = ['{"', "verdict", '":"', verdict, '","', "reason", '":"', reason, '"}']
                logprobs = {"content": [{"token": t, "logprob": VERDICT_LOGPROB if i == 3 else -0.01,
                                         "bytes": list(t.encode()), "top_logprobs": []}
                                        for i, t in enumerate(toks)]}
        if fault is not None and fault.kind == "prose":
            text = "Both approaches have merits and the answer is reasonably written overall."
        n = int(doc.get("n") or 1) if self.cfg.takes_n else 1
        texts = [text] + [sim.reply_text(system, user, sample + i) for i in range(1, n)]
        reasoning = ""
        choices = []
        for i, t in enumerate(texts):
            message = {"role": "assistant", "content": t}
            if self.cfg.reply_shape != "string":
                reasoning = reasoning_text(doc.get("reasoning_effort"))
                self._shaped(message, t, reasoning)
            choices.append({"index": i, "finish_reason": "stop", "logprobs": logprobs, "message": message})
        self.stats["choices"] += n
        prompt = max(1, len(raw) // 4)
        out = sum(max(1, len(t) // 4) + len(reasoning) // 4 for t in texts)
        body = {"id": f"chatcmpl-sim-{self.stats['requests']}", "object": "chat.completion",
                "created": int(time.time()), "model": model, "system_fingerprint": "fp_evallab_sim",
                "choices": choices,
                "usage": {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out}}
        if reasoning:
            body["usage"]["completion_tokens_details"] = {"reasoning_tokens": len(texts) * (len(reasoning) // 4)}
        if self.cfg.cached_tokens:
            body["usage"]["prompt_tokens_details"] = {"cached_tokens": min(self.cfg.cached_tokens, prompt)}
        if fault is not None and fault.kind == "empty_choices":
            body["choices"] = []
        if fault is not None and fault.kind == "empty_content":
            body["choices"][0]["message"] = {"role": "assistant", "content": ""}
        if fault is not None and fault.kind == "refusal":
            body["choices"][0]["message"] = {"role": "assistant", "content": None, "refusal": REFUSAL_TEXT}
        if fault is not None and fault.kind == "length_cut":
            body["choices"][0].update(finish_reason="length", message={"role": "assistant",
                                                                       "content": "Let me compare the two"})
        self.stats["completions"] += 1
        payload = json.dumps(body)
        if fault is not None and fault.kind == "malformed":
            payload = payload[: len(payload) // 2]
        return web.Response(text=payload, content_type="application/json", headers=extra_headers or None)


async def _start(cfg: _Config, host: str, port: int):
    from aiohttp import web

    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
    app_obj = _App(cfg)
    runner = web.AppRunner(app_obj.build(), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=cfg.backlog, reuse_address=True)
    await site.start()
    bound = site._server.sockets[0].getsockname()[1]
    return runner, bound


def _serve_child() -> None:  # pragma: no cover — runs in the child process (python -m evallab.testing)
    """Child side of ``process=True``: read the pickled config from stdin, print the port, serve until stdin
    closes (the parent stopping or dying)."""
    import pickle
    import sys

    cfg, host = pickle.loads(sys.stdin.buffer.read(int(sys.stdin.buffer.readline())))

    async def main():
        runner, port = await _start(cfg, host, 0)
        print(port, flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_reader(sys.stdin.fileno(), stop.set)  # EOF (or anything) on stdin stops the server
        await stop.wait()
        await runner.cleanup()

    asyncio.run(main())


class LocalJudgeServer:
    """An OpenAI-compatible server on 127.0.0.1 (free port), started and stopped as a context manager.

    Parameters
    ----------
    sim : SimulatedJudge, optional
        The simulated judge answering (default ``SimulatedJudge()``).
    latency : float
        Seconds every reply is held (server-side think time).
    faults : sequence of Fault
        Faults injected in order (see :class:`Fault`); replace them later with :meth:`set_faults`.
    api_key : str, optional
        When set, requests without ``Authorization: Bearer <api_key>`` get HTTP 401.
    served_model : str, optional
        The model id reported in replies (default: the requested model).
    serial : bool
        Answer one request at a time, as llama.cpp's server with one slot does on a small machine: requests that
        arrive while one is being answered wait in arrival order (``latency`` each), their clients' timeouts
        running. ``stats()["max_in_flight"]`` reports the most requests the server held at once.
    backlog : int
        The listen backlog of the server socket (connections the kernel queues before they are accepted).
    dialect : str, optional
        Emulate a server's structured-output support (:data:`DIALECTS`): ``"openai"`` (OpenAI, vLLM: takes
        ``response_format`` of type ``json_schema`` or ``json_object``, answers an unknown ``format`` field with 400),
        ``"llamacpp"`` (llama-cpp-python: takes ``{type: json_object, schema}``, answers the ``json_schema`` type
        with HTTP 500, ignores ``format``), ``"ollama"`` (takes ``format: <schema>``, ignores ``response_format``),
        ``"none"`` (ignores both). A request whose format is taken gets ``{"verdict", "reason"}`` JSON (and, with
        ``logprobs: true``, token log-probabilities: the verdict token's is :data:`VERDICT_LOGPROB`); otherwise the
        simulated judge's ``reply_format``. ``None`` (default): no emulation.
    batch_seconds : float
        How long a batch of the Batch API takes to process (``POST /v1/files``, ``POST /v1/batches``,
        ``GET /v1/batches/{id}``, ``GET /v1/files/{id}/content``; the sample index is read from a custom_id ending
        ``-s<k>``). ``stats()`` then counts ``batches_created`` and ``batch_lines``.
    rate_limit : (int, float), optional
        ``(requests, window_seconds)``: a fixed-window rate limit with OpenAI's headers
        (``x-ratelimit-remaining-requests``, ``x-ratelimit-reset-requests``) on every reply, and a 429 with
        ``retry-after-ms`` past the limit (counted in ``stats()["rate_limited"]``).
    reply_shape : str
        How replies are written (:data:`REPLY_SHAPES`; the simulated reasoning is :func:`reasoning_text`, longer
        at a higher ``reasoning_effort``, and counted in ``completion_tokens_details.reasoning_tokens``):
        ``"string"`` (``content`` a string, default), ``"parts"`` (Mistral's Magistral: ``content`` a list — a
        ``thinking`` part, then a ``text`` part), ``"reasoning_content"`` (vLLM's reasoning parser, DeepSeek),
        ``"reasoning"`` (OpenRouter, Ollama's OpenAI route), ``"thinking"`` (Ollama's native field) — each with
        the verdict in ``content`` — and ``"reasoning_only"`` (``content: null``, the reasoning and the verdict
        both in ``reasoning_content``, as vLLM's parser gives when the model never closes its think block).
    refuse_params : sequence of str
        Parameters the "model" refuses with HTTP 400, in OpenAI's words and codes (``max_tokens`` → use
        ``max_completion_tokens``; ``temperature`` other than 1 → ``unsupported_value``; any other →
        ``unsupported_parameter``), one per request as OpenAI does; counted in ``stats()["param_refusals"]``.
    error_style : {"openai", "vllm"}
        The envelope of those 400s: OpenAI's ``{"error": {...}}`` or vLLM's top-level ``{"object": "error",
        ...}``.
    cached_tokens : int
        Prompt tokens reported as cached (``prompt_tokens_details.cached_tokens``, at most the prompt's).
    takes_n : bool
        Answer ``n`` choices when the body asks ``n`` (choice ``i`` is sample ``header sample + i``); otherwise
        ``n`` is ignored (one choice), as some servers do. ``stats()["choices"]`` counts the choices written.
    sims : mapping of str to SimulatedJudge, optional
        The simulated judge answering each requested ``model`` (several judges of a study behind one server, each
        with its own known biases); a model not named gets ``sim``.
    process : bool
        Run in a separate process (``python -m evallab.testing``, config pickled over stdin; ``sim.truth`` must
        then be a function of an importable module) instead of a background thread.

    Attributes
    ----------
    base_url : str
        ``http://127.0.0.1:<port>/v1`` once started.
    """

    def __init__(self, sim: SimulatedJudge | None = None, *, latency: float = 0.0, faults: Sequence[Fault] = (),
                 api_key: str | None = None, served_model: str | None = None, process: bool = False,
                 host: str = "127.0.0.1", serial: bool = False, backlog: int = 1024,
                 rate_limit: tuple[int, float] | None = None, dialect: str | None = None,
                 batch_seconds: float = 1.0, reply_shape: str = "string", refuse_params: Sequence[str] = (),
                 error_style: str = "openai", cached_tokens: int = 0, takes_n: bool = False,
                 sims: Mapping[str, SimulatedJudge] | None = None) -> None:
        if dialect is not None and dialect not in DIALECTS:
            raise ArgumentError(f"dialect {dialect!r}; expected one of {list(DIALECTS)}")
        if reply_shape not in REPLY_SHAPES:
            raise ArgumentError(f"reply_shape {reply_shape!r}; expected one of {list(REPLY_SHAPES)}")
        if error_style not in ("openai", "vllm"):
            raise ArgumentError(f"error_style {error_style!r}; expected 'openai' or 'vllm'")
        self.cfg = _Config(sim or SimulatedJudge(), latency, list(faults), api_key, served_model, serial, backlog,
                           tuple(rate_limit) if rate_limit else None, dialect, batch_seconds, reply_shape,
                           tuple(refuse_params), error_style, int(cached_tokens), bool(takes_n),
                           {str(k): v for k, v in (sims or {}).items()})
        self.process, self.host = process, host
        self.port: int | None = None
        self._thread = self._loop = self._runner = self._proc = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise StateError("the server is not started; use `with LocalJudgeServer(...) as srv:`")
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> LocalJudgeServer:
        if self.process:
            import pickle
            import subprocess
            import sys

            blob = pickle.dumps((self.cfg, self.host))
            self._proc = subprocess.Popen([sys.executable, "-m", "evallab.testing"], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE)
            self._proc.stdin.write(b"%d\n" % len(blob) + blob)
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
            if not line.strip().isdigit():
                self._proc.kill()
                raise StateError("the local judge server process did not start (is sim.truth picklable, i.e. a "
                                 "function of an importable module?)")
            self.port = int(line)
            return self
        ready = threading.Event()
        err: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                self._runner, self.port = loop.run_until_complete(_start(self.cfg, self.host, 0))
            except BaseException as exc:  # noqa: BLE001
                err.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=run, name="evallab-local-judge", daemon=True)
        self._thread.start()
        ready.wait(30)
        if err:
            raise err[0]
        return self

    def stop(self) -> None:
        if self._proc is not None:
            import subprocess

            self._proc.stdin.close()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(5)
            self._proc.stdout.close()
            self._proc = None
        if self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._thread = None
        self.port = None

    def __enter__(self) -> LocalJudgeServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _control(self, method: str, route: str, body=None) -> dict:
        root = self.base_url.removesuffix("/v1")
        with httpx.Client(trust_env=False, timeout=10) as c:
            r = c.request(method, root + route, json=body)
            r.raise_for_status()
            return r.json()

    def stats(self) -> dict:
        """``{"requests", "completions", "faults": {kind: n}, "unauthorized", "max_in_flight", "rate_limited"}``
        since start/reset."""
        return self._control("GET", "/_evallab/stats")

    def reset(self) -> None:
        """Zero the counters."""
        self._control("POST", "/_evallab/reset")

    def set_faults(self, faults: Sequence[Fault]) -> None:
        """Replace the fault list."""
        self._control("POST", "/_evallab/faults", [asdict(f) for f in faults])


def _serve_cli(argv: Sequence[str]) -> None:  # pragma: no cover — exercised through a subprocess in the tests
    """``python -m evallab.testing --port N``: the simulated judge server on 127.0.0.1 until Ctrl-C (every model name
    answered by one :class:`SimulatedJudge` with the given parameters; no ``truth``, so pairwise verdicts follow
    ``--position-bias`` and are otherwise a fair coin, pointwise ones ``--pass-rate``)."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m evallab.testing",
                                 description="An OpenAI-compatible simulated judge server on 127.0.0.1 (Ctrl-C stops "
                                             "it). It reads pairwise prompts laid out with '## Output (a)' and "
                                             "'## Output (b)' headings; any other prompt is answered pass/fail.")
    ap.add_argument("--port", type=int, required=True, help="the port on 127.0.0.1 (0: a free one)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--position-bias", type=float, default=0.0, help="P(first-shown output whatever the content)")
    ap.add_argument("--pass-rate", type=float, default=0.5, help="pointwise P(pass)")
    ap.add_argument("--latency", type=float, default=0.0, help="seconds every reply is held")
    a = ap.parse_args(list(argv))
    cfg = LocalJudgeServer(SimulatedJudge(seed=a.seed, position_bias=a.position_bias, pass_rate=a.pass_rate),
                           latency=a.latency).cfg

    async def main():
        runner, port = await _start(cfg, "127.0.0.1", a.port)
        print(f"serving the simulated judge at http://127.0.0.1:{port}/v1 (Ctrl-C stops it)", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
    except OSError as exc:
        sys.exit(f"error: cannot serve on 127.0.0.1:{a.port} ({exc.strerror or exc}); expected a free port")


if __name__ == "__main__":  # pragma: no cover
    import sys as _sys

    if len(_sys.argv) > 1:  # a user: python -m evallab.testing --port N
        _serve_cli(_sys.argv[1:])
    else:  # LocalJudgeServer(process=True)'s child: the config pickled over stdin
        _serve_child()

__all__ = ["Fault", "InProcessJudge", "LocalJudgeServer", "SimulatedJudge"]
