"""The power planner: closed forms recomputed by hand, exact powers against scipy/statsmodels calls made here, and a
reduced simulation of each plan (the full check is ``make coverage``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from benchmarks import coverage as C
from evallab.errors import EvallabError
from evallab.metrics import _intervals as intervals
from evallab.metrics import _power as W


def test_gold_only_is_the_textbook_sample_size():
    r = W.gold_for_half_width(0.05, rate=0.5, correlation=0.0)
    assert r["gold_only"] == math.ceil(1.959963984540054**2 * 0.25 / 0.05**2) == 385
    assert r["with_judge"] == 385  # a judge uncorrelated with gold saves nothing


def test_with_judge_unlimited_items_scales_by_one_minus_rho_squared():
    r = W.gold_for_half_width(0.03, rate=0.6, correlation=0.8)
    z = 1.959963984540054
    assert r["with_judge"] == math.ceil(z * z * 0.24 * (1 - 0.64) / 0.03**2)


def test_judge_correlation_from_sensitivity_and_specificity():
    # the correlation of two indicators computed from their joint table, here by hand
    pi, se, sp = 0.3, 0.8, 0.9
    p11, p10 = pi * se, pi * (1 - se)
    p01 = (1 - pi) * (1 - sp)
    q = p11 + p01
    rho = (p11 - pi * q) / math.sqrt(pi * (1 - pi) * q * (1 - q))
    assert W.judge_correlation(pi, se, sp) == pytest.approx(rho)
    assert p10 >= 0


def test_ppi_variance_factor_matches_the_optimal_lambda_variance():
    # Var(lambda) = lambda^2 s_f^2/N + (s_y^2 - 2 lambda c + lambda^2 s_f^2)/n minimised numerically
    n, N, sy, sf, c = 200, 1500, 0.24, 0.2, 0.15
    lam = np.linspace(0, 1.5, 300001)
    v = lam**2 * sf / N + (sy - 2 * lam * c + lam**2 * sf) / n
    rho2 = c**2 / (sy * sf)
    assert W.ppi_variance_factor(n, N, math.sqrt(rho2)) * sy / n == pytest.approx(v.min(), rel=1e-6)


def test_binomial_power_is_the_exact_binomial_test():
    n, p0, p1 = 150, 0.05, 0.12
    k = np.arange(n + 1)
    reject = np.array([sps.binomtest(int(x), n, p0, alternative="greater").pvalue < 0.05 for x in k])
    assert W.binomial_power(n, p0, p1, 0.05)[0] == pytest.approx(sps.binom.pmf(k[reject], n, p1).sum())


def test_items_for_flip_rate_stays_above_target_from_the_answer_on():
    r = W.items_for_flip_rate(0.12, 0.05, power=0.8)
    n = r["items"]
    pw = W.binomial_power(np.arange(n, n + 40), 0.05, 0.12, 0.05)
    assert (pw >= 0.8).all() and W.binomial_power(n - 1, 0.05, 0.12, 0.05)[0] < 0.8
    with pytest.raises(EvallabError, match="not above tolerance"):
        W.items_for_flip_rate(0.04, 0.05)


def test_mcnemar_rejects_is_statsmodels_mcnemar():
    for b in range(0, 40, 3):
        for c in range(0, 40, 4):
            assert bool(W.mcnemar_rejects(np.array([b]), np.array([c]), 0.05)[0]) == (
                intervals.mcnemar(b, c)["pvalue"] < 0.05)


def test_mcnemar_power_by_full_enumeration_on_a_small_case():
    n, dlt, psi = 40, 0.15, 0.3
    pb, pc = (psi - dlt) / 2, (psi + dlt) / 2
    total = 0.0
    for b in range(n + 1):
        for c in range(n + 1 - b):
            pr = sps.multinomial.pmf([b, c, n - b - c], n, [pb, pc, 1 - psi])
            if intervals.mcnemar(b, c)["pvalue"] < 0.05:
                total += pr
    assert W.mcnemar_power(n, dlt, psi, 0.05)[0] == pytest.approx(total, abs=1e-9)


def test_items_for_accuracy_change_starts_from_connor():
    r = W.items_for_accuracy_change(0.1, 0.3)
    za, zb = sps.norm.ppf(0.975), sps.norm.ppf(0.8)
    assert r["normal_approximation"] == math.ceil((za * math.sqrt(0.3) + zb * math.sqrt(0.3 - 0.01)) ** 2 / 0.01)
    assert r["power"] >= 0.8
    with pytest.raises(EvallabError):
        W.items_for_accuracy_change(0.3, 0.2)


def test_stable_majority_by_hand():
    q = W.reply_flip_probability(0.18)  # 2q(1-q) = 0.18 -> q = 0.1
    assert q == pytest.approx(0.1)
    m3 = 0.9**3 + 3 * 0.1 * 0.9**2  # at most 1 of 3 departs: 0.972
    r = W.samples_for_stable_majority(0.18, target=0.9)  # one sample: 0.82 < 0.9; three: 0.9456
    assert r["single_sample_stability"] == pytest.approx(0.82)
    assert r["samples"] == 3 and r["stability"] == pytest.approx(m3**2 + (1 - m3) ** 2)
    # an item that flips a coin never gets a stable majority: a share of such items caps the reachable stability
    capped = W.samples_for_stable_majority(item_flip_rates=[0.5] * 20 + [0.0] * 80, target=0.95)
    assert math.isnan(capped["samples"])


@pytest.fixture(scope="module")
def checks():
    return C.planner_checks(reps=300, seed=3) + [C.selective_check(reps=200, seed=3)]


def test_reduced_planner_checks(checks):
    """Reduced simulation: 600 datasets per plan (the full ``make coverage`` uses 2,000); each plan achieved."""
    for c in checks:
        tol = 0.045 if not c["relative"] else 0.03  # Monte-Carlo error at 600 datasets: ~1.6 points of power
        assert abs(c["gap"]) <= tol or (c["check"] == "selective" and c["ok"]), c


def test_plan_cli(capsys):
    from cli_helper import run_cli

    code, out = run_cli(["plan", "gold", "--half-width", "0.05", "--rate", "0.5", "--correlation", "0"], capsys)
    assert code == 0 and "gold labels only:              385" in out
    code, out = run_cli(["plan", "drift", "--flip-rate", "0.12"], capsys)
    assert code == 0 and f"{W.items_for_flip_rate(0.12, 0.05)['items']:,}" in out
    code, out = run_cli(["plan", "accuracy", "--delta", "0.1", "--discordance", "0.3"], capsys)
    assert code == 0 and f"{W.items_for_accuracy_change(0.1, 0.3)['items']:,}" in out
    code, out = run_cli(["plan", "samples", "--flip-rate", "0.18", "--target", "0.9"], capsys)
    assert code == 0 and ": 3 (stability" in out
    code, out = run_cli(["plan", "drift", "--flip-rate", "0.01"], capsys)
    assert code == 2 and "error: flip_rate=0.01 is not above tolerance=0.05" in out and "Traceback" not in out


def test_next_round_is_a_results_of_counts_with_a_note_where_unreachable():
    from evallab._results import Results

    plan = W.next_round(rate=0.5, sensitivity=0.6, specificity=0.6, items=100, half_width=0.02, flip_rate=0.1,
                        tolerance=0.05, delta=0.05, discordance=0.2, repetition_flip_rate=0.1)
    assert isinstance(plan, Results)
    assert (plan.measures["answer"].unit, plan.measures["achieves"].unit) == ("count", "proportion")
    # ±2% needs ceil(1.96² · 0.25 / 0.02²) = 2,401 gold labels: more than the 100 items hold, so neither is reachable
    assert math.isnan(plan["answer"].iloc[0]) and math.isnan(plan["answer"].iloc[1])
    assert str(plan.estimate("answer", 0)) == "not computable: more gold labels are needed than the 100 items hold"
    assert plan["note"].iloc[2] == "" and plan.estimate("answer", 2).value == W.items_for_flip_rate(0.1)["items"]
