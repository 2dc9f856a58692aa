"""Prompt builders for pairwise and pointwise (rubric) judging, with a versioned prompt constant.

The builders render the built-in prompt TEMPLATES (:func:`evallab.judges._templates.builtin_template`: ``vanilla``,
``rules``, ``pointwise``) — the same kind of sandboxed Jinja2 template a user supplies with ``evallab judge
--prompt FILE`` —, so every request carries the prompt's identity in its metadata (``prompt`` = ``name@sha256[:12]``,
``prompt_sha256``) and the text is that of :mod:`evallab.judges._prompt_text` (unchanged since these versions:
recordings stay valid).

:data:`PROMPT_VERSION` names the exact system/user text these builders produce (the system prompts live in
:mod:`evallab.judges._prompt_text`, the user text in the built-in templates); it enters the request digest
(keryx rule, spec 000 "Recording the calibration": ``sha256(prompt_version + "\\0" + system + "\\0" + user)``), so
any change to that text must bump it — recordings taken with the old text then go stale instead of being
silently reused.

Pairwise prompts follow LLMBar's "Vanilla" shape (Zeng et al., ICLR 2024): an instruction and two outputs shown as
"Output (a)" and "Output (b)"; ``order="ba"`` shows output 2 first, and the reply's verdict is mapped back to the
ORIGINAL output index (:func:`evallab.judges._parsing.parse_reply`). Pointwise prompts follow keryx's judge
(spec 000, "Writing the rubric, pass_criteria, and fail_criteria"): a rubric, pass criteria that must all hold,
fail criteria any one of which fails the answer, the concreteness rule, "warning is not failure", the answer fenced
and declared as data, and a JSON reply ``{"verdict": "pass"|"fail", "reason": "..."}``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evallab.errors import EvallabError
from evallab.judges import _recordings as _rec
from evallab.judges._prompt_text import (  # noqa: F401 — the prompt text's names, imported from here by callers
    CALIBRATION_HEADING,
    PAIRWISE_PROMPTS,
    PAIRWISE_RULES_SYSTEM,
    PAIRWISE_SYSTEM,
    POINTWISE_SYSTEM,
    PROMPT_VERSION,
    RULES_PROMPT_VERSION,
    Anchor,
    _check_anchors,
    _criteria,
    fence,
)
from evallab.judges._types import JudgeRequest


def build_pairwise(instruction: str, output_1: str, output_2: str, *, order: str = "ab",
                   anchors: Sequence[Anchor] = (), metadata: dict | None = None, temperature: float = 0.0,
                   seed: int | None = None, max_tokens: int | None = None, prompt: str = "vanilla") -> JudgeRequest:
    """A pairwise request: which of two outputs follows the instruction better.

    Parameters
    ----------
    instruction, output_1, output_2 : str
        The instruction and the two outputs in their ORIGINAL numbering.
    order : {"ab", "ba"}
        ``"ab"`` shows output 1 as "Output (a)"; ``"ba"`` shows output 2 first. The reply's verdict is mapped
        back to the original index (``"1"``/``"2"``).
    anchors : sequence of Anchor
        In-context examples (verdict ``"1"``/``"2"`` = "Output (a)"/"Output (b)" of that example), rendered under
        ``## Calibration examples`` in the given order.
    metadata : dict, optional
        Verdict-table identity (``item_id``, ``dataset``, ``subset``, ``gold``, ``sample`` ...); ``order`` is set.
    temperature, seed, max_tokens : model parameters.
    prompt : {"vanilla", "rules"}
        The system prompt (:data:`PAIRWISE_PROMPTS`): evallab's plain one (:data:`PROMPT_VERSION`) or the one
        with LLMBar's rules (:data:`RULES_PROMPT_VERSION`).

    Returns
    -------
    JudgeRequest
        ``kind="pairwise"``, ``prompt_version`` that of ``prompt``; rendered by
        :func:`~evallab.judges._templates.render_pairwise` from the built-in template ``prompt``, so ``metadata``
        also has ``prompt`` (``name@sha256[:12]``) and ``prompt_sha256``.

    Raises
    ------
    EvallabError
        ``order`` not ``"ab"``/``"ba"``, an unknown ``prompt``, or an anchor verdict not ``"1"``/``"2"``.
    """
    if order not in ("ab", "ba"):
        raise EvallabError(f"order {order!r}; expected 'ab' (output 1 first) or 'ba' (output 2 first)")
    if prompt not in PAIRWISE_PROMPTS:
        raise EvallabError(f"prompt {prompt!r}; expected one of {list(PAIRWISE_PROMPTS)}")
    from evallab.judges._templates import builtin_template, render_pairwise

    return render_pairwise(builtin_template(prompt), instruction, output_1, output_2, order=order, anchors=anchors,
                           metadata=metadata, temperature=temperature, seed=seed, max_tokens=max_tokens)


def build_pointwise(*, rubric: str, pass_criteria: Sequence[str] | str, fail_criteria: Sequence[str] | str = (),
                    answer: str, anchors: Sequence[Anchor] = (), metadata: dict | None = None,
                    temperature: float = 0.0, seed: int | None = None,
                    max_tokens: int | None = None) -> JudgeRequest:
    """A pointwise rubric-grading request (keryx judge shape, spec 000).

    Parameters
    ----------
    rubric : str
        1–4 sentences describing what a correct answer does.
    pass_criteria : sequence of str (or newline-separated str)
        Every one must hold for a pass.
    fail_criteria : sequence of str (or newline-separated str)
        Any one holding fails the answer.
    answer : str
        The answer to grade; fenced and declared as data.
    anchors : sequence of Anchor
        Calibration examples (verdict ``"pass"``/``"fail"``) rendered in order under ``## Calibration examples``,
        each under ``### Example <n>: PASS`` or ``### Example <n>: FAIL``.
    metadata : dict, optional
        Verdict-table identity (``item_id``, ``anchor_set``, ``gold``, ``sample``, ``scenario_id``, ``kind`` ...).
    temperature, seed, max_tokens : model parameters.

    Returns
    -------
    JudgeRequest
        ``kind="pointwise"``, ``prompt_version=PROMPT_VERSION``; the reply is JSON
        ``{"verdict": "pass"|"fail", "reason": ...}``. Rendered from the built-in template ``pointwise``
        (:func:`~evallab.judges._templates.render_pointwise`): ``metadata`` also has ``prompt`` and ``prompt_sha256``.

    Raises
    ------
    EvallabError
        Empty rubric, no pass criterion, or an anchor verdict not ``"pass"``/``"fail"``.
    """
    from evallab.judges._templates import builtin_template, render_pointwise

    return render_pointwise(builtin_template("pointwise"), rubric=rubric, pass_criteria=pass_criteria,
                            fail_criteria=fail_criteria, answer=answer, anchors=anchors, metadata=metadata,
                            temperature=temperature, seed=seed, max_tokens=max_tokens)


def request_digest(request: JudgeRequest) -> str:
    """keryx request digest of ``request``: sha256 hex of ``prompt_version + "\\0" + system + "\\0" + user``."""
    return _rec.request_digest(request.prompt_version, request.system, request.user)


_ANCHOR_HEAD = re.compile(r"^### Example (\d+): (PASS|FAIL|Output \((?:a|b)\))\s*$", re.M)
_FENCED_ANSWER = re.compile(r"## Answer to grade\n.*?\n(`{3,})text\n(.*)\n\1\s*\n", re.S)
_FENCED_OUTPUT = re.compile(r"## Output \(([ab])\)\n(`{3,})text\n(.*?)\n\2\s*(?:\n|$)", re.S)


def anchor_headings(user: str) -> list[str]:
    """The anchor verdicts rendered in a user prompt, in order (``"PASS"``/``"FAIL"``/``"Output (a)"``...)."""
    start = user.find(CALIBRATION_HEADING)
    if start < 0:
        return []
    ends = [i for i in (user.find("\n## Answer to grade", start), user.find("\n## Instruction", start)) if i >= 0]
    section = user[start:min(ends)] if ends else user[start:]
    return [m.group(2) for m in _ANCHOR_HEAD.finditer(section)]


def answer_text(user: str) -> str | None:
    """The fenced answer of a pointwise user prompt (``None`` when not found)."""
    m = _FENCED_ANSWER.search(user)
    return m.group(2) if m else None


def shown_outputs(user: str) -> dict[str, str]:
    """The fenced outputs of a pairwise user prompt: ``{"a": text, "b": text}``."""
    return {m.group(1): m.group(3) for m in _FENCED_OUTPUT.finditer(user)}
