"""Coverage of every interval the reports show, by simulation from a known truth (issue 10, item 5).

``python -m benchmarks.coverage [--reps N] [--resamples B] [--jobs J] [--only NAME ...]`` (``make coverage``):
for each scenario, draw ``N`` tidy verdict tables from :mod:`evallab.simulation`, run the estimator exactly as a
report calls it (its public function on the tidy table), and count how often its nominal 95% interval holds the
TRUE population value, computed from the generating parameters (:mod:`evallab.simulation`'s ``true_*``). One
line per interval, ending in its coverage; the exit status is 1 when any coverage lies outside [0.93, 0.97]
(Monte-Carlo standard error of a coverage of 0.95 over 1,000 datasets: 0.007). Intervals shown for comparison only —
the judge-only rate beside the corrected ones, which SHOULD miss the gold rate — are printed as "reference" and
not gated.

Then the planner checks (``--only planner`` runs just them): each answer of :mod:`evallab.metrics._power` achieved in
``N`` simulated datasets at the planned size (power and stability within ±3 points, half-width within ±3%), and the
selective-judging guarantee (the share of calibration splits whose threshold keeps the true disagreement rate ≤ α is
at least 1 − δ); exit 1 when one fails.

An interval that is NaN counts as a miss (and is counted in ``nan``). Datasets and bootstrap seeds are fixed by
(scenario, replicate), so a run is reproducible whatever ``--jobs``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

BAND = (0.93, 0.97)
CONFIDENCE = 0.95


@dataclass
class Scenario:
    """One generating model and the intervals estimated on each of its datasets."""

    name: str
    simulate: Callable[[int], object]
    estimate: Callable[[object, int, int], dict]  # (data, seed, n_resamples) -> {key: (estimate, low, high)}
    truth: dict  # key -> true value
    labels: dict  # key -> line label
    reference: frozenset = frozenset()  # keys shown for comparison, not gated (e.g. the judge-only interval)


def _scenarios() -> list[Scenario]:
    from evallab import simulation as S
    from evallab.metrics import _agreement as A
    from evallab.metrics import _drift as D
    from evallab.metrics import _evaluators as E
    from evallab.metrics import _inflation as I
    from evallab.metrics import _position as P

    out = []
    boot = "item-cluster bootstrap"

    # ---- one pairwise judge, both orders, two samples: accuracy, Acc., consistency, first slot, kappa, win rate
    dA = S.PairwiseDesign(n_items=200, samples=2, p_gold_1=0.6, item_sd=1.0)
    jA = S.PairwiseJudge(skill=1.2, position_bias=0.5, tie_rate=0.05, unparsed_rate=0.03)

    def est_A(df, seed, B):
        kw = dict(n_resamples=B, confidence=CONFIDENCE, seed=seed)
        acc = A.accuracy(df, ["judge"], **kw).iloc[0]
        ps = A.pairwise_statistics(df, ["judge"], **kw).iloc[0]
        pb = P.position_bias(df, ["judge"], **kw).iloc[0]
        kg = A.cohen_kappa_vs_gold(df, ["judge"], **kw).iloc[0]
        wr = E.win_rates(df, ["judge"], preference=None, **kw).iloc[0]
        return {"accuracy": (acc.accuracy, acc.accuracy_low, acc.accuracy_high),
                "acc_ab": (ps.acc_ab, ps.acc_ab_low, ps.acc_ab_high),
                "acc": (ps.acc, ps.acc_low, ps.acc_high),
                "consistency": (ps.position_consistency, ps.position_consistency_low, ps.position_consistency_high),
                "first_slot": (pb.first_slot_preference, pb.first_slot_preference_low,
                               pb.first_slot_preference_high),
                "kappa_gold": (kg.kappa, kg.kappa_low, kg.kappa_high),
                "win_rate": (wr.win_rate, wr.win_rate_low, wr.win_rate_high)}
    d = dA.describe()
    out.append(Scenario(
        "pairwise", lambda s: S.simulate_pairwise(dA, [jA], s), est_A,
        {"accuracy": S.true_accuracy(dA, jA), "acc_ab": S.true_accuracy(dA, jA, "ab"),
         "acc": S.true_acc_mean_of_orders(dA, jA), "consistency": S.true_position_consistency(dA, jA),
         "first_slot": S.true_first_slot_preference(dA, jA), "kappa_gold": S.true_kappa_vs_gold(dA, jA),
         "win_rate": S.true_win_rate(dA, jA)},
        {"accuracy": f"accuracy vs gold, agreement.accuracy ({boot}, {d})",
         "acc_ab": f"LLMBar acc_ab, pairwise_statistics ({boot}, {d})",
         "acc": f"LLMBar Acc. = mean of order accuracies ({boot}, {d})",
         "consistency": f"position consistency, pairwise_statistics ({boot}, {d})",
         "first_slot": f"first-slot preference, position_bias ({boot}, {d})",
         "kappa_gold": f"Cohen's kappa vs gold ({boot}, {d})",
         "win_rate": f"win rate, evaluators.win_rates ({boot}, {d})"}))

    # ---- one reply per item: Wilson and the asymptotic kappa interval
    dB = S.PairwiseDesign(n_items=200, orders=("ab",), samples=1, p_gold_1=0.6, item_sd=1.0)
    jB = S.PairwiseJudge(skill=1.0, position_bias=0.3, tie_rate=0.0, unparsed_rate=0.03)

    def est_B(df, seed, B):
        kw = dict(n_resamples=B, confidence=CONFIDENCE, seed=seed)
        acc = A.accuracy(df, ["judge"], **kw).iloc[0]
        kg = A.cohen_kappa_vs_gold(df, ["judge"], **kw).iloc[0]
        wr = E.win_rates(df, ["judge"], preference=None, **kw).iloc[0]
        return {"accuracy": (acc.accuracy, acc.accuracy_low, acc.accuracy_high),
                "kappa_gold": (kg.kappa, kg.kappa_low, kg.kappa_high),
                "win_rate": (wr.win_rate, wr.win_rate_low, wr.win_rate_high)}
    d = dB.describe()
    out.append(Scenario(
        "one-reply", lambda s: S.simulate_pairwise(dB, [jB], s), est_B,
        {"accuracy": S.true_accuracy(dB, jB), "kappa_gold": S.true_kappa_vs_gold(dB, jB),
         "win_rate": S.true_win_rate(dB, jB)},
        {"accuracy": f"accuracy vs gold, agreement.accuracy (Wilson, {d})",
         "kappa_gold": f"Cohen's kappa vs gold (asymptotic ASE, {d})",
         "win_rate": f"win rate, evaluators.win_rates (Wilson, {d})"}))

    # ---- three judges sharing item difficulty: judge x judge kappa, Fleiss, Krippendorff
    dC = S.PairwiseDesign(n_items=200, samples=1, p_gold_1=0.6, item_sd=1.0)
    jC = [S.PairwiseJudge(name="A", skill=1.5, position_bias=0.3),
          S.PairwiseJudge(name="B", skill=0.8, position_bias=0.8, tie_rate=0.1),
          S.PairwiseJudge(name="C", skill=1.0, position_bias=-0.2, tie_rate=0.05)]

    def est_C(df, seed, B):
        kw = dict(n_resamples=B, confidence=CONFIDENCE, seed=seed)
        ja = A.judge_agreement(df, ["A", "B"], **kw)
        ja = ja[(ja["judge_a"] == "A") & (ja["judge_b"] == "B")].iloc[0]
        fk = A.fleiss_kappa(df, **kw).iloc[0]
        ka = A.krippendorff_alpha(df, **kw).iloc[0]
        return {"judge_kappa": (ja.kappa, ja.kappa_low, ja.kappa_high),
                "judge_agreement": (ja.agreement, ja.agreement_low, ja.agreement_high),
                "fleiss": (fk.kappa, fk.kappa_low, fk.kappa_high), "alpha": (ka.alpha, ka.alpha_low, ka.alpha_high)}
    from evallab.simulation import _expect_units  # the population table of judges A and B
    tab = _expect_units(dC, lambda g, o, u: S.reply_probabilities(jC[0], u, g, o)[..., :, None]
                        * S.reply_probabilities(jC[1], u, g, o)[..., None, :])
    d = dC.describe() + ", 3 judges"
    out.append(Scenario(
        "judges", lambda s: S.simulate_pairwise(dC, jC, s), est_C,
        {"judge_kappa": S.true_judge_kappa(dC, jC[0], jC[1]), "judge_agreement": float(np.trace(tab)),
         "fleiss": S.true_fleiss_kappa(dC, jC), "alpha": S.true_krippendorff_alpha(dC, jC)},
        {"judge_kappa": f"judge x judge Cohen's kappa, judge_agreement ({boot}, {d})",
         "judge_agreement": f"judge x judge raw agreement, judge_agreement ({boot}, {d})",
         "fleiss": f"Fleiss' kappa ({boot}, {d})",
         "alpha": f"Krippendorff's alpha, nominal ({boot}, {d})"}))

    # ---- drift: baseline vs candidate with known flip probabilities
    dD = S.PairwiseDesign(n_items=200, samples=2, p_gold_1=0.6, item_sd=1.0)
    jD = S.PairwiseJudge(name="baseline", skill=1.2, position_bias=0.5, tie_rate=0.05, unparsed_rate=0.03)
    drD = S.Drift(flip_right=-3.0, flip_wrong=-1.5, item_sd=1.0, unparsed_rate=0.03)

    def est_D(data, seed, B):
        r = D.compare(*data, by=(), n_resamples=B, confidence=CONFIDENCE, seed=seed).overall.iloc[0]
        return {"flip_rate": (r.flip_rate, r.flip_rate_low, r.flip_rate_high),
                "delta_accuracy": (r.delta_accuracy, r.delta_low, r.delta_high)}
    t = S.true_drift(dD, jD, drD)
    d = dD.describe()
    out.append(Scenario(
        "drift", lambda s: S.simulate_drift(dD, jD, drD, s), est_D,
        {"flip_rate": t["flip_rate"], "delta_accuracy": t["delta_accuracy"]},
        {"flip_rate": f"drift flip rate, drift.compare ({boot}, {d})",
         "delta_accuracy": f"drift delta_accuracy, drift.compare (paired {boot}, {d})"}))

    # ---- anchor effect: two strategies on the same items
    dE = S.PairwiseDesign(n_items=200, samples=1, p_gold_1=0.6, item_sd=1.0)
    jE = [S.PairwiseJudge(strategy="Vanilla", skill=1.0, position_bias=0.6, tie_rate=0.05, unparsed_rate=0.03),
          S.PairwiseJudge(strategy="Vanilla_1shot", skill=1.4, position_bias=0.2, tie_rate=0.05, unparsed_rate=0.03)]

    def est_E(df, seed, B):
        r = P.anchor_effect(df, variants=("Vanilla_1shot",), n_resamples=B, confidence=CONFIDENCE, seed=seed)
        r = r[r["strategy"] == "Vanilla_1shot"].iloc[0]
        return {"delta_first_slot": (r.delta_first_slot, r.delta_first_slot_low, r.delta_first_slot_high),
                "delta_accuracy": (r.delta_accuracy, r.delta_accuracy_low, r.delta_accuracy_high)}
    d = dE.describe()
    out.append(Scenario(
        "anchor", lambda s: S.simulate_pairwise(dE, jE, s), est_E,
        {"delta_first_slot": S.true_first_slot_preference(dE, jE[1]) - S.true_first_slot_preference(dE, jE[0]),
         "delta_accuracy": S.true_accuracy(dE, jE[1]) - S.true_accuracy(dE, jE[0])},
        {"delta_first_slot": f"anchor effect delta_first_slot, position.anchor_effect (paired {boot}, {d})",
         "delta_accuracy": f"anchor effect delta_accuracy, position.anchor_effect (paired {boot}, {d})"}))

    # ---- inflation: pass-only vs balanced anchors, pointwise with gold
    dF = S.PointwiseDesign(n_items=300, samples=3, p_gold_pass=0.5, item_sd=1.0)
    jF = S.PointwiseJudge(pass_logit_gold_pass=1.5, pass_logit_gold_fail=-1.5,
                          anchor_shift={"balanced": 0.0, "pass-only": 0.8}, unparsed_rate=0.02)

    def est_F(df, seed, B):
        r = I.inflation_table(df, n_resamples=B, confidence=CONFIDENCE, seed=seed)
        r = r[r["anchor_set"] == "pass-only"].iloc[0]
        return {"delta_false_pass": (r.delta_false_pass, r.delta_false_pass_low, r.delta_false_pass_high),
                "delta_true_pass": (r.delta_true_pass, r.delta_true_pass_low, r.delta_true_pass_high)}
    d = dF.describe() + " × 2 anchor sets"
    out.append(Scenario(
        "inflation", lambda s: S.simulate_pointwise(dF, jF, s), est_F,
        S.true_inflation_deltas(dF, jF, "pass-only"),
        {"delta_false_pass": f"inflation delta_false_pass, inflation_table (paired {boot}, {d})",
         "delta_true_pass": f"inflation delta_true_pass, inflation_table (paired {boot}, {d})"}))

    # ---- repetition: three samples per request
    dG = S.PairwiseDesign(n_items=200, samples=3, p_gold_1=0.6, item_sd=1.0)
    jG = S.PairwiseJudge(skill=1.2, position_bias=0.5, tie_rate=0.05)

    def est_G(df, seed, B):
        r = A.repetition_stability(df, n_resamples=B, confidence=CONFIDENCE, seed=seed).iloc[0]
        return {k: (r[k], r[f"{k}_low"], r[f"{k}_high"]) for k in ("repetition_stability", "unanimity",
                                                                   "flip_rate")}
    d = dG.describe()
    out.append(Scenario(
        "repetition", lambda s: S.simulate_pairwise(dG, [jG], s), est_G, S.true_repetition(dG, jG),
        {"repetition_stability": f"repetition stability, repetition_stability ({boot}, {d})",
         "unanimity": f"unanimity, repetition_stability ({boot}, {d})",
         "flip_rate": f"within-request flip rate, repetition_stability ({boot}, {d})"}))

    # ---- corrected rates (issue 15): judge verdicts on 2,000 items, gold on a random 300
    from evallab.metrics import _corrected as K

    dH = S.LabellingDesign(n_items=2000, n_gold=300, prevalence=0.6)
    jH = S.MisclassifyingJudge(sensitivity=0.9, specificity=0.7)

    def est_rates(df, seed, B):
        r = K.corrected_rates(df, ["judge"], confidence=CONFIDENCE, n_resamples=B, seed=seed).iloc[0]
        return {k: (r[k], r[f"{k}_low"], r[f"{k}_high"]) for k in ("ppi", "rg", "gold_only", "judge_only")}
    d = dH.describe() + f", judge Se {jH.sensitivity} Sp {jH.specificity}"
    out.append(Scenario(
        "corrected", lambda s: S.simulate_labelled(dH, jH, s), est_rates,
        {k: dH.prevalence for k in ("ppi", "rg", "gold_only", "judge_only")},
        {"ppi": f"pass rate, PPI++ (ppi_py, power-tuned), corrected_rates ({d})",
         "rg": f"pass rate, Rogan–Gladen with Se/Sp uncertainty, corrected_rates ({d})",
         "gold_only": f"pass rate, gold labels only (Wilson), corrected_rates ({d})",
         "judge_only": f"pass rate, judge only (Wilson) — reference, expected to miss ({d})"},
        reference=frozenset({"judge_only"})))

    dI = S.PairwiseDesign(n_items=2000, samples=1, p_gold_1=0.6, item_sd=1.0)
    jI = S.PairwiseJudge(skill=1.2, position_bias=0.5, tie_rate=0.05, unparsed_rate=0.03)
    d = dI.describe() + ", 300 with gold"
    out.append(Scenario(
        "corrected-win", lambda s: S.simulate_labelled_pairwise(dI, jI, 300, s), est_rates,
        {k: 1 - dI.p_gold_1 for k in ("ppi", "rg", "gold_only", "judge_only")},
        {"ppi": f"win rate of output 2, PPI++ (ppi_py, power-tuned), corrected_rates ({d})",
         "rg": f"win rate of output 2, Rogan–Gladen with Se/Sp uncertainty ({d})",
         "gold_only": f"win rate of output 2, gold labels only (Wilson) ({d})",
         "judge_only": f"win rate of output 2, judge only ({boot}) — reference, expected to miss ({d})"},
        reference=frozenset({"judge_only"})))

    dJ = S.TwoSystems(n_items=2000, n_gold=300, logit_pass=(0.8, 0.3), item_sd=1.0)

    def est_diff(df, seed, B):
        r = K.corrected_difference(df, "system", "A", "B", confidence=CONFIDENCE, n_resamples=B, seed=seed).iloc[0]
        return {k: (r[k], r[f"{k}_low"], r[f"{k}_high"]) for k in ("ppi", "gold_only", "judge_only")}
    d = dJ.describe() + f", judge Se {jH.sensitivity} Sp {jH.specificity}"
    t = S.true_two_systems_difference(dJ)
    out.append(Scenario(
        "corrected-difference", lambda s: S.simulate_two_systems(dJ, jH, s), est_diff,
        {"ppi": t, "gold_only": t, "judge_only": t},
        {"ppi": f"paired difference A − B, PPI++ on item differences, corrected_difference ({d})",
         "gold_only": f"paired difference A − B, gold pairs only (CLT) ({d})",
         "judge_only": f"paired difference A − B, judge only (paired {boot}) — reference, expected to miss ({d})"},
        reference=frozenset({"judge_only"})))
    return out


_CACHE: list[Scenario] | None = None


def _get() -> list[Scenario]:
    global _CACHE
    if _CACHE is None:
        _CACHE = _scenarios()
    return _CACHE


def _chunk(args) -> tuple[str, int, np.ndarray]:
    """Replicates ``start .. stop`` of one scenario: array (reps, keys, 3) of (estimate, low, high)."""
    name, start, stop, n_resamples, base_seed = args
    sc = next(s for s in _get() if s.name == name)
    keys = list(sc.truth)
    out = np.full((stop - start, len(keys), 3), np.nan)
    for i, rep in enumerate(range(start, stop)):
        seed = int(np.random.SeedSequence([base_seed, sum(map(ord, name)), rep]).generate_state(1)[0])
        res = sc.estimate(sc.simulate(seed), rep, n_resamples)
        out[i] = [[float(x) for x in res[k]] for k in keys]
    return name, start, out


def _summarise(s: Scenario, parts: list) -> list[dict]:
    arr = np.concatenate([a for _, a in sorted(parts, key=lambda x: x[0])])
    rows = []
    for j, k in enumerate(s.truth):
        est, lo, hi = arr[:, j, 0], arr[:, j, 1], arr[:, j, 2]
        t = s.truth[k]
        nan = ~(np.isfinite(lo) & np.isfinite(hi))
        cover = ~nan & (lo <= t + 1e-12) & (t - 1e-12 <= hi)
        rows.append(dict(scenario=s.name, key=k, label=s.labels[k], truth=float(t), reps=len(arr),
                         reference=k in s.reference,
                         coverage=float(cover.mean()), miss_low=int((~nan & (hi < t)).sum()),
                         miss_high=int((~nan & (lo > t)).sum()), nan=int(nan.sum()),
                         mean_estimate=float(np.nanmean(est)), mean_width=float(np.nanmean(hi - lo))))
    return rows


# ------------------------------------------------------------------------------------------ planner checks
#: a plan is met when the achieved power / stability is within this many points (proportion) of the planned value,
#: and the achieved half-width within this share of the planned one
PLAN_TOLERANCE = 0.03


def _check(name, label, planned, achieved, *, relative=False, detail=""):
    gap = (achieved / planned - 1) if relative else achieved - planned
    return dict(check=name, label=label, planned=float(planned), achieved=float(achieved), gap=float(gap),
                relative=relative, ok=bool(abs(gap) <= PLAN_TOLERANCE), detail=detail)


def planner_checks(reps: int = 1000, seed: int = 10) -> list[dict]:
    """Each planner answer (:mod:`evallab.metrics._power`) achieved in ``reps`` simulated datasets at the planned size,
    analysed with the estimator or test a report runs: within ±3 points of the planned power or stability, ±3% of the
    planned half-width."""
    from evallab.metrics import _corrected as K
    from evallab.metrics import _intervals as T
    from evallab.metrics import _power as W

    rng = np.random.default_rng([seed, 15])
    out = []
    reps = 2 * reps  # cheap draws: twice the datasets, so the Monte-Carlo error of a power (~0.9 points) stays small
    # gold labels for a half-width, with the judge (PPI++) and without
    pi, se, sp, items, h = 0.6, 0.9, 0.7, 2000, 0.04
    plan = W.gold_for_half_width(h, rate=pi, sensitivity=se, specificity=sp, items=items)
    n = plan["with_judge"]
    hw = []
    for _ in range(reps):
        y = (rng.random(items) < pi).astype(float)
        f = np.where(y == 1, rng.random(items) < se, rng.random(items) > sp).astype(float)
        r = K.ppi_mean(y[:n], f[:n], f[n:])
        hw.append((r["high"] - r["low"]) / 2)
    out.append(_check("gold_with_judge", f"gold labels for ±{h:.0%} with the judge (PPI++, Se {se}, Sp {sp}, rate {pi}, "
                      f"{items} items): {n} planned; mean PPI++ half-width", h, np.mean(hw), relative=True))
    n0 = plan["gold_only"]
    k = rng.binomial(n0, pi, reps)
    hw0 = [np.subtract(*T.wilson(x, n0)[::-1]) / 2 for x in k]
    out.append(_check("gold_only", f"gold labels for ±{h:.0%} without the judge (rate {pi}): {n0} planned; mean Wilson "
                      "half-width", h, np.mean(hw0), relative=True))
    # items for the drift gate
    f1, tol = 0.12, 0.05
    plan = W.items_for_flip_rate(f1, tol)
    n = plan["items"]
    flips = rng.binomial(1, f1, (reps, n))
    rej = [T.ratio_test_greater(row, np.ones(n), tol) < 0.05 for row in flips]
    out.append(_check("drift_items", f"items for the drift gate to flag a flip rate of {f1:.0%} against {tol:.0%} "
                      f"(one-sided binomial, alpha 0.05): {n} planned; power", plan["power"], np.mean(rej),
                      detail=f"target {plan['target_power']:.2f}"))
    # items for an accuracy change (McNemar)
    dlt, psi = 0.08, 0.2
    plan = W.items_for_accuracy_change(dlt, psi)
    n = plan["items"]
    cells = rng.multinomial(n, [(psi - dlt) / 2, (psi + dlt) / 2, 1 - psi], reps)
    rej = [T.mcnemar(b, c)["pvalue"] < 0.05 for b, c, _ in cells]
    out.append(_check("accuracy_items", f"items for McNemar to detect an accuracy change of {dlt:.0%} with {psi:.0%} "
                      f"discordant items (alpha 0.05): {n} planned; power", plan["power"], np.mean(rej),
                      detail=f"target {plan['target_power']:.2f}"))
    # samples per item for a stable majority: homogeneous items, then heterogeneous ones
    for label, rates in (("a flip rate of 0.20 on every item", np.full(reps, 0.2)),
                         ("per-item flip rates ~ 0.5·Beta(1, 3)", 0.5 * rng.beta(1, 3, reps))):
        plan = W.samples_for_stable_majority(item_flip_rates=rates, target=0.95) if rates.std() else \
            W.samples_for_stable_majority(float(rates[0]), target=0.95)
        k_ = int(plan["samples"])
        q = np.array([W.reply_flip_probability(x) for x in rates])
        a = (rng.random((reps, k_)) < q[:, None]).sum(1) * 2 < k_
        b = (rng.random((reps, k_)) < q[:, None]).sum(1) * 2 < k_
        out.append(_check("stable_majority", f"samples per item for a reproducible majority (target 0.95) with {label}: "
                          f"{k_} planned; share of {reps} items whose two rounds agree", plan["stability"],
                          np.mean(a == b)))
    return out


def selective_check(reps: int = 1000, seed: int = 10, alpha: float = 0.115, delta: float = 0.1) -> dict:
    """Jung et al.'s guarantee: over ``reps`` simulated calibration splits, the share whose threshold keeps the
    TRUE disagreement rate at or below ``alpha`` (:func:`evallab.simulation.true_selective_risk`) must be ≥ 1 − δ.
    ``alpha`` sits just below the risk of the lowest threshold (0.119), the hardest case for the guarantee."""
    from evallab import simulation as S
    from evallab.metrics import _selective as L

    d = S.RepeatedJudgeDesign(n_items=500, samples=5)
    ok, cover, none = 0, [], 0
    for r in range(reps):
        ic = L.item_confidence(S.simulate_repeated(d, [seed, 16, r]))
        fit = L.fixed_sequence_threshold(ic["confidence"], ic["agrees"], alpha=alpha, delta=delta)
        risk, cov = S.true_selective_risk(d, fit["threshold"])
        ok += risk <= alpha
        none += not np.isfinite(fit["threshold"])
        cover.append(cov)
    rate = ok / reps
    return dict(check="selective", label=f"selective judging, fixed-sequence test (alpha {alpha}, delta {delta}; "
                f"{d.describe()}): share of {reps} calibration splits whose threshold keeps the true disagreement "
                f"≤ alpha", planned=1 - delta, achieved=rate, gap=rate - (1 - delta), relative=False,
                ok=rate >= 1 - delta, detail=f"mean coverage {np.mean(cover):.3f}, {none} splits abstained on all")


def check_line(c: dict) -> str:
    """The printed line of one planner or guarantee check."""
    unit = f"{c['gap']:+.1%} of plan" if c["relative"] else f"{100 * c['gap']:+.1f} points"
    need = "≥ 1 − delta" if c["check"] == "selective" else ("±3% of plan" if c["relative"] else "±3 points")
    return (f"{c['label']:<150} planned {c['planned']:.4f}  achieved {c['achieved']:.4f}  ({unit}; needs {need})"
            f"{'  ' + c['detail'] if c['detail'] else ''}{'' if c['ok'] else '  FAILED'}")


def line(r: dict) -> str:
    """The printed line of one interval, ending in its coverage."""
    ok = BAND[0] <= r["coverage"] <= BAND[1]
    flag = " (reference, not gated)" if r.get("reference") else "" if ok else " OUTSIDE BAND"
    return (f"{r['label']:<118} true {r['truth']:+.4f}  mean est {r['mean_estimate']:+.4f}  width "
            f"{r['mean_width']:.3f}  miss lo/hi {r['miss_low']:>3}/{r['miss_high']:<3} nan {r['nan']:<3}"
            f"{flag}  coverage {r['coverage']:.3f}")


def run(names: list[str] | None = None, *, reps: int = 1000, n_resamples: int = 500, jobs: int = 2,
        chunk: int = 25, progress: bool = False, save: str | None = None, base_seed: int = 10) -> list[dict]:
    """Coverage of each interval of the scenarios ``names`` (all when None) over ``reps`` datasets.

    Returns one dict per interval: ``scenario``, ``key``, ``label``, ``truth``, ``reps``, ``coverage``, ``miss_low``
    (interval entirely below the truth), ``miss_high``, ``nan``, ``mean_estimate``, ``mean_width``.
    """
    scs = [s for s in _get() if names is None or s.name in names]
    # round robin over scenarios, so every scenario advances together
    tasks = [(s.name, a, min(a + chunk, reps), n_resamples, base_seed) for a in range(0, reps, chunk) for s in scs]
    results: dict[str, list] = {s.name: [] for s in scs}
    if save:
        os.makedirs(save, exist_ok=True)
        kept = []
        for t in tasks:  # resume: chunks already saved are read, not recomputed
            f = os.path.join(save, f"{t[0]}_{t[1]}_{t[2]}_{t[3]}_{t[4]}.npy")
            if os.path.exists(f):
                results[t[0]].append((t[1], np.load(f)))
            else:
                kept.append(t)
        tasks = kept
    t0 = time.perf_counter()

    def done(name, start, arr):
        results[name].append((start, arr))
        if save:
            np.save(os.path.join(save, f"{name}_{start}_{start + len(arr)}_{n_resamples}_{base_seed}.npy"), arr)
        if progress and sum(len(a) for _, a in results[name]) == reps:
            sc = next(x for x in scs if x.name == name)
            print(f"  [{time.perf_counter() - t0:5.0f} s] {name}: {reps} datasets", file=sys.stderr, flush=True)
            for r in _summarise(sc, results[name]):
                print("    " + line(r), file=sys.stderr, flush=True)
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as ex:
            for r in ex.map(_chunk, tasks):
                done(*r)
    else:
        for t in tasks:
            done(*_chunk(t))
    return [r for s in scs for r in _summarise(s, results[s.name])]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--resamples", type=int, default=500)
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--seed", type=int, default=10, help="base seed of the simulated datasets (another draw: another seed)")
    ap.add_argument("--save", default=None, help="directory keeping each chunk of results (a rerun resumes from it)")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = run(a.only, reps=a.reps, n_resamples=a.resamples, jobs=a.jobs, progress=True, save=a.save,
               base_seed=a.seed)
    bad = 0
    print(f"nominal {CONFIDENCE:.0%} intervals, {a.reps} simulated datasets each, {a.resamples} bootstrap resamples; "
          f"band [{BAND[0]}, {BAND[1]}]")
    for r in rows:
        bad += not r["reference"] and not BAND[0] <= r["coverage"] <= BAND[1]
        print(line(r), flush=True)
    gated = sum(not r["reference"] for r in rows)
    print(f"{gated} intervals gated, {bad} outside [{BAND[0]}, {BAND[1]}]; {len(rows) - gated} reference intervals "
          f"shown beside them; {time.perf_counter() - t0:.0f} s")
    failed = 0
    if a.only is None or "planner" in a.only:
        print(f"planner checks ({a.reps} simulated datasets each, at the planned size):")
        for c in planner_checks(a.reps, a.seed) + [selective_check(a.reps, a.seed)]:
            failed += not c["ok"]
            print(check_line(c), flush=True)
        print(f"{failed} planner/guarantee checks failed; {time.perf_counter() - t0:.0f} s")
    return 1 if bad or failed else 0


if __name__ == "__main__":
    sys.exit(main())
