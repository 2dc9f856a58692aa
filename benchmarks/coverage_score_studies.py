"""Coverage of the score-study intervals (issue 28, items 4 and 6) by simulation from a known truth; a section of
``make coverage`` (``python -m benchmarks.coverage --only scale-studies``; ``--study-reps`` datasets, 1,000 by default:
15 intervals gated in a band of ±0.02 need the Monte-Carlo error of 1,000 draws, ±0.014, not 400's ±0.021).

One draw: ``STUDY_ITEMS`` items with a latent quality N(0, 1), cut into 1–5 at ``SCALE_CUTS`` after each rater's own
noise: three humans (sd 0.9), judge A under a baseline prompt (sd 0.7), judge A under a second prompt that adds a
known leniency (+``STUDY_PROMPT_BIAS`` latent units) and more noise (sd 0.9), judge B with its own bias (−0.3, sd
0.8), and judge A's three samples of every item (repetition noise sd 0.7) for the stability check. The public
estimators run on the tidy tables exactly as report 08 calls them: :func:`evallab.metrics.score_shift` (paired
shift, Δ Spearman, Δ quadratic kappa), :func:`~evallab.metrics.score_drift` (judge B against judge A),
:func:`~evallab.metrics.score_cut` (judge A against the human mean ≥ 2.5) and :func:`~evallab.metrics.score_stability`
(judge A's samples). The truth of each figure: the same figure on one draw of 400,000 items (the private array
functions the estimators call). One line per interval in :func:`benchmarks.coverage.line`'s format.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

import numpy as np

from benchmarks import coverage as C

#: items per draw, the prompt's latent leniency, judge B's latent bias, and each rater's latent noise sd
STUDY_ITEMS = 300
STUDY_PROMPT_BIAS = 0.35
STUDY_B_BIAS = -0.3
STUDY_NOISE = {"human": 0.9, "base": 0.7, "prompt": 0.9, "judge_b": 0.8, "sample": 0.7}
STUDY_SAMPLES = 3
#: gold pass for the cut: the human mean ≥ this (at 2.5 the population Youden cut, 3, beats the next step, 4, by 0.09
#: in J; at 3.0 by 0.03, too close for 300 items to tell apart)
STUDY_GOLD = 2.5
#: key → line label
STUDY_LABELS = {
    "shift:shift": "score studies: prompt vs baseline, paired mean shift (scale points), score_shift",
    "shift:d_spearman": "score studies: prompt vs baseline, Δ Spearman ρ vs human mean, score_shift",
    "shift:d_kappa_quadratic": "score studies: prompt vs baseline, Δ quadratic kappa vs human mean, score_shift",
    "drift:shift": "score studies: judge B vs judge A, paired mean shift (scale points), score_drift",
    "drift:mae": "score studies: judge B vs judge A, mean absolute difference, score_drift",
    "drift:changed": "score studies: judge B vs judge A, share of items whose score changed, score_drift",
    "drift:kappa_quadratic": "score studies: judge B vs judge A, quadratic kappa, score_drift",
    "cut:auc": "score studies: judge A vs human mean ≥ 2.5, ROC AUC, score_cut",
    "cut:cut": "score studies: judge A vs human mean ≥ 2.5, Youden's cut, score_cut",
    "cut:pass_rate": "score studies: judge A vs human mean ≥ 2.5, pass rate at the cut, score_cut",
    "cut:balanced_accuracy": "score studies: judge A vs human mean ≥ 2.5, balanced accuracy at the cut, score_cut",
    "cut:kappa": "score studies: judge A vs human mean ≥ 2.5, Cohen's kappa at the cut, score_cut",
    "stability:within_sd": "score studies: judge A's 3 samples, mean within-item SD, score_stability",
    "stability:all_equal": "score studies: judge A's 3 samples, items with all samples equal, score_stability",
    "stability:icc1": "score studies: judge A's 3 samples, ICC(1), score_stability",
}
#: intervals wider than their level needs by construction (said on their line; over-coverage passes the gate)
STUDY_CONSERVATIVE = {
    "cut:cut": "conservative by construction: the chosen cut is one of the scale's five steps, so its percentile "
               "interval over item resamples is [c, c] or spans whole steps",
}


def _cut(z: np.ndarray) -> np.ndarray:
    return 1.0 + np.searchsorted(C.SCALE_CUTS, z)


def simulate(seed: int, n: int = STUDY_ITEMS) -> dict[str, np.ndarray]:
    """One draw: humans (n, 3), judge A's baseline and prompt scores, judge B's, judge A's samples (n, 3)."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=n)
    s = STUDY_NOISE
    return {"humans": np.column_stack([_cut(q + rng.normal(0, s["human"], n)) for _ in range(3)]),
            "base": _cut(q + rng.normal(0, s["base"], n)),
            "prompt": _cut(q + STUDY_PROMPT_BIAS + rng.normal(0, s["prompt"], n)),
            "judge_b": _cut(q + STUDY_B_BIAS + rng.normal(0, s["judge_b"], n)),
            "samples": np.column_stack([_cut(q + rng.normal(0, s["sample"], n)) for _ in range(STUDY_SAMPLES)])}


def truth(n: int = 400_000) -> dict[str, float]:
    """The population values: each figure on one draw of ``n`` items, through the estimators' array functions."""
    from evallab.metrics import _score_studies as S

    d = simulate(2026, n)
    ref = d["humans"].mean(1)
    idx = np.arange(n)[None, :]
    one = np.ones((1, n))
    ab = S._agreement_dists(d["base"], ref, idx, (1, 5, 1))
    ac = S._agreement_dists(d["prompt"], ref, idx, (1, 5, 1))
    kappa_ab = S._agreement_dists(d["judge_b"], d["base"], idx, (1, 5, 1))["kappa_quadratic"]
    cut = S._cut_dists(d["base"], (ref >= STUDY_GOLD).astype(float), idx, "youden")
    sm = d["samples"]
    st = S._stability_dists(np.full(n, float(STUDY_SAMPLES)), sm.mean(1), sm.std(1, ddof=1), sm.max(1) == sm.min(1),
                            one)
    out = {"shift:shift": np.mean(d["prompt"] - d["base"]),
           "shift:d_spearman": (ac["spearman"] - ab["spearman"])[0],
           "shift:d_kappa_quadratic": (ac["kappa_quadratic"] - ab["kappa_quadratic"])[0],
           "drift:shift": np.mean(d["judge_b"] - d["base"]), "drift:mae": np.mean(np.abs(d["judge_b"] - d["base"])),
           "drift:changed": np.mean(d["judge_b"] != d["base"]), "drift:kappa_quadratic": kappa_ab[0],
           **{f"cut:{k}": cut[k][0] for k in ("auc", "cut", "pass_rate", "balanced_accuracy", "kappa")},
           **{f"stability:{k}": v[0] for k, v in st.items()}}
    return {k: float(out[k]) for k in STUDY_LABELS}


def tables(d: dict[str, np.ndarray]):
    """The tidy score table of one draw (humans, judge A under two prompts, judge B) and the samples table."""
    import pandas as pd

    n = len(d["base"])
    items = np.arange(n).astype(str)
    parts = [("h1", "", "human", d["humans"][:, 0]), ("h2", "", "human", d["humans"][:, 1]),
             ("h3", "", "human", d["humans"][:, 2]), ("A", "base", "judge", d["base"]),
             ("A", "prompt", "judge", d["prompt"]), ("B", "base", "judge", d["judge_b"])]
    t = pd.DataFrame({"item_id": np.tile(items, len(parts)), "judge": np.repeat([p[0] for p in parts], n),
                      "strategy": np.repeat([p[1] for p in parts], n), "role": np.repeat([p[2] for p in parts], n),
                      "score": np.concatenate([p[3] for p in parts])})
    k = d["samples"].shape[1]
    s = pd.DataFrame({"item_id": np.repeat(items, k), "judge": "A", "sample": np.tile(np.arange(k), n),
                      "score": d["samples"].ravel()})
    return t, s


def estimate(d, seed: int, B: int) -> dict[str, tuple[float, float, float]]:
    """The public estimators on the tidy tables of one draw, as report 08 calls them."""
    from evallab.metrics import score_cut, score_drift, score_shift, score_stability

    t, s = tables(d)
    kw = dict(by=(), n_resamples=B, confidence=C.CONFIDENCE, seed=seed)
    out = {}
    for prefix, r in (("shift", score_shift(t, baseline="base", scale=(1, 5, 1), **kw)),
                      ("drift", score_drift(t, "A · base", "B · base", scale=(1, 5, 1), **kw)),
                      ("cut", score_cut(t, ["A · base"], threshold=STUDY_GOLD, **kw)),
                      ("stability", score_stability(s, **kw))):
        row = r.iloc[0]
        for key in STUDY_LABELS:
            p, f = key.split(":")
            if p == prefix:
                out[key] = (row[f], row[f"{f}_low"], row[f"{f}_high"])
    return out


def _chunk(args):
    start, stop, B, base_seed = args
    out = []
    for rep in range(start, stop):
        seed = int(np.random.SeedSequence([base_seed, 284, rep]).generate_state(1)[0])
        res = estimate(simulate(seed), rep, B)
        out.append([[float(x) for x in res[k]] for k in STUDY_LABELS])
    return start, np.array(out)


STUDY_REPS = 1000


def section(reps: int = STUDY_REPS, n_resamples: int = C.SCALE_RESAMPLES, jobs: int = 2,
            base_seed: int = 10) -> int:
    """Print one line per score-study interval with its coverage of the population value; return how many fail
    the gate (outside the band, and not conservative by construction above it)."""
    true = truth()
    sc = C.Scenario("scale-studies", simulate, estimate, true, STUDY_LABELS, conservative=STUDY_CONSERVATIVE)
    tasks = [(a, min(a + 25, reps), n_resamples, base_seed) for a in range(0, reps, 25)]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as ex:
            parts = list(ex.map(_chunk, tasks))
    else:
        parts = [_chunk(t) for t in tasks]
    rows = C._summarise(sc, parts, n_resamples)
    se = np.sqrt(C.CONFIDENCE * (1 - C.CONFIDENCE) / reps)
    print(f"score studies (issue 28 item 4): {reps} simulated datasets of {STUDY_ITEMS} items on a 1–5 scale: 3 "
          f"humans, judge A under a baseline and a prompt with latent leniency +{STUDY_PROMPT_BIAS}, judge B (bias "
          f"{STUDY_B_BIAS:+}), judge A's {STUDY_SAMPLES} samples; {n_resamples} item-bootstrap resamples; truth "
          f"from 400,000 items; Monte-Carlo error ±{1.96 * se:.3f}; band [{C.BAND[0]}, {C.BAND[1]}]")
    bad = 0
    for r in rows:
        bad += not r["ok"]
        print(C.line(r), flush=True)
    print(f"{len(rows)} score-study intervals gated, {bad} outside the band")
    return bad
