"""Report 06, "Gaming gate": can a canned wrong answer game the judge, and does the pack clear its gate? One function
per section of ``notebooks/06_gaming_gate.ipynb`` (issue 25: thin notebooks).

The sections, in the report's order:

- :func:`overview` — what was read: skills, scenarios, recordings, entries, samples, eval reports.
- :func:`anti_gaming` — rule AG offline from the recordings (keryx spec 000, "Recording the calibration" and
  rule AG): the scenario × canned answer matrix, staleness, digests, failures.
- :func:`integrity` — the integrity rules I1–I10 (spec 000, "The anti-gaming requirement" and the rules after it).
- :func:`repetition` — the recorded judge against itself across samples: unanimity, repetition stability (Shi et
  al. 2024, §3.1: the mean share of samples giving a request's most frequent verdict), the pairwise flip rate, and
  Fleiss' kappa with the samples as raters (Fleiss 1971).
- :func:`stable_pack_gate` — keryx's ``checkSkillReportForPackGate`` (spec 000, "How the stable-pack gate uses
  this") with counts and pass rates re-derived from the trial records.
- :func:`trial_verdicts` — why a scenario's trials got different verdicts: runner failures, judge disagreement,
  answer variation.
- :func:`assertion_manifests` — aeon assertion manifests (spec 002, "Regression detection", "Output") over the
  recorded trials replayed as runs.

Each returns a :class:`~evallab.Section`; every number it states comes from an estimator's
:class:`~evallab.Results` (value, interval, level, method, n), never retyped here. The metrics keep the keys
``metrics.json`` has always held for this report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from evallab import skills
from evallab._results import Results, common_methods, format_number
from evallab.judges._recordings import KINDS
from evallab.metrics import _agreement as agreement
from evallab.reporting._context import Section
from evallab.skills._anti_gaming import AG_PASS_UNVERIFIED, ag_overall, ag_summary
from evallab.skills._integrity import findings_frame, findings_summary
from evallab.skills._manifests import history
from evallab.skills._pack_gate import gate_verdicts, pass_rates
from evallab.skills._trials import trial_causes, trial_disagreements, trial_outputs

DIGEST_CAVEAT = ("{n} recorded request digests cannot be recomputed (keryx's judge prompt text is not public): a "
                 "'pass' only shows the recording matches its expected verdict, not that it answers today's "
                 "scenario.")


def _count(n: int, noun: str, plural: str = "") -> str:
    """"1 scenario", "2 scenarios" ("1 entry", "2 entries" with ``plural``)."""
    return f"{int(n):,} {noun if n == 1 else plural or noun + 's'}"


def _are(n: int, singular: str = "is", plural: str = "are") -> str:
    return singular if n == 1 else plural


def _join(words: Sequence, empty: str = "none") -> str:
    return ", ".join(map(str, words)) or empty


def _tally(counts: Mapping) -> str:
    """"10 stale, 4 missing"."""
    return ", ".join(f"{n:,} {k}" for k, n in counts.items())


# ------------------------------------------------------------------------------------------------- overview
def overview(specs: Mapping, recordings: Mapping, reports: Sequence[dict]) -> Section:
    """What the report reads: the skills' judge scenarios, the judge recordings and the eval reports.

    Parameters
    ----------
    specs : Mapping[str, EvalSpec]
        From :func:`evallab.skills.load_tree`.
    recordings : Mapping[str, Recording]
        From :func:`evallab.judges.load_recordings`.
    reports : sequence of dict
        From :func:`evallab.skills.load_eval_report` (one per skill report).

    Returns
    -------
    Section
        One sentence with the counts; metrics ``skills``, ``scenarios``, ``recordings``, ``entries`` (recorded
        scenario × canned answer requests) and ``samples`` (judge replies).
    """
    m = {"skills": len(specs), "scenarios": sum(len(s.scenarios) for s in specs.values()),
         "recordings": len(recordings), "entries": sum(len(r.entries) for r in recordings.values()),
         "samples": sum(len(e.samples) for r in recordings.values() for e in r.entries)}
    sec = Section(metrics=m)
    sec.text(f"{_count(m['skills'], 'skill')} with {_count(m['scenarios'], 'scenario')}; "
             f"{_count(m['recordings'], 'judge recording')} with {_count(m['entries'], 'entry', 'entries')} and "
             f"{_count(m['samples'], 'sample')}; {_count(len(reports), 'skill report')} in the eval report.")
    return sec


# ---------------------------------------------------------------------------------------------- anti-gaming
#: colour and legend of each AG status in :func:`ag_figure`
_STATUS = {"ok": (0, "#4caf50", "ok"), "wrong": (1, "#e53935", "wrong"),
           "non-unanimous": (2, "#fb8c00", "non-unanimous / error"), "error": (2, "#fb8c00", "non-unanimous / error"),
           "stale": (3, "#8e24aa", "stale"), "missing": (4, "#757575", "missing")}


def ag_cells(ag: pd.DataFrame) -> pd.DataFrame:
    """The AG matrix as text, one row per (skill, scenario) and one column per canned answer kind: the observed
    verdict (``PASS``/``FAIL``/``MIXE``/``MISS``/``ERRO``), ``(not judged)`` for the empty answer, the share of
    samples giving the modal verdict, ``[status]`` when the cell fails, and ``†`` when its request digest could not
    be recomputed."""
    a = pd.DataFrame(ag)
    cell = (a["observed"].astype(str).str.upper().str[:4]
            + a["judged"].map(lambda j: "" if j else " (not judged)")
            + a["unanimity"].map(lambda u: "" if pd.isna(u) else f" {format_number(u, 'proportion', 0)}%")
            + a["status"].map(lambda s: "" if s == "ok" else f" [{s}]")
            + a["digest_check"].map(lambda d: " †" if d == "not recomputable" else ""))
    wide = a.assign(cell=cell).pivot_table(index=["skill", "scenario"], columns="kind", values="cell",
                                           aggfunc="first")
    wide = wide.reindex(columns=[k for k in KINDS if k in wide.columns])
    wide.columns.name = None
    return wide.reset_index()


def ag_figure(ag: pd.DataFrame):
    """The AG status of every scenario × canned answer as a grid of colours (a matplotlib figure)."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    a = pd.DataFrame(ag)
    grid = a.assign(c=a["status"].map(lambda s: _STATUS[s][0])).pivot_table(
        index=["recording", "scenario"], columns="kind", values="c", aggfunc="max")
    grid = grid.reindex(columns=[k for k in KINDS if k in grid.columns])
    legend = list(dict.fromkeys((c, name) for _, c, name in _STATUS.values()))
    fig, ax = plt.subplots(figsize=(10, 0.34 * len(grid) + 2.5))
    ax.imshow(grid.to_numpy(float), cmap=ListedColormap([c for c, _ in legend]), vmin=-0.5, vmax=4.5, aspect="auto")
    ax.set_xticks(range(len(grid.columns)), grid.columns, rotation=45, ha="right", fontsize=10)
    ax.set_yticks(range(len(grid)), [f"{r.split('__')[-1]} / {s}" for r, s in grid.index], fontsize=9)
    ax.set_xlabel("canned answer kind", fontsize=10)
    ax.set_ylabel("skill / scenario", fontsize=10)
    ax.legend(handles=[Patch(facecolor=c, label=n) for c, n in legend], title="status", loc="upper left",
              bbox_to_anchor=(1.02, 1), fontsize=9, title_fontsize=9)
    ax.set_title("AG check from recordings: status per scenario × canned answer")
    fig.tight_layout()
    return fig


def anti_gaming(ag: Results) -> Section:
    """Rule AG from the recordings: do the eight canned answers grade to what they must, and are the recordings
    current and unanimous?

    Parameters
    ----------
    ag : Results
        From :func:`evallab.experiments.check_recordings` (or :func:`evallab.skills.ag_matrix`).

    Returns
    -------
    Section
        A finding with the share of checks that match (:func:`evallab.skills.ag_overall`), the table per recording
        (:func:`evallab.skills.ag_summary`), the matrix as text (:func:`ag_cells`) and as a figure, a finding on
        the failing checks and their table (a sentence instead when none fails), the digest check in words;
        metrics ``ag_checks``, ``ag_failing_checks``, ``ag_failing_skills``, ``stale_recordings``,
        ``ag_status_counts``, ``digests_not_recomputable``, ``ag_verdicts``. A pack without a judge scenario gets
        one sentence and no table.

    Source: keryx spec 000, "Recording the calibration" and rule AG (the canned answers and their expected
    verdicts; a recording is current when its ``judgePromptVersion`` is and its request digests match).
    """
    a = pd.DataFrame(ag)
    summary = ag_summary(a)
    ov = ag_overall(a)
    fail = a[a["status"] != "ok"]
    sec = Section(metrics={
        "ag_checks": len(a), "ag_failing_checks": len(fail), "ag_failing_skills": sorted(fail["skill"].unique()),
        "stale_recordings": sorted(summary.loc[summary["stale"].astype(bool), "recording"]),
        "ag_status_counts": a["status"].value_counts().to_dict(),
        "digests_not_recomputable": int(ov["not_recomputable"].iloc[0]),
        "ag_verdicts": summary["ag"].value_counts().to_dict()})
    if not len(a):
        sec.text(f"The AG check is {ov.estimate('ok_share')}.")
        return sec
    r = ov.iloc[0]
    u, f = int(r["recordings_unverified"]), int(r["recordings_failing"])
    sec.finding(f"{r['ok']:,} of {_count(r['checks'], 'anti-gaming check')} match their expected verdict: "
                f"{ov.estimate('ok_share')}; of {_count(r['recordings'], 'recording')}, {u:,} "
                f"{_are(u, 'passes', 'pass')} only with request digests that cannot be recomputed and {f:,} "
                f"{_are(f, 'fails', 'fail')}.", ov.estimate("ok_share"))
    sec.table(summary, {"skill": "Skill", "scenarios": "Scenarios", "checks": "Checks", "ok": "OK", "stale": "Stale",
                        "missing": "Missing", "non_unanimous": "Non-unanimous", "wrong": "Wrong",
                        "ag": "AG verdict"}, caption="Anti-gaming check per recording", csv_name="ag_summary")
    sec.table(ag_cells(a), caption="Observed verdict and unanimity per scenario × canned answer (first columns: "
              "skill and scenario)", csv_name="ag_matrix")
    sec.figure(ag_figure(a))
    if len(fail):
        sec.finding(f"{len(fail):,} of {_count(len(a), 'anti-gaming check')} fail — "
                    f"{_tally(fail['status'].value_counts())} — in {_join(sorted(fail['skill'].unique()))}.")
        sec.table(ag[ag["status"] != "ok"], {"skill": "Skill", "scenario": "Scenario", "kind": "Canned answer",
                                             "status": "Status", "prompt_version": "Prompt version",
                                             "samples": "Samples", "message": "Message"},
                  caption="Failing anti-gaming checks", csv_name="ag_failures")
    else:
        sec.text(f"No anti-gaming check fails: every one of the {len(a):,} cells grades to its expected verdict.")
    nr = int(r["not_recomputable"])
    sec.text(f"Digest check: {_tally(a['digest_check'].value_counts())}."
             + (" keryx's judge prompt text is not public, so its digests are carried and compared across entries "
                "(a repeated digest is flagged), never recomputed: these recordings are not verified against the "
                "current evals.json." if nr else ""))
    unverified = sorted(summary.loc[summary["ag"] == AG_PASS_UNVERIFIED, "recording"])
    if unverified:
        sec.text(f"Recordings passing only with digests that cannot be recomputed ({len(unverified)}): "
                 f"{_join(unverified)}.")
    sec.conclusions.append(
        f"{len(fail):,} of {_count(len(a), 'anti-gaming check')} fail"
        + (f" ({_join(sec.metrics['ag_failing_skills'])})" if len(fail) else "")
        + f"; stale recordings: {_join(sec.metrics['stale_recordings'])}.")
    if nr:
        sec.caveats.append(DIGEST_CAVEAT.format(n=nr))
    return sec


# ------------------------------------------------------------------------------------------------ integrity
def integrity(findings: Sequence, specs: Mapping) -> Section:
    """The integrity rules I1–I10 over every scenario.

    Parameters
    ----------
    findings : sequence of IntegrityFinding
        From :func:`evallab.skills.integrity_findings`.
    specs : Mapping[str, EvalSpec]
        The skills the rules ran on (for their count).

    Returns
    -------
    Section
        A finding (failing and not-checkable counts, the rules not checkable), the counts per rule and severity
        (:func:`evallab.skills.findings_summary`), the failing findings (a sentence instead when none fails);
        metrics ``integrity_fail_findings``, ``integrity_not_checkable``; a caveat on what is not checkable.

    Source: keryx spec 000, "The anti-gaming requirement" and rules I1–I10.
    """
    f = findings_frame(findings)
    counts = findings_summary(f)
    fails = f[f["severity"] == "fail"]
    nc = counts[counts["severity"] == "not-checkable"]
    sec = Section(metrics={"integrity_fail_findings": len(fails), "integrity_not_checkable": int(nc["findings"].sum())})
    scenarios = sum(len(s.scenarios) for s in specs.values())
    sec.finding(f"Integrity rules I1–I10 give {_count(len(fails), 'failing finding')} and "
                f"{int(nc['findings'].sum()):,} not checkable over {_count(len(specs), 'skill')} "
                f"({_count(scenarios, 'scenario')})"
                + (f"; not checkable: {_join(f'{x.rule} ({x.findings})' for x in nc.itertuples())}" if len(nc) else "")
                + ".")
    if len(counts):
        sec.table(counts, {"rule": "Rule", "severity": "Severity", "findings": "Findings"},
                  caption="Integrity findings per rule and severity")
    if len(fails):
        sec.table(fails, {"skill": "Skill", "scenario": "Scenario", "rule": "Rule", "message": "Message"},
                  caption="Failing integrity findings", csv_name="integrity_fail")
    else:
        sec.text("No integrity rule fails.")
    if len(nc):
        sec.caveats.append(f"{int(nc['findings'].sum()):,} integrity findings ({_join(nc['rule'])}) are not checkable "
                           "from the files alone.")
    return sec


# ------------------------------------------------------------------------------------------ repetition
def fleiss_kappa_samples(verdicts: pd.DataFrame, *, confidence: float = 0.95, n_resamples: int = 200,
                         seed: int = 0) -> Results:
    """Fleiss' kappa with a request's samples as its raters (:func:`evallab.metrics._agreement.fleiss_kappa`,
    ``raters="sample"``), on the sample numbers below the most common count of samples among the requests asked
    twice or more, so each request kept has every rater (the others are counted in ``units_dropped``).

    Kappa compares the agreement within requests with the agreement the verdicts' overall shares would give by
    chance; with a single request that chance agreement comes from the same request's verdicts, and the figure
    (e.g. −0.5 for a 2–1 split of three samples) says nothing: it is not computable from fewer than two requests.

    Parameters
    ----------
    verdicts : DataFrame
        A tidy verdict table with ``sample`` (e.g. :func:`evallab.judges.to_verdicts`).
    confidence : float, default 0.95
        Level of the interval.
    n_resamples : int, default 200
        Bootstrap resamples over items.
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        :func:`evallab.metrics._agreement.fleiss_kappa`'s one row, its measures and methods: ``kappa``
        (coefficient in [−1, 1]) with ``kappa_low``/``kappa_high`` and ``kappa_method`` (the item bootstrap that
        computed them, "" without an interval), ``units`` (requests every sample parsed), ``units_dropped``,
        ``items``, ``raters`` (samples per request), ``note`` (why kappa or its interval is missing: from fewer
        than two requests kappa is not computable).

    Source: Fleiss (1971), "Measuring nominal scale agreement among many raters" (``statsmodels``'
    ``fleiss_kappa``); the interval a percentile bootstrap over items of the per-item counts.
    """
    request = [c for c in ("subset", "dataset", "item_id", "order", "judge") if c in verdicts.columns]
    per = verdicts.groupby(request, observed=True, dropna=False)["sample"].size() if len(verdicts) else pd.Series()
    per = per[per >= 2]  # a request asked once has no second rater
    m = int(per.mode().iloc[0]) if len(per) else 0
    return agreement.fleiss_kappa(verdicts[verdicts["sample"] < m], raters="sample", confidence=confidence,
                                  n_resamples=n_resamples, seed=seed)


def repetition(verdicts: pd.DataFrame, *, confidence: float = 0.95, n_resamples: int = 1000,
               kappa_resamples: int = 200, seed: int = 0, least: int = 10) -> Section:
    """The recorded judge against itself across samples of the same request.

    Parameters
    ----------
    verdicts : DataFrame
        The recordings as a tidy verdict table (:func:`evallab.judges.to_verdicts`), one row per sample.
    confidence : float, default 0.95
        Level of every interval.
    n_resamples : int, default 1000
        Bootstrap resamples over items for unanimity, repetition stability and the flip rate.
    kappa_resamples : int, default 200
        Bootstrap resamples over items for Fleiss' kappa.
    seed : int, default 0
        Seed of the bootstraps.
    least : int, default 10
        How many of the least unanimous scenarios the second table shows.

    Returns
    -------
    Section
        A finding on unanimity (with repetition stability) and one on the flip rate, the table per canned answer
        kind, the least unanimous scenarios (a sentence instead when every scenario is unanimous), Fleiss' kappa
        with the samples as raters (or why it is not computable); metrics ``unanimity``, ``flip_rate``,
        ``unanimous_units``, ``units``, ``fleiss_kappa_samples``, ``unanimity_by_kind``. A table without a
        request sampled twice gets one sentence and no table.

    Source: Shi et al. (2024), "Judging the Judges", §3.1 (repetition stability); Fleiss (1971).
    """
    kw = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    overall = agreement.repetition_stability(verdicts, [], **kw)
    sec = Section(metrics={"unanimity": None, "flip_rate": None, "unanimous_units": 0, "units": 0,
                           "fleiss_kappa_samples": None, "unanimity_by_kind": {}})
    u = overall.estimate("unanimity")
    if u.value is None:
        sec.text(f"Repetition stability is {u}, so this section is skipped.")
        return sec
    o = overall.iloc[0]
    by_kind = agreement.repetition_stability(verdicts, ["kind"], **kw)
    by_kind = common_methods(by_kind[by_kind["units"] > 0])
    sec.metrics.update(unanimity=u.value, flip_rate=overall.estimate("flip_rate").value,
                       unanimous_units=int(o["unanimous"]), units=int(o["units"]),
                       unanimity_by_kind=dict(zip(by_kind["kind"], by_kind["unanimity"], strict=True)))
    sec.finding(f"The recorded judge gives the same verdict in every sample on {u} of the requests sampled "
                f"twice or more ({int(o['unanimous']):,} of {int(o['units']):,}); repetition stability, the mean "
                f"share of samples giving a request's most frequent verdict, is "
                f"{overall.estimate('repetition_stability').number()}.", u)
    sec.finding(f"Two samples of the same request differ in {overall.estimate('flip_rate')} of sample pairs.",
                overall.estimate("flip_rate"))
    cols = {"units": "Requests", "repetition_stability": "Repetition stability", "unanimity": "Unanimity",
            "flip_rate": "Pairwise flip rate"}
    sec.table(by_kind, {"kind": "Canned answer", **cols}, caption="Repetition stability per canned answer kind")
    by_scen = agreement.repetition_stability(verdicts, ["subset", "scenario_id"], **kw)
    none = by_scen[by_scen["units"] == 0]
    by_scen = by_scen[by_scen["units"] > 0]
    if (by_scen["unanimity"] == 1).all():
        sec.text(f"Every one of the {_count(len(by_scen), 'scenario')} with repeated samples is unanimous on every "
                 "request, so no scenario is less unanimous than another.")
    else:
        sec.table(common_methods(by_scen.sort_values(["unanimity", "flip_rate"], ascending=[True, False]).head(least)),
                  {"subset": "Skill", "scenario_id": "Scenario", **cols},
                  caption="The least unanimous scenario" if min(least, len(by_scen)) == 1 else
                  f"The {min(least, len(by_scen))} least unanimous scenarios")
    if len(none):
        sec.text(f"{_count(len(none), 'scenario')} {_are(len(none), 'has', 'have')} no request sampled twice "
                 f"(a single verdict per request): {_join(sorted(set(none['subset'] + '/' + none['scenario_id'])))}.")
    fk = fleiss_kappa_samples(verdicts, confidence=confidence, n_resamples=kappa_resamples, seed=seed)
    k, f = fk.estimate("kappa"), fk.iloc[0]
    if k.value is None:
        sec.text(f"Fleiss' kappa with the samples as raters is {k}.")
    else:
        sec.metrics["fleiss_kappa_samples"] = k.value
        dropped = int(f["units_dropped"])
        sec.finding(f"Fleiss' kappa with the {int(f['raters'])} samples of each request as raters is {k}"
                    + (f" — {k.note}" if k.note and not k.has_interval else "")
                    + (f"; {_count(dropped, 'request')} with fewer samples parsed left out" if dropped else "") + ".",
                    k)
    sec.conclusions.append(f"The recorded judge is unanimous across samples on {u.number()} of "
                           f"{_count(int(o['units']), 'request')} sampled twice or more.")
    return sec


# ----------------------------------------------------------------------------------------------------- gate
def pass_rate_figure(rates: Results, pass_floor: float):
    """The re-derived pass rate of each behaviour scenario with its interval, against the pack's floor."""
    import matplotlib.pyplot as plt

    r = rates.dropna(subset=["pass_rate"])
    label = r["skill"].astype(str).str.split("/").str[-1] + " / " + r["scenario"].astype(str)
    err = np.vstack([r["pass_rate"] - r["pass_rate_low"], r["pass_rate_high"] - r["pass_rate"]])
    fig, ax = plt.subplots(figsize=(7, 0.4 * len(r) + 1.8))
    ax.barh(label, r["pass_rate"], xerr=err, capsize=3,
            color=["#4caf50" if x >= pass_floor else "#e53935" for x in r["pass_rate"]])
    ax.axvline(pass_floor, color="k", ls="--", label=f"pass floor {format_number(pass_floor, 'proportion', 0)}%")
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"pass rate re-derived from trial records (share of trials; bars: {rates.level:.0%} CI, "
                  f"{_join(sorted(set(r['pass_rate_method'])))})")
    ax.set_ylabel("skill / scenario")
    ax.set_title("Behaviour scenario pass rates vs the pack floor")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    return fig


def stable_pack_gate(reports: Sequence[dict], *, ag: pd.DataFrame | None = None, integrity: Sequence | None = None,
                     min_trials: int = 10, pass_floor: float = 0.8, confidence: float = 0.95) -> Section:
    """keryx's stable-pack gate on the recorded eval report, every count re-derived from the trial records.

    Parameters
    ----------
    reports : sequence of dict
        From :func:`evallab.skills.load_eval_report`.
    ag : DataFrame, optional
        The AG matrix (:func:`evallab.experiments.check_recordings`): the gate requires every cell ok.
    integrity : sequence of IntegrityFinding, optional
        From :func:`evallab.skills.integrity_findings`: the gate requires no failing finding.
    min_trials : int, default 10
        Trials a report and each behaviour scenario need (keryx ``PACK_MIN_TRIALS``).
    pass_floor : float, default 0.8
        Lowest pass rate (0–1) per behaviour scenario (keryx ``PACK_BEHAVIOR_PASS_FLOOR``).
    confidence : float, default 0.95
        Level of the pass rates' intervals.

    Returns
    -------
    Section
        A finding on the verdicts, one on the pass rates (the lowest with its Wilson interval), the verdict per
        skill (:func:`evallab.skills.gate_verdicts`), the checks that did not pass, the pass rates
        (:func:`evallab.skills.pass_rates`) as a table and a figure; metrics ``gate``, ``gate_pass_rates``,
        ``gate_trial_floor_failed``, ``gate_ag_failed``, ``gate_ag_not_checkable``; a conclusion and a caveat on
        the size of the evidence. An eval report without a skill report gets one sentence.

    Source: keryx spec 000, "How the stable-pack gate uses this" (``checkSkillReportForPackGate``).
    """
    gate = skills.pack_gate(reports, min_trials=min_trials, pass_floor=pass_floor, ag=ag, integrity=integrity)
    verdicts = gate_verdicts(gate)
    rates = pass_rates(reports, confidence=confidence)
    ran = rates[rates["trials"] > 0]

    def failed(check):
        return sorted(gate.loc[(gate["check"] == check) & gate["ok"].eq(False), "skill"])

    agc = gate["check"] == "AG (anti-gaming recordings)"
    sec = Section(metrics={"gate": dict(zip(verdicts["skill"], verdicts["verdict"], strict=True)),
                           "gate_pass_rates": {f"{r.skill}/{r.scenario}": float(r.pass_rate) for r in ran.itertuples()},
                           "gate_trial_floor_failed": failed("trials"),
                           "gate_ag_failed": failed("AG (anti-gaming recordings)"),
                           "gate_ag_not_checkable": sorted(gate.loc[agc & gate["ok"].isna(), "skill"])})
    if not len(verdicts):
        sec.text("The eval report holds no skill report, so the stable-pack gate has nothing to check.")
        return sec
    n_pass = int((verdicts["verdict"] == "pass").sum())
    floor = f"{format_number(pass_floor, 'proportion', 0)}%"
    sec.finding(f"The stable-pack gate passes {n_pass} of {_count(len(verdicts), 'skill')} (each needs at least "
                f"{min_trials} trials, a re-derived pass rate of at least {floor} per behaviour scenario, its AG "
                f"recordings clean and no failing integrity rule).")
    if len(ran):
        low = ran["pass_rate"].idxmin()
        e = rates.estimate("pass_rate", low)
        below = ran[ran["pass_rate"] < pass_floor]
        wholly = sum(rates.estimate("pass_rate", i).has_interval and rates.estimate("pass_rate", i).high < pass_floor
                     for i in below.index)
        sec.finding(f"{len(below)} of {_count(len(ran), 'behaviour scenario')} with trial records "
                    f"{_are(len(below))} below the pass floor of {floor} ({wholly} with the whole "
                    f"interval below it); the lowest is {rates.at[low, 'skill']}/{rates.at[low, 'scenario']} at {e}.",
                    e)
    else:
        sec.text("No behaviour scenario has trial records, so no pass rate can be re-derived.")
    sec.table(verdicts, {"skill": "Skill", "verdict": "Verdict", "failed_checks": "Failed checks",
                         "failures": "Failures", "not_checkable": "Not checkable"}, caption="Stable-pack gate per skill")
    bad = gate[gate["ok"].ne(True)]
    if len(bad):
        sec.table(bad.assign(ok=np.where(bad["ok"].eq(False), "no", "not checkable")),
                  {"skill": "Skill", "scenario": "Scenario", "check": "Check", "required": "Required",
                   "observed": "Observed", "ok": "Passed"}, caption="Gate checks that did not pass",
                  csv_name="gate_checks")
    if len(ran):
        sec.table(common_methods(ran), ["skill", "scenario", "trials", "passes", "pass_rate"],
                  caption="Behaviour scenario pass rates re-derived from the trial records")
        sec.figure(pass_rate_figure(ran, pass_floor))
        sec.caveats.append(
            f"The gate rests on {_count(len(reports), 'skill report')} and {_count(len(ran), 'behaviour scenario')} "
            f"with trial records ({_join(sorted(set(ran['trials'].astype(int))))} trials each); the widest pass-rate "
            f"interval spans {format_number((ran['pass_rate_high'] - ran['pass_rate_low']).max(), 'pp', 0, signed=False)}"
            " percentage points.")
    sec.conclusions.append(f"The stable-pack gate passes {n_pass} of {_count(len(verdicts), 'skill')}; below the "
                           f"trial floor: {_join(sec.metrics['gate_trial_floor_failed'])}.")
    return sec


# --------------------------------------------------------------------------------------------------- trials
def trial_verdicts(reports: Sequence[dict], specs: Mapping | None = None) -> Section:
    """Why a scenario's trials got different verdicts: runner failures (no answer to grade), judge disagreement on
    answers no recorded check tells apart (the only judge inconsistency), or answer variation.

    Parameters
    ----------
    reports : sequence of dict
        From :func:`evallab.skills.load_eval_report`.
    specs : Mapping[str, EvalSpec], optional
        From :func:`evallab.skills.load_tree` (each scenario's ``anti_patterns``).

    Returns
    -------
    Section
        A finding (split scenarios, judge disagreements, runner failures), the table of split scenarios
        (:func:`evallab.skills.trial_disagreements`) and their reasons side by side (a sentence instead when no
        scenario is split); metrics ``judge_inconsistent_scenarios``, ``trial_disagreement_causes``,
        ``trial_runner_failures``, ``trial_cause_counts``; a conclusion, and a caveat when runner failures count
        as failed trials in the gate.

    Source: keryx spec 000, "How the stable-pack gate uses this" (the single-turn runner has no tool wiring) and
    I7c (anti-pattern tokens are literal constructs the judge can check against the answer).
    """
    split = trial_disagreements(reports, specs)
    causes = trial_causes(reports, specs)
    rf = causes[causes["cause"] == "runner failure"]
    bad = split[split["judge_inconsistent"].astype(bool)]
    names = [f"{r.skill}/{r.scenario}" for r in bad.itertuples()]
    sec = Section(metrics={
        "judge_inconsistent_scenarios": names,
        "trial_disagreement_causes": {f"{r.skill}/{r.scenario}": r.cause for r in split.itertuples()},
        "trial_runner_failures": {f"{k[0]}/{k[1]}": sorted(int(x) for x in g["trial"])
                                  for k, g in rf.groupby(["skill", "scenario"], sort=False)},
        "trial_cause_counts": causes["cause"].value_counts().to_dict()})
    if not len(causes):
        sec.text("The eval report holds no behaviour trial records, so no trial verdicts can be compared.")
        return sec
    n_scen = causes.groupby(["skill", "scenario"]).ngroups
    rf_where = _join(sorted(sec.metrics["trial_runner_failures"]))
    sec.finding(f"{len(split)} of {_count(n_scen, 'scenario')} with trial records got different verdicts across "
                f"trials; {len(bad)} of them by judge disagreement on comparable answers ({_join(names)}). "
                f"{len(rf)} of {_count(len(causes), 'trial')} {_are(len(rf), 'is a runner failure', 'are runner failures')}"
                " with no answer to grade" + (f" ({rf_where})." if len(rf) else "."))
    if len(split):
        sec.table(split, {"skill": "Skill", "scenario": "Scenario", "trials": "Trials",
                          "answers": "Verdict-bearing answers", "cause": "Cause",
                          "explanation": "What the trials show"},
                  caption="Why the trials of a scenario got different verdicts")
        for r in split.itertuples():
            side = pd.DataFrame({"pass": pd.Series(r.pass_reasons.split("\n") if r.pass_reasons else []),
                                 "fail": pd.Series(r.fail_reasons.split("\n") if r.fail_reasons else [])},
                                dtype=object).fillna("")
            sec.table(side, {"pass": "Reasons given when passing", "fail": "Reasons given when failing"},
                      caption=f"{r.skill} / {r.scenario}: {r.cause}")
    else:
        sec.text("Every scenario's trials got the same verdict.")
    sec.conclusions.append(f"Across trials the recorded judge disagrees with itself on comparable answers in "
                           f"{_count(len(bad), 'scenario')}" + (f" ({_join(names)})" if names else "")
                           + f"; {_count(len(rf), 'trial')} {_are(len(rf), 'is a runner failure', 'are runner failures')}"
                           ", not judge disagreement.")
    if len(rf):
        sec.caveats.append(f"The gate's pass rates count runner failures as failed trials, as keryx's gate does "
                           f"({_count(len(rf), 'such trial')}).")
    return sec


# ------------------------------------------------------------------------------------------------ manifests
def assertion_manifests(manifest: Mapping[str, dict], reports: Sequence[dict]) -> Section:
    """aeon-style assertion manifests over the recorded trials replayed as successive runs: which assertions pass,
    fail or regress at the last run, and which scenarios have no manifest.

    Parameters
    ----------
    manifest : Mapping[str, dict]
        From :func:`evallab.skills.load_manifest` (keys ``<skill>/<scenario>``, the skill without its pack).
    reports : sequence of dict
        From :func:`evallab.skills.load_eval_report`; each behaviour scenario's trial outputs, in trial order, are
        its runs (:func:`evallab.skills.trial_outputs`).

    Returns
    -------
    Section
        A finding (assertions per state at the last run, coverage gaps), the aeon text summary, the state of every
        assertion per run; metrics ``manifest_states_last_run``, ``manifest_coverage_gaps``; a conclusion. Without
        trial outputs, one sentence.

    Source: aeon-skill-evals (spec 002), "Manifest format", "Regression detection", "Output".
    """
    runs = trial_outputs(reports)
    sec = Section(metrics={"manifest_states_last_run": {}, "manifest_coverage_gaps": []})
    if not runs:
        sec.text("No behaviour scenario has trial outputs to replay, so no assertion was evaluated.")
        return sec
    timeline, last = history(manifest, runs)
    states = last.results["state"].value_counts().to_dict()
    sec.metrics.update(manifest_states_last_run=states, manifest_coverage_gaps=list(last.coverage_gaps))
    n_runs = int(timeline["run"].max()) if len(timeline) else 0
    failing = sorted(set(last.results.loc[last.results["passed"].eq(False), "skill"]))
    sec.finding(f"At the last of {_count(n_runs, 'replayed run')}, {_count(len(last.results), 'assertion')} "
                f"{_are(len(last.results), 'was', 'were')} evaluated: {_tally(states) or 'none'}"
                + (f" (failing: {_join(failing)})" if failing else "")
                + f"; {_count(len(last.coverage_gaps), 'scenario')} with outputs "
                f"{_are(len(last.coverage_gaps), 'has', 'have')} no manifest entry.")
    sec.text("```text\n" + last.summary() + "\n```")
    if len(timeline):
        wide = timeline.pivot_table(index=["skill", "assertion"], columns="run", values="state", aggfunc="first")
        wide.columns = [f"Run {c}" for c in wide.columns]
        sec.table(wide.reset_index().rename(columns={"skill": "Skill", "assertion": "Assertion"}),
                  caption="Regression state of each assertion per replayed run", csv_name="manifest_states")
    sec.conclusions.append(f"Manifest states at the last run: {_tally(states) or 'none'}; "
                           f"{_count(len(last.coverage_gaps), 'coverage gap')}.")
    return sec


__all__ = ["anti_gaming", "assertion_manifests", "integrity", "overview", "repetition", "stable_pack_gate",
           "trial_verdicts"]
