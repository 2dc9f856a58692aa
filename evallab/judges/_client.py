"""``OpenAICompatibleJudge``: any ``/v1/chat/completions`` endpoint over ``httpx.AsyncClient``.

Works with OpenAI, DeepSeek, vLLM, llama.cpp server and Ollama (their OpenAI-compatible routes). Per request:

- adaptive concurrency (:class:`~evallab.judges._limits.AdaptiveLimiter`): it starts at 2 requests in flight (a
  later judge on the same base URL and model in this process: at the limit learnt before), grows while the
  latency holds and cuts on timeouts, 429/503 and rising latency; ``max_concurrency`` is the
  ceiling (and the connection pool). A request waits for its slot BEFORE it is sent, so the timeout counts from
  the send only; server rate-limit headers (``x-ratelimit-remaining-*``) pause new requests before a 429 happens,
  and optional ``requests_per_minute`` / ``tokens_per_minute`` budgets (aiolimiter) hold them client-side;
- retries with tenacity: exponential backoff with jitter on 429, 5xx, 408, connection errors, timeouts, a
  malformed (non-JSON) 200 body and a 200 with no verdict-bearing content (no choices; empty content or a reply
  cut at ``max_tokens`` before any verdict when the request samples without a seed — a cut reply is asked again
  at once, without backoff; greedy (temperature 0) or seeded decoding writes the same text again, so there an
  empty or cut reply is an NA reply at once, its error saying why — "raise max_tokens" for a cut one), honouring Retry-After in every form
  (``retry-after-ms``, ``x-ms-retry-after-ms``, ``Retry-After`` seconds or HTTP date; a 429's wait also pauses
  the other requests); after ``max_retries`` retries the reply is returned with ``failed=True`` and the reason in
  ``error`` (a resumed run asks again). ``stats.retries`` / ``stats.waits`` count the retries actually made;
- NO retry on 400/401/403/404 (or any other 4xx): :class:`JudgeFatalError` stops the run at once with the
  server's message — a wrong key must not cause a retry storm; an endpoint that could not be connected to at all
  (connection refused, no such host) through a request's retries, before it ever answered, stops the run the same
  way (a wrong port, or a server not running: one line, not a failed row per request). Once it has answered, a
  refused connection is retried and marked failed like any transport failure (a server restarting mid-run);
- every reply shape (issue 27): ``content`` a string or a list of parts (:func:`split_parts`: text parts joined,
  thinking/reasoning parts kept apart), the reasoning in ``reasoning_content`` / ``reasoning`` / ``thinking``
  (kept in the reply's ``reasoning``, never read for the verdict unless ``verdict_from_reasoning``), and
  ``refusal``. A refusal, an empty reply or a cut one under greedy or seeded decoding is NOT retried (the same
  request writes it again): it is an NA reply with its ``failure_kind`` and reason, cached like any reply; when
  sampling without a seed a refusal is asked again at once. Quota and billing errors (:data:`QUOTA_CODES` in the
  error's ``code`` or ``type``) stop the run at once (:class:`~evallab.errors.QuotaError`), as 401 does;
- parameter dialects: a 400 refusing one parameter (:func:`param_refusal`) teaches the judge to rename it or
  leave it out (:attr:`OpenAICompatibleJudge.adapt`, remembered per (base URL, model) in the process and the
  cache file; ``param_adapt=`` overrides), and the request is asked again at once with the adapted body — which
  is what the cache key and the sent digest hash;
- several samples in one request (``share_samples=True``, :meth:`OpenAICompatibleJudge.judge_samples`);
- the on-disk :class:`~evallab.judges._cache.Cache` (a hit makes no HTTP call);
- usage and cost (token counts from the response × the price table, :mod:`evallab.judges._pricing`; reasoning
  tokens and cached prompt tokens counted, the cached ones at the cached-input rate);
- the model and ``system_fingerprint`` the server reported, and the latency, on every reply.

Transport: completions go through an ``aiohttp.ClientSession`` directly (``transport="aiohttp"``, the default:
no httpx request/response objects on the hot path, no cookie jar); the Batch API and ``transport="httpx"`` use
``httpx.AsyncClient`` (over httpx-aiohttp's transport, or httpx's own). Measured here
(``benchmarks/bench_judges.py``, 2,000 requests, 50 ms server latency, concurrency 32, best of 5 on an idle
2-core machine shared with the server): 256 µs of client CPU per request — parsing, caching and journalling every
reply included — against 188 µs for a bare aiohttp loop, 1,121 µs through the httpx API and 1,769 µs for the
openai SDK.

The API key is read from the environment variable NAMED by ``api_key_env`` when the HTTP client is created and
lives only in that client's ``Authorization`` header: it is never stored on the judge, cached, logged, recorded
or put in an error message. A base URL carrying credentials (``https://user:key@host/v1``) is refused.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import os
import re
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import httpx
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from evallab.errors import (
    EvallabError,
    JudgeFatalError,
    QuotaError,
    TransientError,
    UnsupportedParameterError,
)
from evallab.judges import _jsoncodec as jsoncodec
from evallab.judges._cache import CACHE_FORMAT, Cache, body_key, canonical_json, chat_body
from evallab.judges._limits import OK, OTHER, OVERLOAD, AdaptiveLimiter, parse_duration, ratelimit_pause
from evallab.judges._limits import parse_retry_after as _retry_after_headers
from evallab.judges._parsing import parse_reply, parse_reply_full
from evallab.judges._pricing import cost_usd, price_table
from evallab.judges._types import JudgeReply, JudgeRequest, Usage

log = logging.getLogger("evallab.judges")

#: statuses retried with backoff
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
#: statuses that say the endpoint is overloaded (the adaptive limit is cut)
OVERLOAD_STATUSES = frozenset({429, 503, 529})

#: structured-output dialects, in the order ``structured="auto"`` tries them
DIALECTS = ("openai", "llamacpp", "ollama")
#: statuses by which an endpoint refuses a response format (llama-cpp-python answers the json_schema type with 500)
_REFUSAL_STATUSES = frozenset({400, 415, 422, 500, 501})
#: dialects learnt in this process, per (base URL, model) — also kept in the cache file when there is one
_DIALECT_MEMORY: dict[tuple[str, str], str] = {}
#: adaptive limits learnt in this process, per (base URL, model): (limit, still in slow start)
_LIMIT_MEMORY: dict[tuple[str, str], tuple[float, bool]] = {}
_VERDICT_ENUM = {"pairwise": ["a", "b", "tie"], "pointwise": ["pass", "fail"]}
#: error ``code``/``type`` values by which an account is out of credit or over its billing limit (OpenAI's
#: ``insufficient_quota`` 429 and ``billing_hard_limit_reached``/``billing_not_active``, DeepSeek's and
#: OpenRouter's balance errors): the run stops at once, as on 401
QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached", "billing_not_active",
                         "insufficient_balance", "insufficient_credits", "quota_exceeded"})
#: request parameters a model may refuse that the judge adapts (renamed when the server says what to use
#: instead, otherwise left out so the model's default applies)
ADAPTABLE = ("max_tokens", "temperature", "top_p", "seed", "logprobs", "top_logprobs", "n", "presence_penalty",
             "frequency_penalty", "reasoning_effort", "thinking", "stop")
#: parameter adaptations learnt in this process, per (base URL, model): {param: name sent instead or None}
_PARAM_MEMORY: dict[tuple[str, str], dict[str, str | None]] = {}
#: whether an endpoint answers ``n`` choices in one request, per (base URL, model), learnt in this process
_N_MEMORY: dict[tuple[str, str], bool] = {}
_NOT_SUPPORTED = re.compile(r"unsupported\s+(?:parameter|value|argument)s?\s*:?\s*'?([A-Za-z_]+)'?|'([A-Za-z_]+)'"
                            r"\s+is\s+not\s+supported|(?:parameter|argument|field)s?\s+'?([A-Za-z_]+)'?\s+(?:is\s+)?"
                            r"not\s+supported", re.I)
_USE_INSTEAD = re.compile(r"\buse\s+'?([A-Za-z_]+)'?\s+instead", re.I)


def _error_doc(body: bytes) -> dict:
    """The error object of an error reply: OpenAI's ``{"error": {message, type, param, code}}`` or vLLM's
    top-level ``{"object": "error", message, type, param, code}``; ``{}`` when the body is not JSON."""
    try:
        doc = json.loads(body)
    except (ValueError, TypeError):
        return {}
    if not isinstance(doc, dict):
        return {}
    err = doc.get("error", doc)
    return err if isinstance(err, dict) else {"message": str(err)}


def quota_code(err: Mapping) -> str | None:
    """The quota/billing code of an error object (:data:`QUOTA_CODES` in its ``code`` or ``type``), else
    ``None``."""
    for k in ("code", "type"):
        v = err.get(k)
        if isinstance(v, str) and v.lower() in QUOTA_CODES:
            return v.lower()
    return None


def param_refusal(err: Mapping) -> tuple[str, str | None] | None:
    """``(param, use)`` when a 400's error object says the model refuses one request parameter — OpenAI's
    ``code`` ``unsupported_parameter`` / ``unsupported_value`` with ``param``, or a message "Unsupported
    parameter: 'X' ..." / "'X' is not supported" — and the parameter is one of :data:`ADAPTABLE`; ``use`` is
    the name the message says to use instead ("Use 'max_completion_tokens' instead."), ``None`` = leave it out.
    ``None`` for any other 400."""
    msg = str(err.get("message") or "")
    code = str(err.get("code") or "").lower()
    if code not in ("unsupported_parameter", "unsupported_value") and "support" not in msg.lower():
        return None
    name = err.get("param") if isinstance(err.get("param"), str) else None
    if not name:
        m = _NOT_SUPPORTED.search(msg)
        name = next((g for g in m.groups() if g), None) if m else None
    if not name or name not in ADAPTABLE:
        return None
    use = _USE_INSTEAD.search(msg)
    return name, (use.group(1) if use and use.group(1) != name else None)


def verdict_schema(kind: str) -> dict:
    """The JSON schema of a structured verdict: ``{"reason": <string>, "verdict": <enum>}``, both required, the
    reason FIRST; the enum is ``a``/``b``/``tie`` (pairwise, as shown) or ``pass``/``fail`` (pointwise).

    A structured-output model writes the properties in this order, so the judge explains before it decides, as
    MT-Bench's judge prompt asks ("Begin your evaluation by comparing the two responses and provide a short
    explanation ... After providing your explanation, output your final verdict", Zheng et al. 2023, fig. 5).
    Measured on SmolLM2-135M with llama.cpp's grammar (data/live/smollm2/SOURCE.md): asked verdict-first it gave
    the first enum option in all 1,510 replies, even at temperature 0.7, while its own reasons said "fail" in 342
    of 408 pointwise replies; asked reason-first its verdicts varied."""
    return {"type": "object", "properties": {"reason": {"type": "string"},
                                             "verdict": {"type": "string", "enum": _VERDICT_ENUM[kind]}},
            "required": ["verdict", "reason"], "additionalProperties": False}


def format_fields(dialect: str, kind: str) -> dict:
    """The body fields asking ``dialect`` for a structured verdict of ``kind``.

    - ``openai`` (OpenAI, vLLM, DeepSeek-compatible servers): ``response_format: {type: json_schema,
      json_schema: {name, strict: true, schema}}``;
    - ``llamacpp`` (llama-cpp-python's server): ``response_format: {type: json_object, schema}`` — it answers the
      ``json_schema`` type with HTTP 500;
    - ``ollama``: ``format: <schema>``;
    - anything else (``text``): no field, the text prompt alone.
    """
    if kind not in _VERDICT_ENUM:
        return {}
    schema = verdict_schema(kind)
    if dialect == "openai":
        return {"response_format": {"type": "json_schema", "json_schema": {"name": f"{kind}_verdict",
                                                                           "strict": True, "schema": schema}}}
    if dialect == "llamacpp":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if dialect == "ollama":
        return {"format": schema}
    return {}


def verdict_logprob(logprobs: dict | None, verdict_text: str | None) -> float | None:
    """The log-probability of the verdict token in an OpenAI-style ``choices[0].logprobs`` (``{"content": [{"token",
    "logprob"}, ...]}``): the token holding the first character of the verdict value in the JSON member
    ``"verdict": "<value>"`` of the tokens' joined text (so a key split over several tokens — ``ver`` + ``dict``
    in SmolLM2's vocabulary — is found too); ``None`` when absent. A natural logarithm, <= 0, as the server gave it
    (llama.cpp: before its grammar constrained the choice)."""
    content = (logprobs or {}).get("content") if isinstance(logprobs, dict) else None
    if not content or not verdict_text:
        return None
    toks = [str(t.get("token", "")) for t in content]
    text = "".join(toks)
    m = re.search(r'"verdict"\s*:\s*"?\s*(' + re.escape(verdict_text.strip()) + ")", text, re.IGNORECASE)
    if m is None:
        return None
    at, pos = m.start(1), 0
    for t, tok in zip(content, toks, strict=True):
        if pos + len(tok) > at:
            lp = t.get("logprob")
            return float(lp) if lp is not None else None
        pos += len(tok)
    return None  # pragma: no cover - the match lies inside the joined text


@dataclass(frozen=True)
class Encoded:
    """A request as sent (:meth:`OpenAICompatibleJudge.encoded`): ``payload`` (the JSON body, UTF-8 bytes),
    ``cache_key`` and ``sent_digest`` (64 hex characters each), ``sample`` (the repeat index)."""

    payload: bytes
    cache_key: str
    sent_digest: str
    sample: int
    #: how the body differs from what the request asked (:attr:`OpenAICompatibleJudge.adapt`), "" when it does not
    adapted: str = ""
    #: the judge's adaptation generation it was encoded under (a request waiting for its slot while another one
    #: taught the judge an adaptation is re-encoded before it is sent)
    gen: int = 0


@dataclass
class _Attempt:
    """The piece of tenacity's retry state that ``wait_exponential_jitter`` reads."""

    attempt_number: int


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, TransientError) and not exc.final


@dataclass
class JudgeStats:
    """Counters of one judge object (all runs): HTTP attempts, cache hits, retries, failures, usage of live calls.

    ``retries`` counts the retries made (attempts after a request's first); ``waits`` lists ``(reason, seconds)``
    of every backoff taken before a retry (Retry-After honoured when larger) — one per retry, none after the last
    attempt. ``empty`` counts 200 replies without verdict-bearing content (each retried), ``paused`` the pauses
    taken on rate-limit headers or a 429's Retry-After. ``usage.cost_usd`` sums the priced replies only;
    ``unpriced`` counts the replies whose model has no price (their cost is unknown, not 0).
    """

    calls: int = 0
    cache_hits: int = 0
    replies: int = 0
    retries: int = 0
    failed: int = 0
    unparsed: int = 0
    usage: Usage = field(default_factory=lambda: Usage(0, 0, 0.0))
    unpriced: int = 0
    empty: int = 0
    paused: int = 0
    waits: list[tuple[str, float]] = field(default_factory=list)
    #: replies that were refusals (each asked again only when sampling without a seed)
    refusals: int = 0
    #: HTTP 400s by which the model refused a parameter (each taught the judge an adaptation, or stopped the run)
    param_refusals: int = 0


def parse_retry_after(value: str | Mapping[str, str] | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (seconds or an HTTP date) or from a reply's headers (then
    ``retry-after-ms`` and ``x-ms-retry-after-ms`` in milliseconds are read first:
    :func:`evallab.judges._limits.parse_retry_after`); ``None`` when absent or unreadable."""
    if value is None or isinstance(value, str):
        return _retry_after_headers({"retry-after": value} if value else None)
    return _retry_after_headers(value)


def check_base_url(base_url: str) -> str:
    """``base_url`` without a trailing slash, after checking it is an http(s) URL WITHOUT credentials.

    Raises
    ------
    EvallabError
        Not an http(s) URL, or a user/password (an API key) in it — the message never repeats them.
    """
    url = str(base_url or "").strip()
    if not url.startswith(("http://", "https://")):
        raise EvallabError(f"judge base_url {redact(url)!r}; expected an http(s) URL such as "
                           "'https://api.openai.com/v1'")
    parts = urllib.parse.urlsplit(url)
    if "@" in parts.netloc:
        host = parts.netloc.rsplit("@", 1)[1]
        raise EvallabError(f"judge base_url {parts.scheme}://***@{host}{parts.path} holds credentials before the "
                           "host; remove them and put the key in an environment variable named by api_key_env "
                           "(--api-key-env)")
    return url.rstrip("/")


_KEYLIKE = re.compile(r"\b(sk|key|api|token|bearer)[-_][A-Za-z0-9_\-*.]{6,}", re.I)


def redact(text: str, key_env: str | None = None) -> str:
    """``text`` with the API key (the value of ``$key_env``) and key-like tokens (``sk-...``) masked.

    Servers echo parts of a rejected key in their error messages (e.g. "Incorrect API key provided:
    sk-ab***yz"); every server message evallab shows or stores goes through here first.
    """
    key = os.environ.get(key_env) if key_env else None
    if key and len(key) >= 4:
        text = text.replace(key, "***")
    return _KEYLIKE.sub(lambda m: m.group(1) + "-***", text)


def split_parts(content) -> tuple[str, str]:
    """``(text, reasoning)`` of a message ``content`` that is not a string: a list of parts — ``{"type": "text",
    "text"}`` (also ``output_text``) joined into the text; ``{"type": "thinking", "thinking": [parts] or str}``
    (Mistral's Magistral) and ``{"type": "reasoning", ...}`` joined into the reasoning; others ignored — or
    ``None`` (``("", "")``). A plain string is returned as the text."""
    if content is None:
        return "", ""
    if isinstance(content, str):
        return content, ""
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return str(content), ""
    text, think = [], []
    for part in content:
        if isinstance(part, str):
            text.append(part)
            continue
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("thinking", "reasoning", "redacted_thinking"):
            inner = part.get("thinking") or part.get("reasoning") or part.get("text") or part.get("summary")
            think.append(inner if isinstance(inner, str) else split_parts(inner)[0])
        elif kind in ("text", "output_text", None) and isinstance(part.get("text"), str):
            text.append(part["text"])
    return "".join(text), "\n".join(t for t in think if t)


def _server_message(resp, key_env: str | None, body: bytes | None = None) -> str:
    """The server's error message of a reply (an ``httpx.Response``, or any response with its ``body`` bytes),
    redacted."""
    raw = body if body is not None else resp.content
    try:
        doc = json.loads(raw)
        err = doc.get("error", doc) if isinstance(doc, dict) else doc
        msg = err.get("message") if isinstance(err, dict) else err
        msg = str(msg)
    except (ValueError, AttributeError, TypeError):
        msg = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    return redact(msg[:300], key_env)


class _NoCookies(httpx.Cookies):
    """A cookie store that keeps nothing (chat-completion APIs use no cookies; parsing them costs ~40 µs/reply)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        pass

    def set_cookie_header(self, request: httpx.Request) -> None:
        pass


class _JudgeHTTPClient(httpx.AsyncClient):
    """``httpx.AsyncClient`` without a cookie jar; otherwise unchanged."""

    @property
    def cookies(self) -> httpx.Cookies:
        return _NoCookies()

    @cookies.setter
    def cookies(self, value) -> None:
        pass


def _unreachable(exc: BaseException) -> bool:
    """No connection could be made at all (refused, no such host, no route): aiohttp's ``ClientConnectorError``
    and kin, ``httpx.ConnectError`` or a bare ``ConnectionRefusedError`` — not a connection dropped after it was
    made."""
    return (isinstance(exc, (ConnectionRefusedError, httpx.ConnectError))
            or type(exc).__name__.startswith("ClientConnector"))


def _loopback(base_url: str) -> bool:
    """Whether ``base_url`` points at this machine's loopback (where evallab may have started the server)."""
    try:
        return urllib.parse.urlsplit(base_url).hostname in ("127.0.0.1", "localhost", "::1")
    except ValueError:
        return False


def _describe(exc: BaseException, timeout: float) -> str:
    """A transport failure in words: a timeout or a connection error (the aiohttp transport maps a dropped
    connection to ``httpx.ConnectTimeout``, so the original exception decides)."""
    cause = exc.__cause__ or exc
    name = type(cause).__name__
    timed_out = isinstance(cause, (TimeoutError, asyncio.TimeoutError)) or "Timeout" in name
    if isinstance(cause, httpx.TimeoutException) and cause is exc:
        timed_out = True
    if timed_out:
        return f"timeout after {timeout:g}s ({name})"
    return f"connection error ({name}: {cause})"


class OpenAICompatibleJudge:
    """A live judge on an OpenAI-compatible chat-completions endpoint.

    Parameters
    ----------
    base_url : str
        The API root including its version path, e.g. ``https://api.openai.com/v1``,
        ``https://api.deepseek.com/v1``, ``http://localhost:8000/v1`` (vLLM), ``http://localhost:11434/v1``
        (Ollama). Requests go to ``<base_url>/chat/completions``.
    model : str
        The model id sent in each request (pin a dated version for reproducible studies).
    api_key_env : str, optional
        NAME of the environment variable holding the key (sent as ``Authorization: Bearer``); ``None`` for servers
        without auth. The value is read when the HTTP client is created.
    label : str, optional
        The ``judge`` column of the verdict table (default: ``model``).
    timeout : float
        Seconds for connect and for each read, counted from when the request is sent (never while it waits for
        a slot client-side).
    max_concurrency : int
        The ceiling of requests in flight at once (>= 1), and the connection pool size.
    adaptive : bool
        Adapt the limit between 1 and ``max_concurrency`` (:class:`~evallab.judges._limits.AdaptiveLimiter`,
        starting at ``initial_concurrency``); ``False`` keeps ``max_concurrency`` in flight throughout.
    initial_concurrency : int
        Requests in flight at the start when ``adaptive``, for the first judge on this (base URL, model) in the
        process; a later one starts from the limit the earlier ones learnt (kept when a run ends,
        :meth:`aclose`), as the same judge does from one run to the next.
    requests_per_minute, tokens_per_minute : float, optional
        Client-side budgets (aiolimiter leaky buckets); a request's tokens are estimated as its body bytes / 4 plus
        its ``max_tokens`` (or the mean completion seen so far).
    ratelimit_headers : bool
        Pause new requests when the server's ``x-ratelimit-remaining-*`` headers say the budget is spent
        (:func:`~evallab.judges._limits.ratelimit_pause`).
    max_retries : int
        Retries after the first attempt on retryable failures (>= 0).
    prices : mapping or path, optional
        Price overrides merged over :data:`~evallab.judges._pricing.DEFAULT_PRICES` (USD per 1M tokens).
    cache : Cache or path, optional
        Reply cache (a path opens :class:`Cache` there).
    backoff_initial, backoff_max : float
        Exponential backoff with jitter: first wait about ``backoff_initial`` s, doubling, capped at
        ``backoff_max`` s; a Retry-After longer than that is honoured up to ``max_retry_after`` s.
    transport : {"aiohttp", "httpx"}
        HTTP transport under the httpx API (see module docstring).
    extra_body : mapping, optional
        Extra JSON fields sent with every request (e.g. ``{"top_p": 0.9}``).
    structured : {"off", "auto", "openai", "llamacpp", "ollama"}
        Ask for a JSON verdict whose ``verdict`` is an enum (:func:`verdict_schema`, :func:`format_fields`).
        ``"auto"`` detects the endpoint's dialect before the first request (:meth:`prepare`): each dialect in
        :data:`DIALECTS` order is asked once, without retries — a refusal (400/415/422/500/501) or a reply that
        ignored the format moves on to the next, and when none holds the text prompt is used — and the result is
        remembered per (base URL, model) in the cache file (and the process). The response format is part of the
        body, so of the cache key and the runner's ``sent_digest``; the row's ``response_format`` column names it.
    logprobs : bool
        Also ask for token log-probabilities (``logprobs: true, top_logprobs: 5``) and record the verdict
        token's in the ``verdict_logprob`` column when the server returns them.
    param_adapt : mapping, optional
        How to send parameters the model refuses, overriding detection: ``{param: new_name}`` renames it (e.g.
        ``{"max_tokens": "max_completion_tokens"}`` for OpenAI's o-series and GPT-5 models), ``{param: None}``
        (or ``"drop"``) leaves it out so the model's default applies (``{"temperature": None}``). Without it a
        refusal is detected from the 400 body (:func:`param_refusal`: OpenAI's ``unsupported_parameter`` /
        ``unsupported_value``, "Unsupported parameter: 'X' ...") the first time, the request adapted and asked
        again at once, and the adaptation remembered per (base URL, model) in this process and the cache file.
        The adapted body is what is hashed for the cache key and ``sent_digest``; each row's ``adapted`` column
        says what was changed (e.g. "temperature 0 not sent (model default)") and the run summary counts them.
    verdict_from_reasoning : bool
        Read the verdict from the reasoning (``reasoning_content``/``reasoning``/``thinking`` fields, thinking
        parts) when the final answer holds none; the row's ``verdict_source`` is then ``"reasoning"``. Off
        (default): such a reply is NA with ``failure_kind="reasoning_only"`` and an error naming the verdict the
        reasoning holds.
    keep_reasoning : bool
        Keep the reasoning text in the verdict table's ``reasoning`` column (default); ``False`` keeps its
        sha256 (``reasoning_sha256``) and length in characters (``reasoning_chars``) only.
    share_samples : bool
        Ask the samples of one request (equal but for ``metadata["sample"]``, sampling without a seed) in ONE
        HTTP request with ``n`` choices where the endpoint takes it (:meth:`judge_samples`; detected, remembered
        per (base URL, model)): the prompt is paid once. :func:`~evallab.judges.run_jobs` groups them.
    server_check : callable, optional
        Asked after a refused or dropped connection (not after a timeout): returns one line saying why the server
        behind ``base_url`` is gone (the run then stops with :class:`JudgeFatalError` carrying that line, e.g.
        "the llama.cpp server (pid 812, port 40123) was killed by SIGSEGV (signal 11); last lines of its log: …;
        full log: …"), ``""`` while it may still be on its way down (asked again for up to 1.5 s), or ``None``
        (unknown: the connection error is retried as usual). Default: for a loopback ``base_url``,
        :func:`evallab.judges._local.server_death` (the servers evallab started, in any process);
        :meth:`evallab.judges._local.LocalLlamaServer.judge` passes its own process's.

    Raises
    ------
    EvallabError
        Bad parameters, a base URL with credentials in it, or ``api_key_env`` naming a variable that is not set
        (raised on the first request).
    """

    def __init__(self, base_url: str, model: str, *, api_key_env: str | None = None, label: str | None = None,
                 timeout: float = 60.0, max_concurrency: int = 16, max_retries: int = 5,
                 prices: Mapping | str | None = None, cache: Cache | str | None = None,
                 backoff_initial: float = 0.5, backoff_max: float = 30.0, max_retry_after: float = 120.0,
                 transport: str = "aiohttp", extra_body: Mapping | None = None, adaptive: bool = True,
                 initial_concurrency: int = 2, requests_per_minute: float | None = None,
                 tokens_per_minute: float | None = None, ratelimit_headers: bool = True,
                 structured: str = "off", logprobs: bool = False,
                 server_check: Callable[[], str | None] | None = None,
                 param_adapt: Mapping[str, str | None] | None = None, verdict_from_reasoning: bool = False,
                 keep_reasoning: bool = True, share_samples: bool = False) -> None:
        base_url = check_base_url(base_url)
        if not model:
            raise EvallabError("judge model is empty; expected a model id such as 'gpt-4o-mini'")
        if max_concurrency < 1 or max_retries < 0 or timeout <= 0 or initial_concurrency < 1:
            raise EvallabError("expected max_concurrency >= 1, initial_concurrency >= 1, max_retries >= 0 and "
                               "timeout > 0")
        for name, v in (("requests_per_minute", requests_per_minute), ("tokens_per_minute", tokens_per_minute)):
            if v is not None and not v > 0:
                raise EvallabError(f"{name} {v!r}; expected a positive number or None")
        if transport not in ("aiohttp", "httpx"):
            raise EvallabError(f"transport {transport!r}; expected 'aiohttp' or 'httpx'")
        if structured not in ("off", "auto", *DIALECTS):
            raise EvallabError(f"structured {structured!r}; expected 'off', 'auto' or one of {list(DIALECTS)}")
        self.structured, self.logprobs = structured, bool(logprobs)
        #: Batch API price as a share of the synchronous price (OpenAI: half)
        self.batch_discount = 0.5
        #: the structured-output dialect in use: a DIALECTS name, "text", or None (auto, not detected yet)
        self.dialect: str | None = {"off": "text", "auto": None}.get(structured, structured)
        self.base_url = base_url
        self.url = self.base_url + "/chat/completions"
        # the constant head of the cache-key document (encoded())
        self._key_head = f'{{"base_url":{json.dumps(self.base_url, ensure_ascii=False)},"body":'
        self._url = httpx.URL(self.url)  # parsed once
        self.model = model
        self.label = label or model
        self.api_key_env = api_key_env or None
        self.timeout, self.max_concurrency, self.max_retries = float(timeout), int(max_concurrency), int(max_retries)
        self.adaptive, self.initial_concurrency = bool(adaptive), int(initial_concurrency)
        self.requests_per_minute, self.tokens_per_minute = requests_per_minute, tokens_per_minute
        self.ratelimit_headers = bool(ratelimit_headers)
        self.prices = price_table(prices)
        self.cache = Cache(cache) if isinstance(cache, (str, os.PathLike)) else cache
        self.backoff_initial, self.backoff_max, self.max_retry_after = backoff_initial, backoff_max, max_retry_after
        self._expo = wait_exponential_jitter(multiplier=backoff_initial, max=backoff_max, jitter=backoff_initial)
        self._fatal: JudgeFatalError | None = None  # once set, no further request is sent (until a new client)
        self._reached = False  # the endpoint has answered at least once (any status)
        if server_check is None and _loopback(base_url):
            from evallab.judges._servers import server_death

            server_check = functools.partial(server_death, base_url)
        self.server_check = server_check
        self.transport = transport
        self.extra_body = dict(extra_body or {})
        self.verdict_from_reasoning, self.keep_reasoning = bool(verdict_from_reasoning), bool(keep_reasoning)
        self.share_samples = bool(share_samples)
        fixed = {}
        for k, v in dict(param_adapt or {}).items():
            if not isinstance(k, str) or not (v is None or isinstance(v, str)):
                raise EvallabError(f"param_adapt {k!r}: {v!r}; expected a parameter name mapped to the name to send "
                                   "it under, or to None/'drop' to leave it out")
            fixed[k] = None if v in (None, "", "drop") else v
        #: parameters sent otherwise than asked: {param: name sent instead, or None = left out}
        self.adapt: dict[str, str | None] = {**_PARAM_MEMORY.get((base_url, model), {}), **fixed}
        self._adapt_fixed = frozenset(fixed)
        self._adapt_gen = 0  # bumped on every adaptation learnt (part of the encoding memo's stamp)
        self.stats = JudgeStats()
        self._client: httpx.AsyncClient | None = None
        self._session = None  # aiohttp.ClientSession of the hot path (transport="aiohttp")
        self._loop: asyncio.AbstractEventLoop | None = None
        self.limiter: AdaptiveLimiter | None = None
        self._rpm = self._tpm = None
        self._out_tokens = [0, 0]  # completion tokens seen, replies counted (the token estimate of a request)

    @staticmethod
    def forget_learnt_limits() -> None:
        """Forget the adaptive limits learnt in this process (the next judge on an endpoint starts at its initial
        limit, as the first one did: benchmarks of a cold start, tests that must not inherit a limit)."""
        _LIMIT_MEMORY.clear()

    def __repr__(self) -> str:
        return (f"OpenAICompatibleJudge(base_url={self.base_url!r}, model={self.model!r}, "
                f"api_key_env={self.api_key_env!r}, label={self.label!r})")

    # -- HTTP client, one per event loop ------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise JudgeFatalError(f"environment variable {self.api_key_env} is not set; it must hold the API "
                                      f"key for {self.base_url}", url=self.url)
            headers["Authorization"] = "Bearer " + key
        return headers

    def _live_client(self):
        """The HTTP client for a live call, or the fatal error an earlier call hit (kept, so no request is sent
        after a 401 or a quota error)."""
        if self._fatal is not None:
            raise self._fatal
        try:
            return self._ensure_client()
        except JudgeFatalError as exc:
            self._fatal = exc
            raise

    def _ensure_client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            limits = httpx.Limits(max_connections=self.max_concurrency,
                                  max_keepalive_connections=self.max_concurrency)
            if self.transport == "aiohttp":
                from httpx_aiohttp import AiohttpTransport

                # plain-HTTP endpoints (local servers) need no TLS context: skip loading the CA bundle
                tr = AiohttpTransport(limits=limits, trust_env=False, verify=self.url.startswith("https://"))
                self._client = _JudgeHTTPClient(transport=tr, headers=self._headers(),
                                                 timeout=httpx.Timeout(self.timeout))
            else:
                self._client = _JudgeHTTPClient(limits=limits, headers=self._headers(), trust_env=False,
                                                 timeout=httpx.Timeout(self.timeout),
                                                 verify=self.url.startswith("https://"))
            self._session = None
            if self.transport == "aiohttp":  # the hot path: aiohttp itself, without the httpx layer
                import aiohttp

                self._session = aiohttp.ClientSession(
                    connector=aiohttp.TCPConnector(limit=self.max_concurrency,
                                                   ssl=None if self.url.startswith("https://") else False),
                    headers=self._headers(), cookie_jar=aiohttp.DummyCookieJar(), trust_env=False,
                    timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.timeout, sock_read=self.timeout))
            self._loop = loop
            if self.limiter is None:  # the learnt limit carries over to the next run of this judge ...
                # ... and to the first run of another judge on the same endpoint in this process
                self.limiter = AdaptiveLimiter(self.max_concurrency, initial=self.initial_concurrency,
                                               adaptive=self.adaptive,
                                               learnt=_LIMIT_MEMORY.get((self.base_url, self.model)))
            else:  # a new event loop: futures of the old one are unusable
                self.limiter.reset()
            if self.requests_per_minute or self.tokens_per_minute:
                from aiolimiter import AsyncLimiter

                self._rpm = AsyncLimiter(self.requests_per_minute, 60) if self.requests_per_minute else None
                self._tpm = AsyncLimiter(self.tokens_per_minute, 60) if self.tokens_per_minute else None
            self._fatal = None
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client (a new one is created on the next request)."""
        if self.cache is not None:
            self.cache.flush()
        if self.limiter is not None and self.adaptive and self.stats.calls:
            _LIMIT_MEMORY[(self.base_url, self.model)] = self.limiter.learnt_state()
        if self._client is not None:
            client, self._client = self._client, None
            session, self._session = self._session, None
            try:
                await client.aclose()
                if session is not None:
                    await session.close()
            except RuntimeError:  # the loop it belonged to is gone
                pass

    # -- the protocol -----------------------------------------------------------------------------------
    def body(self, request: JudgeRequest, dialect: str | None = None) -> dict:
        """The JSON body sent for ``request``: :func:`~evallab.judges._cache.chat_body`, the response-format fields
        of the dialect in use (:func:`format_fields`), logprobs when asked, then ``extra_body`` over them."""
        return self._body(request, dialect)[0]

    def _body(self, request: JudgeRequest, dialect: str | None = None) -> tuple[dict, str]:
        """(:meth:`body`, what :attr:`adapt` changed in it in words — "" when nothing)."""
        dialect = dialect or self.dialect
        if (dialect in (None, "text")) and not self.logprobs:
            b = chat_body(self.model, request, self.extra_body)
        else:
            b = chat_body(self.model, request)
            b.update(format_fields(dialect or "text", request.kind))
            if self.logprobs:
                b.update(logprobs=True, top_logprobs=5)
            b.update(self.extra_body)
        if not self.adapt:
            return b, ""
        said = []
        for k, use in self.adapt.items():
            if k in b:
                v = b.pop(k)
                if use:
                    b[use] = v
                    said.append(f"{k} sent as {use}")
                else:
                    said.append(f"{k} {canonical_json(v)} not sent (model default)")
        return b, "; ".join(said)

    def encoded(self, request: JudgeRequest) -> Encoded:
        """The request as sent, encoded once: the JSON body's bytes, its cache key and its ``sent_digest``.

        The body is serialised ONCE as canonical JSON (:func:`~evallab.judges._cache.canonical_json`: compact,
        UTF-8, keys sorted except a response schema's ``properties``, whose order is the order a grammar-constrained
        or structured-output model writes the fields — ``reason`` before ``verdict`` is part of what is asked) and
        that one string is sent and hashed: the cache key is the sha256 of exactly the document :func:`~evallab.judges._cache.
        body_key` describes, and ``sent_digest`` that of :func:`evallab.judges._runner.sent_digest` (a test checks
        both against those functions). The result is kept on the request and reused while the request, the
        dialect and the judge are unchanged (a changed field, sample index or message list re-encodes).
        """
        m = request.metadata
        sample = int(m.get("sample", 0) or 0) if m else 0
        stamp = (self, self.dialect, self._adapt_gen, request.temperature, request.seed, request.max_tokens,
                 request.kind, request.prompt_version, sample, tuple(request.messages), request.reasoning_effort,
                 request.thinking_budget)
        memo = request.__dict__.get("_evallab_encoded")
        if memo is not None and memo[0] == stamp:
            return memo[1]
        body, adapted = self._body(request)
        canon = canonical_json(body)
        key_doc = f'{self._key_head}{canon},"sample":{sample},"v":{CACHE_FORMAT}}}'
        digest_doc = (f'{{"body":{canon},"kind":{json.dumps(request.kind, ensure_ascii=False, default=str)},'
                      f'"prompt_version":{json.dumps(request.prompt_version, ensure_ascii=False, default=str)}}}')
        enc = Encoded(canon.encode(), hashlib.sha256(key_doc.encode()).hexdigest(),
                      hashlib.sha256(digest_doc.encode()).hexdigest(), sample, adapted, self._adapt_gen)
        request.__dict__["_evallab_encoded"] = (stamp, enc)
        return enc

    def _memory_key(self) -> str:
        return f"dialect {self.base_url} {self.model}"

    def _load_params(self) -> None:
        """Take the parameter adaptations learnt for this (base URL, model) from the cache file (another process
        or an earlier run learnt them), under the explicit ``param_adapt``."""
        if self.cache is None:
            return
        raw = self.cache.get_endpoint(f"params {self.base_url} {self.model}")
        try:
            learnt = json.loads(raw) if raw else {}
        except ValueError:
            learnt = {}
        new = {k: v for k, v in learnt.items() if k not in self._adapt_fixed and self.adapt.get(k, 0) != v}
        if new:
            self.adapt.update(new)
            self._adapt_gen += 1
            _PARAM_MEMORY.setdefault((self.base_url, self.model), {}).update(new)

    def _learn(self, exc: UnsupportedParameterError) -> None:
        """Remember that this model refuses ``exc.param`` (sent as ``exc.use`` from now on, or left out); an
        explicit ``param_adapt`` entry is never overridden."""
        if exc.param in self._adapt_fixed:
            return
        changes = {exc.param: exc.use}
        if exc.param == "logprobs" and exc.use is None:
            changes["top_logprobs"] = None
        if all(self.adapt.get(k, 0) == v for k, v in changes.items()):
            return  # another request learnt it first
        self.adapt.update(changes)
        self._adapt_gen += 1
        mem = _PARAM_MEMORY.setdefault((self.base_url, self.model), {})
        mem.update(changes)
        if self.cache is not None:
            self.cache.put_endpoint(f"params {self.base_url} {self.model}", json.dumps(mem, sort_keys=True))
        log.warning("judge %s: %s refuses %r for %s; %s from now on", self.label, self.base_url, exc.param,
                    self.model, f"sent as {exc.use!r}" if exc.use else "left out (the model's default applies)")

    async def prepare(self, request: JudgeRequest | None = None) -> str | None:
        """Settle the structured-output dialect before a run (``structured="auto"`` only): from memory (this
        process, then the cache file), else by asking ``request`` in each dialect of :data:`DIALECTS` (one attempt
        each; transient failures — 429/502/503/504/timeouts — are retried as usual). The accepted reply is cached,
        so the probe is not paid twice. Returns the dialect (``"text"`` when none holds).

        Raises
        ------
        JudgeFatalError
            401/403/404 while probing.
        """
        self._load_params()
        if self.structured != "auto" or self.dialect is not None:
            return self.dialect
        mem = _DIALECT_MEMORY.get((self.base_url, self.model))
        if mem is None and self.cache is not None:
            mem = self.cache.get_endpoint(self._memory_key())
        if mem is not None:
            self.dialect = mem
            return mem
        if request is None or request.kind not in _VERDICT_ENUM:
            return None
        client = self._ensure_client()
        headers = {"X-Evallab-Sample": str(int(request.metadata.get("sample", 0) or 0))}
        chosen = "text"
        for d in DIALECTS:
            body = self.body(request, d)
            payload = json.dumps(body, ensure_ascii=False).encode()
            value = None
            n = 0
            while n <= self.max_retries:
                try:
                    value = await self._attempt(client, payload, headers, request)
                    break
                except UnsupportedParameterError as exc:  # a refused parameter, not the format: adapt, ask again
                    self.stats.param_refusals += 1
                    self._learn(exc)
                    body = self.body(request, d)
                    if json.dumps(body, ensure_ascii=False).encode() == payload:
                        self._fatal = exc
                        raise
                    payload = json.dumps(body, ensure_ascii=False).encode()
                    continue
                except JudgeFatalError as exc:
                    if exc.status not in _REFUSAL_STATUSES:
                        self._fatal = exc
                        raise
                    break  # refused: the next dialect
                except TransientError as exc:
                    if exc.status in _REFUSAL_STATUSES or n == self.max_retries:
                        break
                    w = self._backoff(exc, n + 1)
                    self._count_retry(exc, w, n + 1)
                    await asyncio.sleep(w)
                    n += 1
            if value is None:
                log.info("judge %s: %s refused the %s response format", self.label, self.base_url, d)
                continue
            obj = None
            try:
                obj = json.loads(value["raw"])
            except ValueError:
                pass
            if isinstance(obj, dict) and str(obj.get("verdict", "")).lower() in _VERDICT_ENUM[request.kind]:
                chosen = d
                value["response_format"] = d
                if self.cache is not None:
                    self.cache.put(body_key(self.base_url, body, int(request.metadata.get("sample", 0) or 0)),
                                   value)
                break
            log.info("judge %s: %s ignored the %s response format", self.label, self.base_url, d)
        self.dialect = chosen
        _DIALECT_MEMORY[(self.base_url, self.model)] = chosen
        if self.cache is not None:
            self.cache.put_endpoint(self._memory_key(), chosen)
        return chosen

    def prefetch(self, requests: Sequence[JudgeRequest]) -> int:
        """Look the cache keys of ``requests`` up at once (:meth:`Cache.prefetch`) so that :meth:`judge` runs no
        query per request; :func:`~evallab.judges.run_jobs` calls it on each chunk of
        :data:`~evallab.judges._runner.PREFETCH_CHUNK` requests just before it asks them. Returns how many are
        cached (0 without a cache)."""
        if self.cache is None:
            return 0
        return self.cache.prefetch(self.encoded(r).cache_key for r in requests)

    def cache_key(self, request: JudgeRequest) -> str:
        """The cache key of ``request``: the exact body sent, the base URL and the sample index
        (:func:`~evallab.judges._cache.body_key`; computed by :meth:`encoded`)."""
        return self.encoded(request).cache_key

    def _reply(self, request: JudgeRequest, value: dict, *, cached: bool) -> JudgeReply:
        """The reply of a cache value: the verdict parsed from the final answer (``raw``) — or, when it holds
        none and ``verdict_from_reasoning`` is on, from the reasoning — re-parsed and re-priced on every read."""
        raw = value.get("raw") or ""
        parsed = parse_reply_full(raw, request)
        verdict, reason, error = parsed.verdict, parsed.reason, parsed.error
        kind, source = value.get("failure"), "answer"
        reasoning = value.get("reasoning") or ""
        if verdict is None and reasoning and kind is None:
            rp = parse_reply_full(reasoning, request)
            if rp.verdict is not None and self.verdict_from_reasoning:
                parsed, verdict, reason, error, source = rp, rp.verdict, rp.reason, None, "reasoning"
            else:
                where = "no final answer (content empty)" if not raw.strip() else f"the final answer: {error}"
                found = (f"the reasoning holds a verdict ({rp.verdict!r}); pass verdict_from_reasoning=True "
                         "(--verdict-from-reasoning) to read it" if rp.verdict is not None else
                         "the reasoning holds none either")
                kind, error = "reasoning_only", f"{where}; {found}"
        elif value.get("error") and verdict is None:
            error = value["error"]
        if verdict is None and kind is None:
            kind = "unparsed"
        inp, out = value.get("input_tokens"), value.get("output_tokens")
        cached_in = value.get("cached_tokens")
        model = value.get("model") or self.model
        lp = value.get("verdict_logprob")
        if kind == "refusal" and not raw:  # the refusal text is the reply (kept in raw)
            raw = value.get("refusal") or ""
        return JudgeReply(raw=raw, verdict=verdict, reason=reason, logprob=lp,
                          response_format=value.get("response_format") or "text",
                          usage=Usage(inp, out, cost_usd(model, inp, out, self.prices, cached_in),
                                      value.get("reasoning_tokens"), cached_in),
                          latency_s=value.get("latency_s"), model=model,
                          system_fingerprint=value.get("system_fingerprint"), error=error, cached=cached,
                          score=parsed.score, reasoning=reasoning, failure_kind=kind, verdict_source=source,
                          adapted=self.encoded(request).adapted if self.adapt else "")

    async def judge(self, request: JudgeRequest) -> JudgeReply:
        """Answer ``request`` from the cache or the endpoint.

        Raises
        ------
        JudgeFatalError
            A non-retryable HTTP status (400/401/403/404 ...), a missing key variable, or an unusable URL.
        """
        key = None
        enc = self.encoded(request)
        if self.cache is not None:
            key = enc.cache_key
            value = self.cache.get(key)
            if value is not None:
                self.stats.cache_hits += 1
                self.stats.replies += 1
                return self._reply(request, value, cached=True)
        client = self._live_client()
        gen = self._adapt_gen
        try:
            value = await self._call(client, request, enc)
        except JudgeFatalError as exc:
            self._fatal = exc
            raise
        if gen != self._adapt_gen:  # a parameter was adapted meanwhile: the body sent (and its key) changed
            key = self.encoded(request).cache_key
        if value.get("failed"):
            if value.get("unreachable") and not self._reached:  # nothing has ever answered: a wrong URL or port,
                # or a server that is not running — stop with one line instead of a failed row per request
                self._fatal = JudgeFatalError(f"cannot connect to {self.url}: {value['error']}; is the server "
                                              "running, and are the host and port of base_url right?", url=self.url)
                raise self._fatal
            self.stats.failed += 1
            return JudgeReply(error=value["error"], failed=True, model=value.get("model") or self.model,
                              latency_s=value.get("latency_s"), raw=value.get("raw") or "",
                              reasoning=value.get("reasoning") or "", failure_kind="transient")
        return self._accept(request, value, key)

    def _accept(self, request: JudgeRequest, value: dict, key: str | None) -> JudgeReply:
        """The reply of a live cache ``value``: counted, and cached under ``key``."""
        reply = self._reply(request, value, cached=False)
        self.stats.replies += 1
        self.stats.unparsed += reply.verdict is None
        self.stats.unpriced += reply.usage.cost_usd is None
        self.stats.usage = self.stats.usage + reply.usage
        if self.cache is not None:
            self.cache.put(key, value)
        return reply

    def can_share(self, request: JudgeRequest) -> bool:
        """Whether samples of ``request`` may share one HTTP request (``share_samples`` on, the endpoint not
        known to ignore or refuse ``n``, and the request samples without a seed — greedy or seeded samples are
        copies of one reply)."""
        return (self.share_samples and request.temperature > 0 and request.seed is None
                and _N_MEMORY.get((self.base_url, self.model)) is not False)

    async def judge_samples(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]:
        """Answer the samples ``requests`` of ONE request (equal but for ``metadata["sample"]``) with one HTTP
        request asking ``n`` choices — the prompt's tokens are paid once — where the endpoint takes ``n``.

        Cached samples are answered from the cache; the others are asked in one request with ``n`` = their count
        and choice ``i`` is the ``i``-th of them (in sample order; ``X-Evallab-Sample`` names the first). Usage:
        the prompt tokens (and cached prompt tokens) go to the first sample's row, the completion and reasoning
        tokens are split evenly (the remainder to the first). Detection: an endpoint that answers fewer choices
        than asked (it ignores ``n``) or refuses ``n`` (HTTP 400) is remembered per (base URL, model) as not
        taking it; the samples left, and any choice without a verdict-bearing reply or any failed attempt, are
        then asked one by one through :meth:`judge` (its retries and failure kinds). Returns the replies in the
        order of ``requests``.

        Raises
        ------
        JudgeFatalError
            As :meth:`judge`.
        """
        out: dict[int, JudgeReply] = {}
        todo = []
        for i, r in enumerate(requests):
            enc = self.encoded(r)
            value = self.cache.get(enc.cache_key) if self.cache is not None else None
            if value is not None:
                self.stats.cache_hits += 1
                self.stats.replies += 1
                out[i] = self._reply(r, value, cached=True)
            else:
                todo.append(i)
        todo.sort(key=lambda i: self.encoded(requests[i]).sample)
        if len(todo) > 1 and self.can_share(requests[todo[0]]):
            client = self._live_client()
            first = requests[todo[0]]
            enc = self.encoded(first)
            body = json.loads(enc.payload)
            body["n"] = len(todo)
            headers = {"X-Evallab-Sample": str(enc.sample)} if enc.sample else None
            doc = None
            try:
                doc = await self._attempt(client, canonical_json(body).encode(), headers, first, raw_doc=True)
            except UnsupportedParameterError as exc:
                if exc.param != "n":
                    self._fatal = exc
                    raise
                self.stats.param_refusals += 1
                _N_MEMORY[(self.base_url, self.model)] = False
            except JudgeFatalError as exc:
                self._fatal = exc
                raise
            except TransientError as exc:
                log.info("judge %s: a shared request of %d samples failed (%s); asking them one by one",
                         self.label, len(todo), exc)
            if doc is not None:
                choices = doc.get("choices") or []
                if len(choices) < len(todo):
                    _N_MEMORY[(self.base_url, self.model)] = False
                else:
                    _N_MEMORY[(self.base_url, self.model)] = True
                usage = doc.get("usage") or {}
                k = min(len(choices), len(todo))
                for j in range(k):
                    share = {}
                    for name in ("completion_tokens",):
                        if usage.get(name) is not None:
                            share[name] = usage[name] // k + (usage[name] % k if j == 0 else 0)
                    share["prompt_tokens"] = usage.get("prompt_tokens") if j == 0 else 0
                    rt = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens")
                    if rt:
                        share["completion_tokens_details"] = {"reasoning_tokens": rt // k + (rt % k if j == 0 else 0)}
                    ct = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
                    if ct and j == 0:
                        share["prompt_tokens_details"] = {"cached_tokens": ct}
                    r = requests[todo[j]]
                    try:
                        value = self.value_from_completion({**doc, "choices": [choices[j]], "usage": share},
                                                           doc.get("_latency"), r)
                    except TransientError:
                        continue  # asked alone below, with the retries its kind calls for
                    value.pop("_latency", None)
                    out[todo[j]] = self._accept(r, value, self.encoded(r).cache_key)
        for i in todo:
            if i not in out:
                out[i] = await self.judge(requests[i])
        return [out[i] for i in range(len(requests))]

    def _backoff(self, exc: BaseException, failed_attempts: int) -> float:
        """Seconds to wait after ``failed_attempts`` failures: exponential with jitter
        (``backoff_initial * 2**(n-1)`` + U(0, backoff_initial), capped at ``backoff_max``), or the server's
        Retry-After when longer (capped at ``max_retry_after``). Pure: counts nothing."""
        if getattr(exc, "immediate", False):
            return 0.0
        base = self._expo(_Attempt(failed_attempts))
        ra = getattr(exc, "retry_after", None)
        return min(max(base, ra), self.max_retry_after) if ra is not None else base

    def _count_retry(self, exc: BaseException, seconds: float, failed_attempts: int) -> None:
        self.stats.retries += 1
        self.stats.waits.append((str(exc), seconds))
        log.info("judge %s: retry %d in %.2fs after %s", self.label, failed_attempts, seconds, exc)

    def _wait(self, state) -> float:
        # tenacity's attempt 1 is our attempt 2 (the first ran before tenacity took over); tenacity calls this
        # before its stop check too, so nothing is counted here (see _before_sleep)
        return self._backoff(state.outcome.exception(), state.attempt_number + 1)

    def _before_sleep(self, state) -> None:  # called only when a retry really follows
        self._count_retry(state.outcome.exception(), state.next_action.sleep, state.attempt_number + 1)

    async def _call(self, client: httpx.AsyncClient, request: JudgeRequest, enc: Encoded | None = None) -> dict:
        """:meth:`_send`, asked again at once with the body adapted when the model refuses a parameter
        (:class:`UnsupportedParameterError`); the refusal stops the run when the body cannot be adapted."""
        enc = enc or self.encoded(request)
        for _ in range(len(ADAPTABLE) + 1):
            try:
                return await self._send(client, request, enc)
            except UnsupportedParameterError as exc:
                self.stats.param_refusals += 1
                self._learn(exc)
                new = self.encoded(request)
                if new.payload == enc.payload:  # nothing to adapt (an explicit param_adapt, or already sent so)
                    raise
                enc = new
        raise JudgeFatalError(f"{self.url} kept refusing parameters of {self.model}: {self.adapt}", url=self.url)

    async def _send(self, client: httpx.AsyncClient, request: JudgeRequest, enc: Encoded) -> dict:
        payload = enc.payload
        # the repeat index, for servers that vary replies per sample (the local simulated judge reads it, default
        # 0); other servers ignore the header. Sample 0 sends none: the default needs no header.
        headers = {"X-Evallab-Sample": str(enc.sample)} if enc.sample else None
        try:  # first attempt outside tenacity: the common case pays nothing for the retry machinery
            return await self._attempt(client, payload, headers, request, enc.gen)
        except TransientError as exc:
            last = exc
        if self.max_retries > 0 and not last.final:
            try:
                w = self._backoff(last, 1)
                self._count_retry(last, w, 1)
                await asyncio.sleep(w)
                retrying = AsyncRetrying(stop=stop_after_attempt(self.max_retries), wait=self._wait,
                                         before_sleep=self._before_sleep,
                                         retry=retry_if_exception(_retryable), reraise=True)
                async for attempt in retrying:
                    with attempt:
                        return await self._attempt(client, payload, headers, request, enc.gen)
            except TransientError as exc:
                last = exc
        n = self.max_retries + 1
        if last.value and last.value.get("refusal"):  # refused on every attempt: the refusal is the reply
            v = dict(last.value)
            v.update(failure="refusal", error=f"refusal: {v['refusal']} (asked {n} time{'s' if n > 1 else ''})")
            return v
        # a final error says itself why it was not asked again (and may come before the last attempt)
        out = {"failed": True, "error": str(last) if last.final else
               f"{last} (gave up after {n} attempt{'s' if n > 1 else ''})", "unreachable": last.unreachable}
        if last.value:  # an empty/cut reply: keep what the server said (model, latency, text)
            out.update({k: last.value.get(k) for k in ("model", "latency_s", "raw")})
        return out

    async def _check_server(self) -> None:
        """After a refused or dropped connection: stop the run with the server's cause of death when
        :attr:`server_check` knows it (asking again for up to 1.5 s while the process is on its way down)."""
        if self.server_check is None:
            return
        deadline = time.monotonic() + 1.5
        while True:
            why = self.server_check()
            if why:
                raise JudgeFatalError(why, url=self.url)
            if why is None or time.monotonic() > deadline:
                return
            await asyncio.sleep(0.05)

    def _estimate_tokens(self, payload: bytes, request: JudgeRequest) -> float:
        seen, n = self._out_tokens
        return len(payload) / 4 + (request.max_tokens or (seen / n if n else 256))

    async def _attempt(self, client: httpx.AsyncClient, payload: bytes, headers: dict,
                       request: JudgeRequest, gen: int | None = None, raw_doc: bool = False) -> dict:
        if self._rpm is not None:
            await self._rpm.acquire()
        if self._tpm is not None:
            await self._tpm.acquire(min(self._estimate_tokens(payload, request), self.tokens_per_minute))
        lim = self.limiter
        sent = await lim.acquire()
        if self._fatal is not None:  # another request hit a fatal status while this one waited: stop
            lim.release(sent, OTHER)
            raise self._fatal
        if gen is not None and gen != self._adapt_gen:  # adapted while this one waited: send the adapted body
            payload = self.encoded(request).payload
        outcome, latency = OTHER, None
        self.stats.calls += 1
        t0 = time.perf_counter()
        try:
            try:
                if self._session is not None:
                    async with self._session.post(self.url, data=payload, headers=headers) as resp:
                        body = await resp.read()
                    st, rh = resp.status, resp.headers
                else:
                    resp = await client.post(self._url, content=payload, headers=headers)
                    body = await resp.aread()
                    st, rh = resp.status_code, resp.headers
            except httpx.UnsupportedProtocol as exc:
                raise JudgeFatalError(f"cannot reach {self.url}: {exc}", url=self.url) from None
            except (TimeoutError, httpx.TransportError, OSError) as exc:
                text = _describe(exc, self.timeout)
                if text.startswith("timeout"):
                    outcome = OVERLOAD
                else:
                    await self._check_server()
                raise TransientError(text, unreachable=_unreachable(exc)) from None
            except Exception as exc:  # aiohttp.ClientError and kin: a transport failure
                if type(exc).__module__.split(".")[0] != "aiohttp":
                    raise
                text = _describe(exc, self.timeout)
                if text.startswith("timeout"):
                    outcome = OVERLOAD
                else:
                    await self._check_server()
                raise TransientError(text) from None
            latency = time.perf_counter() - t0
            self._reached = True
            if st != 200:
                msg = _server_message(None, self.api_key_env, body)
                err = _error_doc(body)
                quota = quota_code(err)
                if quota is not None:
                    raise QuotaError(f"HTTP {st} from {self.url}: {msg} ({quota}) — the account is out of credit or "
                                     "over its billing limit; stopped without retrying (rows answered so far are "
                                     "kept: add credit or raise the limit, then rerun)", status=st, url=self.url)
                if st == 400 and (refused := param_refusal(err)) is not None:
                    raise UnsupportedParameterError(f"HTTP 400 from {self.url}: {msg}; stopped without retrying",
                                                    param=refused[0], use=refused[1], url=self.url)
                if st in RETRY_STATUSES or st >= 500:
                    ra = parse_retry_after(rh)
                    if st in OVERLOAD_STATUSES:
                        outcome = OVERLOAD
                        if ra:  # the endpoint asked everyone to wait, not just this request
                            lim.pause(min(ra, self.max_retry_after))
                            self.stats.paused += 1
                    raise TransientError(f"HTTP {st}: {msg}", status=st, retry_after=ra)
                hint = {401: f" — check the API key in ${self.api_key_env}" if self.api_key_env else
                        " — the server wants an API key: set api_key_env",
                        403: " — the key is not allowed to use this model or endpoint",
                        404: f" — check base_url ({self.base_url}) and model ({self.model!r})"}.get(st, "")
                raise JudgeFatalError(f"HTTP {st} from {self.url}: {msg}{hint}; stopped without retrying",
                                      status=st, url=self.url)
            outcome = OK
            if self.ratelimit_headers and ("x-ratelimit-remaining-requests" in rh
                                           or "x-ratelimit-remaining-tokens" in rh):
                others = lim.in_flight - 1
                pause = ratelimit_pause(rh, in_flight=others,
                                        tokens_per_request=self._estimate_tokens(payload, request))
                rem = rh.get("x-ratelimit-remaining-requests")
                reset = parse_duration(rh.get("x-ratelimit-reset-requests"))
                if rem is not None and reset is not None and rem.isdigit():
                    lim.set_budget(int(rem) - others, min(reset, self.max_retry_after))
                if pause > 0:
                    lim.pause(min(pause, self.max_retry_after))
                    self.stats.paused += 1
        finally:
            lim.release(sent, outcome, latency)
        try:
            doc = jsoncodec.loads(body)
        except ValueError:
            doc = None
        if not isinstance(doc, dict):  # not JSON, or JSON that is not an object
            raise TransientError(f"malformed JSON body from the server "
                                 f"({redact(repr(body[:80]), self.api_key_env)})", status=200) from None
        if raw_doc:  # the completion object itself (judge_samples reads its several choices)
            doc["_latency"] = latency
            return doc
        return self.value_from_completion(doc, latency, request)

    def value_from_completion(self, doc: dict, latency: float | None, request: JudgeRequest) -> dict:
        """The cache value of a chat-completion object ``doc`` (raw text, token counts, latency, model, fingerprint,
        verdict logprob); raises :class:`TransientError` for a reply without verdict-bearing content (no choices,
        empty content, cut at max_tokens before any verdict). Used for live replies and Batch API results."""
        usage = doc.get("usage") or {}
        value = {"raw": "", "input_tokens": usage.get("prompt_tokens"), "output_tokens": usage.get("completion_tokens"),
                 "latency_s": latency, "model": doc.get("model"), "system_fingerprint": doc.get("system_fingerprint")}
        if value["output_tokens"]:
            self._out_tokens[0] += value["output_tokens"]
            self._out_tokens[1] += 1
        choices = doc.get("choices")
        if not choices:
            self.stats.empty += 1
            raise TransientError("the server returned no choices", status=200, value=value)
        choice = choices[0] or {}
        msg = choice.get("message") or {}
        content = msg.get("content")
        reasoning = None
        if content.__class__ is not str:  # a list of parts (Magistral: thinking, then text), or null
            content, reasoning = split_parts(content)
        value["raw"] = content
        extra = msg.get("reasoning_content") or msg.get("reasoning") or msg.get("thinking")
        if extra:  # vLLM/DeepSeek reasoning_content, OpenRouter/Ollama reasoning, Ollama's native thinking
            extra = extra if isinstance(extra, str) else split_parts(extra)[0] or split_parts(extra)[1]
            reasoning = f"{reasoning}\n{extra}" if reasoning else extra
        if reasoning:
            value["reasoning"] = reasoning
        if "completion_tokens_details" in usage or "prompt_tokens_details" in usage:
            rt = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens")
            ct = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
            if rt:
                value["reasoning_tokens"] = rt
            if ct:
                value["cached_tokens"] = ct
        finish = choice.get("finish_reason")
        if not content.strip():
            refusal = msg.get("refusal")
            same = request.temperature == 0 or request.seed is not None
            how = ("greedy" if request.temperature == 0 else f"seeded (seed {request.seed})") if same else ""
            if refusal:
                self.stats.refusals += 1
                value["refusal"] = str(refusal)
                if same:
                    value.update(failure="refusal", error=f"refusal: {refusal} (not asked again: {how} decoding "
                                                          "would write it again)")
                    return value
                raise TransientError(f"refusal: {refusal}", status=200, value=value, immediate=True)
            if finish != "length" and not reasoning:
                self.stats.empty += 1
                if same:
                    value.update(failure="empty", error=f"empty reply (finish_reason {finish}); not asked again: "
                                                        f"{how} decoding would write the same reply")
                    return value
                raise TransientError(f"empty reply (finish_reason {finish})", status=200, value=value)
        if choice.get("logprobs"):
            try:
                shown = json.loads(value["raw"]).get("verdict")
            except (ValueError, AttributeError):
                shown = None
            value["verdict_logprob"] = verdict_logprob(choice["logprobs"], shown)
        if self.dialect not in (None, "text"):
            value["response_format"] = self.dialect
        if finish == "length" and parse_reply(value["raw"], request)[0] is None:
            self.stats.empty += 1
            if request.temperature == 0 or request.seed is not None:
                how = "greedy" if request.temperature == 0 else f"seeded (seed {request.seed})"
                cap = f"max_tokens {request.max_tokens}" if request.max_tokens else "the server's default max_tokens"
                value.update(failure="cut", error=f"reply cut at max_tokens (finish_reason length, {cap}) before any "
                                                  f"verdict; not asked again: {how} decoding would write the same "
                                                  "text — raise max_tokens")
                return value
            raise TransientError("reply cut at max_tokens (finish_reason length) before any verdict", status=200,
                                 value=value, immediate=True)
        return value
