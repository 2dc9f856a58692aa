"""The "live judge: SmolLM2-135M on llama.cpp" section of report 02 (report 03's is
:func:`evallab.reporting.sections.inflation.live_section`, report 05's
:func:`evallab.reporting.sections.drift.live_prompt_drift`), from the committed live run
(``data/live/smollm2``, written by ``make live``: :func:`evallab.experiments.run_live`).

Each ``*_section`` function takes the loaded run (:func:`load`) and returns a :class:`Section`: finding sentences
(with the number, interval and n behind each, for :func:`evallab.reporting.tables.finding`), tables, and
metrics for ``metrics.json``. The numbers come from the estimators of :mod:`evallab.metrics` on the recorded
verdict tables; nothing here calls a judge. When the run is absent, the notebooks say so in one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from evallab.metrics import agreement, position
from evallab.metrics.intervals import no_interval_note, wilson

#: what every live section says about the judge (issue 14: "say plainly that this is a 135M-parameter model")
CAVEAT = ("The live judge is SmolLM2-135M-Instruct (135 million parameters, 4-bit Q4_1 GGUF) on llama.cpp, a model "
          "with about 500 times fewer parameters than LLaMA-2-70B-Chat, the LLaMA2 judge in LLMBar's tables, and "
          "never trained to judge: expect weak verdicts. These sections show what evallab measures on a real judge "
          "running on this machine; they say nothing about how good a judge can be, and no conclusion about larger "
          "models follows from them.")


@dataclass
class Section:
    """Findings (kwargs of :func:`~evallab.reporting.tables.finding`), tables by name, metrics for metrics.json."""

    findings: list[dict] = field(default_factory=list)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)
    missing: str = ""


def load(folder: str | Path | None = None) -> dict | None:
    """The committed live run (:func:`evallab.experiments.load_live`) or ``None`` when absent."""
    from evallab.experiments import LIVE_DIR, load_live

    return load_live(folder or LIVE_DIR)


def absent(run: dict | None, study: str) -> str:
    """"" when ``run`` holds ``study``; else the one line a report shows."""
    if run is None:
        return ("No live run is committed (data/live/smollm2/run_card.json is absent): run `make live` to record "
                "SmolLM2-135M on llama.cpp; this section is skipped.")
    if study not in run:
        return f"The committed live run has no {study} study; this section is skipped."
    return ""


def _pct(x: float, d: int = 1) -> str:
    return "—" if x is None or pd.isna(x) else f"{100 * x:.{d}f}%"


def _ci(x: float, lo: float, hi: float, units: int, unit_name: str = "pair") -> str:
    """`` [lo, hi]`` (percent) when the interval exists; else the reason in words (never ``[—, —]``)."""
    if pd.notna(lo) and pd.notna(hi):
        return f" [{_pct(lo)}, {_pct(hi)}]"
    note = no_interval_note(x, lo, hi, units=units, n_resamples=1, unit_name=unit_name)
    return f" ({note})" if note else ""


def _pp(d: float, lo: float, hi: float) -> str:
    """A difference in percentage points with its interval; a degenerate interval (every resample the same: no
    paired unit changed) is said in words, never shown as [x, x]."""
    if pd.notna(lo) and pd.notna(hi) and lo == hi:
        return f"{100 * d:+.1f} pp (no answer changed its verdict between the two sets, so no interval)"
    return f"{100 * d:+.1f} pp [{100 * lo:+.1f}, {100 * hi:+.1f}]"


def _card_line(run: dict) -> str:
    c = run["card"]
    return (f"{c.get('model_file')} (sha256 {str(c.get('model_sha256'))[:12]}…), llama-cpp-python "
            f"{c.get('llama_cpp_python')} (llama.cpp {c.get('llama_cpp')}), recorded {str(c.get('date'))[:10]}, "
            f"{int(c.get('calls') or 0):,} calls in {c.get('wall_seconds', 0) / 60:.1f} min of wall time")


def parse_rates(run: dict) -> pd.DataFrame:
    """Parse rate with and without structured verdicts: one row per (study, response format asked for) with
    ``requests``, ``parsed``, ``failed calls`` (no reply after the retries: counted as not parsed) and
    ``parse_rate`` = parsed / requests with its Wilson interval (one reply per request)."""
    rows = []
    for study in ("position", "drift", "inflation", "probe", "text"):
        df = run.get(study)
        if df is None or not len(df):
            continue
        fmt = df["structured"] if "structured" in df else pd.Series("text", index=df.index)
        for f, d in df.groupby(fmt):
            n, k = len(d), int(d["verdict"].notna().sum())
            failed = int(d["failed"].fillna(False).astype(bool).sum()) if "failed" in d else 0
            lo, hi = wilson(k, n)
            rows.append({"study": study, "response format": "structured (json_object + schema)" if f != "text"
                         else "text prompt only", "requests": n, "parsed": k, "failed calls": failed,
                         "parse_rate": k / n, "parse_rate_low": lo, "parse_rate_high": hi})
    return pd.DataFrame(rows)


def position_section(run: dict | None, *, confidence: float = 0.95, n_resamples: int = 1000,
                     seed: int = 0) -> Section:
    """Report 02: position consistency, MT-Bench's breakdown, preference fairness, first-slot preference and
    accuracy vs gold of the greedy replies (both orders); repetition stability of the sampled replies; the
    parse rate with and without structured verdicts."""
    sec = Section(missing=absent(run, "position"))
    if sec.missing:
        return sec
    ci = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    pos = run["position"]
    temp = pd.to_numeric(pos["temperature"], errors="coerce")
    greedy, sampled = pos[temp == 0], pos[temp > 0]
    by = ["judge", "strategy"]
    bias = position.position_bias(greedy, by, **ci)
    stats = agreement.pairwise_statistics(greedy, by, **ci)
    stab = agreement.repetition_stability(sampled, [*by, "order"], confidence=confidence, n_resamples=n_resamples,
                                          seed=seed) if len(sampled) else pd.DataFrame()
    sbias = position.position_bias(sampled, [*by, "sample"], **ci) if len(sampled) else pd.DataFrame()
    rates = parse_rates(run)
    b, s = bias.iloc[0], stats.iloc[0]
    sec.findings.append(dict(
        sentence=(f"SmolLM2-135M gives the same verdict in both orders on {_pct(b['position_consistency'])}"
                  f"{_ci(b['position_consistency'], b['position_consistency_low'], b['position_consistency_high'], int(b['both_parsed']))} of "
                  f"{int(b['both_parsed'])} LLMBar Natural pairs (greedy); MT-Bench's breakdown: "
                  f"{_pct(b['biased_first_rate'])} biased toward the first-shown output, "
                  f"{_pct(b['biased_second_rate'])} toward the second; it picks the first-shown output in "
                  f"{_pct(b['first_slot_preference'])}"
                  f"{_ci(b['first_slot_preference'], b['first_slot_preference_low'], b['first_slot_preference_high'], int(b['decisive']), 'reply')} "
                  f"of {int(b['decisive'])} decisive replies (50% = no "
                  f"slot preference)."),
        value=b["first_slot_preference"], low=b["first_slot_preference_low"], high=b["first_slot_preference_high"],
        n=int(b["decisive"]), unit="%"))
    sec.findings.append(dict(
        sentence=(f"Against LLMBar's gold its Acc. (mean of the two order accuracies) is {_pct(s['acc'])}"
                  f"{_ci(s['acc'], s['acc_low'], s['acc_high'], int(s['n']))} on {int(s['n'])} pairs — "
                  f"{_pct(s['acc_ab'])} with output 1 shown first, {_pct(s['acc_ba'])} with output 2 "
                  f"first (50% is what a coin would score)."),
        value=s["acc"], low=s["acc_low"], high=s["acc_high"], n=int(s["n"]), unit="%"))
    if len(stab):
        st = stab.sort_values("order")
        pooled_units = int(st["units"].sum())
        worst = st.sort_values("flip_rate", ascending=False).iloc[0]
        sec.findings.append(dict(
            sentence=(f"Repeated at temperature {float(temp[temp > 0].iloc[0]):g} ({int(sampled['sample'].nunique())} "
                      f"samples per pair and order), its parsed samples all agree on "
                      f"{_pct(st['unanimous'].sum() / max(pooled_units, 1))} of {pooled_units} (pair, order) units; "
                      f"the flip rate is highest with order {worst['order']}: {_pct(worst['flip_rate'])}"
                      f"{_ci(worst['flip_rate'], worst['flip_rate_low'], worst['flip_rate_high'], int(worst['units']), 'unit')}."),
            value=worst["flip_rate"], low=worst["flip_rate_low"], high=worst["flip_rate_high"],
            n=int(worst["units"]), unit="%"))
    if len(rates):
        st_ = rates[rates["response format"].str.startswith("structured")]
        tx = rates[rates["response format"].str.startswith("text")]
        k_s, n_s = int(st_["parsed"].sum()), int(st_["requests"].sum())
        lo, hi = wilson(k_s, n_s)
        text = ""
        if len(tx):
            k_t, n_t = int(tx["parsed"].sum()), int(tx["requests"].sum())
            text = f"; with the text prompt alone {_pct(k_t / n_t)} of {n_t} (no grammar)"
        sec.findings.append(dict(
            sentence=(f"With structured verdicts (llama.cpp's grammar-constrained json_object with a schema) "
                      f"{_pct(k_s / n_s)} [{_pct(lo)}, {_pct(hi)}] of {n_s:,} live requests got a parsed verdict{text}; "
                      f"unparsed replies are counted here and left out of every estimate."),
            value=k_s / n_s, low=lo, high=hi, n=n_s, unit="%"))
    sec.tables = {"position": bias, "accuracy": stats, "stability": stab, "sampled_position": sbias,
                  "parse_rates": rates}
    sec.metrics = {"live_card": _card_line(run), "live_position_consistency": float(b["position_consistency"]),
                   "live_first_slot_preference": float(b["first_slot_preference"]),
                   "live_acc": float(s["acc"]), "live_pairs": int(b["both_parsed"]),
                   "live_parse_rate_structured": float(k_s / n_s) if len(rates) else None}
    return sec


__all__ = ["CAVEAT", "Section", "absent", "load", "parse_rates",
           "position_section"]
