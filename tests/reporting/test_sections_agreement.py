"""evallab.reporting.sections.agreement (report 01): every sentence states numbers computed here independently —
the csv module on the bundled LLMBar file, scikit-learn's cohen_kappa_score, statsmodels' Wilson interval and
fleiss_kappa, plain pandas — on the bundled data and on small hand-made tables shaped unlike it (one order, no gold,
one judge, two strategies)."""

from __future__ import annotations

import csv

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


def test_published_section_on_a_users_table_compares_nothing():
    sec = S.published_section("mine.csv", "", _table())
    assert not sec.tables and not sec.findings and not sec.metrics and not sec.conclusions
    assert _sentences(sec) == ["This report is on your own verdict table, so LLMBar's published figures are not "
                               "compared."]


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
    assert head.sentence.startswith(f"{best} on LLMBar/Natural has the highest Acc. (mean of the two order "
                                    f"accuracies): {100 * acc[best]:.1f}%")
    assert f"item bootstrap (percentile, {B} resamples), n = 100 items" in head.sentence
    assert head.method == f"item bootstrap (percentile, {B} resamples)"
    assert sec.metrics["best_judge"] == f"{best} on LLMBar/Natural" and sec.metrics["best_strategy"] == "Vanilla"
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
    assert s.startswith(f"{best} on LLMBar/Natural agrees best with gold: Cohen's kappa {ks[best]:.2f}")
    assert s.endswith(f"the lowest row is {worst} on LLMBar/Natural at {ks[worst]:.2f}.")
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
    assert panel.findings[0].sentence.startswith("Across the 6 judges, Krippendorff's alpha is ")
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
    assert "only one was parsed" in f.sentence and "the pooled accuracy" in f.sentence
    acc = {j: float((g["verdict"] == g["gold"]).mean()) for j, g in t.groupby("judge")}
    best = max(acc, key=acc.get)
    k = int((t[t["judge"] == best]["verdict"] == t[t["judge"] == best]["gold"]).sum())
    lo, hi = proportion_confint(k, 30, method="wilson")
    assert f"highest for {best}: {100 * acc[best]:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] (95% CI, Wilson score, " \
           "n = 30 replies)" in f.sentence
    assert sec.metrics["best_acc"] is None
    assert [t_.caption for t_ in sec.tables] == ["Pooled accuracy against gold (correct / parsed replies)"]
    text = _text(sec, tmp_path)
    assert "nan" not in text.lower() and "subset=" not in text and " on ." not in text


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
        assert h.startswith(f"With strategy {s}, {best} has the highest Acc. (mean of the two order accuracies): "
                            f"{100 * acc[best]:.1f}%")
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
    assert heads[0].split(" ")[0] in ("h1", "h2")
    two = _table(judges=("h1", "h2"), strategies=("s1", "s2"))
    assert [f.sentence.split(" ")[3] for f in S.kappa_section(two, **KW).findings][0] in ("h1", "h2")
    assert S.panel_section(two, **KW).conclusions[0].startswith("With strategy s1, judges agree with each other")
