"""A judge study's report (``evallab study report DIR``, issue 29 item 3): the configurations (judge × prompt ×
anchor set) of a study run measured on the same items, compared pairwise and the recommended one — stated as the
best on the chosen criterion only when no other configuration is within reach of it.

- :func:`configurations` — the recommendation first (the overall finding), then per configuration: parse rate,
  agreement with gold (accuracy, Cohen's kappa), position consistency and first-slot preference (pairwise) or pass
  rate (pointwise), the leniency shift against the reference anchor set, repetition stability, cost per verdict;
  then the pairwise comparisons on the criterion (paired difference, McNemar on items, Holm across pairs).
- :func:`_render_page` — a section as a self-contained HTML page.

Definitions, methods and sources: :mod:`evallab.metrics._configurations`.
"""

from __future__ import annotations

import html

import pandas as pd

from evallab.metrics._configurations import CRITERIA, compare_configurations
from evallab.reporting._context import Section

__all__ = ["configurations"]

#: the per-configuration columns shown (those with a value somewhere)
SHOWN = ("parse_rate", "accuracy", "kappa", "position_consistency", "first_slot_preference", "pass_rate",
         "leniency_shift", "stability", "cost_per_verdict", "tokens_per_verdict")


def _range_finding(sec: Section, res, col: str, what: str) -> None:
    ok = res[res[col].notna()]
    if len(ok) < 2:
        return
    lo, hi = ok[col].idxmin(), ok[col].idxmax()
    a, b = res.estimate(col, lo), res.estimate(col, hi)
    if ok[col].min() == ok[col].max():
        sec.finding(f"{what} is {b.number()} in every configuration.", b)
        return
    sec.finding(f"{what} ranges from {a.number()} {a.interval()} ({res.at[lo, 'configuration']}) to "
                f"{b.number()} {b.interval()} ({res.at[hi, 'configuration']}).".replace(" )", ")").replace("  ", " "),
                b)


def configurations(df: pd.DataFrame, *, criterion: str = "accuracy", confidence: float = 0.95,
                   n_resamples: int = 1000, seed: int = 0) -> Section:
    """What a study run states (module docstring), from :func:`evallab.metrics.compare_configurations`.

    Parameters
    ----------
    df : DataFrame
        The study run's tidy verdict table (:func:`evallab.judges._study.load_study_run`).
    criterion : str
        What the recommendation ranks on (:data:`evallab.metrics._configurations.CRITERIA`; ``agreement`` =
        accuracy).
    confidence, n_resamples, seed
        Level, item-bootstrap resamples and seed of every interval.

    Returns
    -------
    Section
        ``metrics``: ``configurations`` and ``comparisons`` (Results), ``recommendation`` (the sentence).

    Raises
    ------
    DataError
        As :func:`~evallab.metrics.compare_configurations`.
    """
    res = compare_configurations(df, criterion=criterion, confidence=confidence, n_resamples=n_resamples, seed=seed)
    pairs = res.attrs["pairs"]
    crit = res.attrs["criterion"]
    col, label = CRITERIA[crit]
    sec = Section()
    kind = res["kind"].iloc[0]
    dims = [f"{res[c].nunique()} {w}" for c, w in (("judge", "judge(s)"), ("strategy", "prompt(s)"),
                                                     ("anchor_set", "anchor set(s)")) if c in res]
    sec.text(f"{len(res)} configurations ({' × '.join(dims)}), {kind}, on {int(res['items'].max()):,} items; "
             f"ranked on {label}.")
    best = res.index[res["configuration"] == res.attrs["best"]]
    sec.finding(res.attrs["recommendation"], res.estimate(col, best[0]) if len(best) else None)
    _range_finding(sec, res, "parse_rate", "The parse rate")
    if crit != "accuracy":
        _range_finding(sec, res, "accuracy", "Accuracy against gold")
    if crit != "position_consistency":
        _range_finding(sec, res, "position_consistency", "Position consistency")
    _range_finding(sec, res, "first_slot_preference" if kind == "pairwise" else "pass_rate",
                   "First-slot preference" if kind == "pairwise" else "The pass rate")
    if res.attrs.get("reference_anchor_set") and res["leniency_shift"].notna().any():
        sec.text(f"Leniency shift: the configuration's {'first-slot preference' if kind == 'pairwise' else 'pass rate'}"
                 f" minus that of the same judge and prompt under the anchor set "
                 f"'{res.attrs['reference_anchor_set']}', paired on items.")
    shown = [c for c in SHOWN if c in res and res[c].notna().any()]
    sec.table(res, ["configuration", *shown], caption="Per configuration (unparsed replies counted in the parse "
                                                      "rate, never scored as wrong)", csv_name="configurations")
    if len(pairs):
        p = pairs[pairs["p_holm"].notna()]
        sig = p[p["p_holm"] < 1 - confidence]
        lost = pairs[pairs["p_holm"].isna()]
        why = "; ".join(f"{n} {'has' if n == 1 else 'have'} {reason.removeprefix('not computable: ')}"
                        for reason, n in lost["note"].replace("", "no McNemar test").value_counts().items())
        if p.empty:
            sec.finding(f"None of the {len(pairs)} pairwise comparisons on {label} could be computed ({why}).")
        else:
            sec.finding(f"Of {len(p)} computable pairwise comparison{'' if len(p) == 1 else 's'} on {label}, {len(sig)} "
                        f"{'has' if len(sig) == 1 else 'have'} a Holm-adjusted McNemar p below {1 - confidence:.2g} "
                        "(items as the unit)"
                        + (f"; {len(lost)} of the {len(pairs)} could not be computed ({why})." if len(lost) else "."))
        sec.table(pairs, ["first", "second", "items", "difference", "first_only", "second_only", "mcnemar_p",
                          "p_holm"], caption=f"Pairwise comparisons on {label}: paired difference on the same "
                                             "items, McNemar's test on items, Holm's adjustment across pairs",
                  csv_name="comparisons")
    sec.metrics.update(configurations=res, comparisons=pairs, recommendation=res.attrs["recommendation"])
    sec.conclusions.append(res.attrs["recommendation"])
    sec.caveats.append("A configuration is named the best only when its interval overlaps no other's and every "
                       "paired difference's interval excludes 0.")
    return sec


def _render_page(section: Section, title: str) -> str:
    """``section`` as a self-contained HTML page (findings, tables, sentences; conclusions and caveats last)."""
    from evallab.reporting._context import Shown
    from evallab.reporting._tables import Finding, to_html

    body = [f"<h1>{html.escape(title)}</h1>"]
    for x in section.items:
        if isinstance(x, Finding):
            body.append(x.html())
        elif isinstance(x, Shown):
            body.append(to_html(x.table, columns=x.columns, caption=x.caption).html)
        else:
            body.append(f"<p>{html.escape(str(x))}</p>")
    for head, items in (("Conclusions", section.conclusions), ("Caveats", section.caveats)):
        if items:
            body.append(f"<h2>{head}</h2><ul>" + "".join(f"<li>{html.escape(i)}</li>" for i in items) + "</ul>")
    return ("<!doctype html><html><head><meta charset='utf-8'><title>" + html.escape(title) + "</title></head><body>"
            + "\n".join(body) + "</body></html>\n")
