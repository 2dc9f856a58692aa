"""Positive-bias inflation across anchor sets: the experiment and its estimators.

The MeowKit rubric rules (spec "Rubric Library", rules 1, 4, 5; ``calibration-guide.md``) claim that PASS-only
anchors inflate an evaluator's pass rate by 40–60% and that FAIL-last anchors prime FAIL. This module measures
both for a user's own judge.

Experiment
----------
:func:`build_requests` / :func:`run_experiment`: judge × items × anchor variants × samples → tidy verdict table
(:mod:`evallab.verdicts`) through :func:`evallab.judges.run_jobs` (any Judge: live, replay, or the local simulated
server). Items are the keryx calibration answers (:func:`evallab.datasets.load_keryx_calibration`: 136 items,
known-right = pass, the other three kinds = fail), each graded against its own scenario's rubric; the anchors of an
item are calibration answers drawn only from OTHER scenarios (no leakage), the same drawn examples for every
variant of the item (so variants differ only in which labels are shown and in what order). For a MeowKit rubric
use :func:`evallab.rubrics.rubric_anchor_set` and :func:`rubric_requests`.

Estimators (all take the tidy verdict table; unparsed replies are excluded and counted, never scored)
--------------------------------------------------------------------------------------------------
- :func:`pass_rate` — share of parsed replies that are ``pass`` per anchor set.
- :func:`inflation_table` — per anchor set against a baseline (default ``balanced``), on the items both share:
  pass rate, inflation = pass rate(variant) / pass rate(baseline) − 1, false-pass rate on gold-FAIL items,
  agreement with gold, each with a percentile bootstrap interval over items (``scipy.stats.bootstrap``, paired:
  the same resampled items for variant and baseline), and McNemar's test on one verdict pair per item (the
  majority verdict of the item's parsed samples; even splits dropped and counted) (:func:`evallab.stats.mcnemar`).
- :func:`position_priming` — verdict shift between ``fail-last`` (grouped, FAIL last) and ``balanced``
  (alternating): pass-rate difference with a paired bootstrap interval, flip rate and McNemar.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from evallab import stats
from evallab.errors import DataError
from evallab.rubrics import AnchorExample, Rubric, anchor_set, check_mixed_k, is_mixed

#: the default variants of the experiment: the two the issue compares plus the position-priming one
DEFAULT_VARIANTS = ("balanced", "pass-only", "fail-last")
NAN = float("nan")
#: files written by :func:`run_experiment` in ``record_dir``
VERDICTS_FILE = "verdicts.jsonl"
RECORDING_FILE = "anchor-inflation.json"


# --------------------------------------------------------------------------------------------- experiment
def _scenario_rng(seed: int, scenario_id: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(scenario_id.encode("utf-8"))])


def anchor_text(row) -> str:
    """How a labelled calibration answer is shown as an anchor: its task prompt, then the answer."""
    return f"Task prompt: {row['prompt']}\n\nAnswer:\n{row['answer']}"


def draw_anchors(items: pd.DataFrame, scenario_id: str, *, k: int = 4, seed: int = 0
                 ) -> tuple[list[AnchorExample], list[AnchorExample]]:
    """The PASS and FAIL examples available to the items of one scenario, drawn from OTHER scenarios.

    ``k`` PASS examples (gold ``pass`` answers) and ``k`` FAIL examples (one gold ``fail`` answer each), from
    ``k`` distinct other scenarios per verdict, drawn with ``numpy.random.default_rng([seed, crc32(scenario_id)])``.
    ``source`` is the anchor's ``item_id``.

    Raises
    ------
    DataError
        When fewer than ``k`` other scenarios carry an answer of a verdict.
    """
    rng = _scenario_rng(seed, scenario_id)
    other = items[items["scenario_id"] != scenario_id]
    out = []
    for verdict in ("pass", "fail"):
        pool = other[other["gold"] == verdict]
        scen = sorted(pool["scenario_id"].unique())
        if len(scen) < k:
            raise DataError(f"scenario {scenario_id!r}: only {len(scen)} other scenario(s) have a gold-{verdict} "
                            f"answer; {k} anchors of each verdict need {k}", column="gold")
        chosen = rng.choice(len(scen), size=k, replace=False)
        ex = []
        for c in chosen:
            rows = pool[pool["scenario_id"] == scen[c]]
            r = rows.iloc[int(rng.integers(len(rows)))]
            ex.append(AnchorExample(anchor_text(r), verdict, str(r["item_id"])))
        out.append(ex)
    return out[0], out[1]


def _rubric_text(row) -> str:
    return f"{row['rubric']}\n\nTask prompt the answer responds to:\n{row['prompt']}"


def build_requests(items: pd.DataFrame, variants: Sequence[str] = DEFAULT_VARIANTS, *, samples: int = 1, k: int = 4,
                   seed: int = 0, temperature: float = 0.0, judge_seed: int | None = None,
                   max_tokens: int | None = None) -> list:
    """Pointwise judge requests: every item × anchor variant × sample.

    Parameters
    ----------
    items : the keryx items table (:func:`evallab.datasets.load_keryx_calibration`): item_id, dataset, subset,
        scenario_id, kind, gold, answer, prompt, rubric, pass_criteria, fail_criteria.
    variants : anchor-set variant ids (:func:`evallab.rubrics.anchor_set`).
    samples : repeats per (item, variant), ``sample`` = 0..samples−1.
    k : anchors per set; every variant but ``none`` shows ``k`` (``pass-only``: k PASS; mixed variants: k/2 PASS and
        k/2 FAIL), so ``k`` must be even and ≥ 2 when any mixed variant is requested.
    seed : seed of the anchor draw. ``shuffled-<seed>`` orders use their own seed salted with crc32(item_id), so
        the order varies across items.
    temperature, judge_seed, max_tokens : model parameters passed to the prompt builder.

    Returns
    -------
    list of JudgeRequest (``evallab.judges.prompts.build_pointwise``); metadata: item_id, dataset, subset, strategy
    (the prompt version), anchor_set, order "", sample, gold, scenario_id, kind, anchor_sources (the anchors'
    item ids, ";"-joined, in presentation order).

    Raises
    ------
    DataError
        When ``samples < 1``, ``k < 1``, ``k`` is odd or < 2 with a mixed variant, or a scenario has too few
        other scenarios to draw anchors from.
    """
    from evallab.judges.prompts import PROMPT_VERSION, Anchor, build_pointwise

    if samples < 1:
        raise DataError(f"samples={samples}; expected 1 or more", column="samples")
    if k < 1:
        raise DataError(f"k={k}; expected 1 or more anchors per set", column="k")
    for v in variants:
        if is_mixed(v):
            check_mixed_k(k, v)
    need = {"item_id", "scenario_id", "gold", "answer", "prompt", "rubric", "pass_criteria"}
    missing = sorted(need - set(items.columns))
    if missing:
        raise DataError(f"items table lacks column(s) {missing}; expected load_keryx_calibration()'s columns",
                        column=missing[0])
    draws = {sid: draw_anchors(items, sid, k=k, seed=seed) for sid in items["scenario_id"].unique()}
    reqs = []
    for _, row in items.iterrows():
        passes, fails = draws[row["scenario_id"]]
        for v in variants:
            chosen = anchor_set(v, passes, fails, k=k, salt=zlib.crc32(str(row["item_id"]).encode("utf-8")))
            anchors = [Anchor(a.text, a.verdict) for a in chosen]
            for s in range(samples):
                md = {"item_id": row["item_id"], "dataset": row.get("dataset", "keryx"),
                      "subset": row.get("subset", ""), "strategy": PROMPT_VERSION, "anchor_set": v, "order": "",
                      "sample": s, "gold": row["gold"], "scenario_id": row["scenario_id"],
                      "kind": row.get("kind", ""), "anchor_sources": ";".join(a.source for a in chosen)}
                reqs.append(build_pointwise(rubric=_rubric_text(row), pass_criteria=list(row["pass_criteria"]),
                                            fail_criteria=list(row.get("fail_criteria") or []),
                                            answer=row["answer"], anchors=anchors, metadata=md,
                                            temperature=temperature, seed=judge_seed, max_tokens=max_tokens))
    return reqs


def rubric_requests(rubric: Rubric, answers: pd.DataFrame, variants: Sequence[str] = DEFAULT_VARIANTS, *,
                    samples: int = 1, temperature: float = 0.0) -> list:
    """Requests grading ``answers`` (columns item_id, answer, optional gold) against a MeowKit rubric, anchors
    from the rubric's own few-shot examples (:func:`evallab.rubrics.rubric_anchor_set`; k = what the rubric has).

    The rubric text is its Intent and Criteria, the pass criterion its Grading PASS row, the fail criteria its
    Grading FAIL row and its anti-patterns (rule 7: any one fails).
    """
    from evallab.judges.prompts import PROMPT_VERSION, Anchor, build_pointwise
    from evallab.rubrics import rubric_anchor_set

    text = (rubric.sections.get("Intent", "").strip() + "\n\nCriteria:\n" +
            "\n".join(f"- {c}" for c in rubric.criteria())).strip()
    passes = [rubric.grading.get("PASS", "")] if rubric.grading.get("PASS") else rubric.criteria()
    fails = ([rubric.grading["FAIL"]] if rubric.grading.get("FAIL") else []) + list(rubric.anti_patterns)
    reqs = []
    for v in variants:
        chosen = rubric_anchor_set(rubric, v)
        for _, row in answers.iterrows():
            for s in range(samples):
                md = {"item_id": row["item_id"], "dataset": f"meowkit/{rubric.name}", "strategy": PROMPT_VERSION,
                      "anchor_set": v, "order": "", "sample": s, "gold": row.get("gold", pd.NA),
                      "anchor_sources": ";".join(a.source for a in chosen)}
                reqs.append(build_pointwise(rubric=text, pass_criteria=passes, fail_criteria=fails,
                                            answer=row["answer"], anchors=[Anchor(a.text, a.verdict) for a in chosen],
                                            metadata=md, temperature=temperature))
    return reqs


def run_experiment(judge, items: pd.DataFrame | None = None, variants: Sequence[str] = DEFAULT_VARIANTS, *,
                   samples: int = 1, k: int = 4, seed: int = 0, temperature: float = 0.0,
                   max_items: int | None = None, record_dir: str | Path | None = None,
                   progress: bool = False) -> pd.DataFrame:
    """Run the anchor-set experiment with ``judge`` and return the tidy verdict table.

    Parameters
    ----------
    judge : any :class:`evallab.judges.Judge` (live, replay, or pointed at the local simulated server).
    items : keryx items (default :func:`evallab.datasets.load_keryx_calibration`, 136 items).
    variants, samples, k, seed, temperature : see :func:`build_requests`.
    max_items : keep the first ``max_items`` scenarios' items (all 4 answers each; anchors are still drawn from
        every other scenario of ``items``); ``None`` or 0 = all.
    record_dir : when set, the replies are appended to ``<record_dir>/verdicts.jsonl`` as they arrive (a rerun
        resumes) and the run is written as a keryx-format recording ``<record_dir>/anchor-inflation.json`` (one entry
        per request digest, kind ``<answer kind>@<anchor set>``) — replay it offline with
        ``evallab.judges.make_judge(replay_dir=record_dir)``.

    Returns
    -------
    DataFrame: the tidy verdict table, plus columns scenario_id, kind, anchor_sources.
    """
    from evallab.datasets import load_keryx_calibration
    from evallab.judges import run_jobs

    items = load_keryx_calibration() if items is None else items
    if max_items:
        keep = list(dict.fromkeys(items["scenario_id"]))[:int(max_items)]
        sub = items[items["scenario_id"].isin(keep)]
    else:
        sub = items
    reqs = build_requests(items, variants, samples=samples, k=k, seed=seed, temperature=temperature)
    wanted = set(sub["item_id"])
    reqs = [r for r in reqs if r.metadata["item_id"] in wanted]
    if record_dir:
        rd = Path(record_dir)
        rd.mkdir(parents=True, exist_ok=True)
        return run_jobs(judge, reqs, out=rd / VERDICTS_FILE, progress=progress, record=rd / RECORDING_FILE)
    return run_jobs(judge, reqs, progress=progress)


# --------------------------------------------------------------------------------------------- estimators
def _prep(df: pd.DataFrame) -> pd.DataFrame:
    need = {"item_id", "anchor_set", "verdict"}
    missing = sorted(need - set(df.columns))
    if missing:
        raise DataError(f"verdict table lacks column(s) {missing}", column=missing[0])
    d = df.copy()
    if "sample" not in d.columns:
        d["sample"] = 0
    if "gold" not in d.columns:
        d["gold"] = pd.NA
    v = d["verdict"].astype("string").str.lower()
    g = d["gold"].astype("string").str.lower()
    parsed = v.notna()
    d["_parsed"] = parsed.astype(int)
    d["_pass"] = (parsed & (v == "pass")).astype(int)
    gp = parsed & g.notna()
    d["_gold_n"] = gp.astype(int)
    d["_correct"] = (gp & (v == g)).fillna(False).astype(int)
    gf = parsed & (g == "fail")
    d["_gf_n"] = gf.fillna(False).astype(int)
    d["_gf_pass"] = (gf & (v == "pass")).fillna(False).astype(int)
    d["_v"] = v
    return d


_CNT = ["_parsed", "_pass", "_gold_n", "_correct", "_gf_n", "_gf_pass"]


def _per_item(g: pd.DataFrame) -> pd.DataFrame:
    return g.groupby("item_id", observed=True)[_CNT].sum()


def _r(num: np.ndarray, den: np.ndarray) -> float:
    s = den.sum()
    return float(num.sum() / s) if s else NAN


def _boot(arrays: Sequence[np.ndarray], fn, *, n_resamples: int, confidence: float, seed: int
          ) -> tuple[float, float]:
    """Percentile bootstrap over items (rows resampled jointly across ``arrays``):
    :func:`evallab.stats.bootstrap_paired`; NaN when the statistic itself is undefined on the data."""
    with np.errstate(invalid="ignore", divide="ignore"):
        point = fn(*[np.asarray(a, dtype=float) for a in arrays], axis=-1)
    if not np.isfinite(point):
        return NAN, NAN
    return stats.bootstrap_paired(arrays, fn, n_resamples=n_resamples, confidence=confidence, seed=seed)


def _ratio_fn(n, d, axis=-1):
    s = d.sum(axis)
    return np.where(s > 0, n.sum(axis) / np.where(s > 0, s, 1), np.nan)


def _inflation_fn(nv, dv, nb, db, axis=-1):
    rv, rb = _ratio_fn(nv, dv, axis), _ratio_fn(nb, db, axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(rb > 0, rv / np.where(rb > 0, rb, 1) - 1, np.nan)


def _diff_fn(nv, dv, nb, db, axis=-1):
    return _ratio_fn(nv, dv, axis) - _ratio_fn(nb, db, axis)


def _majority(g: pd.DataFrame) -> pd.Series:
    """Per item: share of its parsed replies that are ``pass`` (NaN when none parsed)."""
    it = _per_item(g)
    return (it["_pass"] / it["_parsed"].where(it["_parsed"] > 0)).astype(float)


def _paired_verdicts(a: pd.DataFrame, b: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """One verdict pair per item for McNemar: each item's majority verdict (pass / not pass) across its parsed
    samples in anchor set ``a`` and in ``b``.

    McNemar's test assumes independent pairs; the samples of one item are not, so they are reduced to the
    item's majority before pairing. Items parsed in both sets whose samples split evenly (a tie: pass share
    exactly 0.5) in either set are dropped and counted.

    Returns
    -------
    (DataFrame with columns item_id, _v_a, _v_b in {"pass", "fail"}, one row per item; number of tied items
    dropped).
    """
    sa, sb = _majority(a), _majority(b)
    both = sa.index.intersection(sb.index)
    sa, sb = sa.loc[both], sb.loc[both]
    parsed = sa.notna() & sb.notna()
    sa, sb = sa[parsed], sb[parsed]
    tie = (sa == 0.5) | (sb == 0.5)
    sa, sb = sa[~tie], sb[~tie]
    pv = pd.DataFrame({"item_id": sa.index, "_v_a": np.where(sa > 0.5, "pass", "fail"),
                       "_v_b": np.where(sb > 0.5, "pass", "fail")})
    return pv, int(tie.sum())


def _groups(d: pd.DataFrame, by: Sequence[str]):
    by = [c for c in by if c in d.columns]
    if not by:
        yield {}, d
        return
    for key, g in d.groupby(by, dropna=False, observed=True, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        yield dict(zip(by, key, strict=True)), g


def pass_rate(df: pd.DataFrame, by: Sequence[str] = ("judge",), *, confidence: float = 0.95,
              n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Pass rate per group × anchor set.

    Returns
    -------
    DataFrame: ``by`` + anchor_set, items, replies, unparsed, passes, pass_rate in [0, 1] (share of parsed
    replies that are ``pass``), pass_rate_low/high (percentile bootstrap over items of the ratio of sums,
    :func:`evallab.stats.bootstrap_ratio`).
    """
    d = _prep(df)
    rows = []
    for key, g in _groups(d, by):
        for v, gv in g.groupby("anchor_set", sort=False, observed=True):
            it = _per_item(gv)
            r = dict(key, anchor_set=v, items=len(it), replies=len(gv), unparsed=int(len(gv) - gv["_parsed"].sum()),
                     passes=int(it["_pass"].sum()), pass_rate=_r(it["_pass"].to_numpy(), it["_parsed"].to_numpy()))
            r["pass_rate_low"], r["pass_rate_high"] = stats.bootstrap_ratio(
                it["_pass"].to_numpy(), it["_parsed"].to_numpy(), n_resamples=n_resamples, confidence=confidence,
                seed=seed)
            rows.append(r)
    return pd.DataFrame(rows)


def inflation_table(df: pd.DataFrame, *, baseline: str = "balanced", variants: Sequence[str] | None = None,
                    by: Sequence[str] = ("judge",), confidence: float = 0.95, n_resamples: int = 1000,
                    seed: int = 0) -> pd.DataFrame:
    """Inflation, false-pass rate and agreement with gold per anchor set against ``baseline``.

    Each variant is compared with the baseline on the items both were judged on (within each ``by`` group).

    Parameters
    ----------
    df : tidy verdict table with ``anchor_set``, ``verdict`` (pass/fail, NA = unparsed), ``gold`` (pass/fail or
        NA), ``item_id``, ``sample``.
    baseline : the anchor set the others are compared with (``balanced``: alternating, PASS first).
    variants : anchor sets to report (default every one present, baseline first).
    by : grouping columns (default per judge).

    Returns
    -------
    DataFrame, one row per group × anchor set (baseline row first, with NaN comparisons):
        ``items``, ``replies``, ``unparsed``; ``pass_rate`` (+ ``_low``/``_high``); ``inflation`` =
        pass_rate / baseline pass_rate − 1 (+ ``_low``/``_high``; −1 .. +inf, 0 = none);
        ``false_pass_rate`` = share of parsed replies on gold-FAIL items that are ``pass`` (+ CI);
        ``delta_false_pass`` vs baseline (+ CI); ``agreement`` = share of parsed replies equal to gold (+ CI);
        ``delta_agreement`` (+ CI); ``mcnemar_b`` (items: variant pass, baseline not pass), ``mcnemar_c``
        (variant not pass, baseline pass), ``mcnemar_p``, ``mcnemar_ties`` — McNemar's exact test on ONE pair per
        item (its samples are not independent): each item's majority verdict across its parsed samples in the
        variant and in the baseline; an item whose samples split evenly (pass share 0.5) in either set is dropped
        and counted in ``mcnemar_ties``. Intervals: percentile bootstrap over items, variant and baseline resampled
        together (``scipy.stats.bootstrap``, paired).

    Raises
    ------
    DataError
        When the table lacks a needed column or the baseline anchor set is absent.
    """
    d = _prep(df)
    if not (d["anchor_set"] == baseline).any():
        raise DataError(f"baseline anchor set {baseline!r} is absent; present: "
                        f"{sorted(d['anchor_set'].dropna().unique())}", column="anchor_set")
    present = list(dict.fromkeys(d["anchor_set"].dropna()))
    wanted = [baseline] + [v for v in (variants or present) if v != baseline and v in present]
    kw = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    rows = []
    for key, g in _groups(d, by):
        gb = g[g["anchor_set"] == baseline]
        if gb.empty:
            continue
        base_items = _per_item(gb)
        for v in wanted:
            gv = g[g["anchor_set"] == v]
            if gv.empty:
                continue
            it = _per_item(gv)
            common = it.index.intersection(base_items.index)
            x, b = it.loc[common], base_items.loc[common]
            gv = gv[gv["item_id"].isin(common)]
            r = dict(key, anchor_set=v, baseline=baseline, items=len(common), replies=len(gv),
                     unparsed=int(len(gv) - gv["_parsed"].sum()))
            for name, num, den in (("pass_rate", "_pass", "_parsed"), ("false_pass_rate", "_gf_pass", "_gf_n"),
                                   ("agreement", "_correct", "_gold_n")):
                r[name] = _r(x[num].to_numpy(), x[den].to_numpy())
                r[f"{name}_low"], r[f"{name}_high"] = _boot([x[num], x[den]], _ratio_fn, **kw)
            arrays = [x["_pass"], x["_parsed"], b["_pass"], b["_parsed"]]
            if v == baseline:
                for c in ("inflation", "delta_false_pass", "delta_agreement"):
                    r[c] = r[f"{c}_low"] = r[f"{c}_high"] = NAN
                r["mcnemar_b"] = r["mcnemar_c"] = r["mcnemar_ties"] = 0
                r["mcnemar_p"] = NAN
            else:
                r["inflation"] = float(_inflation_fn(*(np.asarray(a, float) for a in arrays)))
                r["inflation_low"], r["inflation_high"] = _boot(arrays, _inflation_fn, **kw)
                for c, num, den in (("delta_false_pass", "_gf_pass", "_gf_n"), ("delta_agreement", "_correct",
                                                                                 "_gold_n")):
                    arr = [x[num], x[den], b[num], b[den]]
                    r[c] = float(_diff_fn(*(np.asarray(a, float) for a in arr)))
                    r[f"{c}_low"], r[f"{c}_high"] = _boot(arr, _diff_fn, **kw)
                pv, ties = _paired_verdicts(gv, gb[gb["item_id"].isin(common)])
                m = stats.mcnemar(int(((pv["_v_a"] == "pass") & (pv["_v_b"] != "pass")).sum()),
                                  int(((pv["_v_a"] != "pass") & (pv["_v_b"] == "pass")).sum()))
                r["mcnemar_b"], r["mcnemar_c"], r["mcnemar_p"] = m["b"], m["c"], m["pvalue"]
                r["mcnemar_ties"] = ties
            rows.append(r)
    cols = [*[c for c in by if c in d.columns], "anchor_set", "baseline", "items", "replies", "unparsed"]
    for c in ("pass_rate", "inflation", "false_pass_rate", "delta_false_pass", "agreement", "delta_agreement"):
        cols += [c, f"{c}_low", f"{c}_high"]
    cols += ["mcnemar_b", "mcnemar_c", "mcnemar_p", "mcnemar_ties"]
    return pd.DataFrame(rows, columns=cols)


def position_priming(df: pd.DataFrame, *, primed: str = "fail-last", baseline: str = "balanced",
                     by: Sequence[str] = ("judge",), confidence: float = 0.95, n_resamples: int = 1000,
                     seed: int = 0) -> pd.DataFrame:
    """Verdict shift between grouped FAIL-last anchors and alternating anchors (spec "Position bias", rule 5).

    Returns
    -------
    DataFrame, one row per group: ``primed``, ``baseline``, ``items``, ``pairs`` (items paired on their
    majority verdict across parsed samples, as in :func:`inflation_table`), ``ties`` (items dropped because their
    samples split evenly in either set), ``pass_rate_primed``, ``pass_rate_baseline``, ``shift`` =
    pass_rate_primed − pass_rate_baseline in [−1, 1] (negative = FAIL primed) with ``shift_low``/``shift_high``
    (paired percentile bootstrap over items, all replies), ``flip_rate`` = share of paired items whose majority
    verdict differs, ``to_fail`` (items: baseline pass → primed not pass), ``to_pass`` (baseline not pass →
    primed pass), ``mcnemar_p`` (exact McNemar on those item pairs).

    Raises
    ------
    DataError
        When either anchor set is absent.
    """
    d = _prep(df)
    for v in (primed, baseline):
        if not (d["anchor_set"] == v).any():
            raise DataError(f"anchor set {v!r} is absent; present: {sorted(d['anchor_set'].dropna().unique())}",
                            column="anchor_set")
    rows = []
    for key, g in _groups(d, by):
        gp, gb = g[g["anchor_set"] == primed], g[g["anchor_set"] == baseline]
        if gp.empty or gb.empty:
            continue
        ip, ib = _per_item(gp), _per_item(gb)
        common = ip.index.intersection(ib.index)
        x, b = ip.loc[common], ib.loc[common]
        arrays = [x["_pass"], x["_parsed"], b["_pass"], b["_parsed"]]
        r = dict(key, primed=primed, baseline=baseline, items=len(common))
        pv, ties = _paired_verdicts(gp[gp["item_id"].isin(common)], gb[gb["item_id"].isin(common)])
        r["pairs"], r["ties"] = len(pv), ties
        r["pass_rate_primed"] = _r(x["_pass"].to_numpy(), x["_parsed"].to_numpy())
        r["pass_rate_baseline"] = _r(b["_pass"].to_numpy(), b["_parsed"].to_numpy())
        r["shift"] = r["pass_rate_primed"] - r["pass_rate_baseline"]
        r["shift_low"], r["shift_high"] = _boot(arrays, _diff_fn, n_resamples=n_resamples, confidence=confidence,
                                                seed=seed)
        to_fail = int(((pv["_v_a"] != "pass") & (pv["_v_b"] == "pass")).sum())
        to_pass = int(((pv["_v_a"] == "pass") & (pv["_v_b"] != "pass")).sum())
        r["flip_rate"] = float((pv["_v_a"] != pv["_v_b"]).mean()) if len(pv) else NAN
        r["to_fail"], r["to_pass"] = to_fail, to_pass
        r["mcnemar_p"] = stats.mcnemar(to_pass, to_fail)["pvalue"]
        rows.append(r)
    return pd.DataFrame(rows)
