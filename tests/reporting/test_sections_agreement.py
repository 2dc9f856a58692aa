"""evallab.reporting.sections.agreement (report 01): every sentence states numbers computed here independently —
the csv module on the bundled LLMBar file, scikit-learn's cohen_kappa_score, statsmodels' Wilson interval and
fleiss_kappa, plain pandas — on the bundled data and on small hand-made tables shaped unlike it (one order, no gold,
one judge, two strategies)."""

from __future__ import annotations

import csv
import re

import numpy as np
import pandas as pd
import pytest
from section_helper import section_text as _text
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa
from statsmodels.stats.proportion import proportion_confint

from evallab import verdicts as V
from evallab.datasets import load_study
from evallab.paths import data_dir
from evallab.reporting.sections import agreement as S

B = 50
KW = dict(n_resamples=B)


@pytest.fixture(scope="module")
def natural():
    return load_study("", "", subsets=["LLMBar/Natural"], strategies=["Vanilla"])


@pytest.fixture(scope="module")
def csv_rows():
    with open(data_dir("llmbar") / "verdicts.csv", newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if r["subset"] == "LLMBar/Natural" and r["strategy"] == "Vanilla"]


def _table(*, orders=("ab", "ba"), gold=True, judges=("A", "B"), strategies=("s1",), n=30, seed=1):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        g = "1" if rng.random() < 0.5 else "2"
        for j in judges:
            for s in strategies:
                for o in orders:
                    v = g if rng.random() < 0.8 else ("1" if g == "2" else "2")
                    rows.append(dict(item_id=f"q{i:02d}", judge=j, strategy=s, order=o, verdict=v,
                                     gold=g if gold else ""))
    return V.coerce(pd.DataFrame(rows))


def _sentences(sec) -> list[str]:
    return [f.sentence for f in sec.findings] + [x for x in sec.items if isinstance(x, str)]


# ------------------------------------------------------------------------------------------ the bundled data
def test_published_section_on_the_bundled_llmbar(natural, tmp_path):
    sec = S.published_section("", "", natural)
    m = sec.metrics
    assert m["published_rows_reproduced"] == m["published_rows"] == 499
    assert m["natural_vanilla_gpt4_acc_published"] == 95.5 and m["natural_vanilla_gpt4_agr_published"] == 95
    assert "499 of 499" in sec.findings[0].sentence
    assert "Acc. 95.5% and Agr. 95 of 100 pairs" in sec.findings[1].sentence
    shown = sec.tables[0].table
    assert set(shown["subset"]) == {"LLMBar/Natural"} and set(shown["strategy"]) == {"Vanilla"}
    assert "nan" not in _text(sec, tmp_path).lower()


def test_published_section_on_a_users_table_renders_nothing_not_even_its_heading(natural, tmp_path, monkeypatch):
    from evallab.reporting._context import Report

    sec = S.published_section("mine.csv", "", _table())
    assert sec.bundled and not sec.items and not sec.metrics and not sec.conclusions
    report = Report("t", tmp_path, user_table="mine.csv")
    assert report.skips(sec)
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: shown.extend(a))
    report.render(sec)
    assert not shown
    # on the bundled LLMBar the section carries its heading and LLMBar's conventions (no longer the notebook's intro)
    bundled = S.published_section("", "", natural)
    assert bundled.items[0] == S.PUBLISHED_HEADING and bundled.items[0].startswith("## Reproducing the published table")
    assert not Report("t", tmp_path).skips(bundled)
    import nbformat

    from evallab.paths import REPO_ROOT

    nb = nbformat.read(str(REPO_ROOT / "notebooks" / "01_judge_agreement.ipynb"), as_version=4)
    md = " ".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "Reproducing the published table" not in md and "statistics.csv" not in md


def test_accuracy_headline_is_the_mean_of_the_two_order_accuracies(natural, csv_rows, tmp_path):
    sec = S.accuracy_section(natural, **KW)
    acc = {}
    for judge in {r["judge"] for r in csv_rows}:
        rs = [r for r in csv_rows if r["judge"] == judge]
        per = []
        for col in ("winner_order_12", "winner_order_21"):
            parsed = [(r[col], r["label"]) for r in rs if r[col]]
            per.append(sum(w == g for w, g in parsed) / len(parsed))
        acc[judge] = sum(per) / 2
    best = max(acc, key=acc.get)
    head = sec.findings[0]
    assert head.sentence.startswith(f"Over the whole table, {best} has the highest Acc. (mean of the two order "
                                    f"accuracies): {100 * acc[best]:.1f}%")
    # every judge's whole-table figure is in the headline, highest first
    order = sorted(acc, key=acc.get, reverse=True)
    assert "(every judge: " + ", ".join(f"{j} {100 * acc[j]:.1f}%" for j in order) + ")" in head.sentence
    assert f"item bootstrap (percentile, {B} resamples), n = 100 items" in head.sentence
    assert head.method == f"item bootstrap (percentile, {B} resamples)"
    assert sec.metrics["best_judge"] == best and sec.metrics["best_strategy"] == "Vanilla"
    assert sec.metrics["best_acc"] == pytest.approx(acc[best])
    assert {r["judge"]: r["acc"] for r in sec.metrics["accuracy"]} == pytest.approx(acc)
    assert any(hasattr(x, "savefig") for x in sec.items)  # the figure
    text = _text(sec, tmp_path)
    assert "nan" not in text.lower() and "Subset" not in text and "Strategy" not in text  # one subset, one strategy


def test_kappa_section_matches_sklearn(natural, tmp_path):
    sec = S.kappa_section(natural, **KW)
    ks = {}
    for j, g in natural[natural["verdict"].notna()].groupby("judge"):
        ks[j] = cohen_kappa_score(g["gold"].astype(str), g["verdict"].astype(str))
    best, worst = max(ks, key=ks.get), min(ks, key=ks.get)
    s = sec.findings[0].sentence
    assert s.startswith(f"Over the whole table, {best} agrees best with gold: Cohen's kappa {ks[best]:.2f}")
    assert s.endswith(f"{worst} {ks[worst]:.2f}).")
    assert "nan" not in _text(sec, tmp_path).lower()


def test_judge_and_panel_sections_on_the_bundled_data(natural, tmp_path):
    sec = S.judge_agreement_section(natural, **KW)
    pairs = {(r["judge_a"], r["judge_b"]): r["kappa"] for r in sec.metrics["judge_agreement"]}
    assert len(pairs) == 15  # 6 judges
    a, b = "ChatGPT", "GPT-4"
    wa = natural[natural["judge"] == a].set_index(["item_id", "order"])["verdict"]
    wb = natural[natural["judge"] == b].set_index(["item_id", "order"])["verdict"]
    both = wa.notna() & wb.reindex(wa.index).notna()
    assert pairs[(a, b)] == pytest.approx(cohen_kappa_score(wa[both].astype(str), wb.reindex(wa.index)[both].astype(str)))
    assert any(hasattr(x, "savefig") for x in sec.items)
    panel = S.panel_section(natural, **KW)
    w = natural.pivot_table(index=["item_id", "order"], columns="judge", values="verdict", aggfunc="first").dropna()
    codes = (w == "2").astype(int).to_numpy()
    assert panel.metrics["fleiss_kappa_whole_table"] == pytest.approx(fleiss_kappa(aggregate_raters(codes)[0]))
    assert panel.metrics["fleiss_kappa_units_whole_table"] == len(w)
    assert panel.metrics["whole_table_strategy"] == "Vanilla"
    assert panel.findings[0].sentence.startswith("Across the 6 judges, over the whole table, Krippendorff's alpha is ")
    assert "(of 15 judge pairs)" in sec.findings[0].sentence  # judge pairs, never "15 pairs" beside replies
    assert "nan" not in (_text(sec, tmp_path) + _text(panel, tmp_path)).lower()


def test_unparsed_section_counts_by_hand(natural, csv_rows):
    sec = S.unparsed_section(natural)
    k = sum((r["winner_order_12"] == "") + (r["winner_order_21"] == "") for r in csv_rows)
    assert sec.metrics["unparsed_replies"] == k and sec.metrics["replies"] == 1200
    assert sec.findings[0].sentence.startswith(f"{k} of 1,200 replies ({100 * k / 1200:.1f}%) could not be parsed")


# ------------------------------------------------------------------------------------- users' tables
def test_one_order_table_says_acc_needs_both_orders_and_headlines_the_pooled_accuracy(tmp_path):
    t = _table(orders=("ab",))
    sec = S.accuracy_section(t, **KW)
    (f,) = sec.findings
    assert "Acc. (the mean of the two order accuracies) is not computable on this table" in f.sentence
    assert "the table records only order ab" in f.sentence and "the pooled accuracy" in f.sentence
    acc = {j: float((g["verdict"] == g["gold"]).mean()) for j, g in t.groupby("judge")}
    best = max(acc, key=acc.get)
    k = int((t[t["judge"] == best]["verdict"] == t[t["judge"] == best]["gold"]).sum())
    lo, hi = proportion_confint(k, 30, method="wilson")
    assert f"highest for {best}: {100 * acc[best]:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] (95% CI, Wilson score, " \
           "n = 30 replies)" in f.sentence
    assert sec.metrics["best_acc"] is None
    assert [t_.caption for t_ in sec.tables] == ["Pooled accuracy against gold per judge (correct / parsed replies)"]
    text = _text(sec, tmp_path)
    assert "nan" not in text.lower() and "subset=" not in text and " on ." not in text


def test_a_judge_asked_in_one_order_beside_two_order_judges_is_named_with_its_pooled_accuracy(tmp_path):
    """The new-user trial of stop 37: Acc. headlined the two-order judges and left the one-order judge out without
    a word; now a sentence names it, why, and its pooled accuracy (hand count, Wilson interval)."""
    two = _table(judges=("A", "B"))
    one = _table(judges=("C",), orders=("ab",), seed=7)
    t = V.coerce(pd.concat([two, one], ignore_index=True))
    sec = S.accuracy_section(t, **KW)
    c = one[one["judge"] == "C"]
    k = int((c["verdict"] == c["gold"]).sum())
    lo, hi = proportion_confint(k, 30, method="wilson")
    said = [x for x in _sentences(sec) if "for C" in x]
    assert said == [f"Acc. is not computable for C (Acc. averages the two presentation orders, and the table records "
                    f"only order ab), so it is not in the headline above; its pooled accuracy (correct / parsed "
                    f"replies, the recorded orders pooled) is {100 * k / 30:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] "
                    f"(95% CI, Wilson score, n = 30 replies)."]
    assert "of 2 judges" in sec.findings[0].sentence
    assert any("Acc. not computable for C" in x for x in sec.conclusions)
    assert "nan" not in _text(sec, tmp_path).lower()


def test_no_gold_table_says_so_in_one_sentence_per_figure(tmp_path):
    t = _table(gold=False)
    acc, kappa = S.accuracy_section(t, **KW), S.kappa_section(t, **KW)
    assert _sentences(acc) == ["Accuracy against gold is not computable on this table: no gold labels."]
    assert _sentences(kappa) == ["Cohen's kappa against gold is not computable on this table: no gold labels."]
    assert not acc.tables and not kappa.tables and not acc.findings
    # agreement between judges needs no gold
    ja = S.judge_agreement_section(t, **KW)
    assert ja.findings and "nan" not in _text(ja, tmp_path).lower()


def test_one_judge_table_says_agreement_between_judges_is_not_computable():
    t = _table(judges=("A",))
    ja, panel = S.judge_agreement_section(t, **KW), S.panel_section(t, **KW)
    assert _sentences(ja) == ["Agreement between judges needs two or more judges on the same items; the table has "
                              "1 judge."]
    assert not ja.tables and ja.metrics["judge_agreement"] == []
    assert _sentences(panel) == ["Agreement across all judges is not computable: needs two or more raters (judge)."]
    assert not panel.tables and panel.metrics["fleiss_kappa_whole_table"] is None


def test_two_strategies_get_a_headline_each_and_none_pooled(tmp_path):
    t = _table(strategies=("s1", "s2"))
    sec = S.accuracy_section(t, **KW)
    heads = [f.sentence for f in sec.findings]
    assert len(heads) == 2 and heads[0].startswith("With strategy s1, ") and heads[1].startswith("With strategy s2, ")
    for s, h in zip(("s1", "s2"), heads, strict=True):
        g = t[t["strategy"] == s]
        acc = {j: np.mean([(x["verdict"] == x["gold"]).mean() for _, x in gj.groupby("order")])
               for j, gj in g.groupby("judge")}
        best = max(acc, key=acc.get)
        other = min(acc, key=acc.get)
        if s == "s1":  # 90% against 70% on 30 items: the intervals stand apart, a winner is named
            assert h.startswith(f"With strategy {s}, over the whole table, {best} has the highest Acc. (mean of the "
                                f"two order accuracies): {100 * acc[best]:.1f}%")
        else:  # both near 80%: the intervals overlap, so no winner is declared (defect 3)
            assert h.startswith(f"With strategy {s}, over the whole table, the judges cannot be told apart on Acc. "
                                "(mean of the two order accuracies) at this n (")
            assert f"best: {best} {100 * acc[best]:.1f}% [" in h and f"], {other} {100 * acc[other]:.1f}% [" in h
    # every headline of every section names its strategy: none pools the two
    for s_ in (sec, S.kappa_section(t, **KW), S.judge_agreement_section(t, **KW), S.panel_section(t, **KW)):
        assert [f.sentence.split(",")[0] for f in s_.findings] == ["With strategy s1", "With strategy s2"]
        assert all(c.startswith("With strategy s") for c in s_.conclusions)
        assert "Strategy" in _text(s_, tmp_path)
    panel = S.panel_section(t, **KW)
    assert panel.metrics["whole_table_strategy"] == "s1"
    w = t[t["strategy"] == "s1"].pivot_table(index=["item_id", "order"], columns="judge", values="verdict",
                                             aggfunc="first")
    codes = (w == "2").astype(int).to_numpy()
    assert panel.metrics["fleiss_kappa_whole_table"] == pytest.approx(fleiss_kappa(aggregate_raters(codes)[0]))


def test_a_judge_named_in_lower_case_keeps_its_name():
    t = _table(judges=("h1", "h2"), orders=("ab",))
    heads = [f.sentence for f in S.kappa_section(t, **KW).findings]
    assert re.search(r"(Over the whole table, |declared best: )(h1|h2)\b", heads[0])
    two = _table(judges=("h1", "h2"), strategies=("s1", "s2"))
    assert re.search(r"(over the whole table, |declared best: )(h1|h2)\b", S.kappa_section(two, **KW).findings[0].sentence)
    assert S.panel_section(two, **KW).conclusions[0].startswith("With strategy s1, judges agree with each other")


# ------------------------------------------------------- issue 26: whole table first, one minimum-size rule
def _subsets_table(sizes=(("big", 40), ("tiny", 5)), seed=2):
    """Two judges, both orders; subset "tiny" has 5 items where judge B is right every time, "big" 40 items."""
    rng = np.random.default_rng(seed)
    rows = []
    for sub, n in sizes:
        for i in range(n):
            g = "1" if rng.random() < 0.5 else "2"
            for j in ("A", "B"):
                for o in ("ab", "ba"):
                    right = True if (sub == "tiny" and j == "B") else rng.random() < (0.8 if j == "A" else 0.6)
                    rows.append(dict(item_id=f"{sub}{i:02d}", subset=sub, judge=j, strategy="s", order=o,
                                     verdict=g if right else ("1" if g == "2" else "2"), gold=g))
    return V.coerce(pd.DataFrame(rows))


def test_whole_table_first_and_a_thin_subset_is_never_headlined(tmp_path):
    t = _subsets_table()
    sec = S.accuracy_section(t, **KW)
    # hand count: Acc. over the whole table = mean over the two orders of correct / replies, per judge
    acc = {j: np.mean([(x["verdict"] == x["gold"]).mean() for _, x in g.groupby("order")]) for j, g in t.groupby("judge")}
    best = max(acc, key=acc.get)
    head = sec.findings[0].sentence
    assert head.startswith("Over the whole table, the judges cannot be told apart on Acc. (mean of the two order "
                           "accuracies) at this n (") and f"declared best: {best} {100 * acc[best]:.1f}% [" in head
    assert "n = 45 items each" in head
    assert sec.metrics["best_judge"] == best
    # B is 100% on the 5-item subset: shown in the table, named as thin, never headlined
    by_subset = [f.sentence for f in sec.findings[1:]]
    assert by_subset and all("tiny" not in s_ for s_ in by_subset)
    assert "on big" in by_subset[0] and "at least 20 items" in by_subset[0]
    thin = [x for x in sec.items if isinstance(x, str) and "fewer than 20 items (min_items)" in x]
    assert thin == ["2 of 4 subset rows rest on fewer than 20 items (min_items): shown, never headlined (A on tiny, "
                    "B on tiny)."]
    assert {r["subset"] for r in sec.metrics["accuracy"]} == {"big", "tiny"}
    kappa = S.kappa_section(t, **KW)
    assert all("tiny" not in f.sentence for f in kappa.findings)
    assert kappa.findings[0].sentence.startswith("Over the whole table, ")
    assert "nan" not in (_text(sec, tmp_path) + _text(kappa, tmp_path)).lower()


def test_min_items_is_a_parameter_and_zero_lets_every_row_be_headlined():
    t = _subsets_table()
    sec = S.accuracy_section(t, min_items=0, **KW)
    assert "B on tiny" in sec.findings[1].sentence  # 100%: the highest row once the rule is off


def test_thin_subsets_get_fleiss_and_alpha_without_an_interval_and_say_why(tmp_path):
    t = _subsets_table()
    panel = S.panel_section(t, **KW)
    for cap_start in ("Fleiss' kappa", "Krippendorff's alpha"):
        shown = next(x for x in panel.tables if x.caption.startswith(cap_start))
        res = shown.table
        tiny = res[res["subset"] == "tiny"].iloc[0]
        col = "kappa" if cap_start.startswith("Fleiss") else "alpha"
        assert np.isnan(tiny[f"{col}_low"]) and tiny["note"] == "no interval: 5 items, fewer than min_items=20"
        big = res[res["subset"] == "big"].iloc[0]
        assert np.isfinite(big[f"{col}_low"])
        assert "(1 row(s) with fewer than 20 items: no interval, never headlined)" in shown.caption
    # the kappa of the thin subset is still statsmodels' value
    w = t[t["subset"] == "tiny"].pivot_table(index=["item_id", "order"], columns="judge", values="verdict",
                                             aggfunc="first")
    res = next(x for x in panel.tables if x.caption.startswith("Fleiss")).table
    assert res.loc[res["subset"] == "tiny", "kappa"].iloc[0] == pytest.approx(
        fleiss_kappa(aggregate_raters((w == "2").astype(int).to_numpy())[0]))
    assert "nan" not in _text(panel, tmp_path).lower()


def test_the_overview_states_the_rule_and_what_the_counts_count():
    sec = S.unparsed_section(_subsets_table(), min_items=25)
    texts = _sentences(sec)
    assert any("fewer than 25 items (min_items) is shown but never headlined" in x for x in texts)
    assert any("a pair is one (item, sample) asked in both presentation orders" in x for x in texts)
    assert any("Each request was sampled once, so there is no majority vote over samples." in x for x in texts)
    assert sec.metrics["min_items"] == 25 and sec.metrics["samples"] == 1


def test_fleiss_kappa_from_a_single_unit_is_never_a_number(tmp_path):
    # three judges on one item in one order, split 2-1: statsmodels would give -0.5
    t = V.coerce(pd.DataFrame({"item_id": "q1", "judge": ["A", "B", "C"], "order": "ab",
                               "verdict": ["1", "1", "2"], "gold": "1"}))
    assert fleiss_kappa(aggregate_raters(np.array([[0, 0, 1]]))[0]) == pytest.approx(-0.5)
    panel = S.panel_section(t, **KW)
    text = _text(panel, tmp_path)
    assert "-0.5" not in text and "−0.5" not in text and panel.metrics["fleiss_kappa_whole_table"] is None
    assert "Fleiss' kappa is not computable: 1 unit with every judge parsed" in panel.findings[0].sentence


# ------------------------------------------------------------------------ issue 26: majority over samples
def _sampled(n_items=12, samples=3, seed=5, gold=True):
    """One judge, one order, ``samples`` samples per item at a noisy temperature, with ties as a third verdict."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        g = "1" if i % 2 else "2"
        for s_ in range(samples):
            rows.append(dict(item_id=f"q{i:02d}", judge="J", order="ab", sample=s_,
                             verdict=rng.choice(["1", "2", "tie"], p=[0.45, 0.4, 0.15]), gold=g if gold else ""))
    return V.coerce(pd.DataFrame(rows))


def _hand_majority(t):
    """Per item (one order): majority correctness (ties: share of the tied verdicts that are gold), straddling
    (margin between the two most frequent verdicts at most 1), flip probability (1 - modal share)."""
    out = {}
    for item, g in t.groupby("item_id"):
        counts = g["verdict"].astype(str).value_counts()
        top = counts.max()
        modes = list(counts[counts == top].index)
        second = counts.iloc[1] if len(counts) > 1 else 0
        gold = str(g["gold"].iloc[0])
        out[item] = dict(correct=sum(m == gold for m in modes) / len(modes), straddles=top - second <= 1,
                         flip=1 - top / len(g), right=int((g["verdict"].astype(str) == gold).sum()), n=len(g))
    return out


def test_majority_section_hand_counts_on_12_items_by_3_samples(tmp_path):
    t = _sampled()
    hand = _hand_majority(t)
    sec = S.majority_section(t, **KW)
    (m,) = sec.metrics["majority_vote"]
    assert m["requests"] == 12 and m["items"] == 12  # 12 requests, not 36 "pairs"
    assert m["reply_accuracy"] == pytest.approx(sum(h["right"] for h in hand.values()) / 36)
    assert m["majority_accuracy"] == pytest.approx(np.mean([h["correct"] for h in hand.values()]))
    assert m["straddling"] == sec.metrics["straddling_requests"] == sum(h["straddles"] for h in hand.values())
    assert m["flip_probability"] == pytest.approx(np.mean([h["flip"] for h in hand.values()]))
    head = sec.findings[0].sentence
    assert head.startswith("Over the whole table, the majority verdict of J's samples is right on "
                           f"{100 * m['majority_accuracy']:.1f}%")
    assert "n = 12 requests" in head and "pairs" not in head
    ties = sum(len(g["verdict"].astype(str).value_counts().pipe(lambda c: c[c == c.max()])) > 1
               for _, g in t.groupby("item_id"))
    near = m["straddling"] - ties
    assert m["tied"] == ties
    assert (f"of 12 requests, {ties} ({ties / 12:.1%}) split evenly (a tie between samples) and {near} "
            f"({near / 12:.1%}) one sample away from another majority") in head
    listed = next(x for x in sec.tables if x.caption.startswith("Requests split evenly")).table
    assert set(listed["item_id"]) == {i for i, h in hand.items() if h["straddles"]}
    assert "nan" not in _text(sec, tmp_path).lower()


def test_majority_section_is_absent_with_one_sample_and_says_so_once_in_the_overview():
    t = _table()
    sec = S.majority_section(t, **KW)
    assert not sec.items and not sec.metrics
    over = _sentences(S.unparsed_section(t))
    assert sum("no majority vote over samples" in x for x in over) == 1


def test_majority_without_gold_states_the_straddling_requests_only(tmp_path):
    t = _sampled(gold=False)
    sec = S.majority_section(t, **KW)
    (f,) = sec.findings
    hand = _hand_majority(t)
    ties = sum(len(g["verdict"].astype(str).value_counts().pipe(lambda c: c[c == c.max()])) > 1
               for _, g in t.groupby("item_id"))
    near = sum(h["straddles"] for h in hand.values()) - ties
    assert f.sentence.startswith(f"Over the whole table, J: of 12 requests, {ties} ({ties / 12:.1%}) split evenly (a "
                                 f"tie between samples) and {near} ({near / 12:.1%}) one sample away from another "
                                 "majority; ")
    assert "nan" not in _text(sec, tmp_path).lower()


# ---------------------------------------------------------------- issue 26 defect 3: never "[nan, nan]"
def test_an_estimate_with_nan_bounds_prints_no_interval_on_any_text_path():
    from evallab._results import WILSON, Estimate, Measure, results
    from evallab.reporting._batch_index import _finding_html
    from evallab.reporting._tables import Finding, to_html

    nan = float("nan")
    e = Estimate(1.0, nan, nan, 0.95, WILSON, "coefficient", 5, "replies", "Cohen's kappa")
    assert not e.has_interval and e.interval() == "" and e.low is None and e.high is None
    assert str(e) == "1.00 (n = 5 replies)"
    assert Estimate(nan).value is None and str(Estimate(nan, note="no gold labels")) == "not computable: no gold labels"
    f = Finding.of(f"Cohen's kappa {e} over 5 parsed replies.", e)
    texts = [str(e), e.describe(), f.sentence, f.html(), f.estimate_text(), _finding_html(f.as_dict()),
             _finding_html({"sentence": "k", "value": 1.0, "low": nan, "high": nan, "unit": "coefficient",
                            "level": 0.95, "n": 5, "n_unit": "replies"})]
    res = results(pd.DataFrame({"kappa": [1.0, 0.5], "kappa_low": [nan, 0.1], "kappa_high": [nan, 0.9], "n": [5, 6],
                                "note": ["", ""]}),
                  [Measure("kappa", "Cohen's kappa", "coefficient", "kappa_low", "kappa_high", method=WILSON, n="n",
                           n_unit="replies")], level=0.95)
    texts += [to_html(res).html, str(res.estimate("kappa", 0))]
    for x in texts:
        assert "nan" not in x.lower() and "[—" not in x and "—]" not in x, x
    assert "95% CI" not in str(e)  # no interval, so no level claimed


# ------------------------------------------------------------------ a pointwise user table (issue 26, defect 8)
def _pointwise(tmp_path):
    """40 items graded pass/fail by two judges against human gold, two subsets, one reply of judge-b unparsed."""
    rows = []
    for i in range(40):
        g = "pass" if i % 3 else "fail"
        for j, wrong in (("judge-a", 4), ("judge-b", 3)):
            v = ("fail" if g == "pass" else "pass") if i % wrong == 0 else g
            rows.append({"item_id": f"q{i}", "judge": j, "subset": "s1" if i < 25 else "s2",
                         "verdict": None if (j, i) == ("judge-b", 7) else v, "gold": g})
    path = tmp_path / "pointwise.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path), pd.DataFrame(rows)


def test_a_pointwise_users_table_gets_no_word_on_orders_nor_llmbar_conventions(tmp_path):
    path, raw = _pointwise(tmp_path)
    df = load_study(path, "", llmbar_selection=True)
    secs = [S.unparsed_section(df), S.published_section(path, "", df), S.accuracy_section(df, **KW),
            S.kappa_section(df, **KW), S.judge_agreement_section(df, **KW), S.panel_section(df, **KW),
            S.majority_section(df, **KW)]
    for sec in secs:
        said = " ".join([_text(sec, tmp_path), *sec.caveats, *sec.conclusions])
        assert not re.search(r"\borders?\b", said.lower()) and "accuracy()" not in said and "Acc." not in said, said
        assert "unparsed = wrong" not in said and "nan" not in said.lower()
        assert said.count("not computable: not computable") == 0
    # the accuracy headline: hand counts of the pointwise table (correct / parsed), Wilson (one reply per item)
    acc = secs[2]
    ok = raw.dropna(subset=["verdict"]).assign(right=lambda x: x["verdict"] == x["gold"])
    k, n = int(ok[ok["judge"] == "judge-a"]["right"].sum()), int((ok["judge"] == "judge-a").sum())
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert (k, n) == (30, 40)  # judge-a is wrong on every 4th item: q0, q4, ..., q36
    k2, n2 = int(ok[ok["judge"] == "judge-b"]["right"].sum()), int((ok["judge"] == "judge-b").sum())
    lo2, hi2 = proportion_confint(k2, n2, alpha=0.05, method="wilson")
    assert k2 / n2 < k / n and hi2 >= lo  # judge-b lower, but its interval reaches judge-a's: no winner (defect 3)
    assert acc.findings[0].sentence == (
        "Over the whole table, the judges cannot be told apart on accuracy against gold (correct / parsed replies) at "
        "this n (the highest interval overlaps the next one's), so no judge is declared best: "
        f"judge-a {100 * k / n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}], judge-b {100 * k2 / n2:.1f}% "
        f"[{100 * lo2:.1f}, {100 * hi2:.1f}] (95% CI; n = {n}, {n2} replies).")
    assert secs[0].caveats == ["1 unparsed reply (1.2%) is counted, not scored."]


def test_the_llmbar_convention_caveat_stays_on_the_bundled_llmbar(natural):
    k = int(natural["verdict"].isna().sum())
    assert k > 0
    (caveat,) = S.unparsed_section(natural).caveats
    assert caveat.startswith(f"{k:,} unparsed replies (") and "LLMBar's own convention (unparsed = wrong)" in caveat
    plain = natural.copy()
    plain.attrs = {}  # the same rows, not read by load_study as LLMBar: no LLMBar convention
    assert S.unparsed_section(plain).caveats == [f"{k:,} unparsed replies ({caveat.split('(')[1].split(')')[0]}) "
                                                 "are counted, not scored."]


def test_no_acc_figure_without_acc():
    """A one-order table has no Acc.: the accuracy section draws no empty figure (and no legend warning)."""
    import warnings

    import pandas as pd

    from evallab import verdicts
    from evallab.reporting.sections import agreement as S

    rows = [{"item_id": f"q{i}", "judge": "J", "order": "ab", "subset": "s1" if i % 2 else "s2", "gold": "1",
             "verdict": "1" if i % 3 else "2"} for i in range(30)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sec = S.accuracy_section(verdicts.coerce(pd.DataFrame(rows)), n_resamples=0)
    assert not [x for x in sec.items if hasattr(x, "savefig")]


# ------------------------------------------------- a user's pointwise table: two samples for one judge, one for another
def _uneven_samples():
    """Pointwise, 30 items with pass/fail gold; judge "two" sampled twice (some `warn`), judge "one" once."""
    rows = []
    for i in range(30):
        g = "pass" if i % 2 else "fail"
        flip = "fail" if g == "pass" else "pass"
        s0 = "warn" if i % 7 == 0 else (flip if i % 5 == 0 else g)
        s1 = ({"pass": "fail", "fail": "pass", "warn": "pass"}[s0]) if i % 3 == 0 else s0
        for j, s_, v in (("two", 0, s0), ("two", 1, s1), ("one", 0, flip if i % 4 == 0 else g)):
            rows.append(dict(item_id=f"q{i:02d}", judge=j, sample=s_, verdict=v, gold=g, evaluated_model=f"m{i % 2}"))
    return V.coerce(pd.DataFrame(rows)), pd.DataFrame(rows)


def test_majority_of_two_samples_states_the_tie_rule_the_zero_difference_and_even_splits(tmp_path):
    t, raw = _uneven_samples()
    sec = S.majority_section(t, **KW)
    assert sec.items[0].startswith("## Majority vote over samples") and (
        "A tie has no majority and is scored as the share of its tied verdicts that are gold (half correct when one "
        "of two is gold: the expected accuracy of breaking the tie at random).") in sec.items[0]
    two = raw[raw["judge"] == "two"]
    wide = two.pivot(index="item_id", columns="sample", values="verdict")
    ties = int((wide[0] != wide[1]).sum())  # two samples that differ: an even split
    per_reply = float((two["verdict"] == two["gold"]).mean())
    (head,) = [f.sentence for f in sec.findings]
    assert (f"is right on {100 * per_reply:.1f}% [") in head and f"against {100 * per_reply:.1f}% [" in head
    assert ("(majority − per reply 0.0 pp, no interval: the two are equal on every request — of two samples a tie "
            "scores ½, the mean of its two replies — so the difference is 0 in every resample)") in head
    assert f"of 30 requests, {ties} ({ties / 30:.1%}) split evenly (a tie between samples); a sample disagrees" in head
    assert "one sample away" not in head  # with two samples every straddling request is a tie


def test_judge_agreement_says_how_many_replies_were_left_unpaired_and_why():
    t, raw = _uneven_samples()
    sec = S.judge_agreement_section(t, **KW)
    lone = raw[(raw["judge"] == "two") & ~raw["sample"].isin(raw.loc[raw["judge"] == "one", "sample"])]
    assert len(lone) == 30
    assert ("30 parsed replies are left unpaired, so out of the one–two agreement: 30 of two's with no reply of one "
            "on the same (item, sample) (sample 1, which one was never asked for).") in _sentences(sec)


def test_a_pointwise_table_with_warn_says_once_how_warn_is_scored():
    t, raw = _uneven_samples()
    k = int(((raw["verdict"] == "warn") & raw["gold"].notna()).sum())
    said = [x for x in _sentences(S.accuracy_section(t, **KW)) if "`warn`" in x]
    assert said == ["A `warn` verdict is scored as given: it is correct only where gold is `warn` too, so against "
                    "pass/fail gold it counts as wrong in the accuracy (neither a pass nor half right), and in Cohen's "
                    "kappa it is a category of its own (a disagreement with either gold label). "
                    f"Here {k} of the {len(raw)} parsed replies with gold are `warn`."]
    assert not any("`warn`" in x for x in _sentences(S.kappa_section(t, **KW)))  # said once
    # and it is what the estimator does: a warn reply against pass/fail gold is wrong
    acc = S.accuracy_section(t, **KW).metrics["accuracy_pooled"]
    two = raw[raw["judge"] == "two"]
    assert next(r for r in acc if r["judge"] == "two")["accuracy"] == pytest.approx(
        (two["verdict"] == two["gold"]).mean())


def test_equal_kappas_name_no_winner_and_a_one_value_range_says_all_judges():
    rows = []
    for i in range(30):
        g = "pass" if i % 2 else "fail"
        v = ("fail" if g == "pass" else "pass") if i % 4 == 0 else g
        rows += [dict(item_id=f"q{i}", judge=j, verdict=v, gold=g) for j in ("X", "Y")]
    raw = pd.DataFrame(rows)
    k = cohen_kappa_score(raw["gold"][raw["judge"] == "X"], raw["verdict"][raw["judge"] == "X"])
    sec = S.kappa_section(V.coerce(raw), **KW)
    (head,) = [f.sentence for f in sec.findings]
    assert head.startswith("Over the whole table, the judges cannot be told apart on Cohen's kappa against gold at "
                           "this n (the two highest are equal as shown), so no judge is declared best: ")
    assert f"X {k:.2f} [" in head and f"Y {k:.2f} [" in head and "agrees best" not in head
    assert sec.conclusions == [f"Cohen's kappa against gold over the whole table: all judges {k:.2f}; the judges "
                               "cannot be told apart at this n."]


def test_leaderboard_headline_names_the_top_model_meeting_min_items_and_the_thinner_ones_above_it():
    rows = [dict(item_id=f"b{i:02d}", judge="J", order="ab", verdict="2" if i % 2 else "1",
                 output_1_model="base", output_2_model="big") for i in range(20)]
    rows += [dict(item_id=f"t{i:02d}", judge="J", order="ab", verdict="tie" if i == 0 else "2",
                  output_1_model="base", output_2_model="thin") for i in range(10)]
    raw = pd.DataFrame(rows)
    rate = raw.assign(s=raw["verdict"].map({"2": 1.0, "tie": 0.5, "1": 0.0})).groupby("output_2_model")["s"].mean()
    sec = S.leaderboard_section(V.coerce(raw), user_table="mine.csv", **KW)
    assert (f"By J's verdicts, 1 model with fewer than 20 items (min_items) ranks above big, shown but not headlined: "
            f"thin {100 * rate['thin']:.1f}% (10 items); by win rate against the baseline, highest first: "
            f"thin {100 * rate['thin']:.1f}% (10 items), big {100 * rate['big']:.1f}% (20 items).") in _sentences(sec)
    (head,) = [f.sentence for f in sec.findings]
    assert head.startswith(f"By J's verdicts, among models with 20 items or more, big's win rate against base (the "
                           f"baseline) is {100 * rate['big']:.1f}% [")
    # no model with 20 items: the overall ranking instead of a headline
    sec = S.leaderboard_section(V.coerce(raw), user_table="mine.csv", min_items=25, **KW)
    assert not sec.findings
    assert ("No model judged by J has a win rate against the baseline on 25 items or more (min_items): the rows below "
            f"are shown, none is headlined; by win rate against the baseline, highest first: thin "
            f"{100 * rate['thin']:.1f}% (10 items), big {100 * rate['big']:.1f}% (20 items).") in _sentences(sec)


def test_figures_carry_their_title_as_alt_text_and_the_colour_bar_label_clears_the_title(tmp_path, monkeypatch):
    import html

    import matplotlib.text as mtext
    import nbformat
    from nbconvert import HTMLExporter

    from evallab.reporting._context import Report, figure_html

    sec = S.judge_agreement_section(_table(), **KW)
    (fig,) = [x for x in sec.items if hasattr(x, "savefig")]
    title = "Cohen's kappa between judges (same item, order, sample)"
    label = "Cohen's kappa (unitless, −1 to 1)"
    # the title and the colour-bar label do not overlap, and the title stays inside the figure
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    (t,) = [x for x in fig.findobj(mtext.Text) if " ".join(x.get_text().split()) == title]
    (c,) = [x for x in fig.findobj(mtext.Text) if " ".join(x.get_text().split()) == label]
    tb, cb = t.get_window_extent(r), c.get_window_extent(r)
    assert not tb.overlaps(cb)
    assert tb.x0 >= fig.bbox.x0 and tb.x1 <= fig.bbox.x1 and tb.y1 <= fig.bbox.y1
    assert figure_html(fig).startswith(f'<img alt="{html.escape(title, quote=True)}" src="data:image/png;base64,')
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: shown.extend(a))
    Report("t", tmp_path).render(sec)
    imgs = [x.data for x in shown if "<img" in str(getattr(x, "data", ""))]
    assert len(imgs) == 1 and not any(hasattr(x, "savefig") for x in shown)  # no bare figure (a bare image/png)
    # nbconvert's export keeps the alt text (it writes "No description …" only on an image without one)
    out = nbformat.v4.new_output("display_data", data={"text/html": imgs[0]})
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("", outputs=[out])])
    body, _ = HTMLExporter(exclude_input=True).from_notebook_node(nb)
    assert "No description has been provided" not in body and f'alt="{title}"' in body  # re-serialized unescaped
