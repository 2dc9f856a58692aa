"""Tests of the trigger router in evallab.skills: tokenizer, stemmer, exclusion stripping, the keryx scorer, selection, leave-one-out,
alternative scorers, bad catalogs and threshold tuning. Expected values are hand-computed here or come from a plain
re-implementation of data/keryx/SOURCE.md written in this file."""

from __future__ import annotations

import json
import math
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evallab import skills as T
from evallab.errors import DataError
from evallab.paths import data_dir
from evallab.skills import _thresholds, _tokenize, _trigger_loo, _trigger_select, load_catalog
from evallab.skills._catalogs import catalog_from_records
from evallab.skills._scorer_comparison import compare_scorers
from evallab.skills._thresholds import pair_scores, roc_pr, select_nothing_value, tune_thresholds
from evallab.skills._tokenize import strip_exclusions, tokenize
from evallab.skills._trigger_index import score_matrix
from evallab.skills._trigger_loo import (
    loo_scores,
    loo_summary,
    make_probes,
    stripping_effect,
    trigger_accuracy,
)
from evallab.skills._trigger_select import rank

HERE = Path(__file__).parents[1]
BAD = HERE / "data" / "triggers"
KERYX = data_dir("catalogs") / "keryx_bundled_core.jsonl"


# ------------------------------------------------------------------------------------------------------------
# A plain re-implementation of SOURCE.md ("Facts about keryx's lexical trigger scorer"), independent of the module
# ------------------------------------------------------------------------------------------------------------
PLAIN_STOP = {"the", "and", "for", "with", "this", "that", "your", "are", "from", "into", "out", "run", "use",
              "used", "make", "get", "can", "please", "help", "want", "them"}


def plain_stem(t):
    if len(t) > 4 and t.endswith("ies"):
        return t[:-3] + "y"
    if len(t) > 4 and t.endswith("es"):
        return t[:-2]
    if len(t) > 5 and t.endswith("ing"):
        return t[:-3]
    if len(t) > 3 and t.endswith("s") and not t.endswith("ss"):
        return t[:-1]
    return t


def plain_tokens(text):
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower()
    text = "".join(ch if ch.isalnum() else " " for ch in text)
    return {plain_stem(w) for w in text.split() if len(w) >= 3 and w not in PLAIN_STOP}


def plain_entry(rec, field, strip):
    parts = [rec["name"], rec["description"]] + (list(rec.get("triggers", [])) if field == "full" else [])
    out = set()
    for p in parts:
        out |= plain_tokens(strip_exclusions(p) if strip else p)
    return out


def plain_score(query, entries, k):
    n = len(entries)
    q = plain_tokens(query)
    if not q:
        return 0.0
    df = {t: sum(t in e for e in entries) for t in q}
    w = {t: math.log((n + 1) / (df[t] + 1)) + 1 for t in q}
    return sum(w[t] for t in q if t in entries[k]) / sum(w.values())


@pytest.fixture(scope="module")
def keryx_records():
    return [json.loads(line) for line in KERYX.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def keryx():
    return load_catalog(KERYX)


# ------------------------------------------------------------------------------------------------------------
# tokenizer and stemmer
# ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("word,stemmed", [
    ("libraries", "library"),   # len 9 > 4, ends "ies" → "y"
    ("ties", "tie"),            # len 4 is not > 4 (no ies/es rule); ends "s", len > 3 → drop "s"
    ("classes", "class"),       # ends "es", len > 4 → drop "es"
    ("goes", "goe"),            # len 4: no "es" rule; "-s" rule
    ("testing", "test"),        # len 7 > 5, ends "ing"
    ("using", "using"),         # len 5 is not > 5; no trailing s → unchanged
    ("services", "servic"),     # "es" rule fires before "s"
    ("reviews", "review"),      # "-s" rule
    ("class", "class"),         # ends "ss" → unchanged
    ("bus", "bus"),             # len 3 is not > 3 → unchanged
])
def test_stem_rules_by_hand(word, stemmed):
    assert _tokenize.stem(word) == stemmed


def test_tokenize_by_hand():
    # camelCase split, lowercase, punctuation → space, 3+ chars, stop words out, stemmed, set
    assert _tokenize.token_set("Run reviewComponents for the API_keys, e.g. UI") == {"review", "component", "api", "key"}
    assert tokenize("Testing tests and testing") == ["test", "test", "test"]
    assert _tokenize.token_set("") == frozenset()


# ------------------------------------------------------------------------------------------------------------
# exclusion stripping: every form of spec 000, expected output written by hand
# ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text,expected", [
    # "not for" anywhere in a sentence: cut from the phrase to the sentence's end
    ("Use when X. Not for Y (use `z`).", "Use when X."),
    ("Builds APIs, not for UI work. Second.", "Builds APIs, Second."),
    ("NOT for: A, or NOT for B (use `x`). Keep.", "Keep."),
    # "do not use for", "does not"
    ("Do not use for migrations. Keep.", "Keep."),
    ("Does not edit code or apply fixes. Reviews diffs.", "Reviews diffs."),
    ("Reviews diffs but does not apply fixes. Done.", "Reviews diffs but Done."),
    # a sentence OPENING with never is dropped; a mid-sentence never is kept
    ("Never run this against a database migration. Keep this.", "Keep this."),
    ("NEVER start without a plan. Plans.", "Plans."),
    ("A fix that never widens beyond the failure.", "A fix that never widens beyond the failure."),
    # (not …), (never …), (see …) asides; (not only … but also …) kept
    ("Formats config (not the CLI form) files.", "Formats config files."),
    ("Deploys (never to prod) safely.", "Deploys safely."),
    ("Checks versions (see api-truth for version-diff checks).", "Checks versions."),
    ("Lints code (not only style but also types).", "Lints code (not only style but also types)."),
    # standalone redirect: quoted token or bare hyphenated id, then instead
    ("Writes tests. Use `nodejs-testing` instead.", "Writes tests."),
    ("Writes tests. Use nodejs-testing instead.", "Writes tests."),
    ('Writes tests. Use "testing" instead.', "Writes tests."),
    ("Use git bisect instead of a manual search.", "Use git bisect instead of a manual search."),
    ("Use when debugging; use this instead of guessing.", "Use when debugging; use this instead of guessing."),
    # e.g. / i.e. do not end a NOT-for sentence
    ("Not for formats, e.g. YAML or TOML. Keep.", "Keep."),
    ("Not for formats, i.e. YAML. Keep.", "Keep."),
    # deliberately NOT recognised: plain without; a second sentence of a disclaimer
    ("Fixes bugs without touching the schema.", "Fixes bugs without touching the schema."),
    ("Not for X. It also skips Y.", "It also skips Y."),
    ("", ""),
])
def test_strip_exclusions_forms(text, expected):
    assert strip_exclusions(text) == expected


def test_strip_patterns_have_no_nested_quantifiers():
    # linear time: no quantified group (…)+ / (…)* / (…){n} in any stripping pattern
    for rx in (_tokenize._ASIDE, _tokenize._SENTENCE_END, _tokenize._MARKER, _tokenize._NEVER_OPENER, _tokenize._REDIRECT, _tokenize._SPACES):
        assert not re.search(r"\)[*+?{]", rx.pattern.replace(r"\)", "")), rx.pattern


def test_query_stripped_only_when_it_is_a_description():
    q = "Never mind the tests, push my branch"
    assert _tokenize.query_tokens(q) == {"never", "mind", "test", "push", "branch"}
    assert _tokenize.query_tokens(q, is_description=True) == set()


def _node_catalog():
    return catalog_from_records([
        {"catalog_id": "a/node-service", "name": "node-service",
         "description": "Use when writing Node services. Not for writing or fixing tests (use `node-testing`)."},
        {"catalog_id": "b/node-testing", "name": "node-testing",
         "description": "Use when writing vitest or jest tests for Node code."},
    ])


def test_stripping_lowers_the_node_example_by_hand():
    cat = _node_catalog()
    q = "write vitest tests for this service"  # tokens: write, vitest, test, service
    # Before (N=2): A = {node, service, when, writ, servic, not, fix, test}; B = {node, test, when, writ, vitest,
    # jest, code}. df: write 0, vitest 1, test 2, service 1.
    i0, i1, i2 = math.log(3 / 1) + 1, math.log(3 / 2) + 1, math.log(3 / 3) + 1
    before = (i1 + i2) / (i0 + i1 + i2 + i1)              # service + test covered
    # After: A = {node, service, when, writ, servic}; df(test) drops to 1.
    after = i1 / (i0 + i1 + i1 + i1)                      # only service covered
    s_before = score_matrix([q], cat, strip_exclusions=False)[0, 0]
    s_after = score_matrix([q], cat, strip_exclusions=True)[0, 0]
    assert s_before == pytest.approx(before, abs=1e-12)
    assert s_after == pytest.approx(after, abs=1e-12)
    assert s_after < s_before
    assert round(before, 4) == 0.4070 and round(after, 4) == 0.2226


# ------------------------------------------------------------------------------------------------------------
# the scorer on the keryx catalog against the plain re-implementation
# ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("strip", [False, True])
@pytest.mark.parametrize("field", ["full", "description-only"])
def test_scores_match_plain_formula(keryx, keryx_records, strip, field):
    entries = [plain_entry(r, field, strip) for r in keryx_records]
    rng = random.Random(7)
    queries = [t for r in keryx_records for t in r.get("triggers", [])]
    queries = rng.sample(queries, 25) + ["review react components mobx", "kubernetes helm chart linting", "ui"]
    S = score_matrix(queries, keryx, field=field, strip_exclusions=strip)
    for qi, q in enumerate(queries):
        for k in rng.sample(range(len(entries)), 8):
            assert S[qi, k] == pytest.approx(plain_score(q, entries, k), abs=1e-9), (q, k)


def test_keryx_comment_example(keryx):
    # scout.ts's calibration note: "kubernetes helm chart linting" shares only "lint" → top ≈ 0.21, create
    r = T.scout("kubernetes helm chart linting", keryx)
    assert r.decision == "create"
    assert set(r.matches.skill_id[:2]) == {"orchestration/code-verifier", "platform/hookify"}


def test_rank_orders_by_score_then_id():
    cat = catalog_from_records([
        {"catalog_id": "x/b", "name": "bbb", "description": "alpha beta."},
        {"catalog_id": "x/a", "name": "aaa", "description": "alpha beta."},
        {"catalog_id": "y/c", "name": "ccc", "description": "gamma."},
    ])
    r = rank("alpha", cat)
    assert list(r.skill_id) == ["x/a", "x/b", "y/c"] and list(r["rank"]) == [1, 2, 3]


def test_check_selected_category_rule_by_hand():
    # N=3; "alpha beta": x/a has alpha+beta, x/b has alpha, y/c has alpha+beta → x/b outranked by y/c (other
    # category), x/a ties y/c (not strictly outscored) → selected.
    cat = catalog_from_records([
        {"catalog_id": "x/a", "name": "aaa", "description": "alpha beta."},
        {"catalog_id": "x/b", "name": "bbb", "description": "alpha."},
        {"catalog_id": "y/c", "name": "ccc", "description": "alpha beta."},
    ])
    a = _trigger_select.check_selected("alpha beta", "x/a", cat)
    b = _trigger_select.check_selected("alpha beta", "x/b", cat)
    assert a.selected and a.score == 1.0 and a.outranked_by is None
    # df(alpha)=3 → idf 1; df(beta)=2 → ln(4/3)+1
    ib = math.log(4 / 3) + 1
    assert b.score == pytest.approx(1 / (1 + ib)) and not b.selected and b.outranked_by == "y/c" and b.rank == 3


# ------------------------------------------------------------------------------------------------------------
# leave-one-out
# ------------------------------------------------------------------------------------------------------------
def plain_loo_selected(records, rec_index, trigger, query):
    """checkSkillSelectedLeaveOneOut from SOURCE.md, plainly."""
    reduced = [dict(r) for r in records]
    reduced[rec_index]["triggers"] = [t for t in reduced[rec_index].get("triggers", []) if t != trigger]
    full = [plain_entry(r, "full", True) for r in reduced]
    desc = [plain_entry(r, "description-only", True) for r in records]
    cats = [r["catalog_id"].split("/")[0] for r in records]
    s = [plain_score(query, full, k) for k in range(len(full))]
    own = s[rec_index]
    outranked = any(cats[k] != cats[rec_index] and s[k] > own + 1e-12 for k in range(len(s)))
    return own >= 0.30 and not outranked and plain_score(query, desc, rec_index) >= 0.12


def test_leave_one_out_accuracy_over_279_triggers(keryx, keryx_records):
    n_triggers = sum(len(r.get("triggers", [])) for r in keryx_records)
    assert n_triggers == 279
    probes = make_probes(keryx, source="triggers")
    assert len(probes) == 279
    loo = T.leave_one_out(keryx, probes)
    expected = []
    for i, r in enumerate(keryx_records):
        for t in r.get("triggers", []):
            expected.append(plain_loo_selected(keryx_records, i, t, t))
    assert list(loo.selected) == expected
    acc = loo.selected.mean()
    assert acc == pytest.approx(sum(expected) / 279)
    print(f"keryx leave-one-out trigger accuracy over 279 triggers: {acc:.4f}")


def test_loo_summary_counts_trigger_probes_apart_217_of_279(keryx, keryx_records):
    # Hand count on the keryx catalog: 279 triggers (46 skills) and 18 skills without triggers whose "Use when"
    # clause is the probe. The trigger-only leave-one-out accuracy is 217/279, recounted with the plain SOURCE.md
    # implementation; the 18 "Use when" probes (scored against the description they were cut from) are a row of
    # their own, never pooled into the trigger figure.
    with_triggers = [r for r in keryx_records if r.get("triggers")]
    use_when = [r for r in keryx_records if not r.get("triggers") and "use when" in r["description"].lower()]
    assert len(with_triggers) == 46 and len(use_when) == 18
    plain = sum(plain_loo_selected(keryx_records, i, t, t) for i, r in enumerate(keryx_records)
                for t in r.get("triggers", []))
    assert plain == 217
    summary = loo_summary(T.leave_one_out(keryx, make_probes(keryx)), n_resamples=200).set_index("kind")
    assert list(summary.index) == ["trigger", "use_when"]  # no pooled "all" row
    tr = summary.loc["trigger"]
    assert (tr["probes"], tr["skills"], tr["selected"]) == (279, 46, 217)
    assert tr["accuracy"] == pytest.approx(217 / 279)
    assert tr["accuracy_low"] < 217 / 279 < tr["accuracy_high"]
    uw = summary.loc["use_when"]
    assert (uw["probes"], uw["skills"], uw["selected"]) == (18, 18, 18)
    assert "nothing left out" in uw["measures"]
    # the pooled figure (235/297) is what a headline must not report as trigger accuracy
    assert (tr["selected"] + uw["selected"]) / (tr["probes"] + uw["probes"]) == pytest.approx(235 / 297)


def test_vectorised_matches_naive_and_per_call_api(keryx):
    probes = make_probes(keryx).iloc[::6].reset_index(drop=True)  # 50 probes, both kinds
    fv, dv = loo_scores(keryx, probes)
    fn, dn = loo_scores(keryx, probes, method="naive")
    np.testing.assert_allclose(fv, fn, atol=1e-9)
    np.testing.assert_allclose(dv, dn, atol=1e-9)
    loo = T.leave_one_out(keryx, probes)
    for row in loo.iloc[:12].itertuples():
        c = _trigger_select.check_selected_leave_one_out(row.prompt, row.skill_id, keryx, row.source_trigger)
        assert c.selected == row.selected and c.score == pytest.approx(row.score)
        assert c.description_score == pytest.approx(row.description_score) and c.rank == row.rank


def test_leave_one_out_removes_only_the_probe_trigger_by_hand():
    # skill x/a: triggers "zeta check" and "zeta"; leaving out "zeta check" keeps "zeta" (other trigger) but
    # drops "check" from x/a's text; y/b has "check".
    cat = catalog_from_records([
        {"catalog_id": "x/a", "name": "aaa", "description": "Handles zeta.", "triggers": ["zeta check", "zeta"]},
        {"catalog_id": "y/b", "name": "bbb", "description": "Runs a check."},
    ])
    c = _trigger_select.check_selected_leave_one_out("zeta check", "x/a", cat, "zeta check")
    # reduced catalog: x/a = {aaa, handl, zeta}, y/b = {bbb, run, check}; df(zeta) = df(check) = 1 → equal weights:
    # x/a covers half, y/b covers half (a tie, not strictly above) → selected; description-only x/a also 0.5
    assert c.score == pytest.approx(0.5) and c.outranked_by is None
    assert c.description_score == pytest.approx(0.5)
    assert c.selected is True
    # without leaving the trigger out, x/a's own "zeta check" trigger covers the whole probe
    assert _trigger_select.check_selected("zeta check", "x/a", cat).score == pytest.approx(1.0)


def test_nearest_skills_and_negatives(keryx):
    nn = _trigger_select.nearest_skills("review/review-frontend", keryx, 3)
    assert len(nn) == 3 and "review/review-frontend" not in set(nn.skill_id)
    assert list(nn.score) == sorted(nn.score, reverse=True)
    neg = _trigger_loo.negative_probes(keryx)
    cats = {s.id: s.category for s in keryx}
    assert (neg.groupby("skill_id").size() <= 3).all()
    assert all(cats[a] != cats[b] for a, b in zip(neg.skill_id, neg.from_skill, strict=True))


# Four skills in three categories; every word is a stem of itself (no -s/-es/-ing endings, 3+ letters, no stop word).
# Full token sets: A {alpha build react page form}, B {beta style react widget css}, C {gamma load sql table react},
# D {delta deploy docker image build page}. idf = ln(5/(df+1)) + 1: df 1 -> 1.916, 2 -> 1.511, 3 -> 1.223,
# unseen -> 2.609.
HAND_CATALOG = [
    {"catalog_id": "web/alpha", "name": "alpha", "description": "Build react page.",
     "triggers": ["react page", "react form"]},
    {"catalog_id": "web/beta", "name": "beta", "description": "Style react widget.", "triggers": ["css widget"]},
    {"catalog_id": "data/gamma", "name": "gamma", "description": "Load sql table.",
     "triggers": ["sql table", "react table"]},
    {"catalog_id": "ops/delta", "name": "delta", "description": "Deploy docker image.", "triggers": ["build page"]},
]


def test_trigger_accuracy_counts_by_hand():
    cat = catalog_from_records(HAND_CATALOG)
    per, detail = trigger_accuracy(cat, n_negatives=1)
    # Positives, leave-one-out (threshold 0.30, support 0.12):
    #  alpha "react page": alpha keeps both words (description) -> 1.0, selected.
    #  alpha "react form": "form" leaves alpha (unseen, 2.609); react df 3 -> alpha 1.223/3.832 = 0.319 >= 0.30,
    #    gamma ties at 0.319 (not strictly above) -> selected.
    #  beta "css widget": css unseen, widget in the description -> 1.916/4.526 = 0.423, no rival -> selected.
    #  gamma "sql table": both in the description -> 1.0, selected.
    #  gamma "react table": react leaves gamma (df 2) -> gamma 1.916/3.427 = 0.559 > alpha, beta 0.441 -> selected.
    #  delta "build page": both leave delta -> delta 0, alpha 1.0 -> NOT selected.
    # Negatives (nearest other-category skill to the description, its first trigger, full catalog):
    #  alpha "Build react page.": delta 0.712 > gamma 0.288 -> "build page": alpha 1.0 = delta 1.0 -> SELECTED (wrong)
    #  beta "Style react widget.": gamma 0.242 > delta 0 -> "sql table": beta 0 -> not selected (right)
    #  gamma "Load sql table.": every other skill 0, smallest id ops/delta -> "build page": gamma 0 -> right
    #  delta "Deploy docker image.": every other skill 0, smallest id data/gamma -> "sql table": delta 0 -> right
    neg = detail[detail.kind == "negative"].set_index("skill_id")
    assert neg["prompt"].to_dict() == {"web/alpha": "build page", "web/beta": "sql table",
                                       "data/gamma": "build page", "ops/delta": "sql table"}
    got = per.set_index("skill_id")[["n_pos", "tp", "n_neg", "tn"]].T.to_dict("list")
    assert got == {"web/alpha": [2, 2, 1, 0], "web/beta": [1, 1, 1, 1], "data/gamma": [2, 2, 1, 1],
                   "ops/delta": [1, 0, 1, 1]}
    acc = per.set_index("skill_id")["accuracy"]
    assert acc["web/alpha"] == pytest.approx(2 / 3) and acc["web/beta"] == 1.0
    assert acc["data/gamma"] == 1.0 and acc["ops/delta"] == 0.5
    pos = detail[detail.kind == "positive"].set_index("prompt")["score"]
    assert pos["react form"] == pytest.approx((math.log(5 / 4) + 1) / (math.log(5 / 4) + math.log(5) + 2))


def test_compare_scorers_reports_accuracy_at_own_select_threshold():
    # HAND_CATALOG with alpha's 2nd trigger "react form modal": left out, alpha keeps only "react" (df 3) of it,
    # form and modal are unseen -> alpha 1.223/(1.223 + 2*2.609) = 0.190 < 0.30 (gamma ties, not above; alpha's
    # description covers 1.511/(1.511 + 2*2.609) = 0.225 >= 0.12). Own-pair select scores: 1.0, 0.190, 0.423, 1.0,
    # 0.559 and -1 (delta's "build page" is outranked by alpha). The only other-category pair passing the rule's
    # other conditions is (delta's probe, alpha) at 1.0, a false positive at every threshold of [0, 1]. F1 is
    # highest (TP 5, FP 1, FN 1) for thresholds <= 0.18; the smallest, 0.0, is chosen. Leave-one-out accuracy:
    # 5 of 6 probes at 0.0, 4 of 6 at keryx's 0.30 (alpha's "react form modal" drops out).
    recs = [dict(r) for r in HAND_CATALOG]
    recs[0] = {**recs[0], "triggers": ["react page", "react form modal"]}
    cat = catalog_from_records(recs)
    table, curves = compare_scorers(cat, ("keryx",))
    row = table.iloc[0]
    assert row["select_threshold"] == 0.0 and row["f1"] == pytest.approx(2 * 5 / (2 * 5 + 1 + 1))
    assert row["probes"] == 6  # every probe of HAND_CATALOG is a trigger
    assert row["loo_trigger_accuracy_at_f1_threshold"] == pytest.approx(5 / 6)
    assert row["loo_trigger_accuracy_at_keryx_thresholds"] == pytest.approx(4 / 6)
    assert "loo_accuracy" not in table.columns  # one name per figure and threshold
    a2 = (math.log(5 / 4) + 1) / (math.log(5 / 4) + 1 + 2 * (math.log(5) + 1))
    loo = T.leave_one_out(cat).set_index("prompt")
    assert loo.loc["react form modal", "score"] == pytest.approx(a2)
    assert set(curves) == {"keryx"}


def test_stripping_effect_flips_by_hand():
    cat = catalog_from_records([
        {"catalog_id": "a/node-service", "name": "node-service",
         "description": "Use when writing Node services. Not for writing or fixing tests (use `node-testing`)."},
        {"catalog_id": "b/test-runner", "name": "test-runner", "description": "Runs the test suite.",
         "triggers": ["fixing tests"]},
    ])
    eff = stripping_effect(cat, n_negatives=1)
    assert eff.measures["score_after"].unit == "coefficient"  # a Results: the scores carry their measures
    row = eff[(eff.kind == "positive") & (eff.prompt == "fixing tests")].iloc[0]
    # before: a/node-service covers fix+test → 1.0 outranks b (test only: 1/(ln(3/2)+1+1)); after: a covers none
    assert row.correct_before == False and row.correct_after == True and row.changed  # noqa: E712
    assert row.score_before == pytest.approx(1 / (math.log(1.5) + 2))
    assert row.score_after == pytest.approx((math.log(1.5) + 1) / (math.log(1.5) + 1 + math.log(3) + 1))


# ------------------------------------------------------------------------------------------------------------
# alternative scorers
# ------------------------------------------------------------------------------------------------------------
def test_tfidf_is_sklearn_cosine(keryx):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    docs = [" ".join(_tokenize.entry_token_list(s)) for s in keryx]
    vec = TfidfVectorizer(token_pattern=r"\S+", lowercase=False)
    E = vec.fit_transform(docs)
    qs = ["review react components", "run lint and tests"]
    ref = cosine_similarity(vec.transform([" ".join(tokenize(q)) for q in qs]), E)
    np.testing.assert_allclose(score_matrix(qs, keryx, scorer="tfidf"), ref, atol=1e-9)


def test_bm25_normalised_and_ordered(keryx):
    import bm25s

    S = score_matrix(["review react components mobx"], keryx, scorer="bm25")
    assert S.min() >= 0 and S.max() <= 1
    raw = bm25s.BM25()
    corpus = [_tokenize.entry_token_list(s) for s in keryx]
    raw.index(corpus, show_progress=False)
    r = raw.get_scores(["review", "react", "component", "mobx"])
    assert int(np.argmax(S[0])) == int(np.argmax(r))


@pytest.mark.parametrize("scorer", ["tfidf", "bm25"])
def test_alternative_scorers_same_api(scorer):
    cat = _node_catalog()
    loo = T.leave_one_out(cat, make_probes(cat), scorer=scorer)
    assert len(loo) == 2 and loo.score.between(0, 1).all()


# ------------------------------------------------------------------------------------------------------------
# bad catalogs
# ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,line,field", [
    ("missing_name.jsonl", 3, "name"), ("empty_description.jsonl", 2, "description"),
    ("duplicate_ids.jsonl", 4, "id"), ("nonstring_trigger.jsonl", 1, "triggers"),
    ("triggers_not_list.jsonl", 1, "triggers"), ("invalid_json.jsonl", 2, None),
])
def test_bad_catalogs_name_file_and_line(name, line, field):
    with pytest.raises(DataError) as ei:
        load_catalog(BAD / name)
    e = ei.value
    assert e.path.endswith(name) and e.row == line and e.column == field
    assert name in str(e) and f"row {line}" in str(e)


def test_cli_bad_catalog_one_line_error():
    p = subprocess.run([sys.executable, "-m", "evallab.cli", "triggers", "tune", str(BAD / "invalid_json.jsonl")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    assert "invalid_json.jsonl" in p.stderr and "row 2" in p.stderr and "Traceback" not in p.stderr


def test_cli_score_and_scout_json():
    p = subprocess.run([sys.executable, "-m", "evallab.cli", "triggers", "scout", "keryx",
                        "kubernetes helm chart linting", "--json"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["decision"] == "create"


# ------------------------------------------------------------------------------------------------------------
# threshold tuning on hand-built pairs
# ------------------------------------------------------------------------------------------------------------
def _toy_pairs():
    # 4 probes (skills s0..s3), 3 pairs each: own skill (label 1) + 2 others; decision scores by hand
    d = {0: (0.9, 0.2, 0.1), 1: (0.6, 0.5, 0.0), 2: (0.4, 0.7, 0.1), 3: (0.8, 0.3, 0.35)}
    rows = []
    for p, (own, o1, o2) in d.items():
        for k, (v, lab) in enumerate(((own, 1), (o1, 0), (o2, 0))):
            rows.append({"probe_id": p, "probe_skill": f"s{p}", "skill_id": f"s{(p + k) % 4}", "label": lab,
                         "d_select": v, "d_support": v, "d_use": v})
    return pd.DataFrame(rows)


def test_choose_threshold_by_hand():
    pairs = _toy_pairs()
    grid = np.array([0.3, 0.45, 0.55, 0.65, 0.75, 0.95])
    ids, skills, g, c = _thresholds.confusion_by_probe(pairs, "select", grid)
    tot = c.sum(0)
    # at 0.55: TP 3 (0.9, 0.6, 0.8), FP 1 (0.7), FN 1, TN 7 → accuracy 10/12, F1 6/8
    assert list(tot[2]) == [3, 1, 1, 7]
    thr, val = _thresholds.choose_threshold(tot, g, "accuracy")
    assert (thr, val) == (0.55, pytest.approx(10 / 12))
    thr, val = _thresholds.choose_threshold(tot, g, "f1")
    assert (thr, val) == (0.55, pytest.approx(6 / 8))
    # zero FP first at 0.75 (0.7 is the largest negative): recall 2/4
    thr, val = _thresholds.choose_threshold(tot, g, "recall_at_zero_fp")
    assert (thr, val) == (0.75, pytest.approx(0.5))


def test_objectives_match_scikit_learn_at_every_threshold():
    from sklearn.metrics import balanced_accuracy_score, f1_score, matthews_corrcoef

    pairs = _toy_pairs()
    grid = np.array([0.3, 0.45, 0.55, 0.65, 0.75, 0.95])
    _, _, g, c = _thresholds.confusion_by_probe(pairs, "select", grid)
    tot = c.sum(0)
    y = pairs["label"].to_numpy()
    for thr in g:
        pred = (pairs["d_select"].to_numpy() >= thr).astype(int)
        for obj, ref in (("f1", f1_score), ("balanced_accuracy", balanced_accuracy_score),
                         ("mcc", matthews_corrcoef)):
            assert _thresholds.metric_at(tot, g, obj, thr) == pytest.approx(ref(y, pred)), (obj, thr)
    # selecting nothing: accuracy = the share of negatives (8 of 12), F1 0, balanced accuracy 0.5, MCC 0
    assert select_nothing_value(tot[0], "accuracy") == pytest.approx(8 / 12)
    assert select_nothing_value(tot[0], "balanced_accuracy") == 0.5
    assert select_nothing_value(tot[0], "f1") == 0.0 and select_nothing_value(tot[0], "mcc") == 0.0
    assert select_nothing_value(tot[0], "recall_at_zero_fp") == 0.0


def test_recall_at_zero_fp_infeasible_is_nan_and_keryx_constrained_too():
    # the toy pattern plus a probe whose wrong skill ties its right one at 1.0: no threshold is free of false
    # positives. Before, the objective read "recall 0" beside keryx's unconstrained recall; now both sides are
    # judged under the constraint: NaN with the reason, and the false positives at keryx's 0.30 counted by hand.
    tie = pd.DataFrame([{"probe_id": 4, "probe_skill": "s4", "skill_id": "s4", "label": 1, "d_select": 1.0,
                         "d_support": 1.0, "d_use": 1.0},
                        {"probe_id": 4, "probe_skill": "s4", "skill_id": "s0", "label": 0, "d_select": 1.0,
                         "d_support": 1.0, "d_use": 1.0}])
    pairs = pd.concat([_toy_pairs(), tie], ignore_index=True)
    grid = [0.3, 0.45, 0.55, 0.65, 0.75, 0.95, 1.0]
    _, _, g, c = _thresholds.confusion_by_probe(pairs, "select", grid)
    assert _thresholds.choose_threshold(c.sum(0), g, "recall_at_zero_fp") == (pytest.approx(float("nan"), nan_ok=True),
                                                                    pytest.approx(float("nan"), nan_ok=True))
    row = tune_thresholds(pairs, "select", grid=grid, n_resamples=50, n_splits=2).table.set_index(
        "objective").loc["recall_at_zero_fp"]
    assert math.isnan(row["threshold"]) and math.isnan(row["value"]) and math.isnan(row["keryx_value"])
    # negatives >= 0.30 at keryx's threshold: 0.5, 0.7, 0.3, 0.35 and the tie at 1.0 -> 5 false positives
    assert row["keryx_fp"] == 5
    assert "no threshold" in row["note"] and "5 false positive(s)" in row["note"]
    # F1 at keryx's 0.30 is judged as is (no constraint): TP 5, FP 5, FN 0 -> 10/15
    f1 = tune_thresholds(pairs, "select", grid=grid, n_resamples=0, n_splits=2).table.set_index(
        "objective").loc["f1"]
    assert f1["keryx_value"] == pytest.approx(10 / 15) and f1["keryx_fp"] == 5


def test_tune_thresholds_intervals_and_cv():
    pairs = pd.concat([_toy_pairs().assign(probe_id=lambda d, k=k: d.probe_id + 4 * k,
                                           probe_skill=lambda d, k=k: d.probe_skill + f"-{k}")
                       for k in range(5)], ignore_index=True)
    res = tune_thresholds(pairs, "select", grid=[0.3, 0.45, 0.55, 0.65, 0.75, 0.95], n_resamples=100,
                            n_splits=5)
    tab = res.table.set_index("objective")
    assert tab.loc["accuracy", "threshold"] == 0.55
    assert tab.loc["accuracy", "threshold_low"] <= 0.55 <= tab.loc["accuracy", "threshold_high"]
    # zero FP: 0.75 (above the largest negative, 0.7) in nearly every resample, so the 95% percentile interval is
    # the point [0.75, 0.75] — not shown (NaN), said so in the note, never printed as [x, x]
    z = tab.loc["recall_at_zero_fp"]
    assert z["threshold"] == 0.75 and math.isnan(z["threshold_low"]) and math.isnan(z["threshold_high"])
    assert "same threshold (0.75)" in z["note"] and "single point" in z["note"]
    assert tab.loc["accuracy", "cv_folds"] == 5
    # every fold sees the same toy pattern → the same threshold, held-out accuracy 10/12
    assert tab.loc["accuracy", "cv_threshold"] == pytest.approx(0.55)
    assert tab.loc["accuracy", "cv_value"] == pytest.approx(10 / 12)
    # keryx's 0.30 on this data: TP 4, FP 4 (0.5, 0.7, 0.3, 0.35), TN 4 → 8/12 (per copy; 5 identical copies)
    assert tab.loc["accuracy", "keryx_value"] == pytest.approx(8 / 12)


def test_roc_pr_by_hand():
    cur = roc_pr(_toy_pairs(), "select")
    # AUC = P(own > other) over 4×8 pairs; negatives 0.2 0.1 0.5 0.0 0.7 0.1 0.3 0.35:
    # own 0.9 beats 8, 0.6 beats 7, 0.4 beats 6, 0.8 beats 8 → 29/32
    assert cur["roc_auc"] == pytest.approx(29 / 32)


def test_pair_scores_drop_same_category_neighbours(keryx):
    probes = make_probes(keryx).iloc[:10]
    pairs = pair_scores(keryx, probes)
    cats = {s.id: s.category for s in keryx}
    same = [cats[a] == cats[b] and a != b for a, b in zip(pairs.probe_skill, pairs.skill_id, strict=True)]
    assert not any(same)
    assert (pairs.groupby("probe_id").label.sum() == 1).all()


def test_tfidf_leave_one_out_equals_a_refit(keryx):
    probes = make_probes(keryx).iloc[::10].reset_index(drop=True)
    fast = loo_scores(keryx, probes, scorer="tfidf")[0]
    refit = np.zeros_like(fast)
    for i, r in probes.iterrows():  # a fresh TfidfVectorizer fit on the catalog without the probe's trigger
        reduced = keryx.without_trigger(r.skill_id, r.source_trigger) if isinstance(r.source_trigger, str) else keryx
        refit[i] = score_matrix([r.prompt], reduced, scorer="tfidf")[0]
    np.testing.assert_allclose(fast, refit, atol=1e-9)


def test_bm25_leave_one_out_equals_a_refit(keryx):
    probes = make_probes(keryx).iloc[::7].reset_index(drop=True)
    for strip in (True, False):
        fast = loo_scores(keryx, probes, scorer="bm25", strip_exclusions=strip)[0]
        refit = np.zeros_like(fast)
        for i, r in probes.iterrows():  # a fresh bm25s index of the catalog without the probe's trigger
            reduced = keryx.without_trigger(r.skill_id, r.source_trigger) if isinstance(r.source_trigger, str) \
                else keryx
            refit[i] = score_matrix([r.prompt], reduced, scorer="bm25", strip_exclusions=strip)[0]
        np.testing.assert_array_equal(fast, refit)
        assert (fast > 0).mean() > 0.1  # the comparison is not between two zero matrices


def test_scout_own_description_is_never_create(keryx):
    # keryx scout.test.ts: querying an existing skill's own description returns use or fork with itself on top
    # (the description, stripped like the entry's own text, is fully covered by that entry: score 1.0 → use)
    for s in keryx:
        r = T.scout(s.description, keryx)
        assert r.decision == "use" and r.matches.skill_id.iloc[0] == s.id, s.id
        assert r.matches.score.iloc[0] == 1.0
