"""Which items to label next, and the corrected rate from labels chosen with known inclusion probabilities.

Three ways to choose ``n`` of the ``N`` items a judge has graded for a person to label (:func:`select_items`), each
recording every item's inclusion probability ``π_i`` so the estimate can weight by ``1/π_i``
(:func:`selected_rate`), and the interval each is expected to give before anything is labelled
(:func:`selection_plan`):

- **random** (the default) — a simple random sample of exactly ``n`` items, ``π_i = n/N``; the estimate is PPI++
  (:func:`evallab.metrics._corrected.ppi_mean`, Angelopoulos, Duchi & Zrnic 2023), as for any random gold subset,
  so every correction evallab offers stays valid on these labels.
- **stratified** — strata by the judge's verdict × a confidence bin; ``n_h`` items drawn at random without
  replacement in stratum ``h`` (``π_i = n_h/N_h``), Neyman allocation ``n_h ∝ N_h·S_h`` (``S_h`` the expected
  residual spread of the stratum, below) or proportional ``n_h ∝ N_h``; at least :data:`MIN_PER_STRATUM` per
  stratum (every item of a smaller one). The estimate is the stratified difference estimator
  ``θ̂ = mean_N(f) + Σ_h W_h·mean_{n_h}(y − f)``, ``W_h = N_h/N`` (Cochran 1977, *Sampling Techniques*, 3rd ed.,
  ch. 5, stratified random sampling and optimum (Neyman) allocation, applied to the residuals ``y − f``), with
  ``Var = σ̂²_y/N + Σ_h W_h²·(1 − n_h/N_h)·s²_h/n_h`` — the finite-population variance of the stratified mean
  plus the variance of the N items' own mean about the population rate (the same target as
  PPI++'s interval), ``σ̂²_y = Σ_h W_h·(s²_{y,h} + (ŷ_h − θ̂)²)``; normal interval.
- **active** — active statistical inference (Zrnic & Candès 2024, "Active Statistical Inference", ICML 2024,
  arXiv:2403.03208, the batch setting for a mean; equation numbers not restated here): each item is labelled independently with probability
  ``π_i = (1 − τ)·π_i^act + τ·n/N`` (Poisson/Bernoulli sampling, ``Σ π_i = n``: ``n`` labels in expectation),
  ``π^act_i = min(1, c·u_i)`` with ``c`` such that ``Σ π^act = n``, ``u_i`` the judge's uncertainty — the rule the
  paper derives as variance-optimal, ``π(x) ∝ sqrt(E[(Y − f(X))² | X = x])``, mixed with uniform sampling to bound
  the weights (``1/π_i ≤ N/(τ·n)``). The estimate is the paper's inverse-probability-weighted one with power
  tuning, ``θ̂_λ = mean_N(λ·f_i + (y_i − λ·f_i)·ξ_i/π_i)`` (``ξ_i`` = 1 when item *i* was drawn), unbiased for every
  λ; ``λ̂`` minimises the variance of the terms (PPI++'s power tuning, clipped to [0, 1]); the interval is the CLT
  interval ``θ̂ ± z·sd(terms)/√N``. Its variance is
  ``(Var(Y) + E[(Y − λf)²·(1/π − 1)])/N``: small where the labels go to the items the judge is unsure of.

The judge's prediction and its confidence, per item (:func:`item_predictions`): ``f`` is the mean value of the
item's parsed replies (pass 1, fail/warn 0; pairwise: output 2 is 1, tie ½ — :data:`~evallab.metrics._corrected.VALUE`),
and ``p`` the judge's probability that the item's gold value is 1, taken from (in this order)

1. a ``confidence`` column: the judge's probability that its verdict is right, in [0, 1] (``p`` = confidence for a
   verdict of value 1, 1 − confidence for 0, ½ for a tie; averaged over the item's replies; ``f = p``);
2. a ``verdict_logprob`` column: the same with confidence ``exp(verdict_logprob)``;
3. several replies per item (samples, both orders): the share of replies of value 1, smoothed
   ``p = (Σ values + ½)/(k + 1)`` over ``k`` parsed replies (Krichevsky–Trofimov), so a unanimous item is not
   taken as certain.

An item without a parsed reply has ``f = p = ½``. The expected squared residual of an item, when ``p`` is calibrated
(``E[Y | x] = p``), is ``r = p(1 − p) + (p − f)²``; active selection uses ``u = √r`` and Neyman allocation
``S_h = √(mean_h r − (mean_h (p − f))²)``. With one reply per item and no confidence column there is no confidence:
active selection is refused (:class:`~evallab.errors.DataError`), stratified selection uses the verdict alone and
proportional allocation.

The expected half-width (:func:`selection_plan`) is each strategy's variance formula above evaluated with
``E[Y | x] = p`` (the judge's probabilities taken as calibrated): a plan, not a guarantee — an overconfident
judge's labels give a wider interval than planned; the estimate's own interval is always computed from the labels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evallab._results import Measure, results
from evallab.errors import ArgumentError, DataError
from evallab.metrics import _intervals as intervals
from evallab.metrics._design import needs_verdicts

NAN = float("nan")
STRATEGIES = ("random", "stratified", "active")
#: fewest items labelled in a stratum (every item of a smaller stratum), so its variance can be estimated
MIN_PER_STRATUM = 3
#: share of the budget spread uniformly under active selection (bounds the weights at N/(τ·n))
TAU = 0.2
METHODS = {
    "random": "PPI++ normal interval (ppi_py, power-tuned λ) on a simple random sample",
    "stratified": "stratified difference estimator, normal interval (Cochran 1977, ch. 5)",
    "active": "active inference, inverse-probability weights with power tuning, CLT normal interval "
              "(Zrnic & Candès 2024)",
}
#: the columns of a selection (:func:`select_items`)
SELECTION_COLUMNS = ("item_id", "selected", "label_order", "strategy", "inclusion_probability", "weight", "stratum",
                     "stratum_size", "stratum_judge_mean", "items", "judge_value", "judge_probability")


def _check_strategy(strategy: str) -> str:
    if strategy not in STRATEGIES:
        raise ArgumentError(f"strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}")
    return strategy


def item_predictions(table: pd.DataFrame, *, judge: str | None = None) -> pd.DataFrame:
    """Per item: the judge's value ``f``, its probability ``p`` that gold is 1, the verdict and its confidence.

    Parameters
    ----------
    table : DataFrame
        A tidy verdict table of one judge (``item_id``, ``verdict``; optional ``judge``, ``sample``, ``order``,
        ``confidence`` in [0, 1], ``verdict_logprob``), or an items table with ``item_id`` only (no verdict: every
        item gets ``f = p = ½``).
    judge : str, optional
        The judge to keep when the table holds several.

    Returns
    -------
    DataFrame, one row per item in first-seen order: ``item_id``, ``f`` (mean value of parsed replies, or the
    confidence-derived ``p``; ½ without a parsed reply), ``p`` in [0, 1], ``verdict`` (``pass``/``fail`` or
    ``2``/``1`` from the side of ``p`` against ½; ``undecided`` at ½), ``confidence`` (``max(p, 1 − p)`` of the
    unsmoothed share or the given confidence), ``replies`` (parsed). ``attrs["source"]``: ``"confidence"``,
    ``"verdict_logprob"``, ``"agreement"`` or ``None`` (no confidence information); ``attrs["pairwise"]``.

    Raises
    ------
    DataError
        No ``item_id``; several judges and no ``judge``; a confidence outside [0, 1] (its row named).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"item_id": ["a", "a", "a", "b", "b", "b"], "sample": [0, 1, 2] * 2,
    ...                   "verdict": ["pass", "pass", "fail", "fail", "fail", "fail"]})
    >>> item_predictions(t)[["item_id", "f", "p", "verdict", "confidence"]].round(3).to_dict("records")
    [{'item_id': 'a', 'f': 0.667, 'p': 0.625, 'verdict': 'pass', 'confidence': 0.667}, {'item_id': 'b', 'f': 0.0, 'p': 0.125, 'verdict': 'fail', 'confidence': 1.0}]
    """
    return _predict(table, judge)[0]


def _predict(table: pd.DataFrame, judge: str | None) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame]:
    """:func:`item_predictions`, the item index of each row of the (judge's) table, and those rows."""
    if "item_id" not in table.columns:
        raise DataError("no item_id column; expected one id per item", column="item_id")
    df = table
    if "judge" in df.columns and df["judge"].nunique(dropna=True) > 1:
        names = sorted(df["judge"].dropna().astype(str).unique())
        if judge is None:
            raise DataError(f"the table holds {len(names)} judges ({', '.join(names[:5])}); expected one: choose it "
                            "(judge=..., --judge)", column="judge")
        if judge not in names:
            raise DataError(f"judge {judge!r} is not in the table; expected one of {', '.join(names[:10])}",
                            column="judge")
        df = df[df["judge"].astype(str) == judge]
    ids = df["item_id"]
    codes, order = pd.factorize(ids if pd.api.types.is_string_dtype(ids.dtype) else ids.astype(str))
    has_verdict = "verdict" in df.columns
    v, labels = _values(df["verdict"]) if has_verdict else (np.full(len(df), NAN), [])
    pairwise = any(x in ("1", "2", "tie") for x in labels)
    source = None
    conf = None
    if "confidence" in df.columns:
        source = "confidence"
        conf = pd.to_numeric(df["confidence"], errors="coerce").to_numpy(float)
    elif "verdict_logprob" in df.columns and pd.to_numeric(df["verdict_logprob"], errors="coerce").notna().any():
        source = "verdict_logprob"
        conf = np.exp(pd.to_numeric(df["verdict_logprob"], errors="coerce").to_numpy(float))
    parsed = ~np.isnan(v)
    pr = v
    if conf is not None:
        bad = parsed & ~((conf >= 0) & (conf <= 1))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raw = df[source].iloc[i]
            raise DataError(f"{source} {raw!r} of item {order[codes[i]]!r} gives a confidence outside [0, 1]; "
                            "expected the judge's probability that its verdict is right", row=i + 1, column=source)
        pr = np.where(v == 1, conf, np.where(v == 0, 1 - conf, 0.5))
    M = len(order)
    k = np.bincount(codes, weights=parsed.astype(float), minlength=M)
    s = np.bincount(codes, weights=np.where(parsed, v, 0.0), minlength=M)
    pm = np.bincount(codes, weights=np.where(parsed, pr, 0.0), minlength=M) / np.maximum(k, 1)
    share = np.where(k > 0, s / np.maximum(k, 1), 0.5)
    if source is None and k.max(initial=0) > 1:
        source = "agreement"
    if source in ("confidence", "verdict_logprob"):
        p = np.where(k > 0, pm, 0.5)
        f, c = p, np.maximum(p, 1 - p)
    elif source == "agreement":
        p = (s + 0.5) / (k + 1)
        f, c = share, np.maximum(share, 1 - share)
    else:
        p = f = share
        c = np.where(k > 0, 1.0, 0.5)
    hi, lo = ("2", "1") if pairwise else ("pass", "fail")
    side = np.where(f > 0.5, hi, np.where(f < 0.5, lo, "undecided"))
    out = pd.DataFrame({"item_id": np.asarray(order, dtype=object), "f": f, "p": p, "verdict": side,
                        "confidence": c, "replies": k.astype(int)})
    out.attrs["source"] = source
    out.attrs["pairwise"] = pairwise
    return out, codes, df


def _values(col: pd.Series) -> tuple[np.ndarray, list[str]]:
    """The numeric value of each verdict or gold label (:data:`~evallab.metrics._corrected.VALUE`; NaN for NA or
    an unknown label) and the distinct labels seen, lower-cased."""
    from evallab.metrics._corrected import VALUE

    codes, uniq = pd.factorize(col, use_na_sentinel=True)
    names = [str(u).strip().lower() for u in uniq]
    look = np.array([VALUE.get(x, NAN) for x in names] + [NAN], dtype=float)
    return look[np.where(codes < 0, len(names), codes)], names


def _residual(pred: pd.DataFrame) -> np.ndarray:
    """Expected squared residual ``E[(Y − f)²]`` of each item when ``p`` is calibrated: ``p(1 − p) + (p − f)²``."""
    p, f = pred["p"].to_numpy(), pred["f"].to_numpy()
    return p * (1 - p) + (p - f) ** 2


def _strata(pred: pd.DataFrame, bins: int) -> pd.Series:
    """Stratum label of each item: the verdict × a confidence bin (each distinct confidence its own bin when there
    are at most ``bins``, else quantile bins)."""
    c = pred["confidence"].round(6)
    if pred.attrs.get("source") is None:
        return pred["verdict"].astype(str)
    if c.nunique() <= bins:
        lab = c.map(lambda x: f"confidence {x:.2f}")
    else:
        q = pd.qcut(c, bins, duplicates="drop")
        lab = q.map(lambda iv: f"confidence {max(iv.left, 0):.2f}–{iv.right:.2f}").astype(str)
    return pred["verdict"].astype(str) + " · " + lab.astype(str)


def _allocate(sizes: np.ndarray, spread: np.ndarray, n: int) -> np.ndarray:
    """Labels per stratum: at least ``min(N_h, MIN_PER_STRATUM)``, the rest ∝ ``N_h·S_h`` (largest remainders),
    never more than ``N_h``."""
    base = np.minimum(sizes, MIN_PER_STRATUM)
    if base.sum() > n:
        raise ArgumentError(f"{n} labels cannot cover {len(sizes)} strata with {MIN_PER_STRATUM} labels each (needs "
                        f"{int(base.sum())}); expected more labels or fewer confidence bins")
    alloc = base.astype(float)
    w = sizes * np.where(spread > 0, spread, 0.0)
    if w.sum() <= 0:
        w = sizes.astype(float)
    for _ in range(len(sizes) + 1):  # give the rest by weight; strata that fill up drop out
        rest = n - alloc.sum()
        room = alloc < sizes
        if rest <= 1e-9 or not room.any():
            break
        ww = np.where(room, w, 0.0)
        if ww.sum() <= 0:
            ww = np.where(room, sizes, 0.0).astype(float)
        alloc = np.minimum(sizes, alloc + rest * ww / ww.sum())
    fl = np.floor(alloc + 1e-9)
    left = int(round(n - fl.sum()))
    order = np.argsort(-(alloc - fl) + 1e-12 * np.arange(len(alloc)))
    for i in order:
        if left <= 0:
            break
        if fl[i] < sizes[i]:
            fl[i] += 1
            left -= 1
    return fl.astype(int)


def _active_probabilities(u: np.ndarray, n: int, tau: float) -> np.ndarray:
    """``(1 − τ)·min(1, c·u) + τ·n/N`` with ``c`` such that the first part sums to ``n`` (water-filling)."""
    N = len(u)
    act = np.zeros(N)
    pos = u > 0
    if pos.sum() <= n:  # every uncertain item surely, the rest of the budget spread over the others
        act[pos] = 1.0
        if (~pos).any():
            act[~pos] = (n - pos.sum()) / (~pos).sum()
    else:
        capped = np.zeros(N, bool)
        for _ in range(N):
            c = (n - capped.sum()) / u[~capped].sum()
            new = ~capped & (c * u >= 1)
            if not new.any():
                break
            capped |= new
        act = np.where(capped, 1.0, c * u)
    return (1 - tau) * act + tau * n / N


def _frame_of(table, judge, items):
    pred = _predict(table, judge)[0]
    if items is not None:
        ids = pd.Index(pd.unique(pd.Series(list(items), dtype=object).astype(str)))
        extra = pd.Index(pred["item_id"]).difference(ids)
        if len(extra):
            raise DataError(f"{len(extra)} item(s) with verdicts are not among the items to label (first "
                            f"{extra[0]!r}); expected the verdicts of these items only", column="item_id")
        src, pw = pred.attrs["source"], pred.attrs["pairwise"]
        pred = pred.set_index("item_id").reindex(ids).rename_axis("item_id").reset_index()
        missing = pred["replies"].isna()
        pred.loc[missing, ["f", "p"]] = 0.5
        pred.loc[missing, "confidence"] = 0.5
        pred.loc[missing, "verdict"] = "undecided"
        pred["replies"] = pred["replies"].fillna(0).astype(int)
        pred.attrs.update(source=src, pairwise=pw)
    return pred


@needs_verdicts("selecting the items to label", tables=("table",))
def select_items(table: pd.DataFrame, n: int, strategy: str = "random", *, seed: int = 0, judge: str | None = None,
                 items=None, tau: float = TAU, allocation: str = "neyman", bins: int = 3) -> pd.DataFrame:
    """Choose items for a person to label; every item's inclusion probability recorded (module docstring).

    Parameters
    ----------
    table : DataFrame
        The judge's tidy verdict table (one judge, or name it with ``judge``); for ``random`` an items table with
        ``item_id`` is enough.
    n : int
        Labels to collect: exactly ``n`` (random, stratified) or ``n`` in expectation (active, Poisson sampling);
        ``2 ≤ n < N``.
    strategy : {"random", "stratified", "active"}
    seed : int
        Seed of the draw (numpy ``default_rng``).
    judge : str, optional
        The judge whose verdicts guide the choice, when the table holds several.
    items : sequence of str, optional
        The item ids to choose from (default: the table's); items without a verdict get ``f = p = ½``.
    tau : float in (0, 1]
        Active selection: the share of the budget spread uniformly (weights ≤ N/(τ·n)).
    allocation : {"neyman", "proportional"}
        Stratified selection: ``n_h ∝ N_h·S_h`` or ``n_h ∝ N_h``.
    bins : int ≥ 1
        Stratified selection: confidence bins per verdict.

    Returns
    -------
    DataFrame, one row per item (:data:`SELECTION_COLUMNS`): ``selected`` (bool), ``label_order`` (1.. in a random
    order among the selected, else 0), ``inclusion_probability`` π_i (sums to ``n``), ``weight`` 1/π_i, ``stratum``,
    ``stratum_size`` N_h and ``stratum_judge_mean`` (mean ``f`` of the stratum; the whole table as one stratum for
    random and active), ``items`` N, ``judge_value`` f, ``judge_probability`` p.

    Raises
    ------
    ArgumentError
        An unknown strategy or allocation; ``n`` out of range; ``tau`` outside (0, 1]; ``bins`` < 1.
    DataError
        Stratified or active without verdicts; active without confidence information (one reply per item and no ``confidence`` or
        ``verdict_logprob`` column); too few labels for the strata.

    References
    ----------
    T. Zrnic and E. J. Candès (2024), "Active Statistical Inference", ICML 2024, arXiv:2403.03208 (active);
    W. G. Cochran (1977), *Sampling Techniques*, 3rd ed., ch. 5 (stratified, Neyman allocation).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"item_id": [f"q{i}" for i in range(10)]})
    >>> s = select_items(t, 4, seed=1)
    >>> int(s["selected"].sum()), float(s["inclusion_probability"].sum())
    (4, 4.0)
    """
    _check_strategy(strategy)
    if allocation not in ("neyman", "proportional"):
        raise ArgumentError(f"allocation {allocation!r}; expected 'neyman' or 'proportional'")
    if not (isinstance(bins, (int, np.integer)) and bins >= 1):
        raise ArgumentError(f"bins={bins!r}; expected a whole number ≥ 1")
    if not (isinstance(tau, (int, float)) and 0 < tau <= 1):
        raise ArgumentError(f"tau={tau!r}; expected a share in (0, 1] (the uniform part of active selection)")
    pred = _frame_of(table, judge, items)
    N = len(pred)
    if not (isinstance(n, (int, np.integer)) and 2 <= n < N):
        raise ArgumentError(f"{n!r} labels of {N} items; expected a whole number from 2 to {N - 1} (to label every "
                        "item, no selection is needed)")
    has_verdict = "verdict" in table.columns
    if strategy != "random" and not has_verdict:
        raise DataError(f"{strategy} selection needs the judge's verdicts (a verdict column; evallab label "
                        "--verdicts); expected a tidy verdict table", column="verdict")
    source = pred.attrs["source"]
    if strategy == "active" and source is None:
        raise DataError("active selection needs the judge's confidence: a confidence column, verdict_logprob, or "
                        "several replies per item (evallab judge --samples K); this table has one reply per item and "
                        "neither", column="confidence")
    rng = np.random.default_rng(seed)
    f = pred["f"].to_numpy()
    stratum = pd.Series("all items", index=pred.index)
    if strategy == "random":
        pi = np.full(N, n / N)
        sel = np.zeros(N, bool)
        sel[rng.choice(N, size=n, replace=False)] = True
    elif strategy == "active":
        pi = _active_probabilities(np.sqrt(_residual(pred)), n, float(tau))
        sel = rng.random(N) < pi
    else:
        stratum = _strata(pred, int(bins))
        codes, names = pd.factorize(stratum, sort=True)
        sizes = np.bincount(codes, minlength=len(names))
        r, gap = _residual(pred), (pred["p"] - pred["f"]).to_numpy()
        spread = np.array([np.sqrt(max(r[codes == h].mean() - gap[codes == h].mean() ** 2, 0.0))
                           for h in range(len(names))])
        if allocation == "proportional" or source is None:
            spread = np.ones(len(names))
        alloc = _allocate(sizes, spread, n)
        pi = (alloc / sizes)[codes]
        sel = np.zeros(N, bool)
        for h in range(len(names)):
            idx = np.flatnonzero(codes == h)
            sel[rng.choice(idx, size=alloc[h], replace=False)] = True
    codes, _ = pd.factorize(stratum)
    sizes = np.bincount(codes)[codes]
    means = pd.Series(f).groupby(codes).transform("mean").to_numpy()
    lo = np.zeros(N, int)
    lo[np.flatnonzero(sel)[rng.permutation(int(sel.sum()))]] = np.arange(1, int(sel.sum()) + 1)
    return pd.DataFrame({"item_id": pred["item_id"].astype(str).to_numpy(), "selected": sel, "label_order": lo,
                         "strategy": strategy, "inclusion_probability": pi, "weight": 1 / pi,
                         "stratum": stratum.to_numpy(), "stratum_size": sizes, "stratum_judge_mean": means,
                         "items": N, "judge_value": f, "judge_probability": pred["p"].to_numpy()})


def _expected_variances(pred: pd.DataFrame, n: int, *, tau: float, allocation: str, bins: int) -> dict:
    """Each strategy's variance of the estimate at ``n`` labels with ``E[Y | x] = p`` (module docstring)."""
    p, f = pred["p"].to_numpy(), pred["f"].to_numpy()
    N = len(p)
    theta = p.mean()
    var_y = theta * (1 - theta)
    out = {}
    if pred.attrs["source"] is None:  # no confidence: gold-only bound for random (PPI++ at λ = 0), nothing else
        out["random"] = var_y / n
        out["stratified"] = out["active"] = NAN
        return out
    r = _residual(pred)
    m = N - n
    var_f, cov = float(np.var(f)), float(np.mean((p - theta) * (f - f.mean())))
    lam = float(np.clip(cov / ((1 + n / m) * var_f), 0, 1)) if var_f > 0 else 0.0
    var_res = var_y - 2 * lam * cov + lam**2 * var_f
    out["random"] = lam**2 * var_f / m + var_res / n
    pi = _active_probabilities(np.sqrt(r), n, tau)
    w = 1 / pi - 1  # E[(Y − λf)² | x] = p(1 − p) + (p − λf)², minimised over λ as the estimator tunes it
    lam_a = float(np.clip(np.sum(w * p * f) / np.sum(w * f * f), 0, 1)) if np.sum(w * f * f) > 0 else 1.0
    out["active"] = (var_y + float(np.mean(w * (p * (1 - p) + (p - lam_a * f) ** 2)))) / N
    stratum = _strata(pred, bins)
    codes, names = pd.factorize(stratum, sort=True)
    sizes = np.bincount(codes, minlength=len(names))
    gap = p - f
    s2 = np.array([max(r[codes == h].mean() - gap[codes == h].mean() ** 2, 0.0) for h in range(len(names))])
    try:
        alloc = _allocate(sizes, np.sqrt(s2) if allocation == "neyman" else np.ones(len(names)), n)
        W = sizes / N
        out["stratified"] = var_y / N + float(np.sum(W**2 * (1 - alloc / sizes) * s2 / np.maximum(alloc, 1)))
    except ArgumentError:
        out["stratified"] = NAN
    return out


@needs_verdicts("the labelling plan", tables=("table",))
def selection_plan(table: pd.DataFrame, n: int, *, judge: str | None = None, items=None, tau: float = TAU,
                   allocation: str = "neyman", bins: int = 3, confidence: float = 0.95):
    """The half-width each strategy's interval is expected to give at ``n`` labels, before labelling.

    Parameters
    ----------
    table, n, judge, items, tau, allocation, bins : as :func:`select_items`.
    confidence : float
        Level of the interval, in (0, 1).

    Returns
    -------
    Results, one row per strategy (random, stratified, active): ``labels`` (expected), ``half_width`` (expected
    half-width of the ``confidence`` interval, proportion), ``ratio_to_random``, ``method`` (the estimator's
    interval), ``note`` (why missing). The variance formulas are those of the module docstring evaluated with the
    judge's probabilities ``p`` taken as calibrated (``E[Y | x] = p``); without confidence information the random
    row is the gold-only bound (PPI++ at λ = 0, ``z·√(θ(1 − θ)/n)``) and the other rows are missing.

    Raises
    ------
    ArgumentError, DataError
        As :func:`select_items`.

    Examples
    --------
    60 items unanimous pass, 20 split 2 to 1, 20 unanimous fail (3 samples each), 30 labels:

    >>> import pandas as pd
    >>> v = ["pass"] * 180 + ["pass", "pass", "fail"] * 20 + ["fail"] * 60
    >>> t = pd.DataFrame({"item_id": [f"q{i // 3}" for i in range(300)], "sample": [i % 3 for i in range(300)],
    ...                   "verdict": v})
    >>> plan = selection_plan(t, 30)
    >>> plan[["strategy", "half_width"]].round(3).to_dict("list")
    {'strategy': ['random', 'stratified', 'active'], 'half_width': [0.143, 0.143, 0.143]}
    """
    z = intervals.z_value(confidence)
    pred = _frame_of(table, judge, items)
    N = len(pred)
    if not (isinstance(n, (int, np.integer)) and 2 <= n < N):
        raise ArgumentError(f"{n!r} labels of {N} items; expected a whole number from 2 to {N - 1}")
    var = _expected_variances(pred, int(n), tau=tau, allocation=allocation, bins=bins)
    h0 = z * np.sqrt(var["random"])
    rows = []
    for s in STRATEGIES:
        h = z * np.sqrt(var[s]) if np.isfinite(var[s]) else NAN
        note = ""
        if not np.isfinite(h):
            note = ("not computable: the judge gives no confidence (one reply per item, no confidence column), so "
                    "the labels' spread cannot be foreseen" if pred.attrs["source"] is None else
                    f"not computable: {n} labels cannot give every stratum {MIN_PER_STRATUM}")
        rows.append({"strategy": s, "labels": float(n), "half_width": h, "ratio_to_random": h / h0,
                     "method": METHODS[s] if s != "random" or pred.attrs["source"] is not None
                     else "gold-only normal interval (an upper bound for PPI++)", "note": note})
    ms = [Measure("half_width", "Expected half-width", "proportion", method_column="method", n="labels",
                  n_unit="labels"),
          Measure("ratio_to_random", "Half-width against random", "ratio")]
    return results(pd.DataFrame(rows), ms, level=confidence, keys=["strategy"])


@needs_verdicts("the pass rate from selected labels", tables=("table",))
def selected_rate(table: pd.DataFrame, selection: pd.DataFrame, *, judge: str | None = None,
                  confidence: float = 0.95):
    """The corrected pass (or win) rate from gold labels on the items :func:`select_items` chose.

    Parameters
    ----------
    table : DataFrame
        The judge's tidy verdict table with a ``gold`` column filled on the selected items (gold elsewhere is not
        used: it was not drawn by the selection, and counting it would break the weights).
    selection : DataFrame
        :func:`select_items`' frame, or only its selected rows (as ``evallab label --select`` writes them):
        ``item_id``, ``strategy``, ``inclusion_probability``; stratified also ``stratum``, ``stratum_size``,
        ``stratum_judge_mean``; ``items``.
    judge : str, optional
        The judge, when the table holds several.
    confidence : float
        Level of the interval.

    Returns
    -------
    Results, one row: ``strategy``, ``rate`` with ``rate_low``/``rate_high`` (the ``confidence`` interval named in
    ``method``: PPI++ for random, the stratified difference estimator for stratified, active inference for active —
    module docstring), ``se``, ``lam`` (λ; NaN for stratified), ``judge_rate`` (mean ``f``), ``labels``, ``items``,
    ``unused_gold`` (gold labels outside the selection, left out).

    Raises
    ------
    DataError
        A selected item without gold (every selected item must be labelled: a skipped one biases the weights), the
        selection drawn from another set of items (its ``items`` count or the judge's values differ), or a bad
        strategy (:class:`~evallab.errors.ArgumentError`).

    References
    ----------
    Zrnic & Candès (2024), arXiv:2403.03208; Angelopoulos, Duchi & Zrnic (2023), arXiv:2311.01453; Cochran (1977),
    ch. 5.

    Examples
    --------
    Two of four items labelled, at π = ½ and 0.8; the judge's values ``f`` = (0.9, 0.2, 0.6, 0.7) from its
    confidence; λ̂ = 1 here, so the estimate is ``mean(f) + (1/4)·((1 − 0.9)/0.5 + (1 − 0.2)/0.8)`` = 0.6 + 0.3:

    >>> import pandas as pd
    >>> t = pd.DataFrame({"item_id": list("abcd"), "verdict": ["pass", "fail", "pass", "pass"],
    ...                   "confidence": [0.9, 0.8, 0.6, 0.7], "gold": ["pass", "pass", None, None]})
    >>> sel = pd.DataFrame({"item_id": ["a", "b"], "strategy": "active", "inclusion_probability": [0.5, 0.8],
    ...                     "items": 4})
    >>> r = selected_rate(t, sel)
    >>> round(float(r["rate"].iloc[0]), 4), float(r["lam"].iloc[0]), int(r["labels"].iloc[0])
    (0.9, 1.0, 2)
    """
    from evallab.metrics._corrected import PPI_METHOD, ppi_mean

    z = intervals.z_value(confidence)
    for c in ("item_id", "strategy", "inclusion_probability"):
        if c not in selection.columns:
            raise DataError(f"the selection has no {c} column; expected the table select_items (evallab label "
                            "--select) wrote", column=c)
    strategies = selection["strategy"].astype(str).unique()
    if len(strategies) != 1:
        raise DataError(f"the selection mixes strategies {sorted(strategies)}; expected one", column="strategy")
    strategy = _check_strategy(str(strategies[0]))
    sel = selection[selection["selected"].astype(bool)] if "selected" in selection.columns else selection
    pred, codes, df = _predict(table, judge)
    N = len(pred)
    if "items" in sel.columns and len(sel) and int(sel["items"].iloc[0]) != N:
        raise DataError(f"the selection was drawn from {int(sel['items'].iloc[0])} items; this table holds {N}; "
                        "expected the verdict table the selection was drawn from", column="items")
    ids = pd.Index(pred["item_id"].astype(str))
    sid = sel["item_id"].astype(str).reset_index(drop=True)
    idx = ids.get_indexer(sid)
    if (idx < 0).any():
        raise DataError(f"selected item {sid[idx < 0].iloc[0]!r} is not in the verdict table; expected the table "
                        "the selection was drawn from", column="item_id")
    if "gold" not in df.columns:
        raise DataError("no gold column; expected gold labels on the selected items", column="gold")
    g, _ = _values(df["gold"])
    has = ~np.isnan(g)
    y_all = np.full(N, NAN)
    y_all[codes[has]] = g[has]
    y = y_all[idx]
    if np.isnan(y).any():
        miss = sid[np.isnan(y)]
        raise DataError(f"{len(miss)} selected item(s) have no gold label (first {miss.iloc[0]!r}); expected every "
                        "selected item labelled — a skipped item would bias the weighted estimate", column="gold")
    f = pred["f"].to_numpy()
    if "judge_value" in sel.columns and not np.allclose(sel["judge_value"].to_numpy(float), f[idx], atol=1e-9):
        raise DataError("the judge's values of the selected items differ from those the selection recorded; "
                        "expected the verdict table the selection was drawn from", column="judge_value")
    pi = sel["inclusion_probability"].to_numpy(float)
    if not ((pi > 0) & (pi <= 1)).all():
        raise DataError("an inclusion probability outside (0, 1]; expected the selection's own values",
                        column="inclusion_probability")
    unused = int(np.isfinite(y_all).sum() - len(idx))
    labelled = np.zeros(N, bool)
    labelled[idx] = True
    lam = NAN
    if strategy == "random":
        r = ppi_mean(y, f[idx], f[~labelled], confidence=confidence)
        est, lo, hi, se, lam, method = r["estimate"], r["low"], r["high"], r["se"], r["lam"], PPI_METHOD
    elif strategy == "active":
        xi_pi = np.zeros(N)
        xi_pi[idx] = 1 / pi
        yy = np.zeros(N)
        yy[idx] = y
        A, B = xi_pi * yy, f * (1 - xi_pi)
        vb = float(np.var(B, ddof=1))
        lam = float(np.clip(-np.cov(A, B)[0, 1] / vb, 0, 1)) if vb > 0 else 1.0
        terms = A + lam * B
        est = float(terms.mean())
        se = float(np.std(terms, ddof=1) / np.sqrt(N))
        lo, hi, method = est - z * se, est + z * se, METHODS["active"]
    else:
        for c in ("stratum", "stratum_size", "stratum_judge_mean"):
            if c not in sel.columns:
                raise DataError(f"a stratified selection needs its {c} column; expected the table select_items "
                                "wrote", column=c)
        e = y - f[idx]
        hc, _ = pd.factorize(sel["stratum"].astype(str))
        first = np.unique(hc, return_index=True)[1]
        nh = np.bincount(hc).astype(float)
        Nh = sel["stratum_size"].to_numpy(float)[first]
        Fh = sel["stratum_judge_mean"].to_numpy(float)[first]

        def mean_var(x):
            m = np.bincount(hc, weights=x) / nh
            ss = np.bincount(hc, weights=(x - m[hc]) ** 2)
            return m, np.where(nh > 1, ss / np.maximum(nh - 1, 1), 0.0)

        eb, se2 = mean_var(e)
        _, sy2 = mean_var(y)
        W = Nh / N
        yh = Fh + eb
        est = float(f.mean() + (W * eb).sum())
        var_y = float((W * (sy2 + (yh - est) ** 2)).sum())
        var = var_y / N + float((W**2 * (1 - nh / Nh) * se2 / nh).sum())
        se = float(np.sqrt(max(var, 0.0)))
        lo, hi, method = est - z * se, est + z * se, METHODS["stratified"]
    rate = "win rate of output 2" if pred.attrs["pairwise"] else "pass rate"
    row = {"strategy": strategy, "rate": est, "rate_low": lo, "rate_high": hi, "method": method, "se": se,
           "lam": lam, "judge_rate": float(f.mean()), "labels": len(idx), "items": N, "unused_gold": unused,
           "note": ""}
    R = rate[:1].upper() + rate[1:]
    ms = [Measure("rate", f"{R}, corrected from {strategy} selection", "proportion", "rate_low", "rate_high",
                  method_column="method", n="labels", n_unit="gold labels"),
          Measure("judge_rate", f"{R}, judge only", "proportion", n="items", n_unit="items")]
    return results(pd.DataFrame([row]), ms, level=confidence, keys=["strategy"])
