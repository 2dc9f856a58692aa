"""Arena-Hard ``model_judgment`` files and JudgeBench / Auto-J-style decision files → tidy verdict tables.

Both store a verdict as a relation between the answer shown as A and the answer shown as B (``A>B``, ``B>>A``,
``A=B`` ...), once per presentation order; the importers map it back to the ORIGINAL output index.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evallab._fileio import quote
from evallab.importers._common import ImportDataError, finish, need, read_json, text_field

#: relation → (side shown first or second that won: "A"/"B"/"=" , strength 1 or 2)
RELATIONS = {"A>>B": ("A", 2), "A>B": ("A", 1), "A=B": ("=", 0), "B>A": ("B", 1), "B>>A": ("B", 2),
             "B<<A": ("A", 2), "B<A": ("A", 1), "B=A": ("=", 0), "A<B": ("B", 1), "A<<B": ("B", 2)}
EXPECTED_REL = "one of 'A>>B', 'A>B', 'A=B', 'B>A', 'B>>A' (or null when the judge gave none)"


def relation_verdict(rel: str, order: str) -> tuple[str, float]:
    """``(verdict, score)`` of a relation shown in ``order`` (``ab``: output 1 was A; ``ba``: output 2 was A).

    ``score`` is the signed strength in ORIGINAL terms: +2 output 2 much better, +1 better, 0 tie, -1 output 1
    better, -2 output 1 much better. Raises ``KeyError`` for an unknown relation.
    """
    side, strength = RELATIONS[rel.replace(" ", "")]
    if side == "=":
        return "tie", 0.0
    original = ("1" if side == "A" else "2") if order == "ab" else ("2" if side == "A" else "1")
    return original, float(strength if original == "2" else -strength)


ARENA_FIELDS = "question_id, model, judge, games[2] of {user_prompt, judgment, score}"
ARENA_NULL = ("no verdict parsed: Arena-Hard's get_score found no single [[...]] label in the judge's reply "
              "(score = null, or the game is null)")



def _relation(value, order: str, null_error: str, path, where: str, field: str, what: str) -> tuple:
    """``(verdict, score, error)`` of one game's relation label (``"A>>B"`` …; :func:`relation_verdict`): a missing
    label is no verdict with ``null_error``; an unknown one stops with the file, line and field named."""
    if value is None:
        return None, None, null_error
    try:
        if not isinstance(value, str):
            raise KeyError(value)
        verdict, score = relation_verdict(value, order)
    except KeyError:
        raise ImportDataError(f"unknown {what} {quote(value)}; expected {EXPECTED_REL}", path, where, field) from None
    return verdict, score, None

def import_arena_hard(path: str | Path, *, baseline: str | None = None) -> pd.DataFrame:
    """An Arena-Hard ``data/<bench>/model_judgment/<judge>/<model>.jsonl`` → tidy table, one row per game.

    Source: https://github.com/lmarena/arena-hard-auto, ``gen_judgment.py`` ``judgment()`` writes one line per
    question ``{"question_id", "model", "judge", "games": [...]}``; game 1 shows the baseline's answer as
    Assistant A and the model's as B, game 2 swaps them (``if game % 2 == 1: # swap position``); each game's
    ``score`` is the label matched by the config's ``regex_pattern`` (``A>>B``, ``A>B``, ``A=B``, ``B>A``,
    ``B>>A``) or null (``get_score`` found none, or several different ones); ``show_result.py`` (v2) scores game 2
    as is and game 1 as ``1 - score`` and also accepts ``A<B``, ``A<<B``, ``B=A``, ``B<A``, ``B<<A``, and skips null
    games. v2 lines carry ``uid`` and ``category`` instead of ``question_id``.

    Mapping: output ``1`` = the baseline, output ``2`` = ``model`` (as AlpacaEval's output_1 = baseline);
    game 1 → ``order`` ``ab``, game 2 → ``ba``; ``verdict`` = the winner's original index, ``tie`` for ``A=B``;
    ``score`` = signed strength (:func:`relation_verdict`: +2 = output 2 much better ... -2); null → NA with
    ``error``. ``subset`` = ``category`` (v2). ``item_id`` = ``<model>#<question_id or uid>`` (the pair; upstream
    writes one file per model, so the files of one judge folder concatenate); ``judge`` = ``model`` = ``judge``;
    ``dataset`` =
    ``arena_hard``. ``baseline``: the baseline model's name for ``output_1_model`` (not in the file; from the
    judge config's ``baseline_model``). A single-game (non-pairwise) line gives one row.

    Raises
    ------
    ImportDataError
        A missing field, ``games`` not a list of 1-2 objects, a score outside the labels above (naming the line,
        game and value).
    """
    doc = read_json(path, f"Arena-Hard model_judgment JSON lines ({ARENA_FIELDS})")
    rows = []
    for where, o in doc.objects(f"Arena-Hard judgments ({ARENA_FIELDS})"):
        qfield = "uid" if "uid" in o and "question_id" not in o else "question_id"  # v2 writes uid
        qid = text_field(o, qfield, doc.path, where, "the Arena-Hard question id (question_id, or uid in v2)")
        model = text_field(o, "model", doc.path, where, "the evaluated model's name")
        judge = text_field(o, "judge", doc.path, where, "the judge model's name")
        games = need(o, "games", doc.path, where, "a list of 2 games (1 when not pairwise)")
        if not isinstance(games, list) or not 1 <= len(games) <= 2 or not all(isinstance(g, dict) or g is None
                                                                             for g in games):
            raise ImportDataError(f"is {str(games)[:60]!r}; expected a list of 2 game objects (1 when not "
                                  "pairwise)", doc.path, where, "games")
        for k, g in enumerate(games):
            order = "ab" if k == 0 else "ba"
            w = f"{where} game {k + 1}"
            s = None if g is None else need(g, "score", doc.path, w, EXPECTED_REL)
            verdict, score, err = _relation(s, order, ARENA_NULL, doc.path, w, "score", "verdict")
            rows.append({"item_id": f"{model}#{qid}", "dataset": "arena_hard", "subset": o.get("category") or "",
                         "judge": judge, "model": judge,
                         "order": order, "verdict": verdict, "score": score, "error": err,
                         "question_id": qid, "output_1_model": baseline, "output_2_model": model, "game": k + 1,
                         "raw_verdict": s, "source_ref": w})
    return finish(rows, doc.path)


JB_FIELDS = "pair_id, response_A, response_B, label, judge_name, judgments[] of {judgment, decision}"
JB_NULL = "no decision: the judge call failed or its reply gave no verdict (judgment/decision is null)"


def import_judgebench(path: str | Path) -> pd.DataFrame:
    """JudgeBench / Auto-J-style decision files → tidy table, one row per judgment.

    Source: https://github.com/ScalerLab/JudgeBench, ``run_judge.py`` ``judge_pairs`` appends each pair with
    ``judge_name`` and ``judgments = [judgment_1, judgment_2]``: judgment 1 judges (response_A, response_B),
    judgment 2 (``reverse_order``) judges (response_B, response_A); a failed call is ``null``; each judgment is
    ``{"judgment": {...,"judge_model"...}, "decision": "A>B" | "B>A" | "A=B" | null}`` (``utils/judges.py``), the
    decision in the order SHOWN. ``label`` is the gold relation of response_A to response_B. Auto-J-style files
    with the same fields (a list of decisions, the second swapped) read the same way.

    Mapping: output ``1`` = ``response_A``, ``2`` = ``response_B``; judgment 1 → ``order`` ``ab``, judgment 2 →
    ``ba`` (its ``A`` is response_B, so ``A>B`` there is verdict ``2``); ``gold`` from ``label`` the same way (as
    ``ab``); ``score`` = signed strength (:func:`relation_verdict`); a null judgment or decision → NA with
    ``error``. ``item_id`` = ``pair_id``, ``subset`` = ``source``, ``judge`` = ``<judge_name>/<judge_model>``,
    ``model`` = ``judge_model`` (from the judgment, else the file name's ``judge_model=...``), ``strategy`` =
    ``judge_name``, ``dataset`` = ``judgebench``. Extra column ``response_model``.

    Raises
    ------
    ImportDataError
        A missing field, ``judgments`` not a list of 1-2 entries, a decision or label outside ``A>B``/``B>A``/
        ``A=B`` (and the ``>>`` forms), naming the line, judgment and value.
    """
    doc = read_json(path, f"JudgeBench output JSON lines ({JB_FIELDS})")
    file_model = None
    stem = doc.path.stem
    if "judge_model=" in stem:
        file_model = stem.split("judge_model=", 1)[1].split(",")[0]
    rows = []
    for where, o in doc.objects(f"JudgeBench pairs ({JB_FIELDS})"):
        pid = text_field(o, "pair_id", doc.path, where, "the pair id")
        jname = text_field(o, "judge_name", doc.path, where, "the judge's name")
        label = o.get("label")
        gold = None
        if label is not None:
            try:
                gold = relation_verdict(label, "ab")[0] if isinstance(label, str) else None
            except KeyError:
                gold = None
            if gold is None:
                raise ImportDataError(f"unknown label {quote(label)}; expected {EXPECTED_REL}", doc.path, where,
                                      "label")
        js = need(o, "judgments", doc.path, where, "a list of 2 judgments (the second in swapped order)")
        if not isinstance(js, list) or not 1 <= len(js) <= 2:
            raise ImportDataError(f"is {str(js)[:60]!r}; expected a list of 2 judgments (the second in swapped "
                                  "order)", doc.path, where, "judgments")
        for k, j in enumerate(js):
            order = "ab" if k == 0 else "ba"
            w = f"{where} judgment {k + 1}"
            if j is not None and not isinstance(j, dict):
                raise ImportDataError(f"is a {type(j).__name__}; expected an object with 'decision' or null",
                                      doc.path, w, "judgments")
            dec = None if j is None else j.get("decision")
            inner = (j or {}).get("judgment") or {}
            jmodel = inner.get("judge_model") if isinstance(inner, dict) else None
            jmodel = jmodel or file_model
            verdict, score, err = _relation(dec, order, JB_NULL, doc.path, w, "decision", "decision")
            rows.append({"item_id": pid, "dataset": "judgebench", "subset": o.get("source") or "",
                         "judge": f"{jname}/{jmodel}" if jmodel else jname, "model": jmodel, "strategy": jname,
                         "order": order, "verdict": verdict, "gold": gold, "score": score, "error": err,
                         "response_model": o.get("response_model"), "raw_verdict": dec, "source_ref": w})
    return finish(rows, doc.path)
