"""A judge study in one file (issue 29, item 3 — the plan; the run is not built yet): one YAML naming the items, the
judges, the prompts, the anchor sets, the orders and the samples; :func:`plan_study` expands the design and counts
the calls, the tokens and the cost BEFORE any call (``evallab study plan FILE``, ``--max-cost``).

::

    name: two-prompts
    items: items.jsonl            # an items table (evallab.judges._items), relative to this file
    judges:
      - {name: mini, model: gpt-4o-mini, endpoint: https://api.openai.com/v1, max_tokens: 200}
      - {name: local, model: smollm2, endpoint: http://127.0.0.1:8080/v1, temperature: 0}
    prompts: [vanilla, prompts/strict.j2]     # built-in names (evallab.judges._templates) or template files
    anchor_sets: [none, anchors/balanced.yaml] # "none" or anchor-set files (evallab.judges._anchor_sets)
    orders: [ab, ba]                           # pairwise only
    samples: 1
    prices: {smollm2: [0, 0]}                  # USD per 1M input / output tokens (beside the bundled table)

Tokens are ESTIMATED: input = the rendered prompt's characters / 4 (rounded up) — every request is rendered for
real, so the count follows the prompt and anchors; output = the judge's ``max_tokens`` (default 256) per call, an
upper bound. The cost is the estimate priced by :func:`evallab.judges._pricing.price_table` (a model without a price:
no cost, said so).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from evallab.errors import DataError, EvallabError

DEFAULT_MAX_TOKENS = 256
CHARS_PER_TOKEN = 4


@dataclass
class Study:
    """A parsed study file (module docstring); paths resolved against the file's folder."""

    name: str
    items: Path
    judges: list[dict]
    prompts: list[str]
    anchor_sets: list[str]
    orders: list[str]
    samples: int
    prices: dict = field(default_factory=dict)
    path: str = ""


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
    if not isinstance(samples, int) or samples < 1:
        raise DataError(f"samples {samples!r}; expected a whole number ≥ 1", str(p), column="samples")
    prompts = [str(x) for x in doc.get("prompts", ["vanilla"])]
    anchor_sets = [str(x) for x in doc.get("anchor_sets", ["none"])]
    return Study(str(doc.get("name") or p.stem), items,
                 [dict(j, name=n) for j, n in zip(judges, names, strict=True)],
                 [x if "/" not in x and not x.endswith(".j2") else str(base / x) for x in prompts],
                 [x if x == "none" else str(base / x) for x in anchor_sets], orders, samples,
                 dict(doc.get("prices") or {}), str(p))


def _template(spec: str):
    from evallab.judges._templates import builtin_template, load_prompt_template

    return load_prompt_template(spec) if Path(spec).suffix or "/" in spec else builtin_template(spec)


def _anchors(spec: str):
    from evallab.judges._anchor_sets import load_anchor_set

    return None if spec == "none" else load_anchor_set(spec)


def _chars(request) -> int:
    return sum(len(m.content) for m in request.messages)


def plan_study(study: Study, *, max_cost: float | None = None) -> pd.DataFrame:
    """The study's design, one row per configuration (judge × prompt × anchor set), with its calls, estimated
    tokens and cost — no call is made.

    Returns
    -------
    DataFrame
        ``judge``, ``model``, ``prompt`` (the template's identity ``name@sha256``), ``anchor_set``, ``items``,
        ``orders``, ``samples``, ``calls`` (items × orders × samples; pointwise: one order), ``input_tokens_est``,
        ``output_tokens_est``, ``cost_usd_est`` (NaN without a price), ``note``; a last row ``judge = "total"``.
        ``attrs["kind"]``.

    Raises
    ------
    DataError
        A prompt, anchor set or items table that cannot be used (naming it); a template of the other kind.
    EvallabError
        ``max_cost`` given and the estimated total above it (the run must not start).
    """
    from evallab.datasets._generic import read_table
    from evallab.judges._items import _criteria, detect_kind
    from evallab.judges._pricing import cost_usd, price_table
    from evallab.judges._templates import render_pairwise, render_pointwise

    items = read_table(study.items)
    kind = detect_kind(items)
    prices = price_table({k: tuple(v) for k, v in study.prices.items()} if study.prices else None)
    orders = study.orders if kind == "pairwise" else [""]
    rows = []
    for prompt_spec in study.prompts:
        t = _template(prompt_spec)
        if t.kind != kind:
            raise DataError(f"prompt {t.name!r} is {t.kind}; the items are {kind}", study.path, column="prompts")
        for aspec in study.anchor_sets:
            aset = _anchors(aspec)
            anchors = aset.ordered() if aset else []
            chars = 0
            for _, it in items.iterrows():
                for o in orders:
                    if kind == "pairwise":
                        r = render_pairwise(t, str(it.get("instruction", it.get("input", ""))), str(it["output_1"]),
                                            str(it["output_2"]), order=o, anchors=anchors)
                    else:
                        r = render_pointwise(t, rubric=str(it["rubric"]), pass_criteria=_criteria(it["pass_criteria"]),
                                             fail_criteria=_criteria(it.get("fail_criteria")),
                                             answer=str(it["answer"]), anchors=anchors)
                    chars += math.ceil(_chars(r) / CHARS_PER_TOKEN)
            for j in study.judges:
                calls = len(items) * len(orders) * study.samples
                tin = chars * study.samples
                tout = calls * int(j.get("max_tokens") or DEFAULT_MAX_TOKENS)
                cost = cost_usd(str(j["model"]), tin, tout, prices)
                rows.append({"judge": j["name"], "model": j["model"], "prompt": t.identity,
                             "anchor_set": aset.name if aset else "none", "items": len(items),
                             "orders": len(orders), "samples": study.samples, "calls": calls,
                             "input_tokens_est": tin, "output_tokens_est": tout,
                             "cost_usd_est": float("nan") if cost is None else cost,
                             "note": "" if cost is not None else f"no price for model {j['model']!r}"})
    out = pd.DataFrame(rows)
    total = {"judge": "total", "model": "", "prompt": "", "anchor_set": "", "items": len(items),
             "orders": len(orders), "samples": study.samples, "calls": int(out["calls"].sum()),
             "input_tokens_est": int(out["input_tokens_est"].sum()),
             "output_tokens_est": int(out["output_tokens_est"].sum()),
             "cost_usd_est": float(out["cost_usd_est"].sum(min_count=1)) if out["cost_usd_est"].notna().any()
             else float("nan"),
             "note": "cost of the priced configurations only" if out["cost_usd_est"].isna().any() else ""}
    out = pd.concat([out, pd.DataFrame([total])], ignore_index=True)
    out.attrs["kind"] = kind
    if max_cost is not None and total["cost_usd_est"] == total["cost_usd_est"] and total["cost_usd_est"] > max_cost:
        raise EvallabError(f"{study.path}: the estimated cost ${total['cost_usd_est']:.4f} of {total['calls']} calls "
                           f"exceeds --max-cost ${max_cost:.4f}; nothing was sent")
    return out
