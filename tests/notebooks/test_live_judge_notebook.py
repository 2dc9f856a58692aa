"""A notebook with live judge parameters (notebooks/03_anchor_inflation.ipynb) run by papermill against the local
OpenAI-compatible server with an API key: the server counts every reply the report claims, the key appears in no
file the run wrote, and a rerun answers from the cache with zero HTTP calls."""

from __future__ import annotations

import json

import pytest

from evallab.paths import REPO_ROOT
from evallab.reporting._batch import ReportSpec, run_one

NB = REPO_ROOT / "notebooks" / "03_anchor_inflation.ipynb"
SECRET = "sk-evallab-notebook-3b91f0c2e7d54a18"


def _has_judge_parameters() -> bool:
    if not NB.exists():
        return False
    import nbformat

    nb = nbformat.read(str(NB), as_version=4)
    src = "".join(c.source for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    return all(p in src for p in ("judge_base_url", "judge_model", "judge_api_key_env", "cache_dir"))


pytestmark = pytest.mark.skipif(not _has_judge_parameters(),
                                reason="notebooks/03_anchor_inflation.ipynb with judge parameters is not there")


def test_live_judge_notebook_key_cache_and_counts(tmp_path, monkeypatch):
    from evallab.testing import LocalJudgeServer, SimulatedJudge

    monkeypatch.setenv("EVALLAB_NB_KEY", SECRET)  # inherited by the papermill kernel
    out, rec, cache = tmp_path / "reports", tmp_path / "run", tmp_path / "cache"
    params = {"subsets": ["LLMBar/Natural"], "n_resamples": 50, "variants": ["balanced", "pass-only"],
              "max_scenarios": 3, "samples": 1, "judge_model": "sim-judge", "judge_api_key_env": "EVALLAB_NB_KEY",
              "judge_label": "sim", "cache_dir": str(cache)}
    with LocalJudgeServer(SimulatedJudge(seed=7, pass_rate=0.5), api_key=SECRET) as srv:
        params["judge_base_url"] = srv.base_url
        first = run_one(ReportSpec("03_live_key", NB, {**params, "record_dir": str(rec)}), out)
        assert first.status == "ok", first.error
        seen = srv.stats()
        m = json.loads((out / "03_live_key.metrics.json").read_text())["metrics"]
        assert m["judge_configured"] is True and m["experiment_replies"] > 0
        assert seen["unauthorized"] == 0 and seen["completions"] == m["experiment_replies"]
        assert m["experiment_live_calls"] == seen["completions"]  # run totals shown in the report
        srv.reset()
        again = run_one(ReportSpec("03_live_key_rerun", NB, {**params, "record_dir": str(tmp_path / "run2")}), out)
        assert again.status == "ok", again.error
        assert srv.stats()["requests"] == 0  # every reply came from the cache
    m2 = json.loads((out / "03_live_key_rerun.metrics.json").read_text())["metrics"]
    assert m2["experiment_replies"] == m["experiment_replies"]
    assert m2["experiment_live_calls"] == 0
    assert m2["pass_only_inflation"] == pytest.approx(m["pass_only_inflation"], nan_ok=True)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".html" for p in files) and any(p.name.startswith("judges.sqlite") for p in files)
    for p in files:
        assert SECRET.encode() not in p.read_bytes(), p
