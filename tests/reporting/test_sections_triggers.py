"""Report 04's sections (evallab.reporting.sections.triggers) against computations made here: the bundled keryx
catalog read with the json module and scored with a plain re-implementation of data/keryx/SOURCE.md, scipy's
bootstrap, scikit-learn's F1 / average precision / ROC AUC on the (probe, skill) pairs, and small hand-made catalogs
shaped unlike keryx's (no triggers, no probe at all, one category, every trigger routed right, one scorer)."""

from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score

from evallab.paths import data_dir
from evallab.reporting._context import Report, Shown
from evallab.reporting._params import ParameterError
from evallab.reporting.sections import triggers as sections
from evallab.skills._catalogs import catalog_from_records
from evallab.skills._thresholds import pair_scores
from evallab.skills._trigger_loo import stripping_effect, trigger_accuracy

# the plain tokenizer of tests/skills/test_triggers.py (tests/ is not a package)
_spec = importlib.util.spec_from_file_location("_plain_triggers", Path(__file__).parents[1] / "skills" / "test_triggers.py")
_plain = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_plain)

KERYX = data_dir("catalogs") / "keryx_bundled_core.jsonl"


def sentences(sec) -> list[str]:
    return [f.sentence for f in sec.findings]


def texts(sec) -> list[str]:
    return [x for x in sec.items if isinstance(x, str)]


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def bounds(lo: float, hi: float) -> str:
    return f"[{100 * lo:.1f}, {100 * hi:.1f}]"


def plain_loo(records: list[dict]) -> pd.DataFrame:
    """checkSkillSelectedLeaveOneOut from SOURCE.md for every trigger: own score on the catalog with only that
    trigger removed, whether another category strictly outscores it, the description-only score on the whole
    catalog (idf = ln((n + 1)/(df + 1)) + 1 over the query's tokens)."""
    full = [_plain.plain_entry(r, "full", True) for r in records]
    desc = [_plain.plain_entry(r, "description-only", True) for r in records]
    cats = [r["catalog_id"].split("/")[0] for r in records]
    rows = []
    for i, r in enumerate(records):
        for t in r.get("triggers", []):
            reduced = dict(r, triggers=[x for x in r["triggers"] if x != t])
            entries = full[:i] + [_plain.plain_entry(reduced, "full", True)] + full[i + 1:]
            s = [_plain.plain_score(t, entries, k) for k in range(len(entries))]
            outranked = any(cats[k] != cats[i] and s[k] > s[i] + 1e-12 for k in range(len(s)))
            d = _plain.plain_score(t, desc, i)
            rows.append({"skill": r["catalog_id"], "own": s[i], "outranked": outranked, "desc": d,
                         "selected": s[i] >= 0.30 and not outranked and d >= 0.12})
    return pd.DataFrame(rows)


def skill_bootstrap(num, den, n_resamples=1000, seed=0):
    ci = stats.bootstrap((np.asarray(num, float), np.asarray(den, float)),
                         lambda a, b, axis=-1: a.sum(axis) / b.sum(axis), paired=True, vectorized=True,
                         n_resamples=n_resamples, method="percentile",
                         random_state=np.random.default_rng(seed)).confidence_interval
    return ci.low, ci.high


@pytest.fixture(autouse=True)
def _close_figures():
    """The sections draw figures that a report would show and close; here they are closed after each test."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture(scope="module")
def records():
    return [json.loads(x) for x in KERYX.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.fixture(scope="module")
def study():
    return sections.load_trigger_study("keryx")


@pytest.fixture(scope="module")
def plain(records):
    return plain_loo(records)


# ------------------------------------------------------------------------------------------- the keryx catalog
def test_catalog_sentence_counts_by_hand(study, records):
    sec = sections.catalog_section(study)
    n_trig = sum(len(r.get("triggers", [])) for r in records)
    n_use = sum(1 for r in records if not r.get("triggers") and "use when" in r["description"].lower())
    n_cat = len({r["catalog_id"].split("/")[0] for r in records})
    assert texts(sec) == [f"keryx_bundled_core.jsonl: {len(records)} skills, {n_cat} categories, {n_trig} trigger "
                          f"probes (each left out in turn) and {n_use} 'Use when' probes (cut from a description, "
                          "nothing left out: reported apart); scorer keryx, exclusion stripping on."]
    assert sec.metrics == {"catalog": "keryx_bundled_core.jsonl", "scorer": "keryx", "strip_exclusions": True,
                           "skills": 64, "trigger_probes": 279, "description_probes": 18}


def test_leave_one_out_217_of_279_with_a_skill_bootstrap(study, plain):
    sec = sections.leave_one_out_section(study, n_resamples=200)  # at least 1,000 resamples when on
    k, n = int(plain.selected.sum()), len(plain)
    assert (k, n) == (217, 279)
    per = plain.assign(s=plain.selected.astype(float), n=1.0).groupby("skill")[["s", "n"]].sum()
    lo, hi = skill_bootstrap(per.s, per.n)
    [s] = sentences(sec)
    assert s.startswith(f"Leave-one-out, 217 of 279 trigger probes from {len(per)} skills route back to their own "
                        f"skill with the keryx scorer: {pct(k / n)} {bounds(lo, hi)} (95% CI, skill bootstrap "
                        "(percentile, 1,000 resamples), n = 279 probes).")
    assert "The 18 'Use when' probes" in s and "(18 selected)" in s
    assert sec.metrics["loo_trigger_selected"] == 217 and sec.metrics["loo_failures"] == 62
    assert sec.metrics["loo_trigger_accuracy"] == pytest.approx(217 / 279)
    assert (sec.metrics["loo_trigger_accuracy_low"], sec.metrics["loo_trigger_accuracy_high"]) == pytest.approx(
        (lo, hi))
    [t] = sec.tables
    assert list(t.table["kind"]) == ["trigger", "use_when"]  # never pooled
    assert sec.conclusions == [f"Leave-one-out, {pct(k / n)} {bounds(lo, hi)} of the 279 trigger probes (217) select "
                               "their own skill; 62 fail."]
    assert any("18 'Use when' probes are counted apart" in c for c in sec.caveats)


def test_failures_reasons_counted_with_the_plain_scorer(study, plain):
    sec = sections.failures_section(study)
    f = plain[~plain.selected]
    out, weak = f.outranked, f.desc < 0.12
    both, low = int((out & weak).sum()), int((~out & ~weak).sum())
    assert both and low  # the keryx catalog has both kinds
    assert sentences(sec) == [f"{len(f)} of {len(plain)} trigger probes fail leave-one-out: {int(out.sum())} are taken "
                              f"by a skill of another category and {int(weak.sum())} are not supported by their own "
                              f"skill's description (description score < 0.12), {both} of them both; {low} only score "
                              "below 0.30."]
    assert sec.findings[0].value == pytest.approx(len(f) / len(plain))
    [t] = sec.tables
    assert len(t.table) == len(f) and t.csv_name == "loo_failures"
    assert (t.table["outranked_by"] == "none").sum() == int((~out).sum())


def test_skill_accuracy_mean_over_skills_with_triggers(study):
    sec = sections.skill_accuracy_section(study)
    _, detail = trigger_accuracy(study.catalog, probes=study.triggers)
    acc = detail.groupby("skill_id")["correct"].mean()
    acc = acc[detail[detail.kind == "positive"].skill_id.unique()]
    lo, hi = skill_bootstrap(acc.to_numpy(), np.ones(len(acc)))
    [s] = sentences(sec)
    assert s.startswith(f"Mean per-skill trigger accuracy is {pct(acc.mean())} {bounds(lo, hi)} (95% CI, skill "
                        f"bootstrap (percentile, 1,000 resamples), n = {len(acc)} skills) over the {len(acc)} skills "
                        "with triggers")
    assert s.endswith(f"{int((acc >= 1).sum())} are perfect.")
    assert sec.metrics["mean_skill_trigger_accuracy"] == pytest.approx(acc.mean())
    assert sec.tables[0].caption == f"Per-skill trigger accuracy: the 15 worst of {len(acc)} skills"


def test_thresholds_headline_and_accuracy_beside_its_base_rate(study):
    sec = sections.thresholds_section(study, n_resamples=30, n_splits=3)
    pairs = pair_scores(study.catalog, study.triggers)
    y, d = pairs.label.to_numpy(), pairs.d_select.to_numpy()
    f1 = [f1_score(y, d >= t) for t in study.grid]
    best = int(np.argmax(f1))  # the first maximiser: the smallest threshold among ties
    at_keryx = f1_score(y, d >= 0.30)
    fp, kfp = int(((d >= study.grid[best]) & (y == 0)).sum()), int(((d >= 0.30) & (y == 0)).sum())
    neg = 1 - y.mean()
    head, acc = sentences(sec)
    assert head.startswith(f"Over {len(pairs):,} (trigger probe, skill) pairs ({int(y.sum())} positive), the "
                           f"F1-optimal selection threshold is {study.grid[best]:.2f} [")
    assert "skill bootstrap (percentile, 30 resamples)" in head
    assert f"it reaches F1 {f1[best]:.3f} [" in head and f"({fp} false positives) against {at_keryx:.3f} ({kfp} " \
        "false positives) at keryx's 0.30; selecting no skill scores 0.000." in head
    accs = [np.mean((d >= t) == y) for t in study.grid]
    assert acc == (f"Plain accuracy is {max(accs):.3f} at its best selection threshold "
                   f"({study.grid[int(np.argmax(accs))]:.2f}) and {np.mean((d >= 0.30) == y):.3f} at keryx's 0.30; "
                   f"{pct(neg)} of the {len(pairs):,} pairs are negatives, so selecting no skill at all already scores "
                   f"{neg:.3f} — plain accuracy cannot tell a working threshold from selecting nothing.")
    m = sec.metrics
    assert m["select_threshold"] == study.grid[best] and m["select_value"] == pytest.approx(f1[best])
    assert m["select_fp_at_keryx"] == kfp and isinstance(m["select_fp_at_keryx"], int)
    assert m["accuracy_base_rate"] == pytest.approx(neg) and m["positive_pairs"] == 279
    assert {(r["target"], r["objective"]) for r in m["tuned"]} >= {("use", "mcc"), ("support", "f1")}
    assert len(sec.tables) == 1 and sum(hasattr(x, "savefig") for x in sec.items) == 1


def test_curves_average_precision_against_the_base_rate(study):
    sec = sections.curves_section(study)
    pairs = study.pairs
    y, d = pairs.label, pairs.d_select
    ap, auc = average_precision_score(y, d), roc_auc_score(y, d)
    neg, pos = int((y == 0).sum()), int(y.sum())
    assert sentences(sec) == [
        f"The select score (keryx scorer) ranks own skills with average precision {ap:.3f} against a base rate of "
        f"{pct(pos / len(y))} ({pos} of {len(y):,} pairs positive: what a scorer ranking at random reaches); its ROC "
        f"AUC is {auc:.3f}, but it counts false positives as a share of the {neg:,} negative pairs, where a "
        f"false-positive rate of 1% is already {round(neg / 100)} wrong selections against {pos} right ones."]
    assert sec.findings[0].value == pytest.approx(ap)  # the headline is average precision, not ROC AUC
    assert sec.metrics == {"select_roc_auc": pytest.approx(auc), "select_average_precision": pytest.approx(ap)}


def test_scorers_headlined_by_average_precision_and_best_f1_not_roc_auc(study):
    sec = sections.scorers_section(study, ["keryx", "bm25"], n_resamples=30)
    got = {}
    for name in ("keryx", "bm25"):
        p = pair_scores(study.catalog, study.triggers, scorer=name)
        y, d = p.label.to_numpy(), p.d_select.to_numpy()
        got[name] = {"ap": average_precision_score(y, d), "auc": roc_auc_score(y, d),
                     "f1": max(f1_score(y, d >= t) for t in study.grid), "base": y.mean()}
    assert got["bm25"]["ap"] > got["keryx"]["ap"] and got["keryx"]["auc"] > got["bm25"]["auc"]  # the defect's shape
    ap, f1, auc = sentences(sec)
    assert ap.startswith(f"On the same 279 trigger probes ({len(study.pairs):,} (probe, skill) pairs, "
                         f"{pct(got['keryx']['base'])} of them positive: the average precision of a scorer ranking at "
                         f"random), bm25 has the highest average precision: {got['bm25']['ap']:.3f} [")
    assert f"; keryx {got['keryx']['ap']:.3f}; keryx is the lowest of 2 (bm25 − keryx: " \
           f"{got['bm25']['ap'] - got['keryx']['ap']:.3f} [" in ap
    assert "paired skill bootstrap (percentile, 30 resamples)" in ap
    assert f1.startswith(f"At each scorer's own F1-best threshold, bm25 has the highest F1: {got['bm25']['f1']:.3f} [")
    assert f"keryx {got['keryx']['f1']:.3f}; keryx is the lowest of 2" in f1
    assert auc.startswith(f"ROC AUC orders the scorers differently (keryx {got['keryx']['auc']:.3f}, bm25 "
                          f"{got['bm25']['auc']:.3f}); it is shown beside average precision and the best F1, not as "
                          "the headline")
    # the first finding (the index's headline) carries average precision
    assert sec.findings[0].value == pytest.approx(got["bm25"]["ap"])
    assert [r["scorer"] for r in sec.metrics["scorers"]] == ["keryx", "bm25"]
    assert sec.conclusions[0].startswith(f"By average precision (base rate {pct(got['keryx']['base'])}), bm25 ranks "
                                         "own skills best")


def test_stripping_counts_and_paired_difference(study):
    sec = sections.stripping_section(study, n_resamples=200)
    eff = stripping_effect(study.catalog, probes=study.triggers)
    changed = int((eff.correct_before != eff.correct_after).sum())
    b, a = eff.correct_before.mean(), eff.correct_after.mean()
    [s] = sentences(sec)
    assert s.startswith(f"Stripping exclusion clauses changes {changed} of {len(eff)} probe verdicts "
                        f"({(eff.kind == 'positive').sum()} trigger probes, {(eff.kind == 'negative').sum()} "
                        f"negatives); correct verdicts go from {pct(b)} to {pct(a)}: {100 * (a - b):+.1f} pp [")
    assert "paired skill bootstrap (percentile, 1,000 resamples), n = 471 probes" in s
    assert sec.metrics == {"stripping_changed": changed, "stripping_correct_before": pytest.approx(b),
                           "stripping_correct_after": pytest.approx(a)}
    assert len(sec.tables[0].table) == changed


# ----------------------------------------------------------------------------------- hand-made catalogs
USE_WHEN_ONLY = [
    {"catalog_id": "a/one", "name": "one", "description": "Use when you deploy a docker image."},
    {"catalog_id": "b/two", "name": "two", "description": "Use when you load a sql table."},
    {"catalog_id": "b/three", "name": "three", "description": "Formats code."},
]
ONE_CATEGORY = [
    {"catalog_id": "web/alpha", "name": "alpha", "description": "Build react page.",
     "triggers": ["react page", "react form"]},
    {"catalog_id": "web/beta", "name": "beta", "description": "Style react widget.", "triggers": ["css widget"]},
    {"catalog_id": "web/gamma", "name": "gamma", "description": "Load sql table.", "triggers": ["sql table"]},
]


def _study(recs, **kw):
    return sections.TriggerStudy(catalog_from_records(recs, path="hand.jsonl"),
                                 grid=np.round(np.linspace(0, 1, 21), 10), **kw)


def _all(st, scorers=("keryx", "bm25")):
    return [sections.catalog_section(st), sections.leave_one_out_section(st, n_resamples=50),
            sections.failures_section(st), sections.skill_accuracy_section(st, n_resamples=50),
            sections.thresholds_section(st, n_resamples=20, n_splits=2), sections.curves_section(st),
            sections.scorers_section(st, scorers, n_resamples=20), sections.stripping_section(st, n_resamples=50)]


def _no_nan(secs, tmp_path):
    rep = Report("hand", tmp_path)
    for sec in secs:
        for x in sec.items:
            text = x if isinstance(x, str) else getattr(x, "sentence", "")
            if isinstance(x, Shown):
                text = re.sub(r"<[^>]+>", " ", rep.table_html(x.table, x.columns, caption=x.caption))
            assert not re.search(r"\bnan\b", text, re.IGNORECASE), text


def test_a_catalog_without_triggers_says_so_once_per_section(tmp_path):
    st = _study(USE_WHEN_ONLY)
    secs = _all(st)
    _no_nan(secs, tmp_path)
    cat, loo, *rest = secs
    assert cat.metrics["trigger_probes"] == 0 and cat.metrics["description_probes"] == 2
    # the leave-one-out section keeps the "Use when" row (a Wilson interval: one probe per skill), no trigger figure
    assert not loo.findings and loo.metrics["loo_trigger_accuracy"] is None
    assert loo.metrics["description_probes_selected"] == int(loo.tables[0].table.at[0, "selected"])
    assert loo.tables[0].table.at[0, "accuracy_method"] == "Wilson score"
    assert texts(loo)[0].startswith("hand.jsonl has no triggers, so leave-one-out trigger accuracy is not computable")
    for sec in rest:
        assert texts(sec) == [st.no_triggers] and not sec.tables and not sec.findings
    assert rest[2].metrics["pairs"] == 0 and rest[2].metrics["select_threshold"] is None
    assert rest[3].metrics == {"select_roc_auc": None, "select_average_precision": None}


def test_a_catalog_without_any_probe():
    st = _study([{"catalog_id": "a/x", "name": "xxx", "description": "Does things."},
                 {"catalog_id": "b/y", "name": "yyy", "description": "Other things."}])
    sec = sections.leave_one_out_section(st)
    assert texts(sec) == ["hand.jsonl has neither triggers nor 'Use when' clauses, so no probe can be scored and "
                          "leave-one-out accuracy is not computable."]
    assert not sec.tables


def test_one_category_has_no_negative_pairs(tmp_path):
    st = _study(ONE_CATEGORY)
    secs = _all(st)
    _no_nan(secs, tmp_path)
    _, loo, fails, skill, thr, curves, scorers, strip = secs
    # every trigger routes back (no other category to outrank it): 4 of 4 over 3 skills, all at the same share
    assert loo.metrics["loo_trigger_selected"] == 4 and "Wilson score on 3 skills" in sentences(loo)[0]
    assert texts(fails) == ["Every one of the 4 trigger probes routes back to its own skill leave-one-out; no probe "
                            "fails."] and not fails.tables
    assert "no negatives: no skill of another category to draw them from" in sentences(skill)[0]
    assert "Every pair of hand.jsonl is positive" in texts(thr)[0]
    assert "cannot tell" not in sentences(thr)[1]  # no base rate to hide behind
    assert texts(curves) == ["The ROC and precision-recall curves are not computable on hand.jsonl: every pair is "
                             "positive (the curves need both classes)."]
    assert texts(scorers)[0].startswith("Average precision and ROC AUC are not computable") and not scorers.tables
    # nothing changes when stripping: the bound from the Wilson interval of 0 of 3 skills, not a point [0, 0]
    assert "bound from the Wilson score interval of 0 of 3 skills changed" in sentences(strip)[0]
    assert texts(strip) == ["No probe changes verdict when the exclusion clauses are stripped."]


def test_one_scorer_and_a_small_catalog(tmp_path):
    recs = [dict(r) for r in _plain.HAND_CATALOG]  # 4 skills in 3 categories, hand-scored in tests/skills/test_triggers.py
    st = _study(recs)
    sec = sections.scorers_section(st, ["keryx"], n_resamples=20)
    _no_nan([sec], tmp_path)
    pairs = pair_scores(st.catalog, st.triggers)
    [s] = sentences(sec)
    assert s.startswith(f"On the same 6 trigger probes ({len(pairs)} (probe, skill) pairs, "
                        f"{pct(pairs.label.mean())} of them positive")
    assert f"the keryx scorer reaches average precision {average_precision_score(pairs.label, pairs.d_select):.3f}" \
        in s
    assert not sec.conclusions  # nothing compared


def test_the_comparison_can_be_skipped_and_parameters_are_checked(study):
    assert texts(sections.scorers_section(study, [])) == ["The scorer comparison was skipped (compare_scorers is "
                                                         "empty)."]
    with pytest.raises(ParameterError, match="objective 'precision'"):
        sections.thresholds_section(study, objective="precision")
    with pytest.raises(ParameterError, match="scorer 'lexical'"):
        sections.load_trigger_study("keryx", scorer="lexical")
    with pytest.raises(ParameterError, match="threshold_grid"):
        sections.load_trigger_study("keryx", threshold_grid=[0, 1])
    assert math.isclose(sections.load_trigger_study("keryx", threshold_grid=[0, 1, 21]).grid[1], 0.05)


def test_the_tuned_scorer_is_the_reference_of_the_differences():
    st = _study([dict(r) for r in _plain.HAND_CATALOG], scorer="bm25")
    sec = sections.scorers_section(st, ["keryx", "bm25"], n_resamples=20)
    rows = {r["scorer"]: r for r in sec.metrics["scorers"]}
    assert {r["reference"] for r in rows.values()} == {"bm25"} and math.isnan(rows["bm25"]["delta_f1"])
    assert rows["keryx"]["delta_average_precision"] == pytest.approx(rows["keryx"]["average_precision"]
                                                                     - rows["bm25"]["average_precision"])
    assert sec.tables[0].columns["delta_average_precision"] == "Δ average precision vs bm25"
