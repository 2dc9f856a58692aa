"""promptfoo eval export JSON (``promptfoo export`` / ``promptfoo eval -o out.json``) → tidy verdict table.

Source of the format: https://github.com/promptfoo/promptfoo — ``src/types/index.ts`` (``EvaluateResult``:
``testIdx``, ``promptIdx``, ``provider``, ``gradingResult``, ``failureReason``, ``error``; ``GradingResult``:
``pass``, ``score``, ``reason``, ``componentResults[]``, ``assertion``, ``tokensUsed``), written under
``results.results[]`` of the export (``src/commands/export.ts``). Field meanings:
``data/formats/promptfoo/SOURCE.md``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evallab._fileio import quote
from evallab.importers._common import ImportDataError, finish, read_json

#: promptfoo assertion types graded by a model (``src/assertions``); ``not-<type>`` inverts one
MODEL_GRADED = ("llm-rubric", "g-eval", "model-graded-closedqa", "model-graded-factuality", "factuality",
                "answer-relevance", "context-faithfulness", "context-recall", "context-relevance",
                "conversation-relevance", "search-rubric", "select-best", "max-score")
EXPECTED = "a promptfoo export: {evalId, results: {version, results: [EvaluateResult ...]}, config}"
DEFAULT_GRADER = "promptfoo-default-grader"


def _is_model_graded(t) -> bool:
    return isinstance(t, str) and (t in MODEL_GRADED or (t.startswith("not-") and t[4:] in MODEL_GRADED))


def _provider_id(v) -> str | None:
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        return v.get("id") or v.get("label")
    return None


def import_promptfoo(path: str | Path, *, types: list[str] | None = None) -> pd.DataFrame:
    """A promptfoo export → tidy table, one row per model-graded component result (e.g. each ``llm-rubric``).

    Mapping: for each ``results.results[i]`` and each ``gradingResult.componentResults[j]`` whose
    ``assertion.type`` is model-graded (:data:`MODEL_GRADED`, or ``types``): ``verdict`` = ``pass`` / ``fail``
    from ``pass``, ``score`` = its ``score``, extra ``reason`` = the grader's explanation; ``input_tokens`` /
    ``output_tokens`` = its ``tokensUsed.prompt`` / ``.completion`` (the grader's). A result whose grading never
    ran (provider error: no ``gradingResult``) gives one NA row per model-graded assertion of its test case, with
    ``error`` = the result's ``error``; a component without a boolean ``pass`` is NA with ``error``.
    ``item_id`` = ``test<testIdx>/prompt<promptIdx>/<provider id>/assert<j>``, ``dataset`` = ``promptfoo``,
    ``subset`` = the config ``description``, ``strategy`` = the assertion type, ``judge`` = the grading provider
    named by the assertion / test ``options.provider`` / ``defaultTest.options.provider``, else
    ``promptfoo-default-grader`` (the export does not name the default grader), ``order`` ``""``. Extra columns:
    ``test_idx``, ``prompt_idx``, ``provider`` (the evaluated model), ``rubric`` (the assertion's value),
    ``reason``, ``raw_verdict``, ``source_ref`` (``result i component j``, 1-based).

    Raises
    ------
    ImportDataError
        Not an export (no ``results.results`` list), a result without ``testIdx``/``promptIdx``/``provider``, a
        component's ``pass`` that is not a boolean (naming result, component and value).
    """
    doc = read_json(path, EXPECTED)
    ex = doc.value
    res = ex.get("results") if isinstance(ex, dict) else None
    results = res.get("results") if isinstance(res, dict) else None
    if not isinstance(results, list):
        raise ImportDataError(f"has no results.results list; expected {EXPECTED}", doc.path,
                              field="results.results")
    wanted = (lambda t: t in types) if types else _is_model_graded
    cfg = ex.get("config") if isinstance(ex.get("config"), dict) else {}
    default_opts = ((cfg.get("defaultTest") or {}).get("options") or {}) if isinstance(cfg.get("defaultTest"),
                                                                                        dict) else {}
    subset = cfg.get("description") or ""
    rows = []
    for i, r in enumerate(results, start=1):
        where = f"result {i}"
        if not isinstance(r, dict):
            raise ImportDataError(f"is a {type(r).__name__}; expected an EvaluateResult object", doc.path, where)
        for f in ("testIdx", "promptIdx"):
            if not isinstance(r.get(f), int) or isinstance(r.get(f), bool):
                raise ImportDataError(f"{quote(r.get(f))}; expected an integer index", doc.path, where, f)
        prov = _provider_id(r.get("provider"))
        if not prov:
            raise ImportDataError(f"{quote(r.get('provider'))}; expected the evaluated provider (an id string or "
                                  "{id, label})", doc.path, where, "provider")
        tc = r.get("testCase") if isinstance(r.get("testCase"), dict) else {}
        test_opts = tc.get("options") if isinstance(tc.get("options"), dict) else {}
        gr = r.get("gradingResult")
        comps = gr.get("componentResults") if isinstance(gr, dict) else None
        if isinstance(gr, dict) and not isinstance(comps, list):
            comps = [gr] if isinstance(gr.get("assertion"), dict) else []
        pending = comps is None
        items = comps if not pending else [{"assertion": a} for a in (tc.get("assert") or [])]
        for j, c in enumerate(items, start=1):
            w = f"{where} component {j}"
            if not isinstance(c, dict):
                raise ImportDataError(f"is a {type(c).__name__}; expected a GradingResult object", doc.path, w)
            a = c.get("assertion") if isinstance(c.get("assertion"), dict) else {}
            t = a.get("type")
            if not wanted(t):
                continue
            judge = (_provider_id(a.get("provider")) or _provider_id(test_opts.get("provider"))
                     or _provider_id(default_opts.get("provider")) or DEFAULT_GRADER)
            tok = c.get("tokensUsed") if isinstance(c.get("tokensUsed"), dict) else {}
            ok = c.get("pass")
            if pending:
                verdict = None
                err = f"not graded: {r.get('error') or 'the result has no gradingResult'}"
            elif isinstance(ok, bool):
                verdict, err = ("pass" if ok else "fail"), None
            elif ok is None:
                verdict, err = None, f"the component has no pass/fail ({c.get('reason') or 'no reason given'})"
            else:
                raise ImportDataError(f"unknown verdict {quote(ok)}; expected true or false", doc.path, w, "pass")
            score = c.get("score")
            rows.append({"item_id": f"test{r['testIdx']}/prompt{r['promptIdx']}/{prov}/assert{j}",
                         "dataset": "promptfoo", "subset": subset, "judge": judge,
                         "model": None if judge == DEFAULT_GRADER else judge, "strategy": t, "order": "",
                         "verdict": verdict, "error": err,
                         "score": score if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
                         "input_tokens": tok.get("prompt"), "output_tokens": tok.get("completion"),
                         "test_idx": r["testIdx"], "prompt_idx": r["promptIdx"], "provider": prov,
                         "rubric": a.get("value") if isinstance(a.get("value"), str) else None,
                         "reason": c.get("reason"), "raw_verdict": ok, "source_ref": w})
    if not rows:
        raise ImportDataError("no model-graded component results (llm-rubric, g-eval, factuality, ...); expected "
                              "at least one (choose assertion types with types=[...] / --assertion-type)",
                              doc.path, field="componentResults")
    return finish(rows, doc.path)


def component_counts(path: str | Path) -> dict:
    """Counts of every component result by assertion type (model-graded or not): ``{type: n}``."""
    doc = read_json(path, EXPECTED)
    out: dict = {}
    for r in doc.value["results"]["results"]:
        for c in ((r.get("gradingResult") or {}).get("componentResults") or []):
            t = (c.get("assertion") or {}).get("type")
            out[t] = out.get(t, 0) + 1
    return out
