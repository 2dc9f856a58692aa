"""MT-Bench (FastChat ``fastchat/llm_judge``) judgment files → tidy verdict tables.

Source of the formats: https://github.com/lm-sys/FastChat, ``fastchat/llm_judge/common.py`` (``play_a_match_pair``
writes ``*_pair.jsonl``, ``play_a_match_single`` writes ``*_single.jsonl``; ``run_judge_pair`` maps the judge's
``[[A]]``/``[[B]]``/``[[C]]`` to ``A``/``B``/``tie`` and to ``error`` when none is found; ``run_judge_single`` sets
``score = -1`` when no ``[[rating]]`` is found) and ``fastchat/llm_judge/compute_agreement.py`` (reads the human
judgments: ``question_id, model_a, model_b, winner, judge, turn``, as in the ``lmsys/mt_bench_human_judgments``
data set). Field meanings: ``data/formats/mt_bench/SOURCE.md``.

Conventions shared by the three importers
-----------------------------------------
- ``dataset`` = ``mt_bench``; the original outputs of a pair are ordered by model name, as
  ``compute_agreement.py`` does: output ``1`` = the alphabetically first model (extra column ``output_1_model``),
  output ``2`` the other (``output_2_model``), so the same pair gets the same ``item_id`` in every file,
  ``<question_id>-t<turn>-<output_1_model>-vs-<output_2_model>``.
- ``judge`` = the judge model (``judge[0]``), ``strategy`` = the prompt name (``judge[1]``, e.g. ``pair-v2``,
  ``pair-math-v1``), ``model`` = the judge model.
- Extra columns: ``question_id``, ``turn``, ``raw_verdict`` (the value in the file), ``source_ref`` (the line);
  single grading also ``category`` and ``turn_text`` from FastChat's ``question.jsonl`` (``load_questions``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evallab._fileio import quote
from evallab.importers._common import ImportDataError, finish, need, read_json, text_field

DATASET = "mt_bench"
PAIR_FIELDS = "question_id, model_1, model_2, g1_winner, g2_winner, judge, turn"
SINGLE_FIELDS = "question_id, model, judge, score, turn"
QUESTION_FIELDS = "question_id, category, turns"
#: FastChat's question file (``fastchat/llm_judge/data/mt_bench/question.jsonl``)
QUESTION_FILE = "question.jsonl"
HUMAN_FIELDS = "question_id, model_a, model_b, winner, judge, turn"
PAIR_VALUES = ("model_1", "model_2", "tie", "error")
HUMAN_VALUES = ("model_a", "model_b", "tie", "tie (bothbad)")
ERROR_PAIR = ("no verdict parsed: FastChat found no [[A]], [[B]] or [[C]] in the judge's reply "
              "({field} = 'error')")
ERROR_SINGLE = "no rating parsed: FastChat found no [[rating]] in the judge's reply (score = -1)"
SCORE_ONLY = ("no pass/warn/fail verdict: single-answer grading gives a 1-10 rating (in score); pass "
              "thresholds=(fail_max, pass_min) to map ratings to verdicts")


def _judge(obj: dict, path: Path, where: str) -> tuple[str, str]:
    j = need(obj, "judge", path, where, 'a [judge_model, prompt_name] pair, e.g. ["gpt-4", "pair-v2"]')
    if isinstance(j, str) and j.strip():
        return j, ""
    if (isinstance(j, list) and len(j) == 2 and all(isinstance(x, str) and x.strip() for x in j)):
        return j[0], j[1]
    raise ImportDataError(f"{quote(j)} is not usable; expected a [judge_model, prompt_name] pair, e.g. "
                          '["gpt-4", "pair-v2"]', path, where, "judge")


def _int(obj: dict, field: str, path: Path, where: str, expected: str) -> int:
    v = need(obj, field, path, where, expected)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v):
        raise ImportDataError(f"{quote(v)} is not usable; expected {expected}", path, where, field)
    return int(v)


def _pair(a: str, b: str, path: Path, where: str, field: str) -> tuple[str, str]:
    if a == b:
        raise ImportDataError(f"both outputs come from {quote(a)}; expected two different models", path, where, field)
    return (a, b) if a < b else (b, a)


def _pair_fields(o: dict, path, where: str, models: tuple[str, str], meaning: tuple[str, str]) -> tuple:
    """The fields every pairwise MT-Bench line has, checked: ``(question_id, model on side 1, model on side 2,
    output 1's model, output 2's model, turn, judge model, judge prompt)`` (:func:`_pair` orders the outputs)."""
    qid = text_field(o, "question_id", path, where, "the MT-Bench question id")
    x = text_field(o, models[0], path, where, meaning[0])
    y = text_field(o, models[1], path, where, meaning[1])
    o1, o2 = _pair(x, y, path, where, models[1])
    turn = _int(o, "turn", path, where, "the turn, 1 or 2")
    jmodel, prompt = _judge(o, path, where)
    return qid, x, y, o1, o2, turn, jmodel, prompt


def import_mt_bench_pair(path: str | Path) -> pd.DataFrame:
    """A FastChat ``*_pair.jsonl`` → tidy table, two rows per line (game 1 and game 2).

    Mapping (``common.py`` ``play_a_match_pair``): game 1 shows ``model_1``'s answer as Assistant A, game 2 swaps
    them; ``g1_winner``/``g2_winner`` are already model labels: ``model_1``/``model_2`` → the verdict is that
    model's ORIGINAL output index (see the module's conventions), ``tie`` → ``tie``, ``error`` → NA with
    ``error`` set. ``order`` = ``ab`` when output 1 was Assistant A in that game, else ``ba``. Extra columns:
    ``game`` (1/2), ``tstamp``.

    Returns
    -------
    DataFrame
        The tidy verdict table (2 × lines rows).

    Raises
    ------
    ImportDataError
        A missing field, a winner outside ``model_1``/``model_2``/``tie``/``error`` (naming line and value), the
        same model on both sides, a repeated (question, turn, pair, judge prompt).
    """
    doc = read_json(path, f"FastChat *_pair.jsonl lines ({PAIR_FIELDS})")
    rows = []
    for where, o in doc.objects(f"FastChat pair judgments ({PAIR_FIELDS})"):
        qid, m1, m2, o1, o2, turn, jmodel, prompt = _pair_fields(o, doc.path, where, ("model_1", "model_2"),
                                                                 ("the first model's name", "the second model's name"))
        for game, field in ((1, "g1_winner"), (2, "g2_winner")):
            w = need(o, field, doc.path, where, f"one of {list(PAIR_VALUES)}")
            if w not in PAIR_VALUES:
                raise ImportDataError(f"unknown verdict {quote(w)}; expected one of {list(PAIR_VALUES)}", doc.path,
                                      where, field)
            shown_first = m1 if game == 1 else m2
            winner = {"model_1": m1, "model_2": m2}.get(w)
            verdict = "tie" if w == "tie" else None if w == "error" else ("1" if winner == o1 else "2")
            rows.append({
                "item_id": f"{qid}-t{turn}-{o1}-vs-{o2}", "dataset": DATASET, "judge": jmodel, "model": jmodel,
                "strategy": prompt, "order": "ab" if shown_first == o1 else "ba", "sample": 0,
                "verdict": verdict, "error": ERROR_PAIR.format(field=field) if verdict is None else None,
                "question_id": qid, "turn": turn, "output_1_model": o1, "output_2_model": o2, "game": game,
                "raw_verdict": w, "tstamp": o.get("tstamp"), "source_ref": where,
            })
    return finish(rows, doc.path)


def _question_file(path: Path, questions: str | Path | None) -> Path | None:
    """``questions`` when given; else FastChat's ``question.jsonl`` beside the judgment file or in its parent
    folder (``data/mt_bench/question.jsonl`` above ``model_judgment/``), if there is one."""
    if questions:
        return Path(questions)
    for folder in (path.parent, path.parent.parent):
        if (folder / QUESTION_FILE).is_file():
            return folder / QUESTION_FILE
    return None


def read_mt_bench_questions(path: str | Path) -> dict[str, tuple[str, list[str]]]:
    """FastChat's ``question.jsonl`` (``common.py`` ``load_questions``): question id → (category, turns' text).

    Raises
    ------
    ImportDataError
        A missing field, ``turns`` not a list of strings, a question id given twice (naming the line).
    """
    doc = read_json(path, f"MT-Bench questions ({QUESTION_FIELDS})")
    out: dict[str, tuple[str, list[str]]] = {}
    for where, o in doc.objects(f"MT-Bench questions ({QUESTION_FIELDS})"):
        qid = text_field(o, "question_id", doc.path, where, "the MT-Bench question id")
        category = text_field(o, "category", doc.path, where, "the question's category, e.g. writing")
        turns = need(o, "turns", doc.path, where, "the list of the user turns' text")
        if not isinstance(turns, list) or not turns or not all(isinstance(t, str) for t in turns):
            raise ImportDataError(f"{quote(turns)} is not usable; expected the list of the user turns' text",
                                  doc.path, where, "turns")
        if qid in out:
            raise ImportDataError(f"question {qid} is given twice; expected one line per question", doc.path,
                                  where, "question_id")
        out[qid] = (category, turns)
    return out


def import_mt_bench_single(path: str | Path, *, thresholds: tuple[float, float] | None = None,
                           questions: str | Path | None = None) -> pd.DataFrame:
    """A FastChat ``*_single.jsonl`` → tidy table, one row per line (one graded answer), each rating joined to
    its question.

    Mapping (``common.py`` ``play_a_match_single``): ``score`` 1–10 → ``score``; ``-1`` (no rating parsed) →
    ``score`` NA, ``verdict`` NA, ``error`` set. The file has no pass/fail verdict: ``verdict`` stays NA with
    ``error`` saying so unless ``thresholds=(fail_max, pass_min)`` is given (score ≤ fail_max → ``fail``,
    ≥ pass_min → ``pass``, between → ``warn``). ``item_id`` = ``<question_id>-t<turn>-<model>``, ``order`` ``""``.
    Extra columns: ``answer_model`` (the graded model), ``tstamp``; with the questions (FastChat's
    ``question.jsonl``, :func:`read_mt_bench_questions`) also ``category`` (``writing``, ``math`` … — a design
    column to break agreement down by: ``score_agreement(..., by=["category"])``) and ``turn_text`` (the
    text of the rated user turn, ``turns[turn - 1]``).

    Parameters
    ----------
    path : the ``*_single.jsonl`` file.
    thresholds : ``(fail_max, pass_min)`` mapping the ratings to verdicts; ``None``: a score table (no verdict).
    questions : FastChat's ``question.jsonl``; ``None``: the one beside ``path`` or in its parent folder
        (FastChat's ``data/mt_bench/`` layout), and no join when there is none.

    Raises
    ------
    ImportDataError
        A missing field, a score that is not a number in [1, 10] or -1 (naming line and value), bad thresholds;
        a rating whose question is not in the questions file, or whose turn the question does not have (naming
        the line of the rating).
    """
    if thresholds is not None:
        lo, hi = thresholds
        if not lo < hi:
            raise ImportDataError(f"thresholds {thresholds!r}: expected (fail_max, pass_min) with fail_max < "
                                  "pass_min", field="thresholds")
    doc = read_json(path, f"FastChat *_single.jsonl lines ({SINGLE_FIELDS})")
    qfile = _question_file(doc.path, questions)
    asked = read_mt_bench_questions(qfile) if qfile is not None else None
    rows = []
    for where, o in doc.objects(f"FastChat single judgments ({SINGLE_FIELDS})"):
        qid = text_field(o, "question_id", doc.path, where, "the MT-Bench question id")
        model = text_field(o, "model", doc.path, where, "the graded model's name")
        turn = _int(o, "turn", doc.path, where, "the turn, 1 or 2")
        jmodel, prompt = _judge(o, doc.path, where)
        s = need(o, "score", doc.path, where, "a rating 1-10, or -1 when none was parsed")
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not (s == -1 or 1 <= s <= 10):
            raise ImportDataError(f"unknown score {quote(s)}; expected a rating 1-10, or -1 when none was parsed",
                                  doc.path, where, "score")
        if s == -1:
            verdict, err, score = None, ERROR_SINGLE, None
        elif thresholds is None:
            verdict, err, score = None, SCORE_ONLY, float(s)
        else:
            verdict = "fail" if s <= thresholds[0] else "pass" if s >= thresholds[1] else "warn"
            err, score = None, float(s)
        rows.append({"item_id": f"{qid}-t{turn}-{model}", "dataset": DATASET, "judge": jmodel, "model": jmodel,
                     "strategy": prompt, "order": "", "sample": 0, "verdict": verdict, "score": score,
                     "error": err, "question_id": qid, "turn": turn, "answer_model": model, "raw_verdict": s,
                     "tstamp": o.get("tstamp"), "source_ref": where})
        if asked is not None:
            if qid not in asked:
                raise ImportDataError(f"question {qid} is not in {qfile.name} ({len(asked)} questions); expected "
                                      "the questions file the ratings were made on", doc.path, where, "question_id")
            category, turns = asked[qid]
            if not 1 <= turn <= len(turns):
                raise ImportDataError(f"turn {turn}: question {qid} has {len(turns)} turn(s) in {qfile.name}",
                                      doc.path, where, "turn")
            rows[-1].update(category=category, turn_text=turns[turn - 1])
    return finish(rows, doc.path)


def _human_rows(path: str | Path) -> tuple[Path, list[dict]]:
    doc = read_json(path, f"MT-Bench human judgments ({HUMAN_FIELDS})")
    rows = []
    for where, o in doc.objects(f"MT-Bench human judgments ({HUMAN_FIELDS})"):
        qid, a, b, o1, o2, turn, jmodel, prompt = _pair_fields(o, doc.path, where, ("model_a", "model_b"),
                                                               ("model A's name", "model B's name"))
        w = need(o, "winner", doc.path, where, f"one of {list(HUMAN_VALUES)}")
        if w not in HUMAN_VALUES:
            raise ImportDataError(f"unknown verdict {quote(w)}; expected one of {list(HUMAN_VALUES)}", doc.path, where,
                                  "winner")
        winner = {"model_a": a, "model_b": b}.get(w)
        verdict = "tie" if winner is None else "1" if winner == o1 else "2"
        rows.append({"item_id": f"{qid}-t{turn}-{o1}-vs-{o2}", "dataset": DATASET, "judge": jmodel,
                     "model": pd.NA if not prompt else jmodel, "strategy": prompt, "order": "",
                     "verdict": verdict, "question_id": qid, "turn": turn, "output_1_model": o1,
                     "output_2_model": o2, "model_a": a, "model_b": b, "raw_verdict": w, "source_ref": where})
    return doc.path, rows


def import_mt_bench_human(path: str | Path) -> pd.DataFrame:
    """MT-Bench human judgments (``question_id, model_a, model_b, winner, judge, turn``) as judges' verdicts.

    One row per judgment; ``judge`` = the annotator id (e.g. ``expert_12``, ``author_3``; a ``[model, prompt]``
    judge is split as in the pair file); ``winner`` ``model_a``/``model_b`` → that model's ORIGINAL output index
    (module conventions), ``tie`` and ``tie (bothbad)`` → ``tie`` (``raw_verdict`` keeps which). ``order`` is
    ``""``: the file does not record which answer was shown first. A judge who judged the same pair twice gets
    ``sample`` 0, 1, ... in file order. For one gold label per item use :func:`mt_bench_human_gold`.

    Raises
    ------
    ImportDataError
        A missing field or a winner outside ``model_a``/``model_b``/``tie``/``tie (bothbad)``, naming the
        line/entry and value.
    """
    p, rows = _human_rows(path)
    df = pd.DataFrame(rows)
    df["sample"] = df.groupby(["item_id", "judge", "strategy"], sort=False).cumcount()
    return finish(df, p)


def mt_bench_human_gold(path: str | Path, *, rule: str = "majority", judges: str | None = None):
    """One gold label per MT-Bench item from the human judgments (see :func:`evallab.importers.gold_from_annotators`).

    ``judges``: keep annotators whose id starts with this prefix (e.g. ``expert``); default every annotator
    without a prompt name (i.e. not a model). Returns :class:`evallab.importers._gold.Gold` whose table has
    ``item_id`` and ``dataset`` = ``mt_bench``.
    """
    from evallab.importers._gold import gold_from_annotators

    p, rows = _human_rows(path)
    df = pd.DataFrame(rows)
    keep = df["strategy"] == ""
    if judges:
        keep &= df["judge"].str.startswith(judges)
    if not keep.any():
        raise ImportDataError(f"no human judgments{' from ' + judges + '*' if judges else ''}; expected "
                              "annotator ids such as expert_0 or author_1", p, field="judge")
    g = gold_from_annotators(df[keep], rule=rule, by="item_id", annotator="judge", label="verdict")
    g.table.insert(1, "dataset", DATASET)
    return g
