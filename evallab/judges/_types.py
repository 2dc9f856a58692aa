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
    """Token counts and cost of one reply (``None`` where unknown). Adds up with ``+``."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None

    def __add__(self, other: Usage) -> Usage:
        return Usage(_add(self.input_tokens, other.input_tokens), _add(self.output_tokens, other.output_tokens),
                     _add(self.cost_usd, other.cost_usd))


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
    """

    messages: list[Message]
    temperature: float = 0.0
    seed: int | None = None
    max_tokens: int | None = None
    kind: str = "pointwise"
    prompt_version: str = ""
    metadata: dict = field(default_factory=dict)

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


@runtime_checkable
class Judge(Protocol):
    """Anything that answers a :class:`JudgeRequest` asynchronously.

    ``label`` names the judge in the verdict table's ``judge`` column; ``model`` is the requested model id.
    """

    label: str
    model: str

    async def judge(self, request: JudgeRequest) -> JudgeReply: ...
