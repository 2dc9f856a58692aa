"""inspect_ai eval logs (``.json`` and ``.eval``) → tidy verdict table of the model-graded scores.

Source of the format: https://github.com/UKGovernmentBEIS/inspect_ai — ``src/inspect_ai/log/_log.py`` (``EvalLog``:
``{version, status, eval, plan, results, stats, samples, reductions}``; ``EvalSample``: ``id``, ``epoch``,
``target``, ``scores``, ``error``), ``src/inspect_ai/log/_file.py`` / ``_recorders/eval.py`` (the ``.eval`` zip:
``header.json`` + ``samples/<id>_epoch_<n>.json``), ``src/inspect_ai/scorer/_metric.py`` (``Score``: ``value``,
``answer``, ``explanation``, ``metadata``; grades ``CORRECT="C"``, ``INCORRECT="I"``, ``PARTIAL="P"``,
``NOANSWER="N"``) and ``src/inspect_ai/scorer/_model.py`` (``model_graded_fact``/``model_graded_qa`` store the
grader's messages in ``metadata.grading``, the reply carrying the grader's ``model``). Field meanings:
``data/formats/inspect_ai/SOURCE.md``. The log is read as JSON with the standard library; inspect_ai itself is
not needed.
"""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path

import pandas as pd

from evallab._fileio import quote
from evallab.importers._common import ZIP_MAGIC, ImportDataError, check_file, finish, read_json

GRADES = {"C": "pass", "I": "fail", "P": "warn"}
EXPECTED = "an inspect_ai eval log (.json: {version, eval, samples, ...}; .eval: a zip with header.json and samples/)"
EXPECTED_VALUE = ("a model-graded grade 'C', 'I', 'P' or 'N' (choose the model-graded scorers with "
                  "scorers=[...] / --scorer)")


def _grader_model(score: dict) -> str | None:
    grading = (score.get("metadata") or {}).get("grading") if isinstance(score.get("metadata"), dict) else None
    if isinstance(grading, list):
        for m in reversed(grading):
            if isinstance(m, dict) and m.get("role") == "assistant" and m.get("model"):
                return str(m["model"])
    return None


def _load(path: str | Path) -> tuple[Path, dict, list[tuple[str, dict]]]:
    p = check_file(path, EXPECTED)
    with p.open("rb") as fh:
        magic = fh.read(4)
    if magic == ZIP_MAGIC:
        try:
            z = zipfile.ZipFile(p)
        except zipfile.BadZipFile as exc:
            raise ImportDataError(f"is a damaged zip ({exc}); expected {EXPECTED}", p) from None
        with z:
            names = z.namelist()
            if "header.json" not in names:
                raise ImportDataError(f"the zip has no header.json; expected {EXPECTED}", p)
            try:
                header = json.loads(z.read("header.json").decode("utf-8-sig"))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise ImportDataError(f"header.json is not valid JSON ({exc}); expected {EXPECTED}", p) from None
            samples = []
            for n in names:
                if n.startswith("samples/") and n.endswith(".json"):
                    try:
                        samples.append((n, json.loads(z.read(n).decode("utf-8-sig"))))
                    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                        raise ImportDataError(f"not valid JSON ({exc}); expected one EvalSample", p, n) from None
        return p, header, samples
    doc = read_json(p, EXPECTED)
    log = doc.value
    if not isinstance(log, dict) or "eval" not in log:
        raise ImportDataError(f"has no 'eval' object; expected {EXPECTED}", p, field="eval")
    samples = log.get("samples")
    if not isinstance(samples, list):
        raise ImportDataError("no samples in the log (written with log_samples=False?); expected a list of "
                              "EvalSample objects", p, field="samples")
    return p, log, [(f"samples[{i}]", s) for i, s in enumerate(samples)]


def import_inspect_log(path: str | Path, *, scorers: list[str] | None = None) -> pd.DataFrame:
    """An inspect_ai eval log → tidy table, one row per (sample, epoch, scorer).

    Mapping: ``item_id`` = sample ``id``, ``sample`` = ``epoch - 1``, ``dataset`` = ``eval.task``, ``strategy`` =
    the scorer's name (e.g. ``model_graded_fact``), ``judge`` = the grader role's model
    (``eval.model_roles.grader.model``) else the task model ``eval.model`` (the default grader), ``model`` = the
    pinned grader model named in the score's ``metadata.grading`` reply where present; ``verdict``: ``C`` →
    ``pass``, ``I`` → ``fail``, ``P`` → ``warn``, ``N`` (no answer) → NA with ``error``; a sample without that
    score (unscored, errored, or a null/NaN value) → NA with ``error`` giving the reason (``metadata.
    unscored_reason``, the sample's ``error.message``). ``order`` ``""``. Extra columns: ``target`` (the dataset's
    reference answer, not a verdict), ``answer``, ``explanation`` (grader reply), ``raw_verdict``, ``source_ref``.

    Parameters
    ----------
    scorers : names of the scorers to import; default every scorer the log declares (``eval.scorers``).

    Raises
    ------
    ImportDataError
        Not a log (no ``eval``), a damaged zip, no samples, a sample without ``id``/``epoch``, an unknown scorer
        name, a score value that is not C/I/P/N (naming the sample and value).
    """
    p, log, samples = _load(path)
    ev = log.get("eval") or {}
    if not isinstance(ev, dict):
        raise ImportDataError(f"expected an object; expected {EXPECTED}", p, field="eval")
    declared = [s.get("name") for s in ev.get("scorers") or [] if isinstance(s, dict) and s.get("name")]
    seen = list(dict.fromkeys(k for _, s in samples if isinstance(s, dict) for k in (s.get("scores") or {})))
    names = list(dict.fromkeys(declared + seen))
    if scorers:
        unknown = [s for s in scorers if s not in names]
        if unknown:
            raise ImportDataError(f"unknown scorer(s) {unknown}; this log has {names}", p, field="scorers")
        names = list(scorers)
    if not samples:
        raise ImportDataError("the log holds no samples; expected at least one EvalSample", p, field="samples")
    if not names:
        raise ImportDataError("no scorer in the log (eval.scorers and every sample's scores are empty); expected "
                              "model-graded scores", p, field="scorers")
    roles = ev.get("model_roles") or {}
    grader = roles.get("grader") if isinstance(roles, dict) else None
    judge = (grader.get("model") if isinstance(grader, dict) else grader) or ev.get("model") or "unknown-grader"
    task = str(ev.get("task") or (ev.get("dataset") or {}).get("name") or "inspect")
    rows = []
    for ref, s in samples:
        if not isinstance(s, dict) or "id" not in s:
            raise ImportDataError("has no sample 'id'; expected an EvalSample", p, ref, "id")
        sid, epoch = s["id"], s.get("epoch", 1)
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
            raise ImportDataError(f"epoch {quote(epoch)}; expected an integer >= 1", p, f"sample {sid}", "epoch")
        where = f"sample {sid} epoch {epoch}"
        scores = s.get("scores") or {}
        err = s.get("error")
        err_msg = (err.get("message") if isinstance(err, dict) else err) if err else None
        target = s.get("target")
        target = "\n".join(map(str, target)) if isinstance(target, list) else target
        for name in names:
            sc = scores.get(name)
            verdict, reason, model, raw = None, None, None, None
            if not isinstance(sc, dict):
                reason = (f"not scored by {name}: sample error: {err_msg}" if err_msg
                          else f"not scored by {name} (the sample has no such score)")
            else:
                raw = sc.get("value")
                model = _grader_model(sc)
                md = sc.get("metadata") if isinstance(sc.get("metadata"), dict) else {}
                if raw is None or (isinstance(raw, float) and math.isnan(raw)):
                    reason = f"unscored: {md.get('unscored_reason') or err_msg or 'the score value is null'}"
                elif raw == "N":
                    reason = "the grader answered N (no answer / could not grade)"
                elif isinstance(raw, str) and raw in GRADES:
                    verdict = GRADES[raw]
                else:
                    raise ImportDataError(f"unknown score value {quote(raw)}; expected {EXPECTED_VALUE}", p, where,
                                          f"scores.{name}.value")
            rows.append({"item_id": str(sid), "dataset": task, "judge": str(judge), "model": model,
                         "strategy": name, "order": "", "sample": epoch - 1, "verdict": verdict,
                         "error": reason, "scorer": name, "target": target,
                         "answer": sc.get("answer") if isinstance(sc, dict) else None,
                         "explanation": sc.get("explanation") if isinstance(sc, dict) else None,
                         "raw_verdict": raw, "source_ref": f"{where} ({ref})"})
    df = pd.DataFrame(rows)
    key = pd.to_numeric(df["item_id"], errors="coerce")
    df = df.assign(_n=key, _s=df["item_id"]).sort_values(["_n", "_s", "sample", "strategy"], kind="stable")
    return finish(df.drop(columns=["_n", "_s"]).reset_index(drop=True), p)
