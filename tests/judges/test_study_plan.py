"""A judge study in one file (issue 29, item 3 — the plan): 2 prompts × 2 anchor sets × 2 judges expanded, the calls
counted by hand, tokens from the rendered prompts, cost from the prices, ``--max-cost`` stops before any call."""

from __future__ import annotations

import json
import math

import pytest
from cli_helper import run_cli

from evallab.errors import DataError, EvallabError
from evallab.judges._anchor_sets import load_anchor_set
from evallab.judges._study import load_study_file, plan_study, run_study
from evallab.judges._templates import builtin_template, load_prompt_template, render_pairwise

ITEMS = [{"item_id": f"q{i}", "instruction": f"Say {i}", "output_1": str(i), "output_2": "no"} for i in range(5)]
TEMPLATE = ('{% set kind = "pairwise" %}{% block system %}Be strict.{% endblock %}{% block user %}{{ instruction }}'
            "\n(a) {{ output_a }}\n(b) {{ output_b }}\n{{ reply_format }}{% endblock %}")
ANCHORS = "name: two\nkind: pairwise\nanchors:\n  - {text: 'worked example', verdict: a}\n  - {text: other, verdict: b}\n"


@pytest.fixture
def study(tmp_path):
    (tmp_path / "items.jsonl").write_text("\n".join(json.dumps(o) for o in ITEMS))
    (tmp_path / "strict.j2").write_text(TEMPLATE)
    (tmp_path / "two.yaml").write_text(ANCHORS)
    f = tmp_path / "study.yaml"
    f.write_text("name: s\nitems: items.jsonl\njudges:\n  - {name: big, model: m-big, max_tokens: 100}\n"
                 "  - {name: small, model: m-small}\nprompts: [vanilla, strict.j2]\nanchor_sets: [none, two.yaml]\n"
                 "orders: [ab, ba]\nsamples: 3\nprices: {m-big: [10, 30]}\n")
    return f


def test_plan_counts_calls_tokens_and_cost(study, tmp_path):
    s = load_study_file(study)
    p = plan_study(s)
    cells = p[p["judge"] != "total"]
    assert len(cells) == 2 * 2 * 2
    assert (cells["calls"] == 5 * 2 * 3).all() and p.iloc[-1]["calls"] == 8 * 30 and p.attrs["items"] == 5
    # tokens by hand for (strict.j2, two.yaml): every request rendered, ceil(chars / 4), times the samples
    t, a = load_prompt_template(tmp_path / "strict.j2"), load_anchor_set(tmp_path / "two.yaml").ordered()
    chars = sum(math.ceil(sum(len(m.content) for m in render_pairwise(t, it["instruction"], it["output_1"],
                                                                          it["output_2"], order=o, anchors=a).messages) / 4)
                for it in ITEMS for o in ("ab", "ba"))
    row = cells[(cells["judge"] == "big") & (cells["prompt"] == t.identity) & (cells["anchor_set"] == "two")].iloc[0]
    assert row["input_tokens_est"] == 3 * chars and row["output_tokens_est"] == 30 * 100
    assert row["cost_usd_est"] == pytest.approx((3 * chars * 10 + 3000 * 30) / 1e6)
    small = cells[cells["judge"] == "small"]
    assert small["cost_usd_est"].isna().all() and (small["output_tokens_est"] == 30 * 256).all()
    assert set(cells["prompt"]) == {builtin_template("vanilla").identity, t.identity}


def test_max_cost_stops_before_any_call(study, capsys):
    with pytest.raises(EvallabError, match=r"exceeds --max-cost \$0.0010; nothing was sent"):
        plan_study(load_study_file(study), max_cost=0.001)
    code, out = run_cli(["study", "plan", study, "--max-cost", "0.001"], capsys)
    assert code == 2 and len(out.strip().splitlines()) == 1 and "nothing was sent" in out
    code, out = run_cli(["study", "plan", study], capsys)
    assert code == 0 and "TOTAL: 240 calls" in out and "big | vanilla@" in out


def test_bad_study_files(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text("items: nope.jsonl\njudges: [{model: m}]\n")
    with pytest.raises(DataError, match="no such file; expected the items table"):
        load_study_file(f)
    (tmp_path / "i.jsonl").write_text(json.dumps(ITEMS[0]))
    f.write_text("items: i.jsonl\njudges: [{model: m}]\norders: [ab, xy]\n")
    with pytest.raises(DataError, match=r"orders \['ab', 'xy'\]"):
        load_study_file(f)
    f.write_text("items: i.jsonl\njudges: [{model: m}, {model: m}]\n")
    with pytest.raises(DataError, match="repeat"):
        load_study_file(f)


class _Echo:
    """A judge double: always picks the output shown first (position bias 1.0), counts its calls."""

    def __init__(self, label):
        self.label, self.model, self.calls = label, label, 0

    async def judge(self, request):
        from evallab.judges._types import JudgeReply

        self.calls += 1
        order = request.metadata["order"]
        return JudgeReply(raw='{"verdict": "a"}', verdict="1" if order == "ab" else "2")


def test_run_sends_exactly_the_planned_calls_and_resumes(study, tmp_path):
    s = load_study_file(study)
    judges = {"big": _Echo("big"), "small": _Echo("small")}
    df = run_study(s, tmp_path / "out", judges=judges)
    plan = df.attrs["plan"]
    assert judges["big"].calls + judges["small"].calls == plan.iloc[-1]["calls"] == len(df) == 240
    assert set(df["strategy"]) == set(plan["prompt"][:-1]) and set(df["anchor_set"]) == {"none", "two"}
    assert sorted(df["sample"].unique()) == [0, 1, 2]
    # the double always favours the first-shown output: position consistency 0 in every configuration
    from evallab.metrics import position_consistency

    pc = position_consistency(df, ["judge", "strategy", "anchor_set"], n_resamples=0)
    assert len(pc) == 8 and (pc["position_consistency"] == 0).all()
    again = {"big": _Echo("big"), "small": _Echo("small")}
    run_study(s, tmp_path / "out", judges=again)  # resumed: nothing left to ask
    assert again["big"].calls == again["small"].calls == 0


def test_study_report_over_a_run(study, tmp_path, capsys):
    # the first-slot double: every configuration inconsistent on every pair, first-slot preference 100%
    run_study(load_study_file(study), tmp_path / "out", judges={"big": _Echo("big"), "small": _Echo("small")})
    code, out = run_cli(["study", "report", tmp_path / "out", "--criterion", "position_consistency",
                         "--resamples", "100"], capsys)
    assert code == 0, out
    assert "Position consistency" not in out  # the criterion itself is in the recommendation, not a range line
    assert "No configuration can be ranked" not in out and "not distinguishable" in out
    assert "First-slot preference is 100.0% in every configuration." in out
    assert (tmp_path / "out" / "report.html").is_file() and (tmp_path / "out" / "report.comparisons.csv").is_file()
    import pandas as pd

    pairs = pd.read_csv(tmp_path / "out" / "report.comparisons.csv")
    assert len(pairs) == 8 * 7 // 2 and (pairs["difference"] == 0).all()
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out = run_cli(["study", "report", empty], capsys)
    assert code == 2 and len(out.strip().splitlines()) == 1 and "no verdict tables" in out


def test_plan_with_the_docs_example_template(tmp_path, capsys):
    """The docs' example template (``| fence`` everywhere) plans: tokens are those of its rendered text."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "live-judges.md").read_text(encoding="utf-8")
    text = re.findall(r"```text\n(\{% set kind.*?)```", page, flags=re.S)[0]
    (tmp_path / "items.jsonl").write_text("\n".join(json.dumps(o) for o in ITEMS))
    (tmp_path / "docexample.j2").write_text(text)
    f = tmp_path / "study.yaml"
    f.write_text("name: d\nitems: items.jsonl\njudges:\n  - {name: big, model: m-big}\nprompts: [docexample.j2]\n"
                 "orders: [ab]\n")
    p = plan_study(load_study_file(f))
    t = load_prompt_template(tmp_path / "docexample.j2")
    want = sum(math.ceil(sum(len(m.content) for m in render_pairwise(t, it["instruction"], it["output_1"],
                                                                         it["output_2"]).messages) / 4) for it in ITEMS)
    assert p.iloc[0]["input_tokens_est"] == want and "```text" in render_pairwise(t, "i", "a", "b").messages[1].content
    code, out = run_cli(["study", "plan", f], capsys)
    assert code == 0 and "Traceback" not in out and "TOTAL: 5 calls" in out


def test_study_run_warns_per_configuration_that_parsed_nothing_and_report_titles_the_study(tmp_path, capsys):
    """The simulated judge answers a pairwise prompt without "## Output (a)" headings with a pointwise verdict, which
    a pairwise request cannot parse: every strict.j2 configuration parses nothing (2 anchor sets × 5 items × 2
    orders = 10 replies each), vanilla parses everything. One warning line per lost configuration."""
    from evallab.testing import LocalJudgeServer, SimulatedJudge

    (tmp_path / "items.jsonl").write_text("\n".join(json.dumps(o) for o in ITEMS))
    (tmp_path / "strict.j2").write_text(TEMPLATE)
    (tmp_path / "two.yaml").write_text(ANCHORS)
    out = tmp_path / "run-folder"
    with LocalJudgeServer(SimulatedJudge(seed=4)) as srv:
        f = tmp_path / "study.yaml"
        f.write_text(f"name: my-study\nitems: items.jsonl\njudges:\n  - {{name: big, model: m-big, endpoint: "
                     f"'{srv.base_url}'}}\nprompts: [vanilla, strict.j2]\nanchor_sets: [none, two.yaml]\n"
                     "orders: [ab, ba]\n")
        code, text = run_cli(["study", "run", f, "--out", out], capsys)
    assert code == 0, text
    warns = [line for line in text.splitlines() if line.startswith("warning: configuration")]
    strict = load_prompt_template(tmp_path / "strict.j2").identity
    assert sorted(w.split(": ")[1].removeprefix("configuration ") for w in warns) == sorted(f"big | {strict} | {a}" for a in ("none", "two"))
    assert all("0 of 10 replies parsed; first error: " in w for w in warns)
    rows = [json.loads(line) for line in (out / "big.jsonl").read_text().splitlines()]
    first_error = next(r["error"] for r in rows if r["strategy"] == strict and r["verdict"] is None)
    assert any(w.endswith(" ".join(first_error.split())) for w in warns)
    code, text = run_cli(["study", "report", out, "--resamples", "50"], capsys)
    assert code == 0, text
    page = (out / "report.html").read_text()
    assert "<h1>Judge study: my-study</h1>" in page and "run-folder" not in page
    assert "nothing parsed: 0 of 10 replies parsed" in page and "NaN" not in page


def test_python_m_evallab_testing_serves_on_a_fixed_port():
    """``python -m evallab.testing --port N`` (docs/guide/studies.md) serves the simulated judge on 127.0.0.1:N; a
    pairwise prompt with "## Output (a)/(b)" headings gets "a"/"b", with --position-bias 1 always "a"."""
    import os
    import socket
    import subprocess
    import sys
    from pathlib import Path

    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "evallab.testing", "--port", str(port), "--position-bias", "1"],
                            stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/v1" in line
        user = "## Instruction\nQ\n\n## Output (a)\nx\n\n## Output (b)\ny\n"
        with httpx.Client(trust_env=False, timeout=10) as c:
            r = c.post(f"http://127.0.0.1:{port}/v1/chat/completions",
                       json={"model": "any", "messages": [{"role": "user", "content": user}]})
        assert json.loads(r.json()["choices"][0]["message"]["content"])["verdict"] == "a"
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()
