"""A judge study in one file (issue 29, item 3): one YAML naming the items, the
judges, the prompts, the anchor sets, the orders and the samples; :func:`plan_study` expands the design and counts
the calls, the tokens and the cost BEFORE any call (``evallab study plan FILE``, ``--max-cost``); :func:`run_study`
sends exactly those requests through the existing runner (``evallab study run FILE --out DIR``).

::

    name: two-prompts
    items: items.jsonl            # an items table (evallab.judges._items), relative to this file
    judges:
      - {name: mini, model: gpt-4o-mini, endpoint: https://api.openai.com/v1, max_tokens: 200}
      - {name: local, model: smollm2, endpoint: http://127.0.0.1:8080/v1, temperature: 0}
    prompts: [vanilla, prompts/strict.j2]     # built-in names (evallab.judges._templates) or template files
    anchor_sets: [none, anchors/balanced.yaml] # "none" or anchor-set files (evallab.judges._anchor_sets)
    orders: [ab, ba]                           # pairwise only
    samples: 1                                 # per request; a judge's own ``samples:`` overrides it
    prices: {smollm2: [0, 0]}                  # USD per 1M input / output tokens (beside the bundled table)

``items`` may also be ``llmbar:<subset>`` (the bundled LLMBar pairs, e.g. ``llmbar:LLMBar/Natural``) and
``items_limit: N`` keeps the first N items. Sample ``k`` of a judge with a ``seed`` is sent with seed ``seed + k``
(the samples of a seeded judge would otherwise be the same reply), as ``evallab live`` does.

Tokens are ESTIMATED: input = the rendered prompt's characters / 4 (rounded up) — every request is rendered for
real, so the count follows the prompt and anchors; output = the judge's ``max_tokens`` (default 256) per call, an
upper bound. The cost is the estimate priced by :func:`evallab.judges._pricing.price_table` (a model without a price:
no cost, said so).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from evallab.errors import DataError, EvallabError

DEFAULT_MAX_TOKENS = 256
CHARS_PER_TOKEN = 4
#: a judge's client options a study file may set (passed to :class:`~evallab.judges.OpenAICompatibleJudge`)
CLIENT_OPTIONS = ("max_concurrency", "timeout", "max_retries", "structured")
#: the copy of the study file :func:`run_study` writes beside the verdicts (``evallab study report DIR`` reads it)
STUDY_COPY = "study.yaml"
#: ``items: llmbar:<subset>`` names the bundled LLMBar pairs of that subset (with ``items_limit``: the first N)
BUNDLED_LLMBAR = "llmbar:"


@dataclass
class Study:
    """A parsed study file (module docstring); paths resolved against the file's folder."""

    name: str
    items: Path | str
    judges: list[dict]
    prompts: list[str]
    anchor_sets: list[str]
    orders: list[str]
    samples: int
    prices: dict = field(default_factory=dict)
    path: str = ""
    items_limit: int | None = None

    def item_table(self) -> pd.DataFrame:
        """The items: the table file, or the bundled LLMBar subset ``llmbar:<subset>``; the first ``items_limit``."""
        if isinstance(self.items, str) and self.items.startswith(BUNDLED_LLMBAR):
            from evallab.experiments._live import llmbar_pairs

            t = llmbar_pairs(self.items_limit or 10**9, self.items.removeprefix(BUNDLED_LLMBAR))
            t = t.rename(columns={"input": "instruction"}).assign(dataset="llmbar")
            return t[["item_id", "dataset", "subset", "instruction", "output_1", "output_2", "gold"]]
        from evallab.datasets._generic import read_table

        t = read_table(self.items)
        return t.head(self.items_limit) if self.items_limit else t


def load_study_file(path: str | Path) -> Study:
    """The study file at ``path``.

    Raises
    ------
    DataError
        Invalid YAML, a missing or malformed field (naming it), an items file that does not exist.
    """
    import yaml

    p = Path(path)
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot be read as UTF-8 text ({exc.__class__.__name__})", str(p)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise DataError(f"not valid YAML ({getattr(exc, 'problem', exc)})", str(p), mark.line + 1 if mark else None
                        ) from None
    if not isinstance(doc, dict):
        raise DataError("expected a mapping (items, judges, prompts, anchor_sets, orders, samples)", str(p))
    base = p.parent
    for key in ("items", "judges"):
        if not doc.get(key):
            raise DataError(f"missing; expected {key} (module evallab.judges._study)", str(p), column=key)
    limit = doc.get("items_limit")
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise DataError(f"items_limit {limit!r}; expected a whole number ≥ 1", str(p), column="items_limit")
    if str(doc["items"]).startswith(BUNDLED_LLMBAR):
        items = str(doc["items"])
    else:
        items = base / str(doc["items"])
        if not items.is_file():
            raise DataError(f"{items}: no such file; expected the items table", str(p), column="items")
    judges = doc["judges"]
    if not isinstance(judges, list) or not all(isinstance(j, dict) and j.get("model") for j in judges):
        raise DataError("expected a list of judges, each with at least a model", str(p), column="judges")
    names = [str(j.get("name") or j["model"]) for j in judges]
    if len(set(names)) != len(names):
        raise DataError(f"judge names {names} repeat; expected one name per judge", str(p), column="judges")
    orders = [str(o) for o in doc.get("orders", ["ab", "ba"])]
    bad = [o for o in orders if o not in ("ab", "ba")]
    if bad or not orders:
        raise DataError(f"orders {orders}; expected a list of 'ab' and/or 'ba'", str(p), column="orders")
    samples = doc.get("samples", 1)
    for n in [samples, *[j["samples"] for j in judges if "samples" in j]]:
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise DataError(f"samples {n!r}; expected a whole number ≥ 1", str(p), column="samples")
    prompts = [str(x) for x in doc.get("prompts", ["vanilla"])]
    anchor_sets = [str(x) for x in doc.get("anchor_sets", ["none"])]
    return Study(str(doc.get("name") or p.stem), items,
                 [dict(j, name=n) for j, n in zip(judges, names, strict=True)],
                 [x if "/" not in x and not x.endswith(".j2") else str(base / x) for x in prompts],
                 [x if x == "none" else str(base / x) for x in anchor_sets], orders, samples,
                 dict(doc.get("prices") or {}), str(p), limit)


def _template(spec: str):
    from evallab.judges._templates import builtin_template, load_prompt_template

    return load_prompt_template(spec) if Path(spec).suffix or "/" in spec else builtin_template(spec)


def _anchors(spec: str):
    from evallab.judges._anchor_sets import load_anchor_set

    return None if spec == "none" else load_anchor_set(spec)


def _chars(request) -> int:
    return sum(len(m.content) for m in request.messages)


def study_requests(study: Study) -> tuple[str, dict[str, list]]:
    """Every request of the study, per judge: ``(kind, {judge name: [JudgeRequest, ...]})`` — items × orders ×
    samples for each prompt × anchor set, the prompt's identity (``name@sha256``) in ``strategy``, the anchor set's
    name in ``anchor_set``, ``sample`` 0…samples−1. :func:`plan_study` counts these; :func:`run_study` sends them.

    Raises
    ------
    DataError
        A prompt, anchor set or items table that cannot be used; a template of the other kind than the items.
    """
    from evallab.judges._items import _criteria, detect_kind
    from evallab.judges._templates import render_pairwise, render_pointwise

    items = study.item_table()
    kind = detect_kind(items)
    orders = study.orders if kind == "pairwise" else [""]
    meta_cols = [c for c in ("dataset", "subset", "gold") if c in items.columns]
    rendered: list = []  # one rendering per (prompt, anchor set, item, order): samples and judges share its text
    for prompt_spec in study.prompts:
        t = _template(prompt_spec)
        if t.kind != kind:
            raise DataError(f"prompt {t.name!r} is {t.kind}; the items are {kind}", study.path, column="prompts")
        for aspec in study.anchor_sets:
            aset = _anchors(aspec)
            anchors = aset.ordered() if aset else []
            for _, it in items.iterrows():
                meta = {"item_id": str(it["item_id"]), "strategy": t.identity,
                        "anchor_set": aset.name if aset else "none",
                        **{c: (None if pd.isna(it[c]) else str(it[c])) for c in meta_cols}}
                for o in orders:
                    if kind == "pairwise":
                        r = render_pairwise(t, str(it.get("instruction", it.get("input", ""))), str(it["output_1"]),
                                            str(it["output_2"]), order=o, anchors=anchors, metadata=meta)
                    else:
                        r = render_pointwise(t, rubric=str(it["rubric"]), pass_criteria=_criteria(it["pass_criteria"]),
                                             fail_criteria=_criteria(it.get("fail_criteria")), answer=str(it["answer"]),
                                             anchors=anchors, metadata=meta)
                    rendered.append(r)
    out = {}
    for j in study.judges:
        params = {k: j[k] for k in ("temperature", "max_tokens") if j.get(k) is not None}
        seed = j.get("seed")
        out[j["name"]] = [replace(r, metadata=dict(r.metadata, sample=k), seed=None if seed is None else int(seed) + k,
                                  **params) for r in rendered for k in range(int(j.get("samples", study.samples)))]
    return kind, out


def plan_study(study: Study, *, max_cost: float | None = None) -> pd.DataFrame:
    """The study's design, one row per configuration (judge × prompt × anchor set), with its calls, estimated
    tokens and cost — no call is made (the calls are those :func:`study_requests` builds and :func:`run_study`
    sends).

    Returns
    -------
    DataFrame
        ``judge``, ``model``, ``prompt`` (the template's identity ``name@sha256``), ``anchor_set``, ``calls``,
        ``input_tokens_est``, ``output_tokens_est``, ``cost_usd_est`` (NaN without a price), ``note``; a last row
        ``judge = "total"``. ``attrs["kind"]``, ``attrs["items"]``.

    Raises
    ------
    DataError
        As :func:`study_requests`.
    EvallabError
        ``max_cost`` given and the estimated total above it (the run must not start).
    """
    return _plan(study, *study_requests(study), max_cost=max_cost)


def _plan(study: Study, kind: str, per_judge: dict, *, max_cost: float | None = None) -> pd.DataFrame:
    """:func:`plan_study` of requests already built (so a run renders its requests once)."""
    from evallab.judges._pricing import cost_usd, price_table

    prices = price_table({k: tuple(v) for k, v in study.prices.items()} if study.prices else None)
    rows = []
    for j in study.judges:
        reqs = pd.DataFrame([{"prompt": r.metadata["strategy"], "anchor_set": r.metadata["anchor_set"],
                              "item_id": r.metadata["item_id"],
                              "tin": math.ceil(_chars(r) / CHARS_PER_TOKEN),
                              "tout": int(r.max_tokens or DEFAULT_MAX_TOKENS)} for r in per_judge[j["name"]]])
        for (prompt, aset), g in reqs.groupby(["prompt", "anchor_set"], sort=False):
            tin, tout = int(g["tin"].sum()), int(g["tout"].sum())
            cost = cost_usd(str(j["model"]), tin, tout, prices)
            rows.append({"judge": j["name"], "model": j["model"], "prompt": prompt, "anchor_set": aset,
                         "calls": len(g), "input_tokens_est": tin, "output_tokens_est": tout,
                         "cost_usd_est": float("nan") if cost is None else cost,
                         "note": "" if cost is not None else f"no price for model {j['model']!r}"})
    out = pd.DataFrame(rows)
    priced = out["cost_usd_est"].notna()
    total = {"judge": "total", "model": "", "prompt": "", "anchor_set": "", "calls": int(out["calls"].sum()),
             "input_tokens_est": int(out["input_tokens_est"].sum()),
             "output_tokens_est": int(out["output_tokens_est"].sum()),
             "cost_usd_est": float(out.loc[priced, "cost_usd_est"].sum()) if priced.any() else float("nan"),
             "note": "cost of the priced configurations only" if not priced.all() else ""}
    out = pd.concat([out, pd.DataFrame([total])], ignore_index=True)
    out.attrs["kind"] = kind
    out.attrs["items"] = len({r.metadata["item_id"] for reqs in per_judge.values() for r in reqs})
    if max_cost is not None and priced.any() and total["cost_usd_est"] > max_cost:
        raise EvallabError(f"{study.path}: the estimated cost ${total['cost_usd_est']:.4f} of {total['calls']} calls "
                           f"exceeds --max-cost ${max_cost:.4f}; nothing was sent")
    return out


def run_study(study: Study, out_dir: str | Path, *, judges: dict | None = None, max_cost: float | None = None,
              progress: bool = False) -> pd.DataFrame:
    """Run the whole design through the existing runner (:func:`evallab.judges._runner.run_jobs`: resumable, cached,
    one lock per output): one output ``<out_dir>/<judge name>.jsonl`` per judge, after :func:`plan_study` (and its
    ``max_cost`` check) — so a run sends at most the calls the plan counted. The study file is copied to
    ``<out_dir>/study.yaml`` and the plan written to ``<out_dir>/plan.csv`` (what :func:`load_study_run` reads).
    A judge's ``max_concurrency``, ``timeout``, ``max_retries`` and ``structured`` in the study file, and the
    file's ``prices``, go to its client (so ``cost_usd`` is recorded per reply for a priced model).

    Parameters
    ----------
    study : Study
    out_dir : path
        Where the per-judge verdict tables go.
    judges : dict, optional
        judge name → a :class:`~evallab.judges.Judge` (e.g. a replay or a test double); default: built from the
        study's ``endpoint``/``model``/``api_key_env`` with :func:`~evallab.judges.make_judge`.
    max_cost, progress
        As :func:`plan_study`; the runner's progress bar.

    Returns
    -------
    DataFrame
        The tidy verdict table of every judge (``strategy`` = the prompt's identity, ``anchor_set``), with
        ``attrs["plan"]``.
    """
    from evallab import verdicts as V
    from evallab.judges._runner import make_judge, run_jobs

    kind, per_judge = study_requests(study)
    plan = _plan(study, kind, per_judge, max_cost=max_cost)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if study.path and Path(study.path).is_file():  # the design beside its verdicts: `evallab study report DIR`
        (out_dir / STUDY_COPY).write_text(Path(study.path).read_text(encoding="utf-8"), encoding="utf-8")
    plan.to_csv(out_dir / "plan.csv", index=False)
    tables = []
    for j in study.judges:
        kw = {k: j[k] for k in CLIENT_OPTIONS if j.get(k) is not None}
        if study.prices:
            kw["prices"] = {k: list(v) for k, v in study.prices.items()}
        judge = (judges or {}).get(j["name"]) or make_judge(str(j.get("endpoint", "")), str(j["model"]),
                                                             str(j.get("api_key_env", "")), label=j["name"], **kw)
        tables.append(run_jobs(judge, per_judge[j["name"]], out=out_dir / f"{j['name']}.jsonl", progress=progress))
    df = V.concat(tables)
    df.attrs["plan"] = plan
    return df


def unparsed_configurations(df: pd.DataFrame, by=("judge", "strategy", "anchor_set")) -> list[str]:
    """One warning line per configuration (``by`` values joined by `` | ``) of a study's verdict table that parsed
    no reply: the configuration, ``0 of N replies parsed`` and the first unparsed reply's ``error`` (``evallab
    study run`` prints them, so a prompt the judge cannot follow is seen before the report).

    Parameters
    ----------
    df : DataFrame
        A tidy verdict table (``verdict``; ``error`` optional).
    by : sequence of str
        The design columns naming a configuration (those absent are dropped).

    Returns
    -------
    list of str
        Empty when every configuration parsed at least one reply.
    """
    cols = [c for c in by if c in df.columns]
    if not len(df) or "verdict" not in df:
        return []
    groups = df.groupby(cols, sort=False, dropna=False) if cols else [((), df)]
    lines = []
    for key, g in groups:
        if g["verdict"].notna().any():
            continue
        key = key if isinstance(key, tuple) else (key,)
        errors = g["error"].dropna().astype(str) if "error" in g else pd.Series(dtype=str)
        first = " ".join(errors.iloc[0].split()) if len(errors) else "no error recorded"
        lines.append(f"warning: configuration {' | '.join(str(k) for k in key) or 'all'}: 0 of {len(g)} replies "
                     f"parsed; first error: {first}")
    return lines


def load_study_run(out_dir: str | Path) -> pd.DataFrame:
    """The verdicts of a study run (``evallab study run FILE --out DIR``): the per-judge tables named by the study
    file's copy in ``DIR`` (every ``*.jsonl`` there when there is no copy), concatenated.

    Raises
    ------
    DataError
        ``out_dir`` without verdict tables, or a judge's table missing.
    """
    from evallab import verdicts as V
    from evallab.datasets._generic import load_verdicts

    d = Path(out_dir)
    copy = d / STUDY_COPY
    if copy.is_file():
        import yaml

        doc = yaml.safe_load(copy.read_text(encoding="utf-8")) or {}
        names = [str(j.get("name") or j.get("model")) for j in doc.get("judges") or [] if isinstance(j, dict)]
        files = [d / f"{n}.jsonl" for n in names]
        missing = [f.name for f in files if not f.is_file()]
        if missing:
            raise DataError(f"no verdicts for judge(s) {missing}; expected the output of `evallab study run`", str(d))
    else:
        files = sorted(d.glob("*.jsonl"))
    if not files:
        raise DataError("no verdict tables (*.jsonl); expected the folder `evallab study run --out` wrote", str(d))
    return V.concat([load_verdicts(f) for f in files])
