"""AlpacaEval (Li, Dubois et al., tatsu-lab/alpaca_eval; Dubois et al. 2024, "Length-Controlled AlpacaEval").

Bundled in ``data/alpaca_eval`` (see its SOURCE.md): the same 805 instruction pairs (baseline
``gpt4_1106_preview`` = ``output_1`` vs a model = ``output_2``) for six models, each judged by two or three
AlpacaEval-2 annotator configurations of ONE model (gpt-4-1106-preview) with different prompts and parsers — so
comparing them measures prompt/parser drift, not model-version drift; the models' outputs; the published
leaderboards of the same models under different annotators; and the evaluator leaderboard.

Conventions of the tidy verdict table built here (:mod:`evallab.verdicts`)
--------------------------------------------------------------------------
- ``item_id`` = ``<generator_2>#<instruction_idx>`` (the pair), ``dataset`` = ``alpaca_eval``, ``subset`` = the
  instruction's source set (``helpful_base``, ``koala``, ``oasst``, ``selfinstruct``, ``vicuna``).
- ``judge`` = the annotator configuration (e.g. ``weighted_alpaca_eval_gpt4_turbo``), ``model`` = the model
  it calls (from ``evaluator_configs/*/configs.yaml``), ``strategy`` = its prompt template folder (e.g.
  ``alpaca_eval_clf_gpt4_turbo``).
- ``preference`` in [1, 2] becomes ``verdict`` ``1`` (< 1.5), ``2`` (> 1.5) or ``tie`` (= 1.5), the ORIGINAL
  output index; ``score`` keeps the preference itself (continuous for the weighted, logprob-based annotator). The
  legacy draw code 0 is a ``tie`` with ``score`` 1.5, as AlpacaEval reads it (so its win rate counts draws half).
  A missing preference is an NA verdict with ``error`` set (one row upstream), never dropped.
- ``order`` is ``""``: AlpacaEval randomises the shown order per pair and does not store it; where it can be
  recovered (the chain-of-thought annotator's ``referenced_models``: model ``m`` is always shown first) the
  extra column ``shown_first`` holds the original index of the output shown first (``1``/``2``), else NA (also
  for the 4 rows whose ``referenced_models`` names only ``M``: the judge ranked ``M`` twice, order unknown).
- No gold labels: the human cross-annotations are not in the repository, so ``gold`` is NA.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from evallab import _fileio as F
from evallab import verdicts as V
from evallab._fileio import iter_jsonl
from evallab.errors import DataError
from evallab.paths import data_dir

DATASET = "alpaca_eval"
PREFERENCE_COLUMNS = ["instruction_idx", "dataset", "generator_1", "generator_2", "annotator", "preference",
                      "referenced_models"]
MISSING_PREFERENCE = "no preference in AlpacaEval's annotations.json for this pair"
#: AlpacaEval's tie value of ``preference``
TIE = 1.5


class AlpacaEval(NamedTuple):
    """Items and verdicts of AlpacaEval's multi-annotator preferences.

    items : DataFrame, one row per pair: item_id, dataset, subset, instruction_idx, generator_1, generator_2,
        len_1, len_2 (characters of each output) and, with ``with_text=True``, instruction, output_1, output_2.
    verdicts : the tidy verdict table (one row per annotator × pair), extra columns ``instruction_idx``,
        ``generator_1``, ``generator_2``, ``shown_first``.
    """

    items: pd.DataFrame
    verdicts: pd.DataFrame


def _folder(path: str | Path | None) -> Path:
    return F.check_folder(Path(path) if path else data_dir("alpaca_eval"),
                          "AlpacaEval's folder (see data/alpaca_eval/SOURCE.md)")


def _need(path: Path, what: str) -> Path:
    return F.check_file(path, f"AlpacaEval's {what}",
                        missing=f"no such file; expected AlpacaEval's {what} (see data/alpaca_eval/SOURCE.md)")


def _read_jsonl(path: Path, fields: Sequence[str]) -> pd.DataFrame:
    rows = []
    for lineno, o in iter_jsonl(_need(path, path.name)):
        missing = [f for f in fields if f not in o]
        if missing:
            raise DataError(f"missing field(s) {missing}; expected {list(fields)}", path=str(path),
                            row=lineno, column=missing[0])
        rows.append({f: o[f] for f in fields})
    return pd.DataFrame(rows, columns=list(fields))


def load_alpaca_eval_annotators(path: str | Path | None = None) -> pd.DataFrame:
    """The annotator configurations in ``evaluator_configs/*/configs.yaml``.

    Returns
    -------
    DataFrame: ``annotator``, ``model`` (the model called), ``strategy`` (prompt template folder),
    ``temperature``, ``max_tokens``, ``parser`` (``fn_completion_parser``).

    Raises
    ------
    DataError
        A missing folder; a ``configs.yaml`` that is not a regular UTF-8 file (byte-order mark accepted), not
        valid YAML, repeats a key, or is not a mapping of mappings; an annotator configured in two files (both
        named).
    """
    rows, seen = [], {}
    for cfg in sorted((_folder(path) / "evaluator_configs").glob("*/configs.yaml")):
        doc = F.load_yaml(cfg, "an annotator configuration (YAML mapping name -> settings)")
        if doc is not None and not isinstance(doc, dict):
            raise DataError(f"top level is {type(doc).__name__}; expected a mapping annotator name -> settings",
                            path=str(cfg))
        for name, c in (doc or {}).items():
            if not isinstance(c, dict):
                raise DataError(f"annotator {name!r} is {type(c).__name__}; expected a mapping of settings",
                                path=str(cfg), column=str(name))
            if name in seen:
                raise DataError(f"annotator {name!r} is also configured in {seen[name]}; expected one configuration "
                                "per annotator", path=str(cfg), column=str(name))
            seen[name] = str(cfg)
            kw = c.get("completions_kwargs", {}) or {}
            rows.append({"annotator": name, "model": kw.get("model_name"),
                         "strategy": str(c.get("prompt_template", "")).split("/")[0] or name,
                         "temperature": kw.get("temperature"), "max_tokens": kw.get("max_tokens"),
                         "parser": c.get("fn_completion_parser")})
    return pd.DataFrame(rows, columns=["annotator", "model", "strategy", "temperature", "max_tokens", "parser"])


def _shown_first(referenced: pd.Series) -> pd.Series:
    """Original index of the output shown first, from ``referenced_models`` (``m`` is shown first)."""
    def one(x):
        if not isinstance(x, str) or not x.strip():
            return pd.NA
        try:
            ref = json.loads(x)
            m, big = ref.get("m"), ref.get("M")
        except (json.JSONDecodeError, AttributeError):
            return pd.NA
        del big  # 4 rows name only "M" (the judge ranked "M" twice): the shown order is unknown there
        return {"output_1": "1", "output_2": "2"}.get(m, pd.NA)

    return pd.Series([one(x) for x in referenced], index=referenced.index, dtype="string")


def preference_score(preference: pd.Series) -> pd.Series:
    """AlpacaEval ``preference`` as a float on one scale: the legacy draw code 0 read as 1.5 (AlpacaEval's
    ``metrics/helpers.py``: ``preferences == 0`` counts as a draw, "for backward compatibility" mapped to 1.5;
    alpaca_eval#290), NaN where missing or not a number."""
    p = pd.to_numeric(preference, errors="coerce").astype(float)
    return p.mask(p == 0, TIE)


def preference_to_verdict(preference: pd.Series) -> pd.Series:
    """AlpacaEval ``preference`` in [1, 2] (or the legacy draw 0) → tidy verdict: ``1`` below 1.5, ``2`` above,
    ``tie`` at 1.5 or 0 (:func:`preference_score`), NA if NA.

    Raises
    ------
    DataError
        A preference outside [1, 2] other than 0.
    """
    p = preference_score(preference)
    bad = p.notna() & ((p < 1) | (p > 2))
    if bad.any():
        raise DataError(f"preference {p[bad].iloc[0]} outside [1, 2]", row=int(np.flatnonzero(bad)[0]) + 1,
                        column="preference")
    out = np.where(p < TIE, "1", np.where(p > TIE, "2", "tie"))
    return pd.Series(out, index=preference.index, dtype="string").mask(p.isna())


def load_alpaca_eval(
    path: str | Path | None = None,
    *,
    annotators: Sequence[str] | None = None,
    generators: Sequence[str] | None = None,
    with_text: bool = False,
) -> AlpacaEval:
    """Load AlpacaEval's multi-annotator preferences as an items table and a tidy verdict table.

    Parameters
    ----------
    path : folder holding ``multi_annotator_preferences.csv``, ``outputs.jsonl``, ``evaluator_configs/``;
        default the bundled copy.
    annotators : keep these annotator configurations (exact names). None = all three.
    generators : keep these models (``generator_2``). None = all six.
    with_text : also put the instruction and both outputs into ``items``.

    Returns
    -------
    AlpacaEval
        ``(items, verdicts)``; see the module docstring for the conventions (ties as ``tie``, continuous
        preference in ``score``, ``shown_first`` where known, ``gold`` NA).

    Raises
    ------
    DataError
        A missing folder, file or column; a path that is not a folder / regular file (refused before opening); a
        file that is not UTF-8 (byte-order mark accepted) or not well-formed; a preference outside [1, 2] (0, the
        legacy draw, is read as 1.5); or a
        filter that selects nothing (naming the values available).
    """
    folder = _folder(path)
    ppath = _need(folder / "multi_annotator_preferences.csv", "multi_annotator_preferences.csv")
    raw = F.read_csv(ppath, "AlpacaEval's multi_annotator_preferences.csv", dtype={"dataset": "string", "generator_1": "string", "generator_2": "string",
                                    "annotator": "string", "referenced_models": "string"})
    missing = [c for c in PREFERENCE_COLUMNS if c not in raw.columns]
    if missing:
        raise DataError(f"missing column(s) {missing}; expected {PREFERENCE_COLUMNS}", path=str(ppath),
                        column=missing[0])
    try:  # rows of the file, before any filter
        preference_to_verdict(raw["preference"])
    except DataError as exc:
        exc.path = str(ppath)
        exc.message += f" (file line {exc.row + 1})"
        raise
    for name, col, wanted in (("annotators", "annotator", annotators), ("generators", "generator_2", generators)):
        if wanted:
            m = raw[col].isin(list(wanted))
            if not m.any():
                raise DataError(f"{name}={list(wanted)} selects no rows; available: {sorted(raw[col].unique())}",
                                path=str(ppath), column=col)
            raw = raw[m]
    raw = raw.reset_index(drop=True)
    try:
        verdict = preference_to_verdict(raw["preference"])
    except DataError as exc:
        exc.path = str(ppath)
        raise
    cfg = load_alpaca_eval_annotators(folder).set_index("annotator")
    ids = raw["generator_2"] + "#" + raw["instruction_idx"].astype("string")
    tidy = pd.DataFrame({
        "item_id": ids,
        "dataset": DATASET,
        "subset": raw["dataset"],
        "judge": raw["annotator"],
        "model": raw["annotator"].map(cfg["model"]).astype("string") if len(cfg) else pd.NA,
        "strategy": raw["annotator"].map(cfg["strategy"]).fillna(raw["annotator"]) if len(cfg)
        else raw["annotator"],
        "anchor_set": "none",
        "order": "",
        "sample": 0,
        "verdict": verdict,
        "gold": pd.NA,
        "score": preference_score(raw["preference"]),
        "error": pd.Series(np.where(verdict.isna(), MISSING_PREFERENCE, None), dtype="string"),
        "instruction_idx": raw["instruction_idx"].astype("Int64"),
        "generator_1": raw["generator_1"],
        "generator_2": raw["generator_2"],
        "shown_first": _shown_first(raw["referenced_models"]),
    })
    tidy = tidy.sort_values(["judge", "generator_2", "instruction_idx"], kind="stable").reset_index(drop=True)
    verdicts = V.coerce(tidy, path=str(ppath))
    V.warn_snapshots(verdicts, source=str(ppath))

    items = (raw[["instruction_idx", "dataset", "generator_1", "generator_2"]]
             .drop_duplicates(["generator_2", "instruction_idx"])
             .rename(columns={"dataset": "subset"}))
    items.insert(0, "item_id", items["generator_2"] + "#" + items["instruction_idx"].astype("string"))
    items.insert(1, "dataset", DATASET)
    outputs = load_alpaca_eval_outputs(folder)
    out_idx = outputs.set_index(["generator", "instruction_idx"])["output"]
    for k in (1, 2):
        keys = pd.MultiIndex.from_arrays([items[f"generator_{k}"], items["instruction_idx"]])
        text = pd.Series(out_idx.reindex(keys).to_numpy(), index=items.index)
        items[f"len_{k}"] = text.str.len().astype("Int64")
        if with_text:
            items[f"output_{k}"] = text
    if with_text:
        instr = load_alpaca_eval_instructions(folder).set_index("instruction_idx")["instruction"]
        items["instruction"] = items["instruction_idx"].map(instr)
    items = items.sort_values(["generator_2", "instruction_idx"]).reset_index(drop=True)
    return AlpacaEval(items, verdicts)


def load_alpaca_eval_outputs(path: str | Path | None = None) -> pd.DataFrame:
    """The models' outputs (``outputs.jsonl``): ``instruction_idx``, ``generator``, ``output``, ``length``
    (characters, as AlpacaEval's length-bias analysis counts them)."""
    p = _folder(path) / "outputs.jsonl"
    df = _read_jsonl(p, ["instruction_idx", "generator", "output"])
    df["instruction_idx"] = df["instruction_idx"].astype("Int64")
    df["generator"] = df["generator"].astype("string")
    df["output"] = df["output"].astype("string")
    df["length"] = df["output"].str.len().astype("Int64")
    return df


def load_alpaca_eval_instructions(path: str | Path | None = None) -> pd.DataFrame:
    """The 805 instructions (``instructions.jsonl``): ``instruction_idx``, ``instruction``."""
    df = _read_jsonl(_folder(path) / "instructions.jsonl", ["instruction_idx", "instruction"])
    df["instruction_idx"] = df["instruction_idx"].astype("Int64")
    return df


LEADERBOARD_COLUMNS = ["version", "annotator", "leaderboard", "model", "win_rate", "standard_error",
                       "discrete_win_rate", "length_controlled_winrate", "n_wins", "n_wins_base", "n_draws",
                       "n_total", "avg_length", "mode", "is_baseline"]


def load_alpaca_eval_leaderboards(path: str | Path | None = None) -> pd.DataFrame:
    """Every published leaderboard in ``leaderboards/data_AlpacaEval*/<annotator>_leaderboard.csv``, long format.

    Returns
    -------
    DataFrame, one row per (leaderboard, model): ``version`` (``AlpacaEval`` = baseline text-davinci-003 /
    ``AlpacaEval_2`` = baseline gpt-4-1106-preview), ``annotator`` (file stem without ``_leaderboard``),
    ``leaderboard`` (``<version>/<annotator>``), ``model``, ``win_rate`` (percent), ``standard_error``,
    ``discrete_win_rate``, ``length_controlled_winrate`` (NaN where the file lacks it), the win/draw counts,
    ``avg_length`` (characters), ``mode`` and ``is_baseline`` (the baseline judged against itself: every
    comparison a draw — its 50% is set by construction).

    Raises
    ------
    DataError
        No leaderboard files, or a file without ``win_rate``.
    """
    folder = _folder(path) / "leaderboards"
    files = sorted(folder.glob("data_AlpacaEval*/*_leaderboard.csv"))
    if not files:
        raise DataError("no leaderboards found; expected data_AlpacaEval*/<annotator>_leaderboard.csv",
                        path=str(folder))
    parts = []
    for f in files:
        df = F.read_csv(f, "an AlpacaEval leaderboard CSV")
        df = df.rename(columns={df.columns[0]: "model"})
        if "win_rate" not in df.columns:
            raise DataError("missing column 'win_rate'", path=str(f), column="win_rate")
        version = f.parent.name.removeprefix("data_")
        annotator = f.stem.removesuffix("_leaderboard")
        df["version"], df["annotator"], df["leaderboard"] = version, annotator, f"{version}/{annotator}"
        for c in LEADERBOARD_COLUMNS:
            if c not in df.columns:
                df[c] = np.nan
        n_total = pd.to_numeric(df["n_total"], errors="coerce")
        df["is_baseline"] = (pd.to_numeric(df["n_draws"], errors="coerce") == n_total) & (n_total > 0)
        parts.append(df[LEADERBOARD_COLUMNS])
    out = pd.concat(parts, ignore_index=True)
    for c in ("version", "annotator", "leaderboard", "model", "mode"):
        out[c] = out[c].astype("string")
    for c in ("win_rate", "standard_error", "discrete_win_rate", "length_controlled_winrate", "n_wins",
              "n_wins_base", "n_draws", "n_total", "avg_length"):
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    out["is_baseline"] = out["is_baseline"].astype(bool)
    return out


def load_alpaca_eval_evaluators(path: str | Path | None = None) -> pd.DataFrame:
    """AlpacaEval's evaluator leaderboard (``evaluators_leaderboard.csv``, 32 evaluators) with snake_case columns.

    Columns: ``evaluator``, ``human_agreement`` (percent), ``price_per_1000`` (USD / 1000 examples),
    ``time_per_1000`` (seconds / 1000 examples), ``spearman``, ``pearson``, ``bias``, ``variance``,
    ``p_prefer_longer``, ``p_prefer_lists``, ``p_prefer_output_1`` (all in [0, 1]), ``n_parsed``, ``mode``, and
    ``human_agreement_suspect``: True where the value is below 1 although the column is in percent (upstream's
    ``weighted_alpaca_eval_gpt-4o-mini-2024-07-18`` row shows 0.3367, likely a scale error; kept as published).
    All are measured upstream against ~2.5K AlpacaFarm human cross-annotations that are not bundled.
    """
    p = _need(_folder(path) / "evaluators_leaderboard.csv", "evaluators_leaderboard.csv")
    df = F.read_csv(p, "AlpacaEval's evaluators_leaderboard.csv")
    names = {df.columns[0]: "evaluator", "Human agreement": "human_agreement",
             "Price [$/1000 examples]": "price_per_1000", "Time [seconds/1000 examples]": "time_per_1000",
             "Spearman corr.": "spearman", "Pearson corr.": "pearson", "Bias": "bias", "Variance": "variance",
             "Proba. prefer longer": "p_prefer_longer", "Proba. prefer lists": "p_prefer_lists",
             "Proba. prefer 1": "p_prefer_output_1", "# parsed": "n_parsed", "mode": "mode"}
    missing = [c for c in names if c not in df.columns]
    if missing:
        raise DataError(f"missing column(s) {missing}", path=str(p), column=missing[0])
    df = df.rename(columns=names)[list(names.values())]
    df["human_agreement_suspect"] = df["human_agreement"] < 1
    return df
