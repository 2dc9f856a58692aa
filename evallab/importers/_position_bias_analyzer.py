"""Position-Bias-Analyzer record files (Shi et al. 2024, "Judging the Judges") → the tidy verdict table.

Source: github.com/Slimshilin/Position-Bias-Analyzer (commit 9f8b7e8e), ``subeval/subjective/sub_eval.py`` writes
``record_<judge>_<nopt>.tsv``: one tab-separated, quoted row per judge reply with ``cmp_index`` =
``"<question_id>;<model shown as A>;<model shown as B>"``, the two MT-Bench turns (``question_1``/``_2``), each
model's answers (``answer1_1``/``_2`` for A, ``answer2_1``/``_2`` for B), ``A``, ``B``, the reference answers,
``evaluating_guidance``, ``task`` (the MT-Bench category) and a last column named after the judge holding its full
reply, which ends in MT-Bench's verdict ``[[A]]``, ``[[B]]`` or ``[[C]]`` (tie). The swapped order of a comparison
is the row whose ``cmp_index`` has the two names exchanged. The repository's runs of the same prompts three times
sit in folders ``Repetition<N>-...``.

Mapping: one comparison (question and the two models) is one item, ``item_id`` = ``"<question_id>;<output 1>;
<output 2>"``; output 1 is ``baseline`` when it is one of the two models, else the name that sorts first; the row
showing output 1 as A is ``order`` ``ab``, the other ``ba``. ``verdict`` is evallab's own parse of the reply
(:func:`evallab.judges._parsing.parse_verdict_full`, pairwise: the FINAL verdict statement wins) mapped to the
ORIGINAL output index, NA with ``error`` when none; ``authors_choice`` is the authors' extraction — the FIRST
``[[A]]``/``[[B]]``/``[[C]]``/``[[D]]`` in the reply, as shown (A = the model shown first), NA when none
(``match_answer`` in ``subeval/subjective/analyze_util.py``) — and ``authors_verdict`` the same mapped to the
original index (``C`` → ``tie``; ``D`` kept as ``D``). ``judge`` = ``model`` = the judge column's name;
``subset`` = ``task``; ``dataset`` = ``position_bias_analyzer``; ``sample`` = repetition − 1 (from the folder name
``Repetition<N>``, or ``sample=``). Extra columns ``question_id``, ``cmp_index``, ``output_1_model``,
``output_2_model``, ``shown_a``, ``verdict_marks`` (every ``[[X]]`` of the reply, in order, joined by spaces) and
``source_ref`` (``row N``); ``reply`` (the full text) with ``replies=True``.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pandas as pd

from evallab.importers._common import ImportDataError, check_file, finish, read_text
from evallab.judges._parsing import map_order, parse_verdict_full

DATASET = "position_bias_analyzer"
#: the columns every record file carries before the judge's column
FIELDS = ("cmp_index", "question_1", "question_2", "answer1_1", "answer1_2", "answer2_1", "answer2_2", "A", "B",
          "reference_answer_1", "reference_answer_2", "evaluating_guidance", "task")
EXPECTED = f"a Position-Bias-Analyzer record TSV (columns {', '.join(FIELDS)}, then the judge's replies)"
#: the authors' verdict pattern (Shi et al.'s MT-Bench prompt: [[A]], [[B]], [[C]] = tie; [[D]] accepted)
AUTHORS_MARK = re.compile(r"\[\[([ABCD])\]\]")
_MARKS = re.compile(r"\[\[[^\[\]\n]{1,12}\]\]")
_REPETITION = re.compile(r"^Repetition(\d+)")
_TO_ORIGINAL = {("A", "ab"): "1", ("B", "ab"): "2", ("A", "ba"): "2", ("B", "ba"): "1"}


def authors_choice(reply: str) -> str | None:
    """The authors' extraction: the first ``[[A]]``/``[[B]]``/``[[C]]``/``[[D]]`` in ``reply`` (its letter), or
    ``None`` (Position-Bias-Analyzer ``subeval/subjective/analyze_util.py``, ``match_answer``, MT-Bench)."""
    m = AUTHORS_MARK.search(reply)
    return m.group(1) if m else None


def choice_to_verdict(choice: str | None, order: str) -> str | None:
    """A shown letter (``A`` = shown first) → the ORIGINAL output index: ``1``/``2``, ``C`` → ``tie``, ``D`` kept."""
    if choice is None:
        return None
    if choice in ("C", "D"):
        return "tie" if choice == "C" else "D"
    return _TO_ORIGINAL[(choice, order)]


def repetition_of(path: Path) -> int | None:
    """The repetition number of a record file from its folder name ``Repetition<N>...`` (``None`` when absent)."""
    for part in reversed(path.resolve().parts[:-1]):
        m = _REPETITION.match(part)
        if m:
            return int(m.group(1))
    return None


def import_position_bias_analyzer(path: str | Path, *, baseline: str | None = None, sample: int | None = None,
                                  replies: bool = False) -> pd.DataFrame:
    """A Position-Bias-Analyzer ``record_<judge>_<nopt>.tsv`` → tidy table, one row per reply (module docstring).

    Parameters
    ----------
    path : str or Path
        The record file.
    baseline : str, optional
        The model that is output 1 wherever it is compared (Shi et al.'s reference model, ``vicuna-13b-v1.3`` in
        their MT-Bench runs); default: the name that sorts first in each comparison.
    sample : int, optional
        The 0-based repetition index; default: ``Repetition<N>`` in a parent folder's name minus 1, else 0.
    replies : bool, default False
        Keep each full reply in a ``reply`` column.

    Returns
    -------
    DataFrame
        The tidy verdict table (validated) with the extra columns of the module docstring.

    Raises
    ------
    ImportDataError
        A missing column, a ``cmp_index`` not of the form ``id;A;B`` or disagreeing with ``A``/``B``, an empty
        reply, or a comparison shown twice in one order (naming the file and row).
    """
    p = check_file(path, EXPECTED)
    text = read_text(p, EXPECTED)
    reader = csv.reader(text.splitlines(keepends=True), delimiter="\t")
    try:
        header = next(reader)
        records = list(reader)
    except csv.Error as exc:
        raise ImportDataError(f"is not a readable tab-separated file ({exc}); expected {EXPECTED}", p) from None
    missing = [c for c in FIELDS if c not in header]
    if missing or len(header) <= len(FIELDS):
        raise ImportDataError(f"has columns {header[:16]}; expected {EXPECTED}", p, field=(missing or ["judge"])[0])
    judge = header[-1]
    col = {c: header.index(c) for c in (*FIELDS, judge)}
    if sample is None:
        rep = repetition_of(p)
        sample = rep - 1 if rep else 0
    rows = []
    for n, rec in enumerate(records, start=2):
        where = f"row {n}"
        if len(rec) != len(header):
            raise ImportDataError(f"has {len(rec)} fields; expected {len(header)} as the header", p, where)
        cmp_index, a, b, reply = rec[col["cmp_index"]], rec[col["A"]], rec[col["B"]], rec[col[judge]]
        parts = cmp_index.split(";")
        if len(parts) != 3 or not all(parts) or parts[1:] != [a, b]:
            raise ImportDataError(f"{cmp_index!r} is not '<question_id>;{a};{b}'; expected the question id and the "
                                  "models shown as A and B", p, where, "cmp_index")
        if not reply.strip():
            raise ImportDataError("is empty; expected the judge's reply", p, where, judge)
        qid = parts[0]
        first = baseline if baseline in (a, b) else min(a, b)
        second = b if first == a else a
        order = "ab" if a == first else "ba"
        parsed = parse_verdict_full(reply, "pairwise")
        choice = authors_choice(reply)
        row = {"item_id": f"{qid};{first};{second}", "dataset": DATASET, "subset": rec[col["task"]], "judge": judge,
               "model": judge, "order": order, "sample": sample, "verdict": map_order(parsed.verdict, order),
               "error": parsed.error, "question_id": qid, "cmp_index": cmp_index, "output_1_model": first,
               "output_2_model": second, "shown_a": a, "authors_choice": choice,
               "authors_verdict": choice_to_verdict(choice, order),
               "verdict_marks": " ".join(_MARKS.findall(reply)), "source_ref": where}
        if replies:
            row["reply"] = reply
        rows.append(row)
    df = finish(rows, p)
    for c in ("question_id", "cmp_index", "output_1_model", "output_2_model", "shown_a", "authors_choice",
              "authors_verdict", "verdict_marks", *(["reply"] if replies else [])):
        df[c] = df[c].astype("string")
    return df
