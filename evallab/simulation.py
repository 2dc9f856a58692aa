"""Tidy verdict tables drawn from a known truth — the ground on which every interval's coverage is checked.

Pure: no I/O, no judge call; every function takes its parameters and a seed and returns tidy tables
(:mod:`evallab.verdicts`), or the TRUE population value of a figure, computed from the generating parameters.

The model
---------
Pairwise (:class:`PairwiseDesign`, :class:`PairwiseJudge`). Item *i* has a gold winner ``g_i`` (``1`` with
probability ``p_gold_1``) and a difficulty ``u_i ~ N(0, item_sd²)`` shared by every reply to it — every order, every
sample, every judge, every strategy. This random effect correlates the replies of one item, so the ITEM is the
independent unit, as the estimators assume. Given ``u_i``, replies are independent: a reply is unparsed (NA) with
probability ``unparsed_rate``; otherwise ``tie`` with probability ``tie_rate``; otherwise it names the gold output
with probability ``expit(skill + u_i ± position_bias)`` (``+`` when the gold output is shown first — ``ab`` and gold
``1``, or ``ba`` and gold ``2`` — so ``position_bias > 0`` favours the first slot) and the other output otherwise.

Drift (:class:`Drift`): the candidate judge repeats the baseline's latent verdict, except that it changes a correct
verdict (to the other output) with probability ``expit(flip_right + v_i)`` and a wrong or tie verdict (to the gold
output) with probability ``expit(flip_wrong + v_i)``, ``v_i ~ N(0, item_sd²)`` an item effect independent of ``u_i``;
each side is then unparsed independently.

Pointwise (:class:`PointwiseDesign`, :class:`PointwiseJudge`): gold ``pass`` with probability ``p_gold_pass``, an
item leniency ``u_i ~ N(0, item_sd²)``; under anchor set *a* a reply is ``pass`` with probability
``expit(pass_logit[gold] + anchor_shift[a] + u_i)``, else ``fail``; unparsed at random.

Truth
-----
Every ``true_*`` function returns the population value of the estimand exactly as the estimator defines it (a
ratio of expected sums, i.e. the limit of the estimator as items → ∞), computed analytically from the parameters:
expectations over the item effect by Gauss–Hermite quadrature (161 nodes; error < 1e-10 for these smooth
integrands), sums over gold and order, and — for the coefficients (Cohen's and Fleiss' kappa, Krippendorff's alpha)
— the coefficient's formula applied to the population cell probabilities. Unparsed replies are missing completely
at random, so they change no population value.

``__all__`` lists the designs, the generators and the truths of the headline figures (accuracy, position
consistency, kappa against gold, the two-system difference); the other ``true_*`` functions (one per estimand:
first-slot preference, Fleiss' kappa, Krippendorff's alpha, drift, repetition, inflation, pass rates, selective
risk …) and the helpers are importable by name from this module (``benchmarks/coverage.py`` checks them all).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import product

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from evallab import verdicts as V

#: pairwise labels, in the order of every probability vector here
LABELS = ("1", "2", "tie")
_X, _W = np.polynomial.hermite_e.hermegauss(161)
_W = _W / _W.sum()  # E[f(Z)] = Σ _W f(_X), Z ~ N(0, 1)


# ------------------------------------------------------------------------------------------------ parameters
@dataclass(frozen=True)
class PairwiseDesign:
    """Items, orders and samples of a pairwise table; the gold mix and the item heterogeneity."""

    n_items: int = 200
    orders: tuple[str, ...] = ("ab", "ba")
    samples: int = 2
    p_gold_1: float = 0.6
    item_sd: float = 1.0
    dataset: str = "sim"
    subset: str = "sim"

    def describe(self) -> str:
        o = f"{len(self.orders)} order" + ("s" if len(self.orders) > 1 else "")
        s = f"{self.samples} sample" + ("s" if self.samples > 1 else "")
        return f"{self.n_items} items × {o} × {s}"


@dataclass(frozen=True)
class PairwiseJudge:
    """A simulated pairwise judge (see the module docstring); ``skill`` is the log-odds of naming the gold output on
    an average item without position effect."""

    name: str = "judge"
    strategy: str = "Vanilla"
    skill: float = 1.0
    position_bias: float = 0.0
    tie_rate: float = 0.0
    unparsed_rate: float = 0.0


@dataclass(frozen=True)
class Drift:
    """How a candidate judge departs from the baseline: log-odds of changing a correct verdict (``flip_right``) and a
    wrong or tie verdict (``flip_wrong``) on an average item; ``item_sd`` of the item effect on flipping."""

    flip_right: float = -3.0
    flip_wrong: float = -1.5
    item_sd: float = 1.0
    unparsed_rate: float = 0.0
    name: str = "candidate"


@dataclass(frozen=True)
class PointwiseDesign:
    n_items: int = 300
    samples: int = 3
    p_gold_pass: float = 0.5
    item_sd: float = 1.0
    dataset: str = "sim"
    subset: str = "sim"

    def describe(self) -> str:
        return f"{self.n_items} items × {self.samples} samples"


@dataclass(frozen=True)
class PointwiseJudge:
    """Pass/fail judge: log-odds of ``pass`` by gold, shifted per anchor set (the inflation)."""

    name: str = "judge"
    pass_logit_gold_pass: float = 1.5
    pass_logit_gold_fail: float = -1.5
    anchor_shift: dict = field(default_factory=lambda: {"balanced": 0.0, "pass-only": 0.8})
    unparsed_rate: float = 0.0


# ------------------------------------------------------------------------------------------------ tables
def _frame(cols: dict, n: int) -> pd.DataFrame:
    """A tidy verdict table with the schema's columns and dtypes (built directly: no validation pass)."""
    out = {}
    for c, t in V.SCHEMA.items():
        v = cols.get(c, V.DEFAULTS.get(c, pd.NA))
        if np.ndim(v) == 0:
            v = [v] * n
        out[c] = pd.array(v, dtype=t)
    return pd.DataFrame(out)


def _labels(codes: np.ndarray, vocab: Sequence[str]) -> np.ndarray:
    lut = np.array([*vocab, None], dtype=object)
    return lut[np.where(codes < 0, len(vocab), codes)]


def _pairwise_codes(design: PairwiseDesign, judge: PairwiseJudge, u: np.ndarray, g1: np.ndarray,
                    rng: np.random.Generator) -> np.ndarray:
    """Latent verdict codes (0 = ``1``, 1 = ``2``, 2 = tie) of shape (items, orders, samples), before parsing."""
    ab = np.array([o == "ab" for o in design.orders])
    gold_first = ab[None, :] == g1[:, None]  # (n, O)
    sign = np.where(gold_first, 1.0, -1.0)
    c = expit(judge.skill + u[:, None] + judge.position_bias * sign)[..., None]  # (n, O, 1)
    shape = (design.n_items, len(design.orders), design.samples)
    correct = rng.random(shape) < c
    gold_code = np.where(g1, 0, 1)[:, None, None]
    codes = np.where(correct, gold_code, 1 - gold_code)
    return np.where(rng.random(shape) < judge.tie_rate, 2, codes)


def _long(design: PairwiseDesign, codes: np.ndarray, g1: np.ndarray, judge: str, strategy: str,
          unparsed_rate: float, rng: np.random.Generator) -> pd.DataFrame:
    n, n_orders, S = codes.shape
    codes = np.where(rng.random(codes.shape) < unparsed_rate, -1, codes)
    item = np.repeat(np.arange(n), n_orders * S)
    cols = {"item_id": np.char.add("i", item.astype(str)), "dataset": design.dataset, "subset": design.subset,
            "judge": judge, "strategy": strategy, "anchor_set": "none",
            "order": np.tile(np.repeat(np.array(design.orders), S), n),
            "sample": np.tile(np.arange(S), n * n_orders), "verdict": _labels(codes.ravel(), LABELS),
            "gold": np.where(g1, "1", "2")[item]}
    return _frame(cols, n * n_orders * S)


def simulate_pairwise(design: PairwiseDesign, judges: Sequence[PairwiseJudge], seed) -> pd.DataFrame:
    """One tidy pairwise table: every judge replies to the same items (sharing gold and item difficulty), in every
    order of ``design`` and ``design.samples`` times each. Judges are told apart by ``name`` and ``strategy``."""
    rng = np.random.default_rng(seed)
    u = rng.normal(0.0, design.item_sd, design.n_items)
    g1 = rng.random(design.n_items) < design.p_gold_1
    parts = [_long(design, _pairwise_codes(design, j, u, g1, rng), g1, j.name, j.strategy, j.unparsed_rate, rng)
             for j in judges]
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def simulate_drift(design: PairwiseDesign, baseline: PairwiseJudge, drift: Drift, seed
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Baseline and candidate tables on the same requests (see :class:`Drift`)."""
    rng = np.random.default_rng(seed)
    u = rng.normal(0.0, design.item_sd, design.n_items)
    g1 = rng.random(design.n_items) < design.p_gold_1
    v = rng.normal(0.0, drift.item_sd, design.n_items)[:, None, None]
    base = _pairwise_codes(design, baseline, u, g1, rng)
    gold_code = np.where(g1, 0, 1)[:, None, None]
    right = base == gold_code
    p_change = np.where(right, expit(drift.flip_right + v), expit(drift.flip_wrong + v))
    change = rng.random(base.shape) < p_change
    cand = np.where(change, np.where(right, 1 - gold_code, gold_code), base)
    b = _long(design, base, g1, baseline.name, baseline.strategy, baseline.unparsed_rate, rng)
    c = _long(design, cand, g1, drift.name, baseline.strategy, drift.unparsed_rate, rng)
    return b, c


def simulate_pointwise(design: PointwiseDesign, judge: PointwiseJudge, seed) -> pd.DataFrame:
    """Pass/fail replies with gold under every anchor set of ``judge.anchor_shift`` (the same items, ``samples``
    replies each)."""
    rng = np.random.default_rng(seed)
    n, S = design.n_items, design.samples
    u = rng.normal(0.0, design.item_sd, n)
    gp = rng.random(n) < design.p_gold_pass
    base = np.where(gp, judge.pass_logit_gold_pass, judge.pass_logit_gold_fail) + u
    parts = []
    for a, shift in judge.anchor_shift.items():
        passed = rng.random((n, S)) < expit(base + shift)[:, None]
        codes = np.where(rng.random((n, S)) < judge.unparsed_rate, -1, np.where(passed, 0, 1))
        item = np.repeat(np.arange(n), S)
        parts.append(_frame({"item_id": np.char.add("i", item.astype(str)), "dataset": design.dataset,
                             "subset": design.subset, "judge": judge.name, "strategy": "", "anchor_set": a,
                             "order": "", "sample": np.tile(np.arange(S), n),
                             "verdict": _labels(codes.ravel(), ("pass", "fail")),
                             "gold": np.where(gp, "pass", "fail")[item]}, n * S))
    return pd.concat(parts, ignore_index=True)


def keep_gold(df: pd.DataFrame, n_gold: int, rng: np.random.Generator) -> pd.DataFrame:
    """``df`` with gold kept on ``n_gold`` items drawn at random without replacement (every reply of a kept item
    keeps it) and NA elsewhere: a random labelling round."""
    items = df["item_id"].unique()
    kept = rng.choice(len(items), size=min(n_gold, len(items)), replace=False)
    out = df.copy()
    out.loc[~out["item_id"].isin(items[kept]), "gold"] = pd.NA
    return out


@dataclass(frozen=True)
class MisclassifyingJudge:
    """A pass/fail judge with a known sensitivity (P(pass | gold pass)) and specificity (P(fail | gold fail)), the
    same on every item; ``samples`` independent replies per item; unparsed at random."""

    sensitivity: float = 0.9
    specificity: float = 0.7
    samples: int = 1
    unparsed_rate: float = 0.0
    name: str = "judge"


@dataclass(frozen=True)
class LabellingDesign:
    """Items judged by a judge, gold on a random subset: ``n_items`` items, gold ``pass`` with probability
    ``prevalence``, gold kept on ``n_gold`` random items."""

    n_items: int = 2000
    n_gold: int = 300
    prevalence: float = 0.6
    dataset: str = "sim"
    subset: str = "sim"

    def describe(self) -> str:
        return f"{self.n_items} items, {self.n_gold} with gold"


def simulate_labelled(design: LabellingDesign, judge: MisclassifyingJudge, seed) -> pd.DataFrame:
    """A pointwise table: ``judge.samples`` replies per item with gold on ``design.n_gold`` random items. The true
    pass rate is ``design.prevalence``; the judge's own rate is ``prevalence·Se + (1 − prevalence)·(1 − Sp)``."""
    rng = np.random.default_rng(seed)
    n, S = design.n_items, judge.samples
    gp = rng.random(n) < design.prevalence
    p = np.where(gp, judge.sensitivity, 1 - judge.specificity)
    passed = rng.random((n, S)) < p[:, None]
    codes = np.where(rng.random((n, S)) < judge.unparsed_rate, -1, np.where(passed, 0, 1))
    item = np.repeat(np.arange(n), S)
    df = _frame({"item_id": np.char.add("i", item.astype(str)), "dataset": design.dataset, "subset": design.subset,
                 "judge": judge.name, "strategy": "", "anchor_set": "none", "order": "",
                 "sample": np.tile(np.arange(S), n), "verdict": _labels(codes.ravel(), ("pass", "fail")),
                 "gold": np.where(gp, "pass", "fail")[item]}, n * S)
    return keep_gold(df, design.n_gold, rng)


def simulate_labelled_pairwise(design: PairwiseDesign, judge: PairwiseJudge, n_gold: int, seed) -> pd.DataFrame:
    """:func:`simulate_pairwise` for one judge with gold kept on ``n_gold`` random items. The true win rate of
    output 2 is ``1 − design.p_gold_1``."""
    rng = np.random.default_rng(seed)
    df = simulate_pairwise(design, [judge], rng)
    return keep_gold(df, n_gold, rng)


@dataclass(frozen=True)
class TwoSystems:
    """Two systems answering the same ``n_items`` prompts: answer of system *s* to item *i* passes gold with
    probability ``expit(logit_pass[s] + u_i)``, ``u_i ~ N(0, item_sd²)`` shared by both (hard prompts are hard for
    both, so the pairing matters); the judge (:class:`MisclassifyingJudge`) grades each answer; gold on ``n_gold``
    random items (both answers)."""

    n_items: int = 2000
    n_gold: int = 300
    logit_pass: tuple[float, float] = (0.8, 0.3)
    item_sd: float = 1.0
    names: tuple[str, str] = ("A", "B")

    def describe(self) -> str:
        return f"{self.n_items} items × 2 systems, {self.n_gold} with gold"


def simulate_two_systems(design: TwoSystems, judge: MisclassifyingJudge, seed) -> pd.DataFrame:
    """A pointwise table with a ``system`` column (``design.names``), one answer per system and item."""
    rng = np.random.default_rng(seed)
    n, S = design.n_items, judge.samples
    u = rng.normal(0.0, design.item_sd, n)
    parts = []
    gold_rows = rng.choice(n, size=min(design.n_gold, n), replace=False)
    has_gold = np.zeros(n, bool)
    has_gold[gold_rows] = True
    for name, a in zip(design.names, design.logit_pass, strict=True):
        gp = rng.random(n) < expit(a + u)
        p = np.where(gp, judge.sensitivity, 1 - judge.specificity)
        passed = rng.random((n, S)) < p[:, None]
        codes = np.where(rng.random((n, S)) < judge.unparsed_rate, -1, np.where(passed, 0, 1))
        item = np.repeat(np.arange(n), S)
        gold = np.where(has_gold, np.where(gp, "pass", "fail"), None)[item]
        f = _frame({"item_id": np.char.add("i", item.astype(str)), "dataset": "sim", "subset": "sim",
                    "judge": judge.name, "strategy": "", "anchor_set": "none", "order": "",
                    "sample": np.tile(np.arange(S), n), "verdict": _labels(codes.ravel(), ("pass", "fail")),
                    "gold": gold}, n * S)
        f["system"] = name
        parts.append(f)
    return pd.concat(parts, ignore_index=True)


def true_two_systems_difference(design: TwoSystems) -> float:
    """The true difference of gold pass rates, system 0 minus system 1 (quadrature over the item effect)."""
    u = design.item_sd * _X
    a, b = design.logit_pass
    return float(_W @ (expit(a + u) - expit(b + u)))


@dataclass(frozen=True)
class RepeatedJudgeDesign:
    """Pass/fail items with gold on every item, ``samples`` replies each: a reply agrees with gold with an item's own
    probability ``p_i ~ Beta(beta_a, beta_b)`` (easy items: p near 1; hard ones: near ½ or below). The majority of
    an odd number of samples is the verdict; its confidence is the share of samples giving it."""

    n_items: int = 500
    samples: int = 5
    beta_a: float = 4.0
    beta_b: float = 1.0
    p_gold_pass: float = 0.5

    def describe(self) -> str:
        return f"{self.n_items} items × {self.samples} samples, per-item accuracy Beta({self.beta_a:g}, {self.beta_b:g})"


def simulate_repeated(design: RepeatedJudgeDesign, seed) -> pd.DataFrame:
    """A pointwise table drawn from :class:`RepeatedJudgeDesign`."""
    rng = np.random.default_rng(seed)
    n, S = design.n_items, design.samples
    p = rng.beta(design.beta_a, design.beta_b, n)
    gp = rng.random(n) < design.p_gold_pass
    right = rng.random((n, S)) < p[:, None]
    passed = np.where(right, gp[:, None], ~gp[:, None])
    item = np.repeat(np.arange(n), S)
    return _frame({"item_id": np.char.add("i", item.astype(str)), "dataset": "sim", "subset": "sim",
                   "judge": "judge", "strategy": "", "anchor_set": "none", "order": "",
                   "sample": np.tile(np.arange(S), n), "verdict": np.where(passed.ravel(), "pass", "fail"),
                   "gold": np.where(gp, "pass", "fail")[item]}, n * S)


def true_selective_risk(design: RepeatedJudgeDesign, threshold: float) -> tuple[float, float]:
    """(risk, coverage) in the population when items whose majority confidence is ≥ ``threshold`` are trusted: risk
    = P(majority disagrees with gold | confidence ≥ threshold), coverage = P(confidence ≥ threshold). The number of
    samples agreeing with gold is beta-binomial(samples, beta_a, beta_b); ``threshold = inf`` → (0, 0)."""
    from scipy.stats import betabinom

    k = design.samples
    x = np.arange(k + 1)
    pmf = betabinom.pmf(x, k, design.beta_a, design.beta_b)
    conf = np.maximum(x, k - x) / k
    kept = conf >= threshold - 1e-12
    cover = float(pmf[kept].sum())
    if cover == 0:
        return 0.0, 0.0
    return float(pmf[kept & (2 * x < k)].sum() / cover), cover


# ------------------------------------------------------------------------------------------------ truth
def reply_probabilities(judge: PairwiseJudge, u: np.ndarray, gold: str, order: str) -> np.ndarray:
    """P(verdict = ``1``, ``2``, ``tie`` | parsed, item effect ``u``, gold, order), shape ``u.shape + (3,)``."""
    gold_first = (order == "ab") == (gold == "1")
    c = expit(judge.skill + np.asarray(u, float) + (judge.position_bias if gold_first else -judge.position_bias))
    p = np.zeros(c.shape + (3,))
    gi = LABELS.index(gold)
    p[..., gi] = (1 - judge.tie_rate) * c
    p[..., 1 - gi] = (1 - judge.tie_rate) * (1 - c)
    p[..., 2] = judge.tie_rate
    return p


def _gold_mix(design: PairwiseDesign):
    return (("1", design.p_gold_1), ("2", 1.0 - design.p_gold_1))


def _expect_units(design: PairwiseDesign, fn, orders: Sequence[str] | None = None):
    """E over units (gold, order — equally weighted — and item effect) of ``fn(gold, order, u)``."""
    orders = list(orders or design.orders)
    u = design.item_sd * _X
    total = 0.0
    for g, pg in _gold_mix(design):
        for o in orders:
            total = total + pg / len(orders) * np.tensordot(_W, np.asarray(fn(g, o, u), float), axes=(0, 0))
    return total


def true_accuracy(design: PairwiseDesign, judge: PairwiseJudge, order: str | None = None) -> float:
    """Correct / parsed replies with gold (one order, or every order of the design pooled)."""
    return float(_expect_units(design, lambda g, o, u: reply_probabilities(judge, u, g, o)[..., LABELS.index(g)],
                               [order] if order else None))


def true_acc_mean_of_orders(design: PairwiseDesign, judge: PairwiseJudge) -> float:
    """LLMBar's Acc.: the mean of the two order accuracies."""
    return 0.5 * (true_accuracy(design, judge, "ab") + true_accuracy(design, judge, "ba"))


def true_first_slot_preference(design: PairwiseDesign, judge: PairwiseJudge) -> float:
    """Share of decisive (non-tie) parsed replies that pick the output shown first."""
    def first(g, o, u):
        p = reply_probabilities(judge, u, g, o)
        return p[..., 0 if o == "ab" else 1]
    dec = _expect_units(design, lambda g, o, u: 1 - reply_probabilities(judge, u, g, o)[..., 2])
    return float(_expect_units(design, first) / dec)


def true_position_consistency(design: PairwiseDesign, judge: PairwiseJudge) -> float:
    """Share of (item, sample) pairs, both orders parsed, with the same verdict in both orders (replies of one item
    are independent given its difficulty)."""
    u = design.item_sd * _X
    return float(sum(pg * _W @ (reply_probabilities(judge, u, g, "ab") * reply_probabilities(judge, u, g, "ba")
                                ).sum(-1) for g, pg in _gold_mix(design)))


def true_win_rate(design: PairwiseDesign, judge: PairwiseJudge) -> float:
    """Mean preference for output 2 (``2`` → 1, ``tie`` → ½, ``1`` → 0) over parsed replies."""
    return float(_expect_units(design, lambda g, o, u: reply_probabilities(judge, u, g, o) @ np.array([0, 1, .5])))


def kappa_of_table(t: np.ndarray) -> float:
    """Cohen's kappa of a (population) contingency table of cell probabilities or counts."""
    t = np.asarray(t, float) / np.sum(t)
    po, pe = np.trace(t), float(t.sum(1) @ t.sum(0))
    return float((po - pe) / (1 - pe))


def true_kappa_vs_gold(design: PairwiseDesign, judge: PairwiseJudge) -> float:
    """Cohen's kappa of gold × verdict over parsed replies (labels 1, 2, tie)."""
    def cell(g, o, u):
        row = np.zeros(u.shape + (3, 3))
        row[..., LABELS.index(g), :] = reply_probabilities(judge, u, g, o)
        return row
    return kappa_of_table(_expect_units(design, cell))


def _rater_probs(design, judges, g, o, u):
    return np.stack([reply_probabilities(j, u, g, o) for j in judges], axis=-2)  # (K, m, 3)


def true_judge_kappa(design: PairwiseDesign, a: PairwiseJudge, b: PairwiseJudge) -> float:
    """Cohen's kappa between two judges on the units (item, order, sample) both parsed."""
    return kappa_of_table(_expect_units(
        design, lambda g, o, u: reply_probabilities(a, u, g, o)[..., :, None] * reply_probabilities(b, u, g, o)[
            ..., None, :]))


def _pair_moments(design, judges):
    """Per unit: E[Σ_{r≠r'} P(r = c, r' = k)] (3×3) and E[n_c] (3), with m = len(judges) raters."""
    def pairs(g, o, u):
        p = _rater_probs(design, judges, g, o, u)
        s = p.sum(-2)
        return s[..., :, None] * s[..., None, :] - np.einsum("...rc,...rk->...ck", p, p)
    return _expect_units(design, pairs), _expect_units(design, lambda g, o, u: _rater_probs(
        design, judges, g, o, u).sum(-2))


def true_fleiss_kappa(design: PairwiseDesign, judges: Sequence[PairwiseJudge]) -> float:
    """Fleiss' kappa with every judge a rater of every unit: (P̄ − P̄e) / (1 − P̄e) with P̄ = E[Σ_c n_c(n_c − 1)] /
    (m(m − 1)) and P̄e = Σ_c (E[n_c] / m)²."""
    m = len(judges)
    pair, nc = _pair_moments(design, judges)
    p_bar = np.trace(pair) / (m * (m - 1))
    pe = float(((nc / m) ** 2).sum())
    return float((p_bar - pe) / (1 - pe))


def true_krippendorff_alpha(design: PairwiseDesign, judges: Sequence[PairwiseJudge]) -> float:
    """Nominal Krippendorff's alpha, no missing value: 1 − m·d_o / Σ_{c≠k} ν_c ν_k, the limit of
    1 − (n − 1)·D_o / D_e with d_o = E[Σ_{c≠k} o_ck] per unit (o_ck = pairs (c, k) / (m − 1)) and ν_c = E[n_c]."""
    m = len(judges)
    pair, nc = _pair_moments(design, judges)
    off = ~np.eye(3, dtype=bool)
    d_o = pair[off].sum() / (m - 1)
    d_e = (nc[:, None] * nc[None, :])[off].sum()
    return float(1 - m * d_o / d_e)


def _multinomial_outcomes(k: int):
    """Every sequence of ``k`` labels: counts (n_seq, 3)."""
    seqs = np.array(list(product(range(3), repeat=k)))
    return np.stack([(seqs == c).sum(1) for c in range(3)], axis=1)


def true_repetition(design: PairwiseDesign, judge: PairwiseJudge) -> dict:
    """Repetition stability (E[modal count / k]), unanimity (P(all k samples agree)) and the within-request flip
    rate (share of sample pairs that differ) for requests of ``design.samples`` parsed samples each."""
    k = design.samples
    counts = _multinomial_outcomes(k)

    def seq_prob(g, o, u):
        p = reply_probabilities(judge, u, g, o)  # (K, 3)
        return np.prod(p[:, None, :] ** counts[None, :, :], axis=-1)  # (K, n_seq)
    modal = _expect_units(design, lambda g, o, u: seq_prob(g, o, u) @ (counts.max(1) / k))
    unan = _expect_units(design, lambda g, o, u: (reply_probabilities(judge, u, g, o) ** k).sum(-1))
    same = _expect_units(design, lambda g, o, u: (reply_probabilities(judge, u, g, o) ** 2).sum(-1))
    return {"repetition_stability": float(modal), "unanimity": float(unan), "flip_rate": float(1 - same)}


def true_drift(design: PairwiseDesign, baseline: PairwiseJudge, drift: Drift) -> dict:
    """Flip rate (changed / both parsed) and candidate − baseline accuracy vs gold."""
    v = drift.item_sd * _X
    fr, fw = float(_W @ expit(drift.flip_right + v)), float(_W @ expit(drift.flip_wrong + v))
    c = true_accuracy(design, baseline)  # P(baseline correct); item effects u and v are independent
    return {"flip_rate": c * fr + (1 - c) * fw, "delta_accuracy": (1 - c) * fw - c * fr,
            "baseline_accuracy": c, "candidate_accuracy": c * (1 - fr) + (1 - c) * fw}


def true_pass_rates(design: PointwiseDesign, judge: PointwiseJudge) -> dict:
    """Per anchor set: ``false_pass_rate`` (pass on gold-FAIL items), ``true_pass_rate`` (gold PASS), ``pass_rate``."""
    u = design.item_sd * _X
    out = {}
    for a, s in judge.anchor_shift.items():
        tp = float(_W @ expit(judge.pass_logit_gold_pass + s + u))
        fp = float(_W @ expit(judge.pass_logit_gold_fail + s + u))
        out[a] = {"true_pass_rate": tp, "false_pass_rate": fp,
                  "pass_rate": design.p_gold_pass * tp + (1 - design.p_gold_pass) * fp}
    return out


def true_inflation_deltas(design: PointwiseDesign, judge: PointwiseJudge, variant: str,
                          baseline: str = "balanced") -> dict:
    """``delta_false_pass`` and ``delta_true_pass`` of ``variant`` against ``baseline`` (percentage points / 100)."""
    r = true_pass_rates(design, judge)
    return {"delta_false_pass": r[variant]["false_pass_rate"] - r[baseline]["false_pass_rate"],
            "delta_true_pass": r[variant]["true_pass_rate"] - r[baseline]["true_pass_rate"]}


def skill_for_accuracy(accuracy: float, item_sd: float = 1.0) -> float:
    """The ``skill`` (log-odds) whose marginal accuracy over items is ``accuracy`` (no ties, no position bias)."""
    from scipy.optimize import brentq

    return float(brentq(lambda s: _W @ expit(s + item_sd * _X) - accuracy, logit(1e-6) - 20, logit(1 - 1e-6) + 20))


__all__ = ["Drift", "LabellingDesign", "MisclassifyingJudge", "PairwiseDesign", "PairwiseJudge",
           "PointwiseDesign", "PointwiseJudge", "RepeatedJudgeDesign", "TwoSystems", "simulate_drift",
           "simulate_labelled", "simulate_labelled_pairwise", "simulate_pairwise", "simulate_pointwise",
           "simulate_repeated", "simulate_two_systems", "true_accuracy", "true_kappa_vs_gold",
           "true_position_consistency", "true_two_systems_difference"]
