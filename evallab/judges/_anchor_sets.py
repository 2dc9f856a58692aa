"""Your own anchor sets: named files of in-context examples (issue 29, item 2), shown in their order or shuffled with
a seed, and recorded on every row as ``anchor_set``.

A file is YAML (``.yaml``/``.yml``) or JSON lines (``.jsonl``, one example per line; the name is the file's stem)::

    name: strict-pass            # default: the file's stem
    kind: pointwise              # or pairwise
    order: fixed                 # or shuffled (with seed)
    seed: 0
    anchors:
      - {text: "...", verdict: pass}
      - {text: "...", verdict: fail}

Pointwise examples are ``{text, verdict}`` with verdict ``pass``/``fail``. Pairwise examples are either ``{text,
verdict}`` (a whole worked example, verdict ``a``/``b`` or ``1``/``2`` = the better output AS SHOWN in it) or
``{instruction, output_a, output_b, better}`` (``better``: ``a``/``b``), rendered as one worked example. The set's
``sha256`` is that of its examples in file order, so two files with the same examples are the same set.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evallab.errors import DataError
from evallab.judges._prompts import Anchor

ORDERS = ("fixed", "shuffled")
_PAIR = {"a": "1", "b": "2", "1": "1", "2": "2"}


@dataclass(frozen=True)
class AnchorSet:
    """A named anchor set.

    Attributes
    ----------
    name : str
        Recorded per row as ``anchor_set``.
    kind : {"pointwise", "pairwise"}
    anchors : tuple of Anchor
        In file order.
    order : {"fixed", "shuffled"}
    seed : int
        The shuffle's seed.
    sha256 : str
        Of the examples (kind, texts and verdicts in file order).
    """

    name: str
    kind: str
    anchors: tuple[Anchor, ...]
    order: str = "fixed"
    seed: int = 0
    sha256: str = ""

    def ordered(self, seed: int | None = None) -> list[Anchor]:
        """The examples as shown: file order, or ``random.Random(seed).shuffle`` of it (``seed`` default: the
        set's)."""
        out = list(self.anchors)
        if self.order == "shuffled":
            random.Random(self.seed if seed is None else seed).shuffle(out)
        return out

    def metadata(self) -> dict:
        """The row identity a request carries: ``{"anchor_set": name}``."""
        return {"anchor_set": self.name}


def _digest(kind: str, anchors: Sequence[Anchor]) -> str:
    return hashlib.sha256(json.dumps([kind, [[a.text, a.verdict] for a in anchors]]).encode("utf-8")).hexdigest()


def anchor_set(name: str, anchors: Sequence[Anchor | dict], *, kind: str = "pointwise", order: str = "fixed",
               seed: int = 0, path: str | None = None) -> AnchorSet:
    """An anchor set from examples in memory (the built-in balanced / PASS-only / FAIL-last sets are instances).

    Raises
    ------
    DataError
        An unknown kind or order, an example without text, a verdict outside the kind's (naming the example).
    """
    where = path or f"anchor set {name!r}"
    if kind not in ("pointwise", "pairwise"):
        raise DataError(f"kind {kind!r}; expected 'pointwise' or 'pairwise'", where, column="kind")
    if order not in ORDERS:
        raise DataError(f"order {order!r}; expected 'fixed' or 'shuffled'", where, column="order")
    out = []
    for i, a in enumerate(anchors, start=1):
        if isinstance(a, Anchor):
            a = {"text": a.text, "verdict": a.verdict}
        if not isinstance(a, dict):
            raise DataError(f"example {i} is {type(a).__name__}; expected a mapping", where, i)
        if kind == "pairwise" and "instruction" in a:
            missing = [k for k in ("instruction", "output_a", "output_b", "better") if not str(a.get(k) or "").strip()]
            if missing:
                raise DataError(f"example {i} has no {missing[0]!r}; expected instruction, output_a, output_b, "
                                "better", where, i, missing[0])
            text = (f"Instruction: {a['instruction']}\nOutput (a): {a['output_a']}\nOutput (b): {a['output_b']}")
            raw = str(a["better"])
        else:
            text, raw = str(a.get("text") or ""), str(a.get("verdict") or "")
            if not text.strip():
                raise DataError(f"example {i} has no text", where, i, "text")
        v = raw.strip().lower()
        if kind == "pairwise":
            if v not in _PAIR:
                raise DataError(f"example {i}: verdict {raw!r}; expected a or b (the better output as shown)",
                                where, i, "verdict" if "instruction" not in a else "better")
            v = _PAIR[v]
        elif v not in ("pass", "fail"):
            raise DataError(f"example {i}: verdict {raw!r}; expected pass or fail", where, i, "verdict")
        out.append(Anchor(text, v))
    if not out:
        raise DataError("holds no example; expected at least one", where, column="anchors")
    return AnchorSet(name, kind, tuple(out), order, int(seed), _digest(kind, out))


def load_anchor_set(path: str | Path) -> AnchorSet:
    """An anchor set from a YAML or JSON-lines file (module docstring).

    Raises
    ------
    DataError
        Unreadable file, invalid YAML/JSON (naming the line), and everything :func:`anchor_set` refuses.
    """
    import yaml

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot be read as UTF-8 text ({exc.__class__.__name__})", str(p)) from None
    if p.suffix.lower() == ".jsonl":
        anchors = []
        for n, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    anchors.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise DataError(f"not valid JSON ({exc.msg}); expected one example per line", str(p), n) from None
        return anchor_set(p.stem, anchors, kind="pairwise" if anchors and (
            "instruction" in anchors[0] or str(anchors[0].get("verdict", "")).lower() in _PAIR) else "pointwise",
            path=str(p))
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise DataError(f"not valid YAML ({getattr(exc, 'problem', exc)})", str(p),
                        mark.line + 1 if mark else None) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("anchors"), list):
        raise DataError("expected a mapping with an 'anchors' list (name, kind, order, seed optional)", str(p),
                        column="anchors")
    return anchor_set(str(doc.get("name") or p.stem), doc["anchors"], kind=str(doc.get("kind", "pointwise")),
                      order=str(doc.get("order", "fixed")), seed=int(doc.get("seed", 0)), path=str(p))
