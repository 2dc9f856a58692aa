"""Turn a judge's raw reply into a verdict — or an NA verdict with the reason in ``error`` (never "wrong").

Accepted forms, tried in order:

1. a JSON object — the whole reply, a fenced ```json block, or any ``{...}`` that parses — with a ``verdict``
   field (also ``winner``, ``decision``, ``result``, ``answer``, ``preference``, ``output``, ``choice``); the LAST
   such object wins; ``reason`` (or ``explanation``/``rationale``...) becomes the reason; its value is read like
   a free-form verdict below (``"a"``, ``"Output (b)"``, ``"tie"``, ``"A>>B"`` ...);
2. pairwise verdict STATEMENTS anywhere in the text:

   - Arena-Hard (Li et al., 2024): ``[[A>>B]]``, ``[[A>B]]``, ``[[A=B]]``, ``[[B>A]]``, ``[[B>>A]]`` — the
     strength goes to ``score`` (2 = much better, 1 = better, 0 = tie);
   - JudgeBench (Tan et al., 2024): ``A>B``, ``B>A``, ``A=B`` (capital letters);
   - MT-Bench (Zheng et al., 2023): ``[[A]]``, ``[[B]]``, ``[[C]]`` (C = tie);
   - labelled: ``verdict:``, ``winner:``, ``decision:``, ``final verdict:``, ``my choice is`` ... followed by an
     option (``a``, ``(b)``, ``Output (a)``, ``Response B``, ``1``) or a tie in words;
   - ``Output (a) is better`` (and ``superior``, ``preferred``, ``stronger``);
   - ties in words: ``it's a tie``, ``a draw``, ``equally good``, ``both are equally helpful``, ``neither is
     better``, ``no clear winner``.

   A hedge before the verdict is skipped: in ``Verdict: a close call, but (b)`` the value read is what follows
   the last ``but``/``however``/``ultimately``/``on balance`` ... (``(b)``), for pointwise values too
   (``Verdict: borderline, but PASS``).
   An article is never an option: in ``Verdict: a tie`` the ``a`` is an article (an option letter must stand
   alone: followed by the end, punctuation, or ``is``/``wins``/``because`` ...). The FINAL statement wins: the
   statements after the last one marked ``final`` (``Final verdict: ...``) when there is one, else all of them,
   and of those the last — a verdict in words (a tie phrase, ``Output (a) is better``) after the line of that
   final statement does not count: ``Final verdict: [[A]]`` then ``both answers were equally correct`` is A. Two different verdicts in the sentence (or line) of that last statement
   (``[[A]] or [[B]]``) are conflicting final statements: NA with both named;
3. otherwise the whole reply as one option (``a``, ``Output (b)``, ``tie``; AlpacaEval's ``m`` = Output (a) and
   ``M`` = Output (b), case-sensitive), or exactly one of ``Output (a)``/``Output (b)`` named (LLMBar's parser rule);
4. pointwise: ``pass``/``fail``/``warn`` after a label (``Verdict: FAIL``; the final statement wins as above, and
   is NA when its sentence names both a pass and a fail word), or
   in any case as the first or last word — but NA when unlabelled free text names both a pass-word and a
   fail-word (``"PASS? No. FAIL"``), or when the chosen word is negated: ``not``, ``no``, ``never``, ``cannot`` or a
   ``n't`` word within the 3 tokens before it in the same sentence (``"does not pass"``, ``"Not a fail."``);
5. scores (``kind="score"``, G-Eval style; Liu et al., 2023): ``Score: 4``, ``Rating: [[7]]``, ``4/5``, a bare
   number — the last labelled one wins; the verdict is the number as text, ``score`` the number.

Anything else is NA: ``(None, text, "<why>")``, counted by :func:`evallab.verdicts.parse_rate`, never scored.
Pairwise verdicts from :func:`parse_verdict` are the SHOWN position (``"1"`` = Output (a)); :func:`parse_reply`
maps them to the ORIGINAL output index with the request's ``order``.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass

from evallab.errors import ArgumentError
from evallab.judges import _jsoncodec as jsoncodec
from evallab.judges._types import JudgeRequest

_VERDICT_KEYS = ("verdict", "winner", "decision", "result", "answer", "preference", "output", "choice")
_REASON_KEYS = ("reason", "explanation", "rationale", "reasoning", "justification")
_SCORE_KEYS = ("score", "rating", "grade")
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)
_POINT_WORD = {"pass": "pass", "passed": "pass", "fail": "fail", "failed": "fail", "warn": "warn",
               "warning": "warn"}
#: free-text words that name a pointwise verdict (any one of each side in the same reply → ambiguous → NA)
_PASS_WORDS = frozenset({"pass", "passed", "passes", "passing"})
_FAIL_WORDS = frozenset({"fail", "failed", "fails", "failing"})
_NEGATORS = frozenset({"not", "no", "never", "cannot"})
#: tokens for the free-form rules: words with an inner apostrophe kept whole ("doesn't"), sentence breaks
_TOKEN = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?|[.!?;\n]")

#: KINDS parse_verdict understands
KINDS = ("pairwise", "pointwise", "score")

_TIE = (r"(?:it(?:['’]s|\s+is)\s+)?(?:a\s+)?(?:tie|tied|draw)\b|(?:they\s+are\s+|are\s+)?equally\s+"
        r"(?:good|bad|helpful|strong|valid|correct|accurate|matched|poor|preferable|acceptable)\b"
        r"|(?:both|the\s+two)\s+(?:outputs?\s+|responses?\s+|answers?\s+)?(?:are\s+)?(?:equally|about\s+equally)\s+\w+"
        r"|neither\s+(?:output\s+|response\s+|answer\s+|one\s+|of\s+them\s+)?is\s+(?:clearly\s+|significantly\s+)?"
        r"(?:better|worse|preferable)|no\s+clear\s+winner")
_TIE_RE = re.compile(_TIE, re.I)
_OPTION = re.compile(
    r"\s*(?:the\s+)?(?:output|response|assistant|answer|model|candidate)?\s*[(\[]?\s*([ab12])\s*[)\]]?"
    r"(?=\s*(?:$|[.,;:!)\]\n*_`'\"]|is\b|wins?\b|won\b|was\b|because\b|since\b|as\b|with\b|-|—|–))", re.I)
_LABEL = re.compile(
    r"\b(?:(final|initial|overall|my|preliminary)\s+)?(verdict|winner|decision|judg(?:e)?ment|preference|choice|"
    r"conclusion|answer|result)\b\s*(?:\*\*)?\s*(?:is\s*:?|:|=|—|–|-)\s*\**\s*", re.I)
_ARENA = re.compile(r"\[\[\s*([AB])\s*(>>|>|=|<<|<)\s*([AB])\s*\]\]", re.I)
_BARE = re.compile(r"(?<![\w\[])([AB])\s*(>>|>|=|<<|<)\s*([AB])(?![\w\]])")
_MTB = re.compile(r"\[\[\s*([ABC])\s*\]\]", re.I)
_BETTER = re.compile(r"\b(?:output|response|assistant)\s*\(?([ab])\)?\s+is\s+(?:the\s+|clearly\s+|much\s+)?"
                     r"(?:better|superior|preferred|stronger|more\s+helpful)", re.I)
_SCORE_LABEL = re.compile(r"\b(?:score|rating|grade)\b\s*(?:is\s*:?|:|=)?\s*\**\s*\[*\s*(\d+(?:\.\d+)?)\s*\]*"
                          r"(?:\s*(?:/|out\s+of)\s*(\d+))?", re.I)


@dataclass
class Parsed:
    """A parsed reply: ``verdict`` (``None`` = NA), ``reason`` (the raw text when NA), ``error`` (why NA) and
    ``score`` (Arena-Hard strength 0-2, or a G-Eval score; ``None`` when the reply gives none)."""

    verdict: str | None
    reason: str
    error: str | None
    score: float | None = None

    def as_tuple(self) -> tuple[str | None, str, str | None]:
        return self.verdict, self.reason, self.error


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


def _from_json(text: str, keys=_VERDICT_KEYS) -> tuple[dict | None, str | None]:
    """LAST decoded JSON object with a verdict-like key; (obj, None) or (None, why)."""
    if text[:1] == "{" or text.lstrip()[:1] == "{":  # the common case: the whole reply is one object
        try:
            whole = jsoncodec.loads(text)
        except ValueError:
            whole = None
        if isinstance(whole, dict):
            low = {str(k).lower(): v for k, v in whole.items()}
            if any(k in low for k in keys):
                return low, None
    why, last = None, None
    for cand in _json_objects(text):
        obj = cand
        if isinstance(cand, str):
            try:
                obj = json.loads(cand)
            except ValueError:
                why = why or "malformed JSON in reply"
                continue
        if isinstance(obj, dict):
            low = {str(k).lower(): v for k, v in obj.items()}
            if any(k in low for k in keys):
                last = low
            else:
                why = "JSON reply has no 'verdict' field"
    if last is None:  # a JSON reply cut (max_tokens) after its verdict: the verdict field is complete
        m = _CUT_JSON.match(text)
        if m:
            cut = {m.group(1).lower(): m.group(2)}
            r = _CUT_REASON.search(text, m.end())
            if r:
                cut["reason"] = r.group(1) + " [cut]"
            return cut, None
    if last is None and text.lstrip()[:1] == "{":  # malformed JSON that still holds a complete verdict field
        found = {v.strip().lower() for v in _VERDICT_FIELD.findall(text)}
        if len(found) == 1:
            return {"verdict": found.pop(), "reason": text.strip()}, None
        if len(found) > 1:
            return None, "malformed JSON with conflicting verdict fields: " + " vs ".join(sorted(found))
    return (last, None) if last is not None else (None, why)


#: the start of a JSON object whose verdict value is complete, e.g. '{"verdict": "a", "reason": "The out' (cut)
_CUT_JSON = re.compile(r'\s*\{\s*"(' + "|".join(_VERDICT_KEYS) + r')"\s*:\s*"([^"\\]{1,40})"', re.I)
_VERDICT_FIELD = re.compile(r'"verdict"\s*:\s*"([^"\\]{1,40})"', re.I)
_CUT_REASON = re.compile(r'\s*,\s*"reason"\s*:\s*"((?:[^"\\]|\\.)*)$', re.S)


def _reason(obj: dict) -> str:
    for k in _REASON_KEYS:
        if k in obj and obj[k] is not None:
            return str(obj[k])
    return ""


_LETTER = {"a": "1", "b": "2", "1": "1", "2": "2"}


def _arena(left: str, op: str, right: str) -> tuple[str, float] | None:
    left, right = left.upper(), right.upper()
    if op == "=":
        return ("tie", 0.0) if left != right else None
    if left == right:
        return None
    if op.startswith("<"):
        left, right = right, left
    return _LETTER[left.lower()], 2.0 if len(op) == 2 else 1.0


def _pair_value(value: str, whole: bool = False) -> tuple[str, float | None] | None:
    """A labelled value (or, ``whole``, a whole reply / JSON value) → (shown verdict, strength) or None."""
    v = value.strip()
    if whole:
        core = re.sub(r"^[\s*_`'\".:!()\[\]]+|[\s*_`'\".:!()\[\]]+$", "", v)
        if core in ("m", "M"):  # AlpacaEval's model identifiers: m = Output (a), M = Output (b)
            return ("1" if core == "m" else "2"), None
    m = _ARENA.search(v) or _BARE.search(v)
    if m and (whole or m.start() < 4):
        return _arena(*m.groups())
    m = _MTB.match(v.lstrip("*` "))
    if m:
        c = m.group(1).lower()
        return ("tie" if c == "c" else _LETTER[c]), None
    pair = re.match(r"\s*(?:output\s*|response\s*)?\(?[ab]\)?\s+(?:and|or|&|vs\.?)\s+(?:output\s*|response\s*)?\(?[ab]\)?",
                    v, re.I)
    if pair:
        return ("tie", None) if _TIE_RE.search(v[:120]) else None
    if _TIE_RE.match(v):
        return "tie", None
    m = _OPTION.match(v)
    if m:
        return _LETTER[m.group(1).lower()], None
    if whole:
        bare = re.sub(r"[\s*_`'\".:!()]+", "", v.lower())
        return {"outputa": ("1", None), "outputb": ("2", None), "output1": ("1", None), "output2": ("2", None),
                "tie": ("tie", None), "c": ("tie", None)}.get(bare)
    return None


_POINT_VALUE = re.compile(r"\s*\**\s*(?:(not|never|no)\s+(?:a\s+)?)?(pass|passed|fail|failed|warn|warning)\b", re.I)
#: a hedge before the verdict in a labelled value: "a close call, but (b)", "borderline; ultimately PASS"
_HEDGE = re.compile(r"[,;:—–-]?\s*\b(?:but|however|though|although|yet|still|ultimately|in\s+the\s+end|on\s+balance)"
                    r"\b\s*,?\s*(?:I\s+(?:would\s+)?(?:pick|choose|prefer|go\s+with|lean\s+(?:towards?|to))\s+"
                    r"|it(?:['’]s|\s+is)\s+|(?:it\s+)?(?:goes\s+to|leans?\s+(?:towards?|to))\s+)?", re.I)


def _after_hedge(value: str) -> str | None:
    """The text after the LAST hedge word (``but``, ``however``, ``ultimately`` ...) within the first 100
    characters of a labelled value — "a close call, but (b)" → "(b)" — or ``None`` when there is none. The caller
    reads it as the labelled value; a hedge followed by no option gives no verdict."""
    last = None
    for h in _HEDGE.finditer(value[:100]):
        last = h
    return value[last.end():] if last is not None else None


@dataclass
class _Stmt:
    pos: int
    line: int
    verdict: str
    score: float | None
    final: bool
    #: a verdict in words (a tie phrase, "Output (a) is better"), not a mark or a labelled value
    prose: bool = False


def _statements(text: str, kind: str) -> list[_Stmt]:
    out: list[_Stmt] = []
    # units: lines, split further at sentence ends ("pass. Wait," is two units; "3.5" is one)
    starts = [0] + [m.end() for m in re.finditer(r"\n|[.!?](?=\s)", text)]

    def add(pos: int, verdict: str, score: float | None, final: bool | None = None, prose: bool = False) -> None:
        unit = bisect.bisect_right(starts, pos) - 1
        if final is None:
            final = bool(re.search(r"\bfinal\b", text[starts[unit]:pos], re.I))
        out.append(_Stmt(pos, unit, verdict, score, final, prose))

    for m in _LABEL.finditer(text):
        value = text[m.end():m.end() + 160].split("\n", 1)[0]
        final = (m.group(1) or "").lower() == "final" or None
        if kind == "pairwise":
            got = _pair_value(value)
            if got is None and (rest := _after_hedge(value)) is not None:
                got = _pair_value(rest)
            if got is not None:
                add(m.start(), got[0], got[1], final)
        elif kind == "pointwise":
            w = _POINT_VALUE.match(value)
            if w is None and (rest := _after_hedge(value)) is not None:
                w = _POINT_VALUE.match(rest)
            if w:
                add(m.start(), "!" + w.group(2).lower() if w.group(1) else _POINT_WORD[w.group(2).lower()], None,
                    final)
    if kind == "pairwise":
        for m in _ARENA.finditer(text):
            got = _arena(*m.groups())
            if got:
                add(m.start(), *got)
        for m in _BARE.finditer(text):
            got = _arena(*m.groups())
            if got:
                add(m.start(), *got)
        for m in _MTB.finditer(text):
            c = m.group(1).lower()
            add(m.start(), "tie" if c == "c" else _LETTER[c], None)
        for m in _BETTER.finditer(text):
            add(m.start(), _LETTER[m.group(1).lower()], None, prose=True)
        for m in _TIE_RE.finditer(text):
            phrase = m.group(0).lower()
            if re.fullmatch(r"(?:tie|tied|draw)", phrase):  # a lone word: only "a tie", "it's a draw" ...
                continue
            add(m.start(), "tie", None, prose=True)
    out.sort(key=lambda s: s.pos)
    return out


def _final(stmts: list[_Stmt]) -> tuple[_Stmt | None, str | None]:
    """The final statement, or (None, why) for conflicting final statements."""
    if not stmts:
        return None, None
    finals = [i for i, s in enumerate(stmts) if s.final]
    if finals:  # from the first final statement of the unit holding the last one
        unit = stmts[finals[-1]].line
        cands = stmts[next(i for i in finals if stmts[i].line == unit):]
        # an explicit final verdict wins over later prose: "Final verdict: [[A]]" then "... equally correct"
        # is A (later marks and labelled values still count: "Final verdict: [[A]]. Wait — [[B]]" is B)
        cands = [s for s in cands if not (s.prose and s.line > unit)]
    else:
        cands = stmts
    last = cands[-1]
    # a statement's own strength: an Arena verdict beats a weaker statement at the same place
    same_line = {s.verdict for s in cands if s.line == last.line}
    if len(same_line) > 1:
        return None, "conflicting final statements: " + " vs ".join(sorted(same_line))
    if last.score is None:  # the strength of an Arena verdict stated on the same line
        strong = [s for s in cands if s.line == last.line and s.score is not None]
        if strong:
            return strong[-1], None
    return last, None


_POINT_STRIP = re.compile(r"[\s*_`'\".:!]+$|^[\s*_`'\"]+")


def parse_verdict_full(text: str | None, kind: str) -> Parsed:
    """:func:`parse_verdict` with the ``score`` too (a :class:`Parsed`)."""
    if kind not in KINDS:
        raise ArgumentError(f"kind {kind!r}; expected one of {list(KINDS)}")
    if text is None or not str(text).strip():
        return Parsed(None, "", "empty reply")
    text = str(text)
    if kind == "score":
        return _score(text)
    obj, why = _from_json(text)
    if obj is not None:
        key = next(k for k in _VERDICT_KEYS if k in obj)
        val = obj[key]
        if val is not None and not isinstance(val, (dict, list)):
            if kind == "pairwise":
                got = _pair_value(str(val), whole=True)
                if got is not None:
                    return Parsed(got[0], _reason(obj), None, got[1])
            else:
                v = str(val).strip().lower()
                if v not in _POINT_WORD:
                    v = _POINT_STRIP.sub("", v)
                if v in _POINT_WORD:
                    return Parsed(_POINT_WORD[v], _reason(obj), None)
        why = f"JSON verdict {val!r} is not a {kind} verdict"
    if kind == "pairwise":
        v, score, free_why = _pairwise_free(text)
    else:
        (v, free_why), score = _pointwise_free(text), None
    if v is not None:
        return Parsed(v, text.strip(), None, score)
    return Parsed(None, text.strip(), free_why or why or f"no {kind} verdict found in reply")


def parse_verdict(text: str | None, kind: str) -> tuple[str | None, str, str | None]:
    """Parse a judge reply.

    Parameters
    ----------
    text : str or None
        The raw reply text.
    kind : {"pairwise", "pointwise", "score"}
        Pairwise verdicts are ``"1"``/``"2"``/``"tie"`` as SHOWN (``"1"`` = Output (a)); pointwise
        ``"pass"``/``"warn"``/``"fail"``; score: the number as text (``"4"``, ``"3.5"``).

    Returns
    -------
    (verdict, reason, error)
        ``verdict`` is ``None`` when no verdict could be read; then ``error`` says why and ``reason`` keeps the
        raw text. ``error`` is ``None`` when parsed. :func:`parse_verdict_full` also gives the score.

    Raises
    ------
    ArgumentError
        An unknown ``kind`` (a ``ValueError``).
    """
    return parse_verdict_full(text, kind).as_tuple()


def _pairwise_free(text: str) -> tuple[str | None, float | None, str | None]:
    stmt, why = _final(_statements(text, "pairwise"))
    if why:
        return None, None, why
    if stmt is not None:
        return stmt.verdict, stmt.score, None
    got = _pair_value(text, whole=True) if len(text) <= 40 else None
    if got is not None:
        return got[0], got[1], None
    named = {m.lower() for m in re.findall(r"output\s*\(([ab])\)", text, re.I)}
    if len(named) == 1:  # LLMBar's rule: exactly one output named
        return _LETTER[named.pop()], None, None
    if len(named) > 1:
        return None, None, "both outputs named and no verdict statement"
    return None, None, None


def _negator(token: str) -> bool:
    t = token.lower().replace("\u2019", "'")
    return t in _NEGATORS or t.endswith("n't")


def _pointwise_free(text: str) -> tuple[str | None, str | None]:
    """(verdict, None), or (None, why) for an ambiguous, conflicting or negated reply, or (None, None) when
    nothing is found."""
    tokens = _TOKEN.findall(text)
    stmts = _statements(text, "pointwise")
    chosen = None  # (token index, verdict)
    if stmts:
        stmt, why = _final(stmts)
        if why:
            return None, why.replace("!", "not ")
        if stmt.verdict.startswith("!"):
            return None, f"negated verdict: 'not' before {stmt.verdict[1:]!r}"
        end = re.compile(r"\n|[.!?](?=\s|$)").search(text, stmt.pos + 1)
        unit = {t.lower() for t in _TOKEN.findall(text[stmt.pos:end.start() if end else len(text)])}
        if unit & _PASS_WORDS and unit & _FAIL_WORDS:
            return None, "conflicting final statement: it names both a pass and a fail verdict word"
        m = re.compile(r"(pass|fail|warn)\w*", re.I).search(text, stmt.pos)
        chosen = (len(_TOKEN.findall(text[:m.start()])) if m else len(tokens), stmt.verdict)
    else:
        words = [(i, t) for i, t in enumerate(tokens) if t[0].isalpha()]
        low = {t.lower() for _, t in words}
        named = sorted(low & (_PASS_WORDS | _FAIL_WORDS))
        if low & _PASS_WORDS and low & _FAIL_WORDS:
            return None, f"ambiguous: the reply names both a pass and a fail verdict word ({', '.join(named)})"
        if words:
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


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _score(text: str) -> Parsed:
    obj, _ = _from_json(text, _SCORE_KEYS + _VERDICT_KEYS)
    if obj is not None:
        for k in _SCORE_KEYS + _VERDICT_KEYS:
            if k in obj:
                try:
                    x = float(obj[k])
                except (TypeError, ValueError):
                    continue
                return Parsed(_num(x), _reason(obj), None, x)
    labelled = list(_SCORE_LABEL.finditer(text))
    if labelled:
        finals = [m for m in labelled if re.search(r"\bfinal\b", text[max(0, m.start() - 20):m.start()], re.I)]
        m = (finals or labelled)[-1]
        x = float(m.group(1))
        return Parsed(_num(x), text.strip(), None, x)
    m = re.search(r"\[\[\s*(\d+(?:\.\d+)?)\s*\]\]", text) or re.fullmatch(
        r"\s*\**\s*(\d+(?:\.\d+)?)\s*(?:/\s*\d+)?\s*\**\.?\s*", text)
    if m:
        x = float(m.group(1))
        return Parsed(_num(x), text.strip(), None, x)
    return Parsed(None, text.strip(), "no score found in reply")


def map_order(verdict: str | None, order: str) -> str | None:
    """Shown position → ORIGINAL output index: with ``order="ba"`` Output (a) is output 2."""
    if verdict in ("1", "2") and order == "ba":
        return "2" if verdict == "1" else "1"
    return verdict


def parse_reply_full(text: str | None, request: JudgeRequest) -> Parsed:
    """:func:`parse_verdict_full` for ``request.kind``, pairwise verdicts mapped to the original output index."""
    p = parse_verdict_full(text, request.kind)
    if request.kind == "pairwise":
        p.verdict = map_order(p.verdict, str(request.metadata.get("order", "ab") or "ab"))
    return p


def parse_reply(text: str | None, request: JudgeRequest) -> tuple[str | None, str, str | None]:
    """:func:`parse_verdict` for ``request.kind``, pairwise verdicts mapped to the original output index."""
    return parse_reply_full(text, request).as_tuple()
