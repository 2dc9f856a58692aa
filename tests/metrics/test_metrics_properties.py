"""Property-based tests (hypothesis) of every public estimator of :mod:`evallab.metrics` on random valid tidy
verdict tables: random items, one or both presentation orders or an unrecorded order, 1–3 samples, random verdicts
including unparsed ones, gold on all, some or no items, 1–3 judges.

Each estimator must return finite figures, or NaN with a non-empty ``note`` saying why, or raise a documented
:class:`evallab.errors.EvallabError` subclass — never an exception from inside pandas, numpy or scipy."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from evallab import verdicts as V  # noqa: E402
from evallab.errors import EvallabError  # noqa: E402
from evallab.metrics import _agreement as A  # noqa: E402
from evallab.metrics import _design as D  # noqa: E402
from evallab.metrics import _drift as DR  # noqa: E402
from evallab.metrics import _evaluators as E  # noqa: E402
from evallab.metrics import _intervals as I  # noqa: E402
from evallab.metrics import _position as P  # noqa: E402

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                    derandomize=True)
KW = dict(n_resamples=20)
PAIRWISE = ["1", "2", "tie", None]


@st.composite
def tables(draw, pointwise: bool = False, min_judges: int = 1):
    n_items = draw(st.integers(1, 6))
    judges = [f"J{i}" for i in range(draw(st.integers(min_judges, 3)))]
    orders = [""] if pointwise else draw(st.sampled_from([["ab", "ba"], ["ab"], [""], ["ab", "ba"]]))
    samples = draw(st.integers(1, 3))
    gold_mode = draw(st.sampled_from(["all", "some", "none"]))
    values = ["pass", "fail", "warn", None] if pointwise else PAIRWISE
    gold_values = ["pass", "fail"] if pointwise else ["1", "2"]
    rows = []
    for i in range(n_items):
        has_gold = gold_mode == "all" or (gold_mode == "some" and draw(st.booleans()))
        gold = draw(st.sampled_from(gold_values)) if has_gold else None
        subset = draw(st.sampled_from(["A", "B"]))
        for j in judges:
            for o in orders:
                for s in range(samples):
                    if draw(st.integers(0, 9)) == 0 and rows:  # some replies missing altogether
                        continue
                    rows.append(dict(item_id=f"i{i}", subset=subset, judge=j, order=o, sample=s,
                                     verdict=draw(st.sampled_from(values)), gold=gold))
    return V.coerce(pd.DataFrame(rows))


def _note(row) -> str:
    n = row.get("note", "")
    return n if isinstance(n, str) else ""


def check(out: pd.DataFrame, figures, bounds=(0.0, 1.0)):
    """Every figure finite (inside ``bounds``) or NaN with a note; interval bounds ordered and inside ``bounds``."""
    assert isinstance(out, pd.DataFrame) and len(out) >= 1
    lo_b, hi_b = bounds
    for _, row in out.iterrows():
        for f in figures:
            v = float(row[f])
            if np.isnan(v):
                assert _note(row).startswith("not computable") or "not computable" in _note(row), (f, row.to_dict())
            else:
                assert np.isfinite(v) and lo_b - 1e-9 <= v <= hi_b + 1e-9, (f, v)
            for lo, hi in ((f"{f}_low", f"{f}_high"),):
                if lo in row.index and np.isfinite(row[lo]) and np.isfinite(row[hi]):
                    assert lo_b - 1e-9 <= row[lo] <= row[hi] + 1e-12 and row[hi] <= hi_b + 1e-9, (f, row[lo], row[hi])


def run(fn, *args, **kwargs):
    """Call an estimator; a documented EvallabError is an acceptable outcome (returns None)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return fn(*args, **kwargs)
        except EvallabError as e:
            assert str(e)  # says what is wrong
            return None


@SETTINGS
@given(tables())
def test_design_functions(df):
    d = D.describe(df)
    assert d["replies"] == len(df) and isinstance(d["text"], str) and d["text"]
    p = run(D.order_pairs, df, ["judge"])
    if p is not None:
        assert p["has_ab"].sum() == (df["order"] == "ab").sum()


@SETTINGS
@given(tables())
def test_pairwise_statistics_and_accuracy(df):
    out = run(A.pairwise_statistics, df, ["judge"], **KW)
    if out is not None:
        check(out, ["acc_ab", "acc_ba", "acc", "accuracy_pooled", "position_consistency"])
        assert (out["n"] >= 0).all() and (out["no_gold"] >= 0).all()
    else:
        assert not df["order"].isin(["ab", "ba"]).any()  # the documented DesignError: no presentation order
    pub = run(A.pairwise_statistics, df, ["judge"], unparsed="published", n_resamples=0)
    if pub is not None:
        check(pub, ["acc_ab", "acc_ba", "acc", "position_consistency"])
    check(run(A.accuracy, df, ["judge"], **KW), ["accuracy"])


@SETTINGS
@given(tables())
def test_kappa_estimators(df):
    check(run(A.cohen_kappa_vs_gold, df, ["judge"], **KW), ["kappa"], bounds=(-1, 1))
    ja = run(A.judge_agreement, df, **KW)
    check(ja, ["agreement"])
    check(ja, ["kappa"], bounds=(-1, 1))
    check(run(A.fleiss_kappa, df, **KW), ["kappa"], bounds=(-1, 1))
    check(run(A.krippendorff_alpha, df, **KW), ["alpha"], bounds=(-1, 1))


@SETTINGS
@given(tables())
def test_repetition_stability(df):
    out = run(A.repetition_stability, df, ["judge"], **KW)
    check(out, ["unanimity", "flip_rate"])
    check(out, ["repetition_stability"])


@SETTINGS
@given(tables())
def test_position_estimators(df):
    check(run(P.position_consistency, df, ["judge"], **KW), ["position_consistency"])
    pb = run(P.position_bias, df, ["judge"], **KW)
    check(pb, ["position_consistency", "consistent_rate", "biased_first_rate", "biased_second_rate", "error_rate",
               "first_slot_preference"])
    check(pb, ["preference_fairness"], bounds=(-1, 1))
    rates = pb[["consistent_rate", "biased_first_rate", "biased_second_rate", "error_rate"]].dropna()
    assert np.allclose(rates.sum(axis=1), 1.0)
    check(run(P.balanced_position_accuracy, df, ["judge"], **KW), ["bpc_accuracy", "strict_accuracy",
                                                                    "abstention"])


@SETTINGS
@given(tables(), st.sampled_from(["Vanilla_1shot", "Vanilla_2shot"]))
def test_anchor_effect(df, variant):
    two = pd.concat([df.assign(strategy="Vanilla"), df.assign(strategy=variant)], ignore_index=True)
    out = run(P.anchor_effect, two, variants=[variant], **KW)
    if out is not None and len(out):
        check(out, ["first_slot_preference", "accuracy"])


@SETTINGS
@given(tables(min_judges=2))
def test_drift_compare(df):
    rep = run(DR.compare_judges, df, "J0", "J1", by=["subset"], **KW)
    if rep is None:
        return
    for t in (rep.groups, rep.overall):
        assert set(t["status"]) <= set(DR.STATUSES)
        for _, r in t.iterrows():
            if r["both_parsed"]:
                assert 0 <= r["flip_rate"] <= 1 and r["status"] != "untested"
            else:
                assert np.isnan(r["flip_rate"]) and r["status"] == "untested"
            for c in ("baseline_accuracy", "candidate_accuracy"):
                assert np.isnan(r[c]) or 0 <= r[c] <= 1
    assert isinstance(rep.summary(), str)


@SETTINGS
@given(tables(), st.booleans())
def test_evaluator_estimators(df, with_score):
    df = df.assign(generator_2="m")
    if with_score:
        df["score"] = df["verdict"].map({"1": 1.1, "2": 1.8, "tie": 1.5}).astype("Float64")
    check(run(E.win_rates, df, **KW), ["win_rate"])
    check(run(E.evaluator_metrics, df, **KW), ["p_prefer_output_1", "p_prefer_shown_first"])
    items = pd.DataFrame({"item_id": sorted(df["item_id"].unique())})
    items["len_1"] = np.arange(len(items)) * 40 + 10
    items["len_2"] = 200 - np.arange(len(items)) * 40
    check(run(E.evaluator_metrics, df, items, **KW), ["p_prefer_output_1", "p_prefer_longer"])
    check(run(E.length_controlled_win_rates, df, items), ["lc_win_rate"])


@SETTINGS
@given(tables(pointwise=True))
def test_pointwise_tables(df):
    check(run(A.accuracy, df, ["judge"], **KW), ["accuracy"])
    check(run(A.cohen_kappa_vs_gold, df, ["judge"], **KW), ["kappa"], bounds=(-1, 1))
    check(run(A.repetition_stability, df, ["judge"], **KW), ["flip_rate", "unanimity"])
    check(run(A.fleiss_kappa, df, **KW), ["kappa"], bounds=(-1, 1))


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=0, max_size=12),
       st.floats(0.0, 1.0))
def test_interval_functions(cells, threshold):
    num = np.array([min(a, b) for a, b in cells], float)
    den = np.array([b for _, b in cells], float)
    lo, hi = I.ratio_interval(num, den, **KW)
    if den.sum() == 0:
        assert np.isnan(lo) and np.isnan(hi)
    elif np.isfinite(lo):
        assert 0 <= lo <= hi <= 1
    p = I.ratio_test_greater(num, den, threshold)
    assert np.isnan(p) if den.sum() == 0 else 0 <= p <= 1
    lo, hi = I.ratio_difference_interval(num, den, den - num, den, **KW)
    assert (np.isnan(lo) and np.isnan(hi)) or -1 <= lo <= hi <= 1
    m = I.mcnemar(int(num.sum()), int(den.sum()))
    assert 0 <= m["pvalue"] <= 1


ORDER_FREE = [
    (A.pairwise_statistics, dict(by=["judge"])), (A.accuracy, dict(by=["judge"])),
    (A.cohen_kappa_vs_gold, dict(by=["judge"])), (A.judge_agreement, {}), (A.fleiss_kappa, {}),
    (A.krippendorff_alpha, {}), (A.repetition_stability, dict(by=["judge"])),
    (P.position_consistency, dict(by=["judge"])), (P.position_bias, dict(by=["judge"])),
    (P.balanced_position_accuracy, dict(by=["judge"])),
]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(tables(), st.integers(0, 2 ** 16))
def test_row_order_never_changes_a_figure(df, seed):
    shuffled = df.sample(frac=1, random_state=seed)
    for fn, kw in ORDER_FREE:
        a = run(fn, df, **kw, **KW)
        b = run(fn, shuffled, **kw, **KW)
        if a is None or b is None:
            assert a is None and b is None, fn.__name__
            continue
        pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True), obj=fn.__name__)
