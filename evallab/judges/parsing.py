"""Turn a judge's raw reply into a verdict — or an NA verdict with the reason in ``error`` (never "wrong").

Accepted forms, tried in order:

1. a JSON object — the whole reply, a fenced ```json block, or the first ``{...}`` that parses — with a
   ``verdict`` field (also ``winner``, ``decision``, ``result``, ``answer``, ``preference``, ``output``);
   ``reason`` (or ``explanation``/``rationale``) becomes the reason;
2. pairwise free forms: ``[[A]]``/``[[B]]`` (``[[C]]`` = tie, MT-Bench), ``Output (a)``/``Output (b)`` when only one
   of them is named (LLMBar's parser rule), ``verdict: a``;
3. pointwise free forms: ``pass``/``fail`` in any case as the first or last word, or after ``verdict:`` — but
   NA when the free text names both a pass-word and a fail-word (``"PASS? No. FAIL"``, ``"between pass and
   fail"``), or when the chosen word is negated: ``not``, ``no``, ``never``, ``cannot`` or a ``n't`` word
   within the 3 tokens before it in the same sentence (``"does not pass"``, ``"Not a fail."``).

Anything else is NA: ``(None, text, "<why>")``, counted by :func:`evallab.verdicts.parse_rate`, never scored.
Pairwise verdicts from :func:`parse_verdict` are the SHOWN position (``"1"`` = Output (a)); :func:`parse_reply`
maps them to the ORIGINAL output index with the request's ``order``.
"""

from __future__ import annotations

import json
import re

from evallab.judges.types import JudgeRequest

_VERDICT_KEYS = ("verdict", "winner", "decision", "result", "answer", "preference", "output", "choice")
_REASON_KEYS = ("reason", "explanation", "rationale", "reasoning", "justification")
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)
_PAIR_WORD = {"a": "1", "b": "2", "1": "1", "2": "2", "output (a)": "1", "output (b)": "2", "output a": "1",
              "output b": "2", "(a)": "1", "(b)": "2", "tie": "tie", "c": "tie", "[[a]]": "1", "[[b]]": "2",
              "[[c]]": "tie", "output_1": "1", "output_2": "2"}
_POINT_WORD = {"pass": "pass", "passed": "pass", "fail": "fail", "failed": "fail", "warn": "warn",
               "warning": "warn"}
#: free-text words that name a pointwise verdict (any one of each side in the same reply → ambiguous → NA)
_PASS_WORDS = frozenset({"pass", "passed", "passes", "passing"})
_FAIL_WORDS = frozenset({"fail", "failed", "fails", "failing"})
_NEGATORS = frozenset({"not", "no", "never", "cannot"})
#: tokens for the free-form rules: words with an inner apostrophe kept whole ("doesn't"), sentence breaks
_TOKEN = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?|[.!?;\n]")


def _json_objects(text: str):
    t = text.strip()
    if t.startswith("{"):
        yield t
    for m in _FENCE.finditer(text):
        yield m.group(1).strip()
    dec = json.JSONDecoder()
    for m in re.finditer(r"\{", text):
        try:
            obj, _ = dec.raw_decode(text[m.start():])
        except ValueError:
            continue
        yield obj


def _from_json(text: str) -> tuple[dict | None, str | None]:
    """First decoded JSON object with a verdict-like key; (obj, None) or (None, why)."""
    why = None
    for cand in _json_objects(text):
        obj = cand
        if isinstance(cand, str):
            try:
                obj = json.loads(cand)
            except ValueError:
                why = "malformed JSON in reply"
                continue
        if isinstance(obj, dict):
            if any(k in {x.lower() for x in obj} for k in _VERDICT_KEYS):
                return {k.lower(): v for k, v in obj.items()}, None
            why = "JSON reply has no 'verdict' field"
    return None, why


def _reason(obj: dict) -> str:
    for k in _REASON_KEYS:
        if k in obj and obj[k] is not None:
            return str(obj[k])
    return ""


def _norm(value: object, kind: str) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    v = re.sub(r"[\s*_`'\".:!]+$|^[\s*_`'\"]+", "", str(value).strip().lower())
    table = _PAIR_WORD if kind == "pairwise" else _POINT_WORD
    return table.get(v)


def parse_verdict(text: str | None, kind: str) -> tuple[str | None, str, str | None]:
    """Parse a judge reply.

    Parameters
    ----------
    text : str or None
        The raw reply text.
    kind : {"pairwise", "pointwise"}
        Pairwise verdicts are ``"1"``/``"2"``/``"tie"`` as SHOWN (``"1"`` = Output (a)); pointwise
        ``"pass"``/``"warn"``/``"fail"``.

    Returns
    -------
    (verdict, reason, error)
        ``verdict`` is ``None`` when no verdict could be read; then ``error`` says why and ``reason`` keeps the
        raw text. ``error`` is ``None`` when parsed.
    """
    if kind not in ("pairwise", "pointwise"):
        raise ValueError(f"kind {kind!r}; expected 'pairwise' or 'pointwise'")
    if text is None or not str(text).strip():
        return None, "", "empty reply"
    text = str(text)
    obj, why = _from_json(text)
    if obj is not None:
        key = next(k for k in _VERDICT_KEYS if k in obj)
        v = _norm(obj[key], kind)
        if v is not None:
            return v, _reason(obj), None
        why = f"JSON verdict {obj[key]!r} is not a {kind} verdict"
    if kind == "pairwise":
        v, free_why = _pairwise_free(text), None
    else:
        v, free_why = _pointwise_free(text)
    if v is not None:
        return v, text.strip(), None
    return None, text.strip(), free_why or why or f"no {kind} verdict found in reply"


def _pairwise_free(text: str) -> str | None:
    brackets = {m.lower() for m in re.findall(r"\[\[\s*([ABCabc])\s*\]\]", text)}
    if len(brackets) == 1:
        return _PAIR_WORD[brackets.pop()]
    m = re.search(r"verdict\s*[:=\-]\s*\**\s*(?:output\s*)?\(?([ab])\)?\b", text, re.I)
    if m:
        return _PAIR_WORD[m.group(1).lower()]
    named = {m.lower() for m in re.findall(r"output\s*\(([ab])\)", text, re.I)}
    if len(named) == 1:
        return _PAIR_WORD[named.pop()]
    bare = re.sub(r"[\s*_`'\".:!()]+", "", text.strip().lower())
    return {"a": "1", "b": "2", "outputa": "1", "outputb": "2", "tie": "tie"}.get(bare)


def _negator(token: str) -> bool:
    t = token.lower().replace("\u2019", "'")
    return t in _NEGATORS or t.endswith("n't")


def _pointwise_free(text: str) -> tuple[str | None, str | None]:
    """(verdict, None), or (None, why) for an ambiguous or negated reply, or (None, None) when nothing is found."""
    tokens = _TOKEN.findall(text)
    words = [(i, t) for i, t in enumerate(tokens) if t[0].isalpha()]
    low = {t.lower() for _, t in words}
    named = sorted(low & (_PASS_WORDS | _FAIL_WORDS))
    if low & _PASS_WORDS and low & _FAIL_WORDS:
        return None, f"ambiguous: the reply names both a pass and a fail verdict word ({', '.join(named)})"
    chosen = None  # (token index, verdict)
    m = re.search(r"verdict\s*[:=\-]\s*\**\s*(pass|fail|warn)\w*", text, re.I)
    if m:
        before = len(_TOKEN.findall(text[:m.start(1)]))
        chosen = (before, _POINT_WORD[m.group(1).lower()])
    elif words:
        for i, w in (words[0], words[-1]):
            if w.lower() in ("pass", "fail", "passed", "failed"):
                chosen = (i, _POINT_WORD[w.lower()])
                break
    if chosen is None:
        return None, None
    i, v = chosen
    for t in reversed(tokens[max(0, i - 3):i]):
        if not t[0].isalpha():  # the window ends at a sentence break
            break
        if _negator(t):
            return None, f"negated verdict: {t!r} before {v!r}"
    return v, None


def map_order(verdict: str | None, order: str) -> str | None:
    """Shown position → ORIGINAL output index: with ``order="ba"`` Output (a) is output 2."""
    if verdict in ("1", "2") and order == "ba":
        return "2" if verdict == "1" else "1"
    return verdict


def parse_reply(text: str | None, request: JudgeRequest) -> tuple[str | None, str, str | None]:
    """:func:`parse_verdict` for ``request.kind``, pairwise verdicts mapped to the original output index."""
    v, reason, err = parse_verdict(text, request.kind)
    if request.kind == "pairwise":
        v = map_order(v, str(request.metadata.get("order", "ab") or "ab"))
    return v, reason, err
