"""The job runner, recordings/replay, the CLI and the simulated judge's injected biases (local server only)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from evallab import verdicts as V
from evallab.errors import EvallabError
from evallab.judges import (
    Anchor,
    OpenAICompatibleJudge,
    ReplayMissError,
    build_pairwise,
    build_pointwise,
    make_judge,
    run_jobs,
    to_verdicts,
    usage_summary,
)
from evallab.judges._prompts import request_digest
from evallab.judges._recordings import EXPECTED, KINDS, load_recording
from evallab.judges._replay import ReplayJudge
from evallab.testing import Fault, LocalJudgeServer, SimulatedJudge

RUBRIC = {"rubric": "Wraps the downstream error with %w.", "pass_criteria": ["Uses fmt.Errorf with %w."],
          "fail_criteria": ["Discards the error."]}


def _judge(srv, **kw):
    return OpenAICompatibleJudge(srv.base_url, "sim-judge", **{"max_concurrency": 8, "backoff_initial": 0.01,
                                                              "backoff_max": 0.05, **kw})


def _items_file(path, n):
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"item_id": f"it{i:03d}", **RUBRIC, "answer": f"answer number {i}",
                                 "gold": "pass" if i % 2 else "fail", "subset": "demo"}) + "\n")
    return path


def test_rows_follow_the_tidy_schema_and_metadata(local_judge_server):
    reqs = [build_pairwise("Q", "o1", "o2", order=o, metadata={"item_id": "x", "dataset": "d", "subset": "s",
                                                               "gold": "1", "sample": k, "note": "kept"})
            for o in ("ab", "ba") for k in (0, 1)]
    df = run_jobs(_judge(local_judge_server), reqs, progress=False)
    V.validate(df)
    assert list(df.columns[:len(V.COLUMNS)]) == list(V.COLUMNS)
    assert df["order"].tolist() == ["ab", "ab", "ba", "ba"] and df["sample"].tolist() == [0, 1, 0, 1]
    assert set(df["verdict"]) <= {"1", "2"} and df["note"].eq("kept").all() and df["gold"].eq("1").all()
    assert df["request_digest"].tolist() == [request_digest(r) for r in reqs]
    with pytest.raises(EvallabError, match="same key"):
        run_jobs(_judge(local_judge_server), reqs + reqs[:1], progress=False)


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_resume_skips_done_rows_and_retries_failed_ones(tmp_path, fmt):
    reqs = [build_pointwise(**RUBRIC, answer=f"a{i}", metadata={"item_id": f"00{i}", "note": "x" if i else None})
            for i in range(12)]
    out = tmp_path / f"v.{fmt}"
    with LocalJudgeServer(faults=[Fault("503", times=-1, match="a3")]) as srv:
        first = run_jobs(_judge(srv, max_retries=1), reqs, out=out, progress=False)
        assert first["failed"].sum() == 1
        srv.set_faults([])
        srv.reset()
        again = run_jobs(_judge(srv), reqs, out=out, progress=False)
        assert srv.stats()["requests"] == 1  # only the failed row is asked again
        srv.reset()
        run_jobs(_judge(srv), reqs, out=out, progress=False)
        assert srv.stats()["requests"] == 0  # finished: nothing asked
    stored = {"parquet": pd.read_parquet, "csv": lambda p: pd.read_csv(p, dtype={"item_id": str}),
              "jsonl": lambda p: pd.read_json(p, lines=True, dtype={"item_id": str})}[fmt](out)
    # one row per key in every format: the failed row of a3 was replaced by its retry (jsonl rewritten on close)
    assert len(stored) == 12 and stored["item_id"].is_unique and not stored["failed"].any()
    assert not (tmp_path / f"v.{fmt}.journal.jsonl").exists() and not (tmp_path / f"v.{fmt}.tmp").exists()
    assert sorted(stored["item_id"].unique()) == sorted(f"00{i}" for i in range(12))
    assert again["verdict"].notna().all() and len(again) == 12


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_resume_reasks_and_replaces_rows_whose_request_changed(tmp_path, fmt, caplog):
    """12 items: 0-3 get a new answer text, 4-7 a new seed (same prompt text), 8-11 stay the same."""
    sim = SimulatedJudge(seed=5, pass_rate=0.5)

    def reqs(changed: bool):
        return [build_pointwise(**RUBRIC, answer=f"a{i}" + (" v2" if changed and i < 4 else ""),
                                seed=7 if changed and 4 <= i < 8 else None, metadata={"item_id": f"{i:03d}"})
                for i in range(12)]

    out = tmp_path / f"v.{fmt}"
    with LocalJudgeServer(sim) as srv:
        run_jobs(_judge(srv), reqs(False), out=out, progress=False)
        srv.reset()
        new = reqs(True)
        with caplog.at_level("WARNING", logger="evallab.judges"):
            df = run_jobs(_judge(srv), new, out=out, progress=False)
        assert srv.stats()["requests"] == 8  # 4 new answers + 4 new seeds; the 4 unchanged rows skipped
        assert df.attrs["run"]["reasked"] == 8 and df.attrs["run"]["skipped"] == 4
        assert "8 row(s) asked again because their request changed" in caplog.text
        srv.reset()
        run_jobs(_judge(srv), new, out=out, progress=False)
        assert srv.stats()["requests"] == 0  # now up to date
    stored = (pd.read_json(out, lines=True, dtype={"item_id": str}) if fmt == "jsonl" else pd.read_parquet(out))
    assert len(stored) == 12 and stored["item_id"].is_unique  # the old rows were replaced, not kept beside
    stored = stored.set_index("item_id").loc[[f"{i:03d}" for i in range(12)]]
    # the rows answer the NEW prompts: keryx digest of the new request, verdict the simulated judge gives it
    assert stored["request_digest"].tolist() == [request_digest(r) for r in new]
    assert stored["verdict"].tolist() == [sim.decide(r.system, r.user, 0)[0] for r in new]


def test_changed_k_in_the_inflation_experiment_is_reasked(tmp_path, local_judge_server):
    """The reported case: run_experiment(k=4, record_dir=D) then k=2 into D must give k=2's answers."""
    from evallab.experiments import _inflation as infl

    variants = ("balanced", "pass-only")
    run4 = infl.run_experiment(_judge(local_judge_server), variants=variants, k=4, max_items=2, record_dir=tmp_path)
    local_judge_server.reset()
    run2 = infl.run_experiment(_judge(local_judge_server), variants=variants, k=2, max_items=2, record_dir=tmp_path)
    n = len(run4)
    assert n == 2 * 4 * len(variants)  # 2 scenarios × 4 answers × 2 variants
    assert local_judge_server.stats()["requests"] == n and run2.attrs["run"]["reasked"] == n
    stored = pd.read_json(tmp_path / infl.VERDICTS_FILE, lines=True, dtype={"item_id": str})
    assert len(stored) == n
    assert stored["anchor_sources"].str.split(";").map(len).eq(2).all()  # k=2 anchors, not the k=4 rows


def test_jsonl_crash_mid_run_keeps_every_answered_row_and_ends_unique(tmp_path):
    """A fatal error half way (the run stops at once) and a run killed before close (duplicate keys left in the
    file): no answered row is lost, and the next run leaves one row per key."""
    from evallab.judges import JudgeFatalError

    reqs = [build_pointwise(**RUBRIC, answer=f"a{i}", metadata={"item_id": f"{i:03d}"}) for i in range(12)]
    out = tmp_path / "v.jsonl"
    with LocalJudgeServer(faults=[Fault("503", times=-1, match="a3"), Fault("401", match="a8")]) as srv:
        with pytest.raises(JudgeFatalError):
            run_jobs(_judge(srv, max_retries=0, max_concurrency=1), reqs, out=out, progress=False, max_in_flight=1)
        first = [json.loads(x) for x in out.read_text().splitlines()]
        # requests go in order with one worker: 0..7 answered (3 failed), 8 stopped the run
        assert [r["item_id"] for r in first] == [f"{i:03d}" for i in range(8)]
        assert [r["item_id"] for r in first if r["failed"]] == ["003"]
        # a run killed before close: the retry of 003 was appended after its failed row, nothing rewritten
        retry = dict(first[3], failed=False, verdict="pass", error=None)
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(retry) + "\n" + '{"item_id": "00')  # plus a line cut short by the kill
        srv.set_faults([])
        srv.reset()
        df = run_jobs(_judge(srv), reqs, out=out, progress=False)
        assert srv.stats()["requests"] == 4  # 008..011 only: 003's retry and 0..7 are kept
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert sorted(r["item_id"] for r in rows) == [f"{i:03d}" for i in range(12)]  # one row per key
    assert not any(r["failed"] for r in rows) and len(df) == 12
    assert {r["item_id"]: r["verdict"] for r in rows}["003"] == "pass"
    assert {r["item_id"]: r["verdict"] for r in rows if r["item_id"] < "008"} == \
        {r["item_id"]: r["verdict"] for r in first[:8] if r["item_id"] != "003"} | {"003": "pass"}


def test_recording_skips_failed_rows_and_stops_at_a_missing_sample(tmp_path):
    """Item A: sample 1 fails (503) while samples 0 and 2 are answered; item B: its only sample fails.
    Replaying must miss on A's samples 1 and 2 and on B — never an unparsed reply, never sample 2 as sample 1."""
    def req(ans, j):
        return build_pointwise(**RUBRIC, answer=ans, metadata={"item_id": ans.replace(" ", "-"), "sample": j,
                                                               "scenario_id": ans.replace(" ", "-")})

    reqs = [req("answer A", 1), req("answer A", 0), req("answer A", 2), req("answer B", 0)]
    rec = tmp_path / "r.json"
    faults = [Fault("503", times=-1, match="answer B"), Fault("503", times=1, match="answer A")]
    with LocalJudgeServer(SimulatedJudge(seed=9), faults=faults) as srv:
        live = run_jobs(_judge(srv, max_retries=0, max_concurrency=1), reqs, record=rec, progress=False,
                        max_in_flight=1)
    assert live["failed"].tolist() == [True, False, False, True]
    doc = json.loads(rec.read_text())
    assert [(e["scenarioId"], len(e["samples"])) for e in doc["entries"]] == [("answer-A", 1)]
    assert "HTTP 503" not in rec.read_text() and "gave up" not in rec.read_text()
    rj = ReplayJudge(rec)
    assert run_jobs(rj, [reqs[1]], progress=False)["verdict"].tolist() == [live["verdict"].iloc[1]]
    for r in (reqs[0], reqs[2], reqs[3]):
        with pytest.raises(ReplayMissError):
            run_jobs(rj, [r], progress=False)


def test_sigkill_half_way_then_restart_ends_with_every_row_once(tmp_path):
    n = 120
    items = _items_file(tmp_path / "items.jsonl", n)
    out = tmp_path / "verdicts.parquet"
    journal = tmp_path / "verdicts.parquet.journal.jsonl"
    with LocalJudgeServer(SimulatedJudge(seed=2), latency=0.05) as srv:
        cmd = [sys.executable, "-m", "evallab.cli", "judge", str(items), "--judge", f"sim-judge@{srv.base_url}",
               "--out", str(out), "--no-cache", "--concurrency", "2", "--no-progress"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if journal.exists() and journal.read_bytes().count(b"\n") >= 30:
                break
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert not out.exists()  # killed before the end: only the journal holds the replies
        before = {json.loads(line)["item_id"] for line in journal.read_text().splitlines() if line.endswith("}")}
        assert 30 <= len(before) < n
        srv.reset()
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        asked = srv.stats()["requests"]
    table = pd.read_parquet(out)
    assert len(table) == n and table["item_id"].is_unique
    assert set(table["item_id"]) == {f"it{i:03d}" for i in range(n)}
    assert asked <= n - len(before)  # rows answered before the kill were not asked again
    assert table["verdict"].notna().all() and not journal.exists()


def test_progress_bar_shows_calls_hits_errors_cost(local_judge_server, tmp_path, capsys):
    reqs = [build_pointwise(**RUBRIC, answer=f"a{i}", metadata={"item_id": f"i{i}"}) for i in range(5)]
    run_jobs(_judge(local_judge_server, prices={"sim-judge": [1, 1]}), reqs, progress=True)
    err = capsys.readouterr().err
    for part in ("calls/s=", "hits=0", "errors=0", "cost=$"):
        assert part in err
    run_jobs(_judge(local_judge_server), [], progress=True)  # nothing asked: no cost figure of $0.0000
    run_jobs(_judge(local_judge_server), reqs[:1], progress=True)  # an unpriced model
    err = capsys.readouterr().err
    assert "cost=nothing" in err and "cost=unknown (1 unpriced)" in err and "$0.0000" not in err


def test_record_then_replay_offline(tmp_path):
    kinds = [k for k in KINDS if k != "empty"]
    reqs = [build_pointwise(**RUBRIC, answer=f"{k} answer for s{s}",
                            metadata={"item_id": f"s{s}/{k}", "scenario_id": f"s{s}", "kind": k,
                                      "gold": EXPECTED[k], "sample": j})
            for s in range(3) for k in kinds for j in range(3)]
    rec_path = tmp_path / "go__go-testing.json"
    with LocalJudgeServer(SimulatedJudge(seed=4)) as srv:
        live = run_jobs(_judge(srv, label="deepseek"), reqs, record=rec_path, progress=False)
    rec = load_recording(rec_path)
    doc = json.loads(rec_path.read_text())
    assert set(doc) >= {"judgePromptVersion", "judge", "judgeModel", "recordedAt", "entries"}
    assert doc["judgePromptVersion"] == reqs[0].prompt_version and doc["judge"] == "deepseek"
    assert len(rec.entries) == 3 * len(kinds) and all(len(e.samples) == 3 for e in rec.entries)
    assert {e.kind for e in rec.entries} == set(kinds)  # keryx kinds kept as they are
    e = rec.entry("s1", "known-right")
    assert e.request_digest == request_digest(reqs[[r.metadata["item_id"] for r in reqs].index("s1/known-right")])
    # the keryx reader turns it into the same verdicts
    tv = to_verdicts([rec])
    assert sorted(tv["verdict"].tolist()) == sorted(live["verdict"].tolist())
    # replay: no server at all now
    rj = ReplayJudge(tmp_path)
    replayed = run_jobs(rj, reqs, progress=False)
    assert replayed["verdict"].tolist() == live["verdict"].tolist()
    assert rj.label == "deepseek" and replayed["cached"].all()
    # an unrecorded request is an error naming it — never a live call
    other = build_pointwise(**RUBRIC, answer="changed answer", metadata={"item_id": "s9/echo", "scenario_id": "s9",
                                                                         "kind": "echo"})
    with pytest.raises(ReplayMissError, match="scenario_id='s9'.*kind='echo'"):
        run_jobs(rj, [other], progress=False)
    with pytest.raises(ReplayMissError, match="3 sample"):
        run_jobs(rj, [build_pointwise(**RUBRIC, answer="echo answer for s0",
                                      metadata={"item_id": "s0/echo", "scenario_id": "s0", "kind": "echo",
                                                "sample": 5})], progress=False)


def test_pairwise_recording_with_orders_and_anchor_sets(tmp_path, local_judge_server):
    anchors = [Anchor("Q: 1+1? (a) 2 (b) 3", "1")]
    reqs = [build_pairwise("Q", "o1", "o2", order=o, anchors=anchors if a == "one-shot" else (),
                           metadata={"item_id": "x", "anchor_set": a}) for o in ("ab", "ba")
            for a in ("none", "one-shot")]
    live = run_jobs(_judge(local_judge_server), reqs, record=tmp_path / "r.json", progress=False)
    rec = load_recording(tmp_path / "r.json")
    assert sorted(e.kind for e in rec.entries) == ["item#ab", "item#ba", "item@one-shot#ab", "item@one-shot#ba"]
    assert {e.scenario_id for e in rec.entries} == {"x"}
    replayed = run_jobs(ReplayJudge(tmp_path / "r.json"), reqs, progress=False)
    assert replayed["verdict"].tolist() == live["verdict"].tolist()


def test_make_judge(tmp_path, local_judge_server):
    with pytest.raises(EvallabError, match="no judge configured"):
        make_judge()
    with pytest.raises(EvallabError, match="without judge_model"):
        make_judge("http://127.0.0.1:1/v1")
    j = make_judge(local_judge_server.base_url, "sim-judge", "", label="sim", cache_dir=tmp_path)
    df = run_jobs(j, [build_pointwise(**RUBRIC, answer="a", metadata={"item_id": "a"})], progress=False)
    assert df["judge"].iloc[0] == "sim" and (tmp_path / "judges.sqlite").exists()


def test_run_jobs_inside_a_running_event_loop(local_judge_server):
    reqs = [build_pointwise(**RUBRIC, answer=f"a{i}", metadata={"item_id": f"i{i}"}) for i in range(3)]
    j = _judge(local_judge_server)

    async def notebook_cell():  # Jupyter runs cells inside a loop
        return run_jobs(j, reqs, progress=False)

    assert len(asyncio.run(notebook_cell())) == 3


def test_simulated_judge_biases_are_recovered(tmp_path):
    """Inflation of pass-only anchors and first-slot preference, estimated from replies over HTTP."""
    sim = SimulatedJudge(seed=11, pass_rate=0.4, pass_only_inflation=0.5, position_bias=0.3)
    n = 300
    good, bad = Anchor("good example", "pass"), Anchor("bad example", "fail")
    reqs = []
    for i in range(n):
        for name, anchors in (("balanced", [good, bad]), ("pass-only", [good, good])):
            reqs.append(build_pointwise(**RUBRIC, answer=f"answer {i}", anchors=anchors,
                                        metadata={"item_id": f"p{i}", "anchor_set": name}))
        for o in ("ab", "ba"):
            reqs.append(build_pairwise("Q", f"first {i}", f"second {i}", order=o, metadata={"item_id": f"q{i}"}))
    with LocalJudgeServer(sim) as srv:
        df = run_jobs(_judge(srv, max_concurrency=16), reqs, progress=False)
    point = df[df["item_id"].str.startswith("p")]
    rate = point.groupby("anchor_set")["verdict"].apply(lambda v: (v == "pass").mean())
    inflation = rate["pass-only"] / rate["balanced"] - 1
    assert rate["balanced"] == pytest.approx(0.4, abs=0.07)  # binomial sd at n=300: 0.028
    assert inflation == pytest.approx(0.5, abs=0.25)
    pair = df[df["item_id"].str.startswith("q")]
    shown_first = ((pair["order"] == "ab") & (pair["verdict"] == "1")) | ((pair["order"] == "ba") &
                                                                         (pair["verdict"] == "2"))
    assert shown_first.mean() == pytest.approx(0.3 + 0.7 / 2, abs=0.05)  # sd at n=600: 0.019


def test_simulated_judge_is_deterministic_and_follows_truth():
    truth = lambda a: "pass" if "right" in a else "fail"  # noqa: E731
    sim = SimulatedJudge(seed=3, accuracy=1.0, truth=truth, fail_last_priming=1.0)
    r = build_pointwise(**RUBRIC, answer="the right answer")
    assert sim.decide(r.system, r.user) == sim.decide(r.system, r.user)
    assert sim.decide(r.system, r.user)[0] == "pass"
    wrong = build_pointwise(**RUBRIC, answer="the bad answer")
    assert sim.decide(wrong.system, wrong.user)[0] == "fail"
    primed = build_pointwise(**RUBRIC, answer="the right answer",
                             anchors=[Anchor("g", "pass"), Anchor("b", "fail")])
    assert sim.p_pass(primed.user) == 0.0  # FAIL-last grouping subtracts fail_last_priming
    p = build_pairwise("Q", "the right one", "the bad one", order="ba")
    assert sim.decide(p.system, p.user)[0] == "b"  # output 1 is shown second


def _main(cli) -> int:
    try:
        cli.main()
    except SystemExit as exc:
        return exc.code or 0
    return 0


def test_cli_runs_resumes_and_reports(tmp_path, local_judge_server, monkeypatch, capsys):
    from evallab import cli

    items = _items_file(tmp_path / "items.jsonl", 6)
    out = tmp_path / "v.jsonl"
    args = ["evallab", "judge", str(items), "--judge", f"sim-judge@{local_judge_server.base_url}", "--out",
            str(out), "--cache", str(tmp_path / "c.sqlite"), "--samples", "2", "--no-progress",
            "--record", str(tmp_path / "rec.json")]
    monkeypatch.setattr(sys, "argv", args)
    assert _main(cli) == 0
    text = capsys.readouterr().out
    assert "12 rows" in text and "12 HTTP calls" in text
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 12 and {r["sample"] for r in rows} == {0, 1}
    assert _main(cli) == 0  # rerun: nothing asked
    assert "12 rows already there, 0 asked again (request changed), 0 HTTP calls" in capsys.readouterr().out
    assert len(out.read_text().splitlines()) == 12
    summary = usage_summary(pd.DataFrame(rows))
    assert int(summary["replies"].iloc[0]) == 12


def test_cli_stops_with_one_line_on_401(tmp_path, monkeypatch, capsys):
    from evallab import cli

    items = _items_file(tmp_path / "items.jsonl", 3)
    monkeypatch.setenv("EVALLAB_CLI_KEY", "nope")
    with LocalJudgeServer(api_key="yes") as srv:
        monkeypatch.setattr(sys, "argv", ["evallab", "judge", str(items), "--judge", f"m@{srv.base_url}",
                                          "--api-key-env", "EVALLAB_CLI_KEY", "--out", str(tmp_path / "v.csv"),
                                          "--no-cache", "--no-progress", "--concurrency", "1"])
        with pytest.raises(SystemExit) as exc:
            cli.main()
        assert srv.stats()["requests"] == 1
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: HTTP 401") and "EVALLAB_CLI_KEY" in err and "nope" not in err


def test_cli_bad_items_name_file_row_and_column(tmp_path, monkeypatch, capsys):
    from evallab import cli

    bad = tmp_path / "items.jsonl"
    bad.write_text(json.dumps({"item_id": "a", **RUBRIC, "answer": ""}) + "\n")
    monkeypatch.setattr(sys, "argv", ["evallab", "judge", str(bad), "--judge", "m@http://127.0.0.1:9/v1",
                                      "--out", str(tmp_path / "v.jsonl"), "--no-cache"])
    with pytest.raises(SystemExit):
        cli.main()
    assert f"{bad}, row 1, column 'answer': empty answer" in capsys.readouterr().err


@pytest.mark.parametrize("gold, line", [({"a": "pass", "b": "3"}, 2), ({"a": "1", "b": "fail"}, 1)])
def test_cli_a_bad_gold_label_stops_before_any_call(tmp_path, monkeypatch, capsys, gold, line):
    """A gold label outside the kind's verdicts (here pointwise: "3", or the pairwise "1") is named with file, row
    and column before anything is sent, so no reply is paid for and no journal is left that a rerun would trip on."""
    from evallab import cli

    bad = tmp_path / "items.jsonl"
    bad.write_text("".join(json.dumps({"item_id": k, **RUBRIC, "answer": "x", "gold": v}) + "\n"
                           for k, v in gold.items()))
    with LocalJudgeServer() as srv:
        monkeypatch.setattr(sys, "argv", ["evallab", "judge", str(bad), "--judge", f"sim-judge@{srv.base_url}",
                                          "--out", str(tmp_path / "v.jsonl"), "--no-cache"])
        with pytest.raises(SystemExit) as exc:
            cli.main()
        assert srv.stats()["requests"] == 0
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"{bad}, row {line}, column 'gold'" in err and "for a pointwise item" in err
    assert not (tmp_path / "v.jsonl").exists()


def test_cli_pairwise_csv_items_both_orders(tmp_path, monkeypatch, capsys):
    """tests/data/judges/items_pairwise.csv: 3 pairs × 2 orders; the truth-aware simulated judge (accuracy 1,
    no position bias) picks the gold output in both orders."""
    from evallab import cli
    from evallab.paths import REPO_ROOT

    items = REPO_ROOT / "tests" / "data" / "judges" / "items_pairwise.csv"
    good = {"joyful", "thank you"}
    sim = SimulatedJudge(seed=0, accuracy=1.0, truth=lambda text: "pass" if text in good else "fail")
    out = tmp_path / "v.csv"
    with LocalJudgeServer(sim) as srv:
        monkeypatch.setattr(sys, "argv", ["evallab", "judge", str(items), "--judge", f"sim@{srv.base_url}",
                                          "--out", str(out), "--no-cache", "--no-progress"])
        assert _main(cli) == 0
        assert srv.stats()["requests"] == 6
    df = pd.read_csv(out, dtype={"verdict": "string", "gold": "string", "order": "string"})
    assert len(df) == 6 and sorted(df["order"].unique()) == ["ab", "ba"]
    gold = df[df["item_id"] != "pair-3"]
    assert (gold["verdict"] == gold["gold"]).all()  # mapped back to the ORIGINAL output index in both orders
    assert df.loc[df["item_id"] == "pair-2", "anchor_set"].eq("none").all()


def test_recording_extension_is_only_for_evallab_written_files():
    from evallab.judges import RecordingError, load_recordings
    from evallab.judges._recordings import parse_recording

    entry = {"scenarioId": "x", "kind": "item#ab", "requestDigest": "0" * 64,
             "samples": [{"verdict": "1", "reason": "r"}]}
    doc = {"judgePromptVersion": "v", "judge": "j", "judgeModel": "m", "recordedAt": "t", "entries": [entry]}
    with pytest.raises(RecordingError, match="unknown kind 'item#ab'"):
        parse_recording(doc)
    rec = parse_recording({**doc, "evallab": {"promptKind": "pairwise"}})
    assert rec.entries[0].samples[0].verdict == "1"
    # keryx's own files are read exactly as before: 17 recordings, 682 samples (data/keryx/SOURCE.md)
    from evallab.paths import data_dir

    recs = load_recordings(data_dir("keryx") / "judge-recordings")
    assert len(recs) == 17 and sum(len(e.samples) for r in recs.values() for e in r.entries) == 682


def test_a_bad_gold_in_request_metadata_stops_run_jobs_before_any_call(tmp_path):
    class NeverCalled:
        label = model = "m"

        async def judge(self, request):
            raise AssertionError("a request was sent")

    ok = build_pointwise(rubric="R", pass_criteria=["c"], answer="a", metadata={"item_id": "ok", "gold": "PASS"})
    bad = build_pointwise(rubric="R", pass_criteria=["c"], answer="a", metadata={"item_id": "b", "gold": "3"})
    with pytest.raises(EvallabError, match=r"request 2 \(item_id 'b'\): metadata gold '3'"):
        run_jobs(NeverCalled(), [ok, bad], out=tmp_path / "v.jsonl", progress=False)
    assert not (tmp_path / "v.jsonl").exists()


def test_cli_judge_keeps_its_cache_in_evallab_cache(tmp_path, monkeypatch, capsys):
    """$EVALLAB_CACHE is where the CLI's reply cache goes (as make_judge's), so a rerun there is all cache hits."""
    from evallab import cli

    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"item_id": "a", **RUBRIC, "answer": "x"}) + "\n")
    monkeypatch.setenv("EVALLAB_CACHE", str(tmp_path / "cachedir"))
    with LocalJudgeServer() as srv:
        for out in ("v1.jsonl", "v2.jsonl"):
            monkeypatch.setattr(sys, "argv", ["evallab", "judge", str(items), "--judge", f"sim-judge@{srv.base_url}",
                                              "--out", str(tmp_path / out), "--no-progress"])
            with pytest.raises(SystemExit) as exc:
                cli.main()
            assert exc.value.code in (0, None)
        assert srv.stats()["requests"] == 1
    assert (tmp_path / "cachedir" / "judges.sqlite").exists()
    assert "1 cache hits" in capsys.readouterr().out


def test_an_unknown_output_format_is_refused_before_any_file_is_made(tmp_path):
    class NeverCalled:
        label = model = "m"

        async def judge(self, request):
            raise AssertionError("a request was sent")

    reqs = [build_pointwise(**RUBRIC, answer="a", metadata={"item_id": "i"})]
    with pytest.raises(EvallabError, match=r"o\.txt: unknown output format '\.txt'; expected \.parquet, \.jsonl"):
        run_jobs(NeverCalled(), reqs, out=tmp_path / "o.txt", progress=False)
    assert list(tmp_path.iterdir()) == []
