"""AlpacaEval-style evaluator metrics, win rates (raw and length-controlled) and rank agreement between judges.

Sources: AlpacaEval (Li, Dubois et al. 2023; ``alpaca_eval/metrics.py`` ``get_winrate`` and ``analyze.py``
``get_length_biases``) and Dubois et al. (2024), "Length-Controlled AlpacaEval" (the length-controlled win rate).

- :func:`win_rates` — the win rate of output 2 over output 1 per group, from the CONTINUOUS preference where the
  annotator gives one (AlpacaEval's leaderboard: ``win_rate = mean(preference − 1)``), else 1 / 0 / ½ per win /
  loss / tie; item-cluster 95% interval.
- :func:`length_controlled_win_rates` — the win rate with the length difference held at zero: a logistic GLM
  (statsmodels, binomial family, fractional response) of the preference on an intercept and
  ``tanh(Δlength / sd(Δlength))``; LC = logistic(intercept). Dubois et al. also fit an instruction-difficulty
  term shared across models; with one model pair per fit it is absorbed in the intercept (a simplification,
  stated in the report).
- :func:`evaluator_metrics` — the evaluator-leaderboard columns the data allows, as measured here:
  P(prefer output 1) = 2 − mean(preference) (AlpacaEval's definition); on AlpacaEval's pairs output 1 is ALWAYS
  the baseline model, so it is the baseline's win rate, not a position effect. P(prefer the output shown first)
  where the shown order is known. P(prefer longer) over pairs whose lengths differ by more than 30 characters
  (AlpacaEval's ``significant_delta_length``); the longer output is mostly the baseline's
  (``longer_is_output_1``), so P(prefer longer) is confounded with quality — read it beside the
  length-controlled win rate.
- :func:`rank_correlation`, :func:`win_rate_rank_agreement`, :func:`leaderboard_rank_agreement` — the judge-swap
  effect on rankings (Kendall's tau, ``scipy.stats.kendalltau``), with the number of models n and the p-value;
  :func:`rank_headline` picks the headline only among pairs with at least :data:`MIN_RANK_ENTITIES` models
  (:func:`perfect_agreement_pvalue`: with 4, even identical rankings give p = 0.083).

Every table is an :class:`evallab.Results` (measures: :data:`WIN_RATE_MEASURES`, :data:`LC_MEASURES`,
:data:`EVALUATOR_MEASURES`, :data:`RANK_MEASURES`); an item-cluster interval ``<column>_low``/``_high`` names the
method that computed it in ``<column>_method``.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import kendalltau
from statsmodels.genmod.families import Binomial
from statsmodels.genmod.generalized_linear_model import GLM

from evallab._results import Measure, Results, results
from evallab.errors import DataError
from evallab.metrics import _intervals as intervals
from evallab.metrics._design import (
    ORDERS,
    check_design,
    group_rows,
    groups,
    item_key,
    join_notes,
    needs_verdicts,
    not_computable,
    pairwise,
)

NAN = float("nan")
#: AlpacaEval's ``significant_delta_length``
MIN_LENGTH_GAP = 30
#: the interval of the length-controlled win rate (:func:`length_controlled_win_rates`)
LC_METHOD = "delta method (Wald, HC0 robust covariance of the binomial GLM)"


def _count(column: str, label: str) -> Measure:
    return Measure(column, label, "count")


def _share(column: str, label: str, n: str, n_unit: str = "replies", *, interval: bool = True) -> Measure:
    """A proportion with an item-cluster interval ``<column>_low/_high`` whose method is in ``<column>_method``."""
    if not interval:
        return Measure(column, label, "proportion", n=n, n_unit=n_unit)
    return Measure(column, label, "proportion", f"{column}_low", f"{column}_high", method_column=f"{column}_method",
                   n=n, n_unit=n_unit)


#: the measures of :func:`win_rates`
WIN_RATE_MEASURES = (
    _count("parsed", "Parsed"), _count("unparsed", "Unparsed"), _count("wins", "Wins"), _count("losses", "Losses"),
    _count("ties", "Ties"), _count("continuous", "Continuous preferences"),
    _share("win_rate", "Win rate", "parsed"),
)
#: the measures of :func:`length_controlled_win_rates`
LC_MEASURES = (
    _count("pairs", "Replies"),
    _share("win_rate", "Win rate", "pairs", interval=False),
    Measure("lc_win_rate", "Length-controlled win rate", "proportion", "lc_win_rate_low", "lc_win_rate_high",
            method=LC_METHOD, n="pairs", n_unit="replies"),
    Measure("length_coef", "Length coefficient", "log-odds per unit of tanh", digits=2),
)
#: the measures of :func:`evaluator_metrics`
EVALUATOR_MEASURES = (
    _count("replies", "Replies"), _count("unparsed", "Unparsed"), _count("parsed", "Parsed"), _count("ties", "Ties"),
    _count("continuous", "Continuous preferences"),
    _share("p_prefer_output_1", "Prefers output 1", "parsed"),
    _count("shown_known", "Decisive replies with the shown order known"),
    _share("p_prefer_shown_first", "Prefers the output shown first", "shown_known", "decisive replies"),
    _count("longer_pairs", "Decisive replies on pairs with a length gap"),
    _share("longer_is_output_1", "Longer output is output 1", "longer_pairs", "decisive replies", interval=False),
    _share("p_prefer_longer", "Prefers the longer output", "longer_pairs", "decisive replies"),
)
#: the measures of the rank-agreement tables (:func:`win_rate_rank_agreement`, :func:`leaderboard_rank_agreement`)
RANK_MEASURES = (
    _count("n", "Models"),
    Measure("tau", "Kendall's tau", "coefficient", n="n", n_unit="models"),
    Measure("pvalue", "p", "p-value", n="n", n_unit="models"),
    Measure("max_shift", "Largest win-rate shift", "pp", n="n", n_unit="models"),
)


def preference_of_output_2(df: pd.DataFrame, preference: str | None = "score") -> pd.Series:
    """Per reply, the preference for output 2 in [0, 1]: ``preference − 1`` from the column where it is present
    (AlpacaEval: 1 = output 1 preferred, 2 = output 2, 1.5 = tie; continuous for weighted annotators), else from the
    discrete verdict (``2`` → 1, ``1`` → 0, ``tie`` → ½); NaN for an unparsed reply.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table (:mod:`evallab.verdicts`) with pairwise verdicts ``1``/``2``/``tie`` (NA = unparsed).
    preference : str or None, default "score"
        The column holding AlpacaEval's preference in [1, 2]; a reply whose cell is NA falls back to its discrete
        verdict. ``None`` (or a column the table lacks): the discrete verdicts only.

    Returns
    -------
    Series
        Float, aligned with ``df``: the preference for output 2, a proportion in [0, 1] (1 = output 2 preferred,
        ½ = tie); NaN where ``verdict`` is NA, whatever the preference column holds.

    Raises
    ------
    DataError
        A parsed reply's ``preference`` outside [1, 2] (then the column is not AlpacaEval's preference — e.g.
        LLMBar's rating difference in ``score``: pass ``preference=None``).

    References
    ----------
    AlpacaEval (Li, Dubois et al. 2023), ``alpaca_eval/metrics.py`` ``get_winrate``: ``preference − 1`` is a
    reply's contribution to the win rate.

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3"], "judge": "A", "verdict": ["2", "1", "tie"],
    ...                                    "score": [1.8, None, 1.5]}))
    >>> preference_of_output_2(df).round(3).tolist(), preference_of_output_2(df, None).tolist()
    ([0.8, 0.0, 0.5], [1.0, 0.0, 0.5])
    """
    v = df["verdict"]
    x = v.map({"2": 1.0, "1": 0.0, "tie": 0.5}).astype(float)
    if preference and preference in df.columns:
        pref = pd.to_numeric(df[preference], errors="coerce").astype(float)
        use = v.notna() & pref.notna()
        bad = use & ~pref.between(1.0, 2.0)
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(f"{preference}={pref.iloc[i]!r} is not a preference in [1, 2] (AlpacaEval: 1 = output 1 "
                            "preferred, 2 = output 2); pass preference=None to use the discrete verdicts only",
                            row=i + 1, column=preference)
        x = x.where(~use, pref - 1.0)
    return x.where(v.notna())


@needs_verdicts("win rate")
@intervals.shared_resamples()  # the intervals over the same items draw their resamples once
def win_rates(df: pd.DataFrame, by: Sequence[str] = ("judge", "generator_2"), *, preference: str | None = "score",
              confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Results:
    """Win rate of output 2 over output 1 per group (AlpacaEval's ``win_rate`` / 100).

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table (:mod:`evallab.verdicts`).
    by : sequence of str, default ("judge", "generator_2")
        Grouping columns.
    preference : str or None, default "score"
        The column holding AlpacaEval's preference in [1, 2] (``None``: the discrete verdicts only).
    confidence : float, default 0.95
        Level of the interval.
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no bootstrap; a Wilson interval needs none).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        One row per group: ``by`` + counts (unit "count"): ``parsed``, ``unparsed``, ``wins`` (verdict 2),
        ``losses``, ``ties``, ``continuous`` (replies whose preference came from the column); ``win_rate``
        (proportion in [0, 1]; AlpacaEval's leaderboard shows it ×100) = mean preference for output 2
        (:func:`preference_of_output_2`) with ``win_rate_low``/``win_rate_high`` (item-cluster interval, its method
        in ``win_rate_method``: Wilson for discrete one-reply items, else the item bootstrap; n = ``parsed``
        replies); ``note`` (why a figure is missing). Measures: :data:`WIN_RATE_MEASURES`.

    Raises
    ------
    DesignError
        Grouping by ``by`` leaves several replies per (dataset, item, order, sample), or a ``by`` column is missing
        (:func:`evallab.metrics._design.check_design`).
    DataError
        A preference outside [1, 2] (:func:`preference_of_output_2`).

    References
    ----------
    AlpacaEval (Li, Dubois et al. 2023), ``alpaca_eval/metrics.py`` ``get_winrate``; E. B. Wilson (1927),
    "Probable inference, the law of succession, and statistical inference", JASA 22(158), 209–212.

    Examples
    --------
    Output 2 wins 3 of 5 one-reply items: 0.6, with the Wilson interval of 3 of 5.

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4", "q5"], "judge": "A",
    ...                                    "generator_2": "m", "verdict": ["2", "2", "1", "2", "1"]}))
    >>> w = win_rates(df)[["wins", "losses", "win_rate", "win_rate_low", "win_rate_high", "win_rate_method"]]
    >>> print(w.round(3).to_string(index=False))
     wins  losses  win_rate  win_rate_low  win_rate_high win_rate_method
        3       2       0.6         0.231          0.882    Wilson score
    """
    by = list(by)
    check_design(df, by)
    d = df.assign(_x=preference_of_output_2(df, preference))
    cont = d["verdict"].notna()
    if preference and preference in d.columns:
        cont &= pd.to_numeric(d[preference], errors="coerce").notna()
    else:
        cont &= False
    # per group, numpy arrays taken at its rows instead of a dozen operations on its sub-frame; the item codes of
    # the whole table keep each group's items in the order item_key gives them within the group
    x = d["_x"].to_numpy(float)
    parsed = ~np.isnan(x)
    verdict = d["verdict"].to_numpy(object)
    cont = cont.to_numpy(bool)
    item = item_key(d)
    rows = []
    for key, at in group_rows(d, by):
        ok = at[parsed[at]]
        # summed by pandas as before (its compensated sum, in row order): the same floats
        per = pd.DataFrame({"_x": x[ok], "_n": 1.0}).groupby(item[ok]).sum()
        v = verdict[ok]
        r = dict(key, parsed=len(ok), unparsed=len(at) - len(ok), wins=int((v == "2").sum()),
                 losses=int((v == "1").sum()), ties=int((v == "tie").sum()), continuous=int(cont[ok].sum()),
                 win_rate=float(x[ok].sum() / len(ok)) if len(ok) else NAN)  # as pandas' mean computes it
        _interval(r, "win_rate", per["_x"], per["_n"], n_resamples=n_resamples, confidence=confidence, seed=seed)
        rows.append({**r, "note": "" if len(ok) else not_computable("no parsed reply")})
    return results(pd.DataFrame(rows), WIN_RATE_MEASURES, level=confidence, keys=by)


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 0.02, 0.98)
    return np.log(p / (1 - p))


@needs_verdicts("the length-controlled win rate")
def length_controlled_win_rates(df: pd.DataFrame, items: pd.DataFrame, by: Sequence[str] = ("judge", "generator_2"),
                                *, instruction: str | None = "instruction_idx", preference: str | None = "score",
                                confidence: float = 0.95) -> Results:
    """Length-controlled win rate of output 2 per group (Dubois et al. 2024; AlpacaEval ``glm_winrate.py``,
    ``length_controlled_v1``).

    The GLM of AlpacaEval's ``length_controlled_v1``: logit P(output 2 preferred) = β₀ + β₁·tanh(Δlength / sd) +
    β₂·difficulty(instruction), fitted to the (fractional) preference with statsmodels' binomial GLM; the
    length-controlled win rate is the mean over instructions of logistic(β₀ + β₂·difficulty), i.e. the prediction
    with Δlength = 0. AlpacaEval takes the instruction difficulty from a fit over its whole leaderboard (downloaded at
    run time); evallab estimates it from the data: the logit of the mean preference of the OTHER models of the same
    judge on the same instruction (leave-this-model-out; clipped to [0.02, 0.98]). Without an ``instruction`` column
    or other models, the difficulty term is left out (``note`` says so). AlpacaEval's regularisation toward the
    baseline is not applied.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table (:mod:`evallab.verdicts`) with pairwise verdicts and the ``by`` columns.
    items : DataFrame
        Keyed by ``item_id`` with ``len_1``/``len_2`` (characters of each output), e.g.
        :func:`evallab.datasets.load_alpaca_eval`'s items.
    by : sequence of str, default ("judge", "generator_2")
        Grouping columns: one GLM per group.
    instruction : str or None, default "instruction_idx"
        The column naming the instruction shared across models (AlpacaEval: ``instruction_idx``); ``None`` or a
        column the table lacks: no difficulty term.
    preference : str or None, default "score"
        The column holding AlpacaEval's preference in [1, 2] (``None``: the discrete verdicts only;
        :func:`preference_of_output_2`).
    confidence : float, default 0.95
        Level of the interval.

    Returns
    -------
    Results
        One row per group: ``by`` + ``pairs`` (parsed replies with both lengths, unit "count"), ``win_rate`` (raw,
        for comparison; proportion), ``lc_win_rate`` (proportion in [0, 1]) with
        ``lc_win_rate_low``/``lc_win_rate_high`` (delta-method Wald interval with the heteroskedasticity-robust HC0
        covariance of the GLM, :data:`LC_METHOD`, clipped to [0, 1]; n = ``pairs`` replies), ``length_coef`` (β₁,
        log-odds per unit of tanh), ``note`` (the difficulty term left out, or why the fit was not made: fewer than
        10 pairs, lengths or verdicts all equal). Measures: :data:`LC_MEASURES`.

    Raises
    ------
    DataError
        ``items`` without ``len_1``/``len_2``, or a preference outside [1, 2].
    DesignError
        Grouping by ``by`` leaves several replies per (dataset, item, order, sample), or a ``by`` column is missing.

    References
    ----------
    Y. Dubois, B. Galambosi, P. Liang and T. B. Hashimoto (2024), "Length-Controlled AlpacaEval: A Simple Way to
    Debias Automatic Evaluators", arXiv:2404.04475; AlpacaEval (Li, Dubois et al. 2023),
    ``alpaca_eval/metrics/glm_winrate.py``; H. White (1980), "A heteroskedasticity-consistent covariance matrix
    estimator and a direct test for heteroskedasticity", Econometrica 48(4), 817–838 (HC0).

    Examples
    --------
    Twelve one-reply pairs, output 2 preferred more often when longer; no instruction column, so the fit is the
    length term only and LC = logistic(β₀) (checked against scikit-learn's unpenalised logistic regression and the
    HC0 sandwich by hand):

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> ids, dl = [f"q{i}" for i in range(12)], [300, 250, 200, 150, 100, 50, -50, -100, -150, -200, -250, -300]
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ids, "judge": "A", "generator_2": "m",
    ...                                    "verdict": list("222122121121")}))
    >>> items = pd.DataFrame({"item_id": ids, "len_1": 500, "len_2": [500 + d for d in dl]})
    >>> lc = length_controlled_win_rates(df, items)
    >>> print(lc[["pairs", "win_rate", "lc_win_rate", "lc_win_rate_low", "lc_win_rate_high", "length_coef"]]
    ...       .round(3).to_string(index=False))
     pairs  win_rate  lc_win_rate  lc_win_rate_low  lc_win_rate_high  length_coef
        12     0.583        0.608            0.293             0.922        1.607
    """
    need = [c for c in ("item_id", "len_1", "len_2") if c not in items.columns]
    if need:
        raise DataError(f"items lack column(s) {need} needed for the length-controlled win rate", column=need[0])
    by = list(by)
    check_design(df, by)
    lens = items.drop_duplicates("item_id").set_index("item_id")[["len_1", "len_2"]].astype(float)
    d = df.assign(_x=preference_of_output_2(df, preference),
                  _dl=df["item_id"].map(lens["len_2"]).astype(float) - df["item_id"].map(lens["len_1"]).astype(float))
    use_diff = bool(instruction) and instruction in d.columns and "judge" in d.columns
    if use_diff:  # leave-this-model-out mean preference per (judge, instruction)
        key = ["judge", instruction]
        tot = d.groupby(key, observed=True)["_x"].agg(["sum", "count"])
        t = d.join(tot, on=key)
        own = d["_x"].notna()
        other_n = t["count"] - own.astype(int)
        other_mean = (t["sum"] - d["_x"].fillna(0.0)) / other_n.where(other_n > 0)
        d["_diff"] = pd.Series(_logit(other_mean.to_numpy(float)), index=d.index).where(other_n > 0)
    z = intervals.z_value(confidence)
    rows = []
    for key, g in groups(d, by):
        ok = g[g["_x"].notna() & g["_dl"].notna()]
        with_diff = use_diff and ok["_diff"].notna().all() and len(ok) > 0
        r = dict(key, pairs=len(ok), win_rate=float(ok["_x"].mean()) if len(ok) else NAN, lc_win_rate=NAN,
                 lc_win_rate_low=NAN, lc_win_rate_high=NAN, length_coef=NAN,
                 note="" if with_diff else "instruction difficulty not estimable (no other model on the same "
                                           "instructions): length term only")
        sd = float(ok["_dl"].std()) if len(ok) > 2 else 0.0
        if len(ok) < 10 or not sd > 0 or ok["_x"].nunique() < 2:
            r["note"] = not_computable("needs 10 or more parsed pairs with varied lengths and verdicts")
            rows.append(r)
            continue
        cols = [np.ones(len(ok)), np.tanh(ok["_dl"].to_numpy() / sd)]
        if with_diff:
            cols.append(ok["_diff"].to_numpy(float))
        X = np.column_stack(cols)
        fit = GLM(ok["_x"].to_numpy(float), X, family=Binomial()).fit(cov_type="HC0")
        beta, cov = np.asarray(fit.params), np.asarray(fit.cov_params())
        X0 = X.copy()
        X0[:, 1] = 0.0  # Δlength = 0
        p0 = expit(X0 @ beta)
        lc = float(p0.mean())
        grad = (p0 * (1 - p0))[:, None] * X0
        se = float(np.sqrt(grad.mean(0) @ cov @ grad.mean(0)))
        r.update(lc_win_rate=lc, lc_win_rate_low=max(0.0, lc - z * se), lc_win_rate_high=min(1.0, lc + z * se),
                 length_coef=float(beta[1]))
        rows.append(r)
    return results(pd.DataFrame(rows), LC_MEASURES, level=confidence, keys=by)


@needs_verdicts("AlpacaEval's evaluator metrics")
@intervals.shared_resamples()  # the intervals over the same items draw their resamples once
def evaluator_metrics(df: pd.DataFrame, items: pd.DataFrame | None = None, *, by: Sequence[str] = ("judge",),
                      min_length_gap: int = MIN_LENGTH_GAP, confidence: float = 0.95, n_resamples: int = 1000,
                      seed: int = 0, preference: str | None = "score") -> Results:
    """AlpacaEval's evaluator-leaderboard columns that the data allows, per group (definitions and the confounds
    in the module docstring).

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table (:mod:`evallab.verdicts`) with pairwise verdicts; the shown order from ``order``
        (``ab`` = output 1 shown first, ``ba``) or a ``shown_first`` column (``1``/``2``).
    items : DataFrame or None, default None
        Keyed by ``item_id`` with ``len_1``/``len_2`` (characters); needed for P(prefer longer).
    by : sequence of str, default ("judge",)
        Grouping columns.
    min_length_gap : int, default 30
        Only pairs whose outputs differ by MORE than this many characters count for P(prefer longer)
        (:data:`MIN_LENGTH_GAP`, AlpacaEval's ``significant_delta_length``).
    confidence : float, default 0.95
        Level of the intervals.
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no bootstrap; a Wilson interval needs none).
    seed : int, default 0
        Seed of the bootstrap.
    preference : str or None, default "score"
        The column holding AlpacaEval's preference in [1, 2] (``None``: discrete verdicts only).

    Returns
    -------
    Results
        One row per group: ``by`` + counts (unit "count"): ``replies``, ``unparsed``, ``parsed``, ``ties``,
        ``continuous``; proportions in [0, 1]: ``p_prefer_output_1`` (n = ``parsed`` replies); ``shown_known`` (decisive replies
        whose shown order is known: ``order`` ab/ba or a ``shown_first`` column), ``p_prefer_shown_first``
        (n = ``shown_known``; 0.5 = no position preference); ``longer_pairs`` (decisive replies on pairs with a
        length gap), ``longer_is_output_1`` (share of those pairs whose longer output is output 1; no interval),
        ``p_prefer_longer`` (n = ``longer_pairs``); ``note``. Each interval is ``<column>_low``/``_high``,
        resampling items, its method in ``<column>_method``
        (:func:`evallab.metrics._intervals.ratio_interval_method`). Measures: :data:`EVALUATOR_MEASURES`.

    Raises
    ------
    DataError
        ``items`` without ``len_1``/``len_2``, or a preference outside [1, 2].
    DesignError
        Grouping by ``by`` leaves several replies per (dataset, item, order, sample), or a ``by`` column is missing.

    References
    ----------
    AlpacaEval's evaluator leaderboard (Li, Dubois et al. 2023; ``alpaca_eval/analyze.py``,
    ``get_length_biases``).

    Examples
    --------
    Four pairs judged in both orders. P(prefer output 1) = 3.5 / 8 (the tie counts ½); the output shown first wins
    4 of the 7 decisive replies; q3's outputs differ by 10 characters, so 6 decisive replies count for
    P(prefer longer), 4 of them for the longer output:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2", "q3", "q3", "q4", "q4"], "judge": "A",
    ...                                    "order": ["ab", "ba"] * 4,
    ...                                    "verdict": ["2", "2", "1", "2", "1", "tie", "2", "1"]}))
    >>> items = pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4"], "len_1": [100, 300, 150, 50],
    ...                       "len_2": [200, 100, 160, 400]})
    >>> m = evaluator_metrics(df, items, n_resamples=0)
    >>> print(m[["p_prefer_output_1", "shown_known", "p_prefer_shown_first", "longer_pairs", "p_prefer_longer"]]
    ...       .round(4).to_string(index=False))
     p_prefer_output_1  shown_known  p_prefer_shown_first  longer_pairs  p_prefer_longer
                0.4375            7                0.5714             6           0.6667
    """
    by = list(by)
    check_design(df, by)
    d = df.copy()
    v = d["verdict"]
    dec = v.isin(["1", "2"]).fillna(False)
    d["_n1"] = 1.0 - preference_of_output_2(d, preference)
    d["_tie"] = (v == "tie").fillna(False)
    d["_cont"] = v.notna() & (pd.to_numeric(d[preference], errors="coerce").notna()
                              if preference and preference in d.columns else False)
    sf = d["shown_first"].astype("string") if "shown_first" in d.columns else pd.Series(pd.NA, index=d.index,
                                                                                            dtype="string")
    sf = sf.fillna(d["order"].map({"ab": "1", "ba": "2"}).astype("string"))
    known = dec & sf.notna()
    d["_sk"] = known.astype(float)
    d["_sf"] = (known & (v == sf)).fillna(False).astype(float)
    if items is not None:
        need = [c for c in ("item_id", "len_1", "len_2") if c not in items.columns]
        if need:
            raise DataError(f"items lack column(s) {need} needed for P(prefer longer)", column=need[0])
        lens = items.drop_duplicates("item_id").set_index("item_id")[["len_1", "len_2"]].astype(float)
        l1 = d["item_id"].map(lens["len_1"]).astype(float)
        l2 = d["item_id"].map(lens["len_2"]).astype(float)
        gap = ((l1 - l2).abs() > min_length_gap).fillna(False)
        longer = pd.Series(np.where(l1 > l2, "1", "2"), index=d.index)
        d["_lk"] = (dec & gap).astype(float)
        d["_ll"] = (dec & gap & (v == longer)).fillna(False).astype(float)
        d["_l1"] = (dec & gap & (l1 > l2)).astype(float)
    else:
        d["_lk"] = d["_ll"] = d["_l1"] = 0.0
    d["_ok"] = v.notna().astype(float)
    d["_item"] = item_key(d)
    kw = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    rows = []
    for key, g in groups(d, by):
        per = g.assign(_n1=g["_n1"].fillna(0.0)).groupby("_item")[["_n1", "_ok", "_sf", "_sk", "_ll", "_lk",
                                                                     "_l1"]].sum()
        ok = int(per["_ok"].sum())
        r = dict(key, replies=len(g), unparsed=len(g) - ok, parsed=ok, ties=int(g["_tie"].sum()),
                 continuous=int(g["_cont"].sum()))
        r["p_prefer_output_1"] = float(per["_n1"].sum() / ok) if ok else NAN
        _interval(r, "p_prefer_output_1", per["_n1"], per["_ok"], **kw)
        sk, lk = int(per["_sk"].sum()), int(per["_lk"].sum())
        r["shown_known"] = sk
        r["p_prefer_shown_first"] = float(per["_sf"].sum() / sk) if sk else NAN
        _interval(r, "p_prefer_shown_first", per["_sf"], per["_sk"], **kw)
        r["longer_pairs"] = lk
        r["longer_is_output_1"] = float(per["_l1"].sum() / lk) if lk else NAN
        r["p_prefer_longer"] = float(per["_ll"].sum() / lk) if lk else NAN
        _interval(r, "p_prefer_longer", per["_ll"], per["_lk"], **kw)
        notes = []
        if not ok:
            notes.append(not_computable("no parsed reply"))
        if not sk:
            notes.append(not_computable("P(prefer shown first) needs the shown order"))
        if items is None:
            notes.append(not_computable("P(prefer longer) needs output lengths"))
        elif not lk:
            notes.append(not_computable(f"P(prefer longer) needs decisive replies on pairs whose lengths differ by "
                                        f"more than {min_length_gap} characters"))
        r["note"] = join_notes(*notes)
        rows.append(r)
    return results(pd.DataFrame(rows), EVALUATOR_MEASURES, level=confidence, keys=by)


def _interval(row: dict, column: str, num, den, **kw) -> None:
    """``row[column + "_low"/"_high"/"_method"]`` from per-item counts
    (:func:`evallab.metrics._intervals.ratio_interval_method`)."""
    row[f"{column}_low"], row[f"{column}_high"], row[f"{column}_method"] = intervals.ratio_interval_method(
        num, den, **kw)


#: fewest entities a rank agreement is headlined from: with 4, even identical rankings give an exact two-sided
#: p of 2/4! = 0.083, so no tau could be told from chance at 0.05 (see :func:`min_rank_entities`)
MIN_RANK_ENTITIES = 5


def perfect_agreement_pvalue(n: int) -> float:
    """The exact two-sided p-value of Kendall's tau when two rankings of ``n`` entities agree perfectly (no ties):
    ``2 / n!``, the smallest p any tau on ``n`` entities can reach (``scipy.stats.kendalltau``, method "exact").
    NaN for ``n < 2``.

    Parameters
    ----------
    n : int
        Number of entities ranked.

    Returns
    -------
    float
        A p-value in (0, 1]: ``2 / n!`` (1.0 for n = 2); NaN for ``n < 2``.

    References
    ----------
    M. G. Kendall (1938), "A new measure of rank correlation", Biometrika 30(1/2), 81–93 (the exact null
    distribution of tau: every one of the n! orderings equally likely).

    Examples
    --------
    >>> round(perfect_agreement_pvalue(4), 4), round(perfect_agreement_pvalue(5), 4)  # 2/24, 2/120
    (0.0833, 0.0167)
    """
    if n < 2:
        return float("nan")
    return float(kendalltau(np.arange(n), np.arange(n), method="exact").pvalue)


def min_rank_entities(alpha: float = 0.05) -> int:
    """The smallest number of entities at which a rank agreement can be significant at ``alpha`` at all: the least
    ``n`` with :func:`perfect_agreement_pvalue` ``< alpha`` (5 at 0.05, 6 at 0.01).

    Parameters
    ----------
    alpha : float, default 0.05
        Significance level, in (0, 1).

    Returns
    -------
    int
        The least n ≥ 2 with ``2 / n! < alpha`` (a count of entities).

    Raises
    ------
    DataError
        ``alpha`` not strictly between 0 and 1.

    References
    ----------
    M. G. Kendall (1938), "A new measure of rank correlation", Biometrika 30(1/2), 81–93.

    Examples
    --------
    2/4! = 0.083 and 2/5! = 0.017 straddle 0.05; 2/6! = 0.0028 is the first below 0.01:

    >>> min_rank_entities(), min_rank_entities(0.01)
    (5, 6)
    """
    if not 0 < alpha < 1:
        raise DataError(f"alpha={alpha}; expected a level strictly between 0 and 1")
    n = 2
    while perfect_agreement_pvalue(n) >= alpha:
        n += 1
    return n


def rank_headline(table: pd.DataFrame, *, min_n: int = MIN_RANK_ENTITIES) -> dict:
    """The judge-swap headline of a rank-agreement table (:func:`leaderboard_rank_agreement` or
    :func:`win_rate_rank_agreement`): the LOWEST tau among pairs with at least ``min_n`` common entities, with its
    ``n`` and exact ``pvalue`` — never a tau from fewer entities.

    Parameters
    ----------
    table : DataFrame
        A rank-agreement table with columns ``n``, ``tau`` and ``pvalue`` and the pair's names (e.g. ``judge_a``,
        ``judge_b``), one row per pair.
    min_n : int, default 5
        Fewest common entities a headlined pair must have (:data:`MIN_RANK_ENTITIES`, :func:`min_rank_entities`).

    Returns
    -------
    dict
        ``tau`` (coefficient), ``n`` (count), ``pvalue`` and the pair's names (the row's other columns) — all None
        when no pair has ``min_n`` entities —, ``max_tau`` (highest tau among those pairs), ``pairs`` (pairs with
        ``min_n`` or more), ``pairs_below_min`` (pairs left out), ``min_n``, ``p_at_min``
        (:func:`perfect_agreement_pvalue` of ``min_n − 1``: the best p a left-out pair could have had), and
        ``row``: the headline row's position in ``table`` (``table.estimate("tau", row)`` states it; None without
        a headline).

    References
    ----------
    M. G. Kendall (1938), "A new measure of rank correlation", Biometrika 30(1/2), 81–93.

    Examples
    --------
    A–C's tau of 0.667 is the lowest but rests on 4 models; the headline is A–B's 0.733 on 6 (taus and exact
    p-values from ``scipy.stats.kendalltau`` of 6 models with 2 and 1 discordant pairs, 4 with 1):

    >>> import pandas as pd
    >>> table = pd.DataFrame({"judge_a": ["A", "A", "B"], "judge_b": ["B", "C", "C"], "n": [6, 4, 6],
    ...                       "tau": [11 / 15, 2 / 3, 13 / 15], "pvalue": [40 / 720, 8 / 24, 12 / 720]})
    >>> h = rank_headline(table)
    >>> h["judge_a"], h["judge_b"], h["n"], round(h["tau"], 3), h["row"], h["pairs"], h["pairs_below_min"]
    ('A', 'B', 6, 0.733, 0, 2, 1)
    >>> round(h["p_at_min"], 3)  # 2/4!: the best a 4-model pair could do
    0.083
    """
    ok = table[(table["n"] >= min_n) & table["tau"].notna()]
    out = {"min_n": int(min_n), "pairs": len(ok), "pairs_below_min": int(len(table) - len(ok)),
           "p_at_min": perfect_agreement_pvalue(min_n - 1)}
    if ok.empty:
        return {**out, "tau": None, "n": None, "pvalue": None, "max_tau": None, "row": None}
    ranked = ok.sort_values(["tau", "n"], ascending=[True, False])
    r = ranked.iloc[0]
    return {**out, **{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()}, "n": int(r["n"]),
            "tau": float(r["tau"]), "pvalue": float(r["pvalue"]), "max_tau": float(ok["tau"].max()),
            "row": int(table.index.get_loc(ranked.index[0]))}


def rank_correlation(a: pd.Series, b: pd.Series) -> dict:
    """Kendall's tau (tau-b, ``scipy.stats.kendalltau``) between two scores of the same entities.

    ``a`` and ``b`` are indexed by entity (e.g. model); only entities in both with finite values count.

    Parameters
    ----------
    a, b : Series
        Scores indexed by entity; higher or lower, only the order counts.

    Returns
    -------
    dict
        ``{"n", "tau", "pvalue", "note"}``: ``n`` common entities (count); ``tau`` (coefficient) in [-1, 1], NaN
        with fewer than 2 common entities or when a ranking ties every entity (``note`` says which; "" otherwise);
        ``pvalue``, two-sided, exact for small n without ties (scipy's "auto"). Report tau with its n and p, and not
        at all below :data:`MIN_RANK_ENTITIES` (:func:`rank_headline`): with few entities even perfect agreement is
        not significant.

    References
    ----------
    M. G. Kendall (1938), "A new measure of rank correlation", Biometrika 30(1/2), 81–93; M. G. Kendall (1945),
    "The treatment of ties in ranking problems", Biometrika 33(3), 239–251 (tau-b).

    Examples
    --------
    Four common models (m5 is in ``b`` only), one of the 6 pairs discordant: tau = (5 − 1)/6; 4 of the 24 orderings
    have at most one discordant pair, so the two-sided exact p is 8/24:

    >>> import pandas as pd
    >>> r = rank_correlation(pd.Series({"m1": 1, "m2": 2, "m3": 3, "m4": 4}),
    ...                      pd.Series({"m1": 10, "m2": 30, "m3": 20, "m4": 40, "m5": 50}))
    >>> r["n"], round(r["tau"], 3), round(r["pvalue"], 3), r["note"]
    (4, 0.667, 0.333, '')
    """
    j = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner").astype(float).dropna()
    if len(j) < 2:
        return {"n": len(j), "tau": np.nan, "pvalue": np.nan,
                "note": not_computable(f"Kendall's tau needs 2 or more common entities ({len(j)} here)")}
    res = kendalltau(j["a"].to_numpy(), j["b"].to_numpy())
    tau = float(res.statistic)
    return {"n": len(j), "tau": tau, "pvalue": float(res.pvalue),
            "note": "" if np.isfinite(tau) else not_computable("a ranking ties every entity")}


@needs_verdicts("the win-rate rank agreement")
def win_rate_rank_agreement(df: pd.DataFrame, *, entity: str = "generator_2") -> Results:
    """The judge-swap effect on a ranking built from the verdicts: for every two judges, Kendall's tau between
    the win rates (:func:`win_rates`) of the entities (models) both judged, and the largest win-rate shift.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table with a ``judge`` column and the ``entity`` column.
    entity : str, default "generator_2"
        The column naming what is ranked (the model compared with the baseline).

    Returns
    -------
    Results
        ``judge_a``, ``judge_b``, ``n`` (common entities, unit "count"), ``tau`` (Kendall's tau-b, unit
        "coefficient", no interval; n = ``n`` models), ``pvalue`` (exact two-sided when small, unit "p-value"),
        ``max_shift`` (largest |win rate b − win rate a| over common entities, unit "pp": a difference of
        proportions, 0.05 = 5 points), ``max_shift_entity`` and ``note`` (why a tau is missing). Measures:
        :data:`RANK_MEASURES`.

    Raises
    ------
    DesignError
        Grouping by judge and ``entity`` leaves several replies per (dataset, item, order, sample), or a column is
        missing (:func:`win_rates`).

    References
    ----------
    M. G. Kendall (1938), "A new measure of rank correlation", Biometrika 30(1/2), 81–93; AlpacaEval (Li, Dubois
    et al. 2023) for the win rate.

    Examples
    --------
    Judge A gives m1, m2, m3 win rates 0, ½, 1; judge B ½, 0, 1: one of the 3 pairs swaps, tau = (2 − 1)/3, and
    every one of the 6 orderings of 3 models has |tau| ≥ 1/3, so the exact p is 1; m1 and m2 both shift by 0.5:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> models = ["m1", "m1", "m2", "m2", "m3", "m3"]
    >>> df = verdicts.coerce(pd.DataFrame({"judge": ["A"] * 6 + ["B"] * 6, "generator_2": models * 2,
    ...                                    "item_id": [f"{m}-q{i % 2}" for i, m in enumerate(models)] * 2,
    ...                                    "verdict": list("111222") + list("121122")}))
    >>> print(win_rate_rank_agreement(df).round(3)[["judge_a", "judge_b", "n", "tau", "pvalue", "max_shift",
    ...                                             "max_shift_entity"]].to_string(index=False))
    judge_a judge_b  n   tau  pvalue  max_shift max_shift_entity
          A       B  3 0.333     1.0        0.5               m1
    """
    w = win_rates(df, by=("judge", entity), n_resamples=0).pivot(index=entity, columns="judge", values="win_rate")
    rows = []
    for a, b in combinations(sorted(w.columns), 2):
        r = rank_correlation(w[a], w[b])
        diff = (w[b] - w[a]).abs().dropna()
        rows.append(dict(judge_a=a, judge_b=b, **r, max_shift=float(diff.max()) if len(diff) else np.nan,
                         max_shift_entity=str(diff.idxmax()) if len(diff) else ""))
    out = pd.DataFrame(rows, columns=["judge_a", "judge_b", "n", "tau", "pvalue", "max_shift", "max_shift_entity",
                                      "note"])
    return results(out, RANK_MEASURES, keys=["judge_a", "judge_b"])


def leaderboard_rank_agreement(leaderboards: pd.DataFrame, *, value: str = "win_rate", min_common: int = 3,
                               exclude_baseline: bool = True) -> Results:
    """The judge-swap effect on rankings: Kendall's tau between every two leaderboards of the same version.

    Parameters
    ----------
    leaderboards : DataFrame
        Long table of :func:`evallab.datasets.load_alpaca_eval_leaderboards` (``version``, ``leaderboard``,
        ``model``, ``value``, ``is_baseline``).
    value : str, default "win_rate"
        The score ranked (``win_rate``, ``length_controlled_winrate``, ...); its unit does not matter, only the
        order.
    min_common : int, default 3
        Pairs of leaderboards sharing fewer models are left out.
    exclude_baseline : bool, default True
        Drop each board's baseline row (its 50% is fixed by construction).

    Returns
    -------
    Results
        ``version``, ``leaderboard_a``, ``leaderboard_b`` (in alphabetical order), ``n`` (common models, unit
        "count"), ``tau`` (Kendall's tau-b, unit "coefficient", no interval; n = ``n`` models), ``pvalue``
        (two-sided, unit "p-value"), ``note``, sorted by version and n (largest first). Measures:
        :data:`RANK_MEASURES`.

    References
    ----------
    M. G. Kendall (1938), "A new measure of rank correlation", Biometrika 30(1/2), 81–93; M. G. Kendall (1945),
    "The treatment of ties in ranking problems", Biometrika 33(3), 239–251 (tau-b); the AlpacaEval leaderboards
    (Li, Dubois et al. 2023; Dubois et al. 2024 for the length-controlled column).

    Examples
    --------
    Two boards rank four models with m2 and m3 swapped (the baselines' 50 are dropped): tau = 4/6, exact p = 8/24:

    >>> import pandas as pd
    >>> lb = pd.DataFrame({"version": "2.0", "leaderboard": ["gpt4"] * 5 + ["claude"] * 5,
    ...                    "model": ["base", "m1", "m2", "m3", "m4"] * 2,
    ...                    "is_baseline": ([True] + [False] * 4) * 2,
    ...                    "win_rate": [50, 10, 20, 30, 40, 50, 15, 35, 25, 45]})
    >>> print(leaderboard_rank_agreement(lb).round(3)[["leaderboard_a", "leaderboard_b", "n", "tau", "pvalue"]]
    ...       .to_string(index=False))
    leaderboard_a leaderboard_b  n   tau  pvalue
           claude          gpt4  4 0.667   0.333
    """
    lb = leaderboards
    if exclude_baseline and "is_baseline" in lb.columns:
        lb = lb[~lb["is_baseline"]]
    lb = lb[lb[value].notna()]
    rows = []
    for version, g in lb.groupby("version", sort=True):
        boards = {k: s.drop_duplicates("model").set_index("model")[value] for k, s in g.groupby("leaderboard")}
        for a, b in combinations(sorted(boards), 2):
            r = rank_correlation(boards[a], boards[b])
            if r["n"] >= min_common:
                rows.append(dict(version=version, leaderboard_a=a, leaderboard_b=b, **r))
    out = pd.DataFrame(rows, columns=["version", "leaderboard_a", "leaderboard_b", "n", "tau", "pvalue", "note"])
    out = out.sort_values(["version", "n"], ascending=[True, False]).reset_index(drop=True)
    return results(out, RANK_MEASURES, keys=["version", "leaderboard_a", "leaderboard_b"])




# ------------------------------------------------------------------------------------- per-model leaderboard
#: the columns that name the evaluated model in the importers' tables, in the order they are looked for:
#: Arena-Hard / MT-Bench pairwise (``output_2_model``), AlpacaEval (``generator_2``), MT-Bench single
#: (``answer_model``), promptfoo (``provider``), then the names users' own tables use
MODEL_COLUMNS = ("output_2_model", "generator_2", "answer_model", "provider", "generator", "evaluated_model")
#: Arena-Hard's weight of a strong-preference verdict (``A>>B``): ``show_result.py`` ``load_judgments(weight=3)``
STRONG_WEIGHT = 3
#: a strong-preference label in ``raw_verdict`` (``A>>B``, ``B>>A``, ``A<<B``, ``B<<A``)
_STRONG = r">>|<<"


#: the measures of :func:`model_leaderboard` on a pairwise table
LEADERBOARD_WIN_MEASURES = (
    _count("items", "Items"), _count("items_dropped", "Items left out (no reply scored)"),
    _count("replies_left_out", "Replies left out (unparsed, or the other order of an unparsed one)"),
    _count("replies", "Replies"), _count("wins", "Wins"), _count("losses", "Losses"), _count("ties", "Ties"),
    _count("strong", "Strong preferences (>>)"),
    _share("win_rate", "Win rate against the baseline", "items", "items"),
)
#: the measures of :func:`model_leaderboard` on a pointwise table
LEADERBOARD_PASS_MEASURES = (
    _count("items", "Items"), _count("replies", "Replies"), _count("unparsed", "Unparsed"),
    _count("passes", "Passes"), _share("pass_rate", "Pass rate", "items", "items"),
)


def model_column(df: pd.DataFrame, model: str | None = None) -> str | None:
    """The column of ``df`` naming the evaluated model: ``model`` when given (it must exist), else the first of
    :data:`MODEL_COLUMNS` the table has with a value; None when there is none.

    Raises
    ------
    DataError
        ``model`` given but not a column of the table.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item_id": ["q1"], "generator": ["m"], "provider": [None]})
    >>> model_column(df), model_column(df[["item_id"]])  # provider is empty: the next column that names one
    ('generator', None)
    """
    if model:
        if model not in df.columns:
            raise DataError(f"model column {model!r} is not in the table; its columns: {sorted(map(str, df.columns))}",
                            column=model)
        return model
    for c in MODEL_COLUMNS:
        if c in df.columns and df[c].notna().any():
            return c
    return None


def _left_out(g: pd.DataFrame) -> pd.Series:
    """Which replies of one leaderboard group are not scored (bool, aligned to ``g``): every unparsed reply, and the
    other order of a request (item, sample) asked in both orders whose one game is unparsed — Arena-Hard drops a
    question when one of its two games has no score (``show_result.py``), so the rule applies per (item, sample)
    request with both orders only; on a one-order request only the unparsed reply itself is left out. The item
    stays the resampling unit: its other samples are kept."""
    unparsed = g["verdict"].isna()
    sample = g["sample"].astype(str) if "sample" in g.columns else pd.Series("0", index=g.index)
    req = pd.Series(g["_item"], index=g.index).astype(str) + "|" + sample
    orders = (g["order"].astype(str) if "order" in g.columns else pd.Series("", index=g.index))
    both = orders.groupby(req).transform(lambda o: set(o) >= set(ORDERS)).astype(bool)
    bad = set(req[unparsed & both])
    return unparsed | (both & req.isin(bad))


@needs_verdicts("the model leaderboard")
@intervals.shared_resamples()  # the intervals over the same items draw their resamples once
def model_leaderboard(df: pd.DataFrame, by: Sequence[str] = ("judge",), *, model: str | None = None,
                      strong_weight: int = STRONG_WEIGHT, confidence: float = 0.95, n_resamples: int = 1000,
                      seed: int = 0) -> Results:
    """Per-model results from a judge's verdicts: each model's win rate against the baseline on a pairwise table
    (Arena-Hard's scoring), its pass rate on a pointwise one (inspect, promptfoo) — one row per group × model,
    the highest first, with an item-cluster interval whose method is named.

    Pairwise (output 1 = the baseline, output 2 = the model, as the AlpacaEval and Arena-Hard importers write
    them): a reply scores 1 when the model's output wins (verdict ``2``), ½ for a tie, 0 when it loses; a strong
    preference (``>>``/``<<`` in ``raw_verdict``, Arena-Hard's ``A>>B`` …) counts ``strong_weight`` times, as
    Arena-Hard's ``show_result.py`` (``load_judgments(weight=3)``) repeats it; the win rate is the weighted mean
    over the replies of the model's items. An unparsed reply is left out; where its request (item, sample) was asked in
    both orders its other order is left out too, as Arena-Hard drops a question either of whose two games has no
    score — per request, so the item's other samples are kept (counted in ``replies_left_out``; ``items_dropped``:
    items with no reply left). Without strong-preference labels
    every reply weighs 1: the plain win rate with ties as half a win. (The strength is read from ``raw_verdict``
    only: ``score`` means other things in other tables — AlpacaEval's preference, LLMBar's rating difference.)

    Pointwise: the pass rate = replies ``pass`` / parsed replies (``warn`` is not a pass), unparsed replies left out
    and counted.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table (:mod:`evallab.verdicts`), all pairwise or all pointwise, with a column naming the
        evaluated model.
    by : sequence of str, default ("judge",)
        The grouping above the model (the judge; add ``strategy`` … for several prompts).
    model : str, optional
        The column naming the evaluated model; default the first of :data:`MODEL_COLUMNS` in the table.
    strong_weight : int, default 3
        Weight of a strong-preference verdict (Arena-Hard's ``weight``; 1: no extra weight).
    confidence : float, default 0.95
        Level of the intervals.
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no bootstrap; a Wilson interval needs none).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        One row per ``by`` × model (the model column keeps its name), sorted by group and then by the rate, highest
        first. Pairwise (:data:`LEADERBOARD_WIN_MEASURES`): counts ``items`` (scored), ``items_dropped``,
        ``replies_left_out``, ``replies`` (scored), ``wins``, ``losses``, ``ties``, ``strong`` (strong-preference replies); ``win_rate``
        (proportion in [0, 1]) with ``win_rate_low``/``_high`` and ``win_rate_method``; ``baseline`` (the output-1
        model's name where ``output_1_model``/``generator_1`` gives it). Pointwise
        (:data:`LEADERBOARD_PASS_MEASURES`): ``items``, ``replies``, ``unparsed``, ``passes``; ``pass_rate`` with
        ``pass_rate_low``/``_high``/``_method``. Both: ``note`` (why a rate is missing). The interval resamples
        items (:func:`evallab.metrics._intervals.ratio_interval_method`: Wilson when every item holds one reply of
        weight 1 scored 0 or 1, else a percentile item bootstrap of the weighted sums) — where Arena-Hard
        resamples single battles 100 times and reports the 5–95% quantiles (a 90% interval).

    Raises
    ------
    DataError
        No column names the evaluated model (pass ``model``), or ``model`` is not a column; pairwise and pointwise
        verdicts in one table.
    DesignError
        Grouping by ``by`` and the model leaves several replies per (dataset, item, order, sample).

    References
    ----------
    T. Li, W.-L. Chiang et al. (2024), "From Crowdsourced Data to High-Quality Benchmarks: Arena-Hard and
    BenchBuilder Pipeline", arXiv:2406.11939; lmarena/arena-hard-auto ``show_result.py`` (``load_judgments``:
    ``A>>B`` → ``[1] * weight``, ``A=B`` → ½, a question with a null game dropped); the pass rate as inspect's
    ``accuracy()`` and promptfoo's pass rate report it; E. B. Wilson (1927), JASA 22(158).

    Examples
    --------
    Model m1 against the baseline on two questions, both orders: q1 ``B>>A`` then ``A=B`` as shown → scores
    1, 1, 1 (the strong win ×3) and ½; q2 a loss and a win: (3 + ½ + 0 + 1) / (3 + 1 + 1 + 1) = 0.75:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["m1#q1", "m1#q1", "m1#q2", "m1#q2"], "judge": "J",
    ...     "order": ["ab", "ba", "ab", "ba"], "verdict": ["2", "tie", "1", "2"],
    ...     "raw_verdict": ["B>>A", "A=B", "A>B", "A>B"], "output_2_model": "m1"}))
    >>> lb = model_leaderboard(df, n_resamples=0)
    >>> print(lb[["output_2_model", "items", "wins", "ties", "strong", "win_rate"]].to_string(index=False))
    output_2_model  items  wins  ties  strong  win_rate
                m1      2     2     1       1      0.75
    """
    col = model_column(df, model)
    if col is None:
        raise DataError("no column names the evaluated model; expected one of " + ", ".join(MODEL_COLUMNS)
                        + " (or pass model=<column>)")
    keys = [*[c for c in by if c != col], col]
    check_design(df, keys)
    parsed = df[df["verdict"].notna()]
    is_pair = pairwise(parsed) if len(parsed) else pd.Series(False, index=parsed.index)
    if is_pair.any() and not is_pair.all():
        raise DataError("the table holds pairwise and pointwise verdicts; select one kind for a leaderboard",
                        column="verdict")
    kw = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    rows = []
    if len(parsed) and is_pair.all():
        strong = (df["raw_verdict"].astype("string").str.contains(_STRONG, regex=True).fillna(False)
                  if "raw_verdict" in df.columns else pd.Series(False, index=df.index))
        d = df.assign(_s=df["verdict"].map({"2": 1.0, "tie": 0.5, "1": 0.0}).astype(float),
                      _w=np.where(strong.to_numpy(dtype=bool) & df["verdict"].isin(["1", "2"]).to_numpy(dtype=bool),
                                  float(strong_weight), 1.0),
                      _item=item_key(df))
        base = next((c for c in ("output_1_model", "generator_1") if c in d.columns), None)
        for key, g in groups(d, keys):
            drop = _left_out(g)
            ok = g[~drop]
            per = ok.assign(_num=ok["_s"] * ok["_w"]).groupby("_item")[["_num", "_w"]].sum()
            r = dict(key, items=len(per), items_dropped=int(g["_item"].nunique() - len(per)),
                     replies_left_out=int(drop.sum()), replies=len(ok),
                     wins=int((ok["verdict"] == "2").sum()), losses=int((ok["verdict"] == "1").sum()),
                     ties=int((ok["verdict"] == "tie").sum()),
                     strong=int((ok["_w"] > 1).sum()),
                     win_rate=float(per["_num"].sum() / per["_w"].sum()) if len(per) else NAN,
                     baseline=", ".join(sorted(map(str, g[base].dropna().unique()))) if base else "")
            _interval(r, "win_rate", per["_num"], per["_w"], **kw)
            r["note"] = "" if len(per) else not_computable("no item with every reply parsed")
            rows.append(r)
        measures, column = LEADERBOARD_WIN_MEASURES, "win_rate"
    else:
        d = df.assign(_p=(df["verdict"] == "pass").fillna(False).astype(float), _ok=df["verdict"].notna().astype(float),
                      _item=item_key(df))
        for key, g in groups(d, keys):
            per = g.groupby("_item")[["_p", "_ok"]].sum()
            n_ok = float(per["_ok"].sum())
            r = dict(key, items=int((per["_ok"] > 0).sum()), replies=len(g), unparsed=int(len(g) - n_ok),
                     passes=int(per["_p"].sum()), pass_rate=float(per["_p"].sum() / n_ok) if n_ok else NAN)
            _interval(r, "pass_rate", per["_p"], per["_ok"], **kw)
            r["note"] = "" if n_ok else not_computable("no parsed reply")
            rows.append(r)
        measures, column = LEADERBOARD_PASS_MEASURES, "pass_rate"
    out = pd.DataFrame(rows)
    if len(out):
        group = [c for c in keys if c != col]
        out = out.sort_values([*group, column], ascending=[True] * len(group) + [False], na_position="last")
    return results(out.reset_index(drop=True), measures, level=confidence, keys=keys)
