"""The bundled Position-Bias-Analyzer judgments (Shi et al. 2024, "Judging the Judges"): nine 2024 judges on 96
MT-Bench comparisons in both orders, each prompt sent three times — 5,184 replies (``data/position_bias_analyzer``,
SOURCE.md there).

- :func:`load_position_bias_analyzer` — the tidy verdict table: the compact ``verdicts.csv`` built from the record
  files (fast), or the record files themselves re-imported (``raw=True``; the importer
  :func:`evallab.importers._position_bias_analyzer.import_position_bias_analyzer`, ~6 s).
- :func:`build_table` — the compact table from the record files, as ``verdicts.csv`` holds it (a test checks the
  file equals it).
- :func:`printed_consistency` — the authors' printed position consistency of each record file ("N out of M answers
  are consistent ... The consistent rate is X%", from the ``log.txt`` beside it).
- :func:`load_prices` — each judge's price per 1M input and output tokens (``prices.csv``; source in SOURCE.md).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from evallab import verdicts as V
from evallab.errors import DataError

NAME = "position_bias_analyzer"
#: Shi et al.'s reference model: output 1 of every comparison
BASELINE = "vicuna-13b-v1.3"
RECORDS = "data_MTBench_repetition"
#: the extra columns the compact table keeps (the replies themselves only where the two extractions differ)
EXTRA = ("question_id", "output_1_model", "output_2_model", "authors_choice", "authors_verdict", "verdict_marks",
         "reply_tail")
TAIL = 400  # characters of a reply kept where evallab's parse and the authors' extraction differ
_PRINTED = re.compile(r"(\d+) out of (\d+) answers are consistent\..*?The consistent rate is ([\d.]+)%")


def folder(data_dir: str | Path = "") -> Path:
    """The dataset's folder: ``data_dir`` or the bundled ``data/position_bias_analyzer``."""
    from evallab.paths import data_dir as bundled

    p = Path(data_dir) if data_dir else bundled(NAME)
    if not p.is_dir():
        raise DataError(f"{p}: no such folder; expected the Position-Bias-Analyzer data ({RECORDS}/, verdicts.csv)")
    return p


def record_files(data_dir: str | Path = "") -> list[Path]:
    """The record TSVs (``<RECORDS>/Repetition<N>-.../record_<judge>_3.tsv``), sorted."""
    files = sorted((folder(data_dir) / RECORDS).glob("Repetition*/record_*.tsv"))
    if not files:
        raise DataError(f"{folder(data_dir) / RECORDS}: no record_*.tsv files; expected 27 (9 judges × 3 "
                        "repetitions)")
    return files


def differs(df: pd.DataFrame) -> pd.Series:
    """Rows where evallab's parse (``verdict``) and the authors' extraction (``authors_verdict``) differ (NA counts
    as a value)."""
    return df["verdict"].astype(object).fillna("NA") != df["authors_verdict"].astype(object).fillna("NA")


def build_table(data_dir: str | Path = "") -> pd.DataFrame:
    """The compact tidy table from the record files: the importer's rows (``baseline`` = :data:`BASELINE`), the
    columns of :data:`V.COLUMNS` that hold something plus :data:`EXTRA`; ``reply_tail`` = the last :data:`TAIL`
    characters of the reply where the two extractions differ, else empty."""
    from evallab.importers._position_bias_analyzer import import_position_bias_analyzer

    tables = [import_position_bias_analyzer(p, baseline=BASELINE, replies=True) for p in record_files(data_dir)]
    df = V.concat(tables)
    tail = df["reply"].astype(str).str[-TAIL:]
    df["reply_tail"] = tail.where(differs(df), "").astype("string")
    keep = [c for c in ("item_id", "dataset", "subset", "judge", "model", "order", "sample", "verdict", "error")]
    return df[keep + list(EXTRA)].reset_index(drop=True)


def load_position_bias_analyzer(data_dir: str | Path = "", *, raw: bool = False) -> pd.DataFrame:
    """The nine judges' 5,184 replies as a tidy verdict table (one row per reply).

    Parameters
    ----------
    data_dir : str or Path, default ""
        The dataset folder; empty: the bundled ``data/position_bias_analyzer``.
    raw : bool, default False
        Re-import the record files (:func:`build_table`, ~6 s) instead of reading ``verdicts.csv``.

    Returns
    -------
    DataFrame
        The tidy table (:mod:`evallab.verdicts`): ``item_id`` = ``"<question_id>;vicuna-13b-v1.3;<contestant>"``
        (output 1 is always vicuna-13b-v1.3, Shi et al.'s reference model), ``subset`` = MT-Bench category,
        ``judge`` = ``model`` = the judge, ``order`` ``ab``/``ba``, ``sample`` = repetition − 1 (0–2), ``verdict``
        = evallab's parse (original index; NA with ``error`` when none), no ``gold``; extra columns
        ``question_id``, ``output_1_model``, ``output_2_model``, ``authors_choice`` (the authors' extraction as
        shown: A/B/C/D or NA), ``authors_verdict`` (the same, original index), ``verdict_marks`` (every ``[[X]]``
        of the reply), ``reply_tail`` (the reply's end where the extractions differ, else empty).

    Raises
    ------
    DataError
        The folder, the record files or ``verdicts.csv`` missing (naming the path).

    Source: Shi et al. (2024), "Judging the Judges", arXiv 2406.07791; github.com/Slimshilin/Position-Bias-Analyzer
    at commit 9f8b7e8e (``judgment_data/data_MTBench_repetition``).
    """
    if raw:
        return build_table(data_dir)
    path = folder(data_dir) / "verdicts.csv"
    if not path.is_file():
        raise DataError(f"{path}: no such file; expected the compact table (build_table)")
    df = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    df = V.coerce(df, path=str(path))
    for c in EXTRA:
        df[c] = df[c].astype("string")
    for c in ("verdict_marks", "reply_tail"):  # empty text, not NA
        df[c] = df[c].fillna("")
    return df


def printed_consistency(data_dir: str | Path = "") -> pd.DataFrame:
    """What the authors' code printed for each record file (``log.txt`` beside it).

    Returns
    -------
    DataFrame
        One row per file: ``judge``, ``sample`` (repetition − 1), ``consistent`` (N), ``parsed`` (M, the replies
        their extraction parsed), ``rate_pct`` (X, the printed percentage, 2 decimals), ``log`` (its path).

    Raises
    ------
    DataError
        A record file without ``log.txt``, or a log without the printed line (naming the file).
    """
    from evallab.importers._position_bias_analyzer import repetition_of

    rows = []
    for p in record_files(data_dir):
        log = p.parent / "log.txt"
        if not log.is_file():
            raise DataError(f"{log}: no such file; expected the authors' printed output beside {p.name}")
        m = _PRINTED.search(log.read_text(encoding="utf-8"))
        if m is None:
            raise DataError(f"{log}: no line 'N out of M answers are consistent ... The consistent rate is X%'")
        judge = p.stem[len("record_"):].rsplit("_", 1)[0]
        rows.append({"judge": judge, "sample": repetition_of(p) - 1, "consistent": int(m.group(1)),
                     "parsed": int(m.group(2)), "rate_pct": float(m.group(3)), "log": str(log)})
    return pd.DataFrame(rows)


def load_prices(data_dir: str | Path = "") -> pd.DataFrame:
    """Each judge's list price in US dollars per 1M tokens: ``judge``, ``family``, ``input_usd_per_mtok``,
    ``output_usd_per_mtok`` (``prices.csv``; the authors' price maps, SOURCE.md).

    Raises
    ------
    DataError
        ``prices.csv`` missing.
    """
    path = folder(data_dir) / "prices.csv"
    if not path.is_file():
        raise DataError(f"{path}: no such file; expected judge,family,input_usd_per_mtok,output_usd_per_mtok")
    return pd.read_csv(path)
