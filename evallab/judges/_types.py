"""Request and reply types of the ``Judge`` protocol (DESIGN.md, "Judges").

A :class:`JudgeRequest` holds the chat messages, the model parameters and metadata identifying the reply in
the tidy verdict table; a :class:`JudgeReply` holds the raw text, the parsed verdict (NA = ``None`` with
``error`` set), the reason, usage and latency, and what the server reported about the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class Message:
    """One chat message: ``role`` in {"system", "user", "assistant"}."""

    role: str
    content: str


@dataclass
class Usage:
    """Token counts and cost of one reply (``None`` where unknown). Adds up with ``+``.

    ``reasoning_tokens`` (``completion_tokens_details.reasoning_tokens``) are part of ``output_tokens`` and priced
    as output; ``cached_tokens`` (``prompt_tokens_details.cached_tokens``) are part of ``input_tokens`` and priced
    at the cached-input rate where the price table has one (:func:`evallab.judges._pricing.cost_usd`)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    reasoning_tokens: int | None = None
    cached_tokens: int | None = None

    def __add__(self, other: Usage) -> Usage:
        return Usage(_add(self.input_tokens, other.input_tokens), _add(self.output_tokens, other.output_tokens),
                     _add(self.cost_usd, other.cost_usd), _add(self.reasoning_tokens, other.reasoning_tokens),
                     _add(self.cached_tokens, other.cached_tokens))


def _add(a, b):
    """``a + b`` with ``None`` as unknown: ``None`` only when both are."""
    return None if a is None and b is None else (a or 0) + (b or 0)


@dataclass
class JudgeRequest:
    """What is sent to a judge.

    Attributes
    ----------
    messages : chat messages (system first when present).
    temperature, seed, max_tokens : model parameters (``seed``/``max_tokens`` ``None`` = server default).
    kind : ``"pairwise"``, ``"pointwise"`` or ``"score"`` — which verdict vocabulary the reply is parsed into.
    prompt_version : the prompt builder's version constant (part of the request digest).
    metadata : identifies the reply in the verdict table: ``item_id``, ``order`` (pairwise ``ab``/``ba``),
        ``anchor_set``, ``sample`` (0-based repeat index; part of the cache key), and anything else
        (``dataset``, ``subset``, ``strategy``, ``gold``, ``scenario_id``, ``answer_kind`` ...).
    reasoning_effort : ``"minimal"``/``"low"``/``"medium"``/``"high"`` (OpenAI o-series and GPT-5, vLLM,
        OpenRouter, Gemini's OpenAI route) sent as ``reasoning_effort``; ``None`` = the server's default. A design
        factor: the row's ``reasoning_effort`` column holds it and its ``strategy`` gets ``@<effort>``, so the same
        items asked at several efforts are distinct rows of one table.
    thinking_budget : tokens of thinking allowed, sent as ``thinking: {type: enabled, budget_tokens: N}`` (the
        field Anthropic's OpenAI-compatible route takes); ``None`` = not sent.
    """

    messages: list[Message]
    temperature: float = 0.0
    seed: int | None = None
    max_tokens: int | None = None
    kind: str = "pointwise"
    prompt_version: str = ""
    metadata: dict = field(default_factory=dict)
    reasoning_effort: str | None = None
    thinking_budget: int | None = None

    @property
    def system(self) -> str:
        return "\n".join(m.content for m in self.messages if m.role == "system")

    @property
    def user(self) -> str:
        return "\n".join(m.content for m in self.messages if m.role != "system")


@dataclass
class JudgeReply:
    """What a judge answered.

    ``verdict`` is in the tidy vocabulary (pairwise ``1``/``2``/``tie`` as the ORIGINAL output index; pointwise
    ``pass``/``warn``/``fail``) or ``None`` when unparsed — then ``error`` says why and ``raw`` keeps the text.
    ``cached`` is True when answered from the on-disk cache (no HTTP call); ``failed`` is True when no reply
    could be obtained (``error`` says why), which a resumed run retries.
    """

    raw: str = ""
    verdict: str | None = None
    reason: str = ""
    usage: Usage = field(default_factory=Usage)
    latency_s: float | None = None
    model: str | None = None
    system_fingerprint: str | None = None
    error: str | None = None
    cached: bool = False
    #: no reply was obtained (HTTP/transport failure after the retries): the row is redone by a resumed run
    failed: bool = False
    #: a numeric score when the reply gives one (Arena-Hard strength 0-2, a G-Eval score); ``None`` otherwise
    score: float | None = None
    #: natural log-probability of the verdict token, when the server returned log-probabilities
    logprob: float | None = None
    #: how the verdict was asked for: "text" (the prompt alone) or a structured-output dialect name
    response_format: str = "text"
    #: the model's reasoning (``reasoning_content``/``reasoning``/``thinking`` fields, thinking parts), kept apart
    #: from the final answer ``raw``; "" when the server sent none
    reasoning: str = ""
    #: why there is no verdict, in one word: "refusal", "empty", "cut", "reasoning_only", "unparsed" (a reply
    #: without a verdict), "transient" (no reply after the retries); ``None`` when a verdict was read
    failure_kind: str | None = None
    #: where the verdict was read: "answer" (the final answer) or "reasoning" (``verdict_from_reasoning=True``)
    verdict_source: str = "answer"
    #: how the body sent differs from what the request asked (parameters adapted to the model), "" when it does not
    adapted: str = ""


@runtime_checkable
class Judge(Protocol):
    """Anything that answers a :class:`JudgeRequest` asynchronously.

    ``label`` names the judge in the verdict table's ``judge`` column; ``model`` is the requested model id.
    """

    label: str
    model: str

    async def judge(self, request: JudgeRequest) -> JudgeReply: ...
