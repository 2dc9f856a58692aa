"""aeon manifests in evallab.skills: every assertion type on hand-made outputs, regression states and their severity, the state
file (atomic, never clobbered when malformed), coverage gaps, bootstrap (printed, never saved), the malformed
manifest/state corpus, and the regex guard against catastrophic backtracking."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from cli_helper import run_cli

from evallab import _fileio as F
from evallab import skills as M
from evallab.paths import REPO_ROOT
from evallab.skills import _manifests
from evallab.skills._manifests import bootstrap, evaluate, history, lint_manifest, parse_manifest

TD = REPO_ROOT / "tests" / "data" / "manifests"

GOOD_TOKEN = """# Top movers (24h)

- SOL up 12% https://example.org/sol
- ETH up 4%
- BTC flat
""" + " ".join(["word"] * 20)


@pytest.fixture
def manifest():
    return M.load_manifest(TD / "valid.yaml")


def _res(results):
    return {r.assertion: r.passed for r in results}


def test_every_assertion_type(manifest):
    tm = _res(evaluate("token-movers", manifest["token-movers"], GOOD_TOKEN))
    assert tm == {"min_words": True, "max_words": True, "required_patterns[Top movers]": True,
                  "required_patterns[24h]": True, "forbidden_patterns[I cannot]": True,
                  "forbidden_patterns[as an AI]": True, "must_cite_source": True, "min_distinct_items": True}
    bad = "As an AI I cannot list movers.\n- a\n- a\n- A"  # 11 words, no URL, 1 distinct item, refusal
    tb = _res(evaluate("token-movers", manifest["token-movers"], bad))
    assert tb == {"min_words": False, "max_words": True, "required_patterns[Top movers]": False,
                  "required_patterns[24h]": False, "forbidden_patterns[I cannot]": False,
                  "forbidden_patterns[as an AI]": False, "must_cite_source": False, "min_distinct_items": False}
    paper = "# Central claim\nX.\n## Read order\n1. intro\nSee arXiv:2306.05685."
    assert _res(evaluate("paper-pick", manifest["paper-pick"], paper)) == {
        "required_sections[central claim]": True, "required_sections[read order]": True, "must_cite_paper": True,
        "output_pattern": True}
    paper_bad = "Central claim: X (not a header). Read order: none. https://example.org"
    assert _res(evaluate("paper-pick", manifest["paper-pick"], paper_bad)) == {
        "required_sections[central claim]": False, "required_sections[read order]": False,
        "must_cite_paper": False, "output_pattern": False}
    nt = manifest["narrative-tracker"]
    assert _res(evaluate("narrative-tracker", nt, "Go long ETH; thesis: L2 fees. confidence 70%")) == {
        "custom:must_have_position_call": True, "custom:must_name_thesis": True, "numeric_checks[0]": True}
    assert _res(evaluate("narrative-tracker", nt, "Markets moved. confidence 140%")) == {
        "custom:must_have_position_call": False, "custom:must_name_thesis": False, "numeric_checks[0]": False}


def test_regression_states_and_severity():
    def seq(results):
        rec, out = None, []
        for r in results:
            s, sev, rec = _manifests.regression_state(rec, r)
            out.append((s, sev))
        return out

    # P P F: NEW_FAIL after a 2-run streak (low); F F F F F after having passed: FAIL, FAIL, CHRONIC (> 3)
    got = seq([True, True, False, False, False, False, False, True])
    assert [s for s, _ in got] == ["PASS", "PASS", "NEW_FAIL", "FAIL", "FAIL", "CHRONIC", "CHRONIC", "NEW_PASS"]
    assert got[2][1] == "low" and got[5][1] == "high"
    assert seq([False, False, False, False, False])[-1][0] == "STABLE_FAIL"  # never passed
    assert seq([True] * 7 + [False])[-1] == ("NEW_FAIL", "medium")
    assert seq([True] * 25 + [False])[-1] == ("NEW_FAIL", "high")


def test_run_eval_state_file_and_coverage(tmp_path, manifest):
    out = tmp_path / "out"
    (out / "token-movers").mkdir(parents=True)
    (out / "token-movers" / "2026-05-11.md").write_text(GOOD_TOKEN)
    (out / "hn-digest.md").write_text("# HN\nstuff")
    state = tmp_path / "evals-state.json"
    found = _manifests.find_outputs(out)
    assert sorted(found) == ["hn-digest", "token-movers"]
    run = _manifests.run_eval(manifest, {k: v[-1] for k, v in found.items()}, state_path=state, installed=list(found))
    assert run.coverage_gaps == ["hn-digest"]
    assert sorted(run.no_output) == ["narrative-tracker", "paper-pick"]
    assert set(run.results["state"]) == {"PASS"}
    doc = json.loads(state.read_text())
    assert doc["skills"]["token-movers"]["assertions"]["min_words"]["pass_streak"] == 1
    # next run regresses on the forbidden pattern: NEW_FAIL with the prior streak, summary names it
    (out / "token-movers" / "2026-05-12.md").write_text(GOOD_TOKEN + "\nAs an AI, I think so.")
    found = _manifests.find_outputs(out)
    run = _manifests.run_eval(manifest, {k: v[-1] for k, v in found.items()}, state_path=state, installed=list(found))
    nf = run.results[run.results["state"] == "NEW_FAIL"]
    assert nf["assertion"].tolist() == ["forbidden_patterns[as an AI]"] and nf["prior_pass_streak"].tolist() == [1]
    assert "token-movers — forbidden_patterns[as an AI]" in run.summary()
    assert "1 skill(s) have no manifest: hn-digest" in run.summary()
    assert not list(tmp_path.glob(".*.tmp"))  # the atomic write leaves no temp file


def test_history_replays_runs():
    manifest = {"s": {"required_patterns": ["ok"]}}
    tl, last = history(manifest, {"s": ["ok", "no", "no", "no", "no", "ok"]})
    assert tl.sort_values("run")["state"].tolist() == ["PASS", "NEW_FAIL", "FAIL", "FAIL", "CHRONIC", "NEW_PASS"]
    assert last.results["state"].tolist() == ["NEW_PASS"]


def test_catastrophic_regex_is_a_finding_not_a_hang(tmp_path):
    m = M.load_manifest(TD / "catastrophic.yaml")
    assert F.nested_quantifier(m["slow-skill"]["output_pattern"])
    assert any("nests quantifiers" in w for w in lint_manifest(m))
    state = tmp_path / "evals-state.json"
    before = {"version": 1, "skills": {"slow-skill": {"assertions": {"output_pattern": {
        "last": True, "pass_streak": 4, "fail_streak": 0, "ever_passed": True, "runs": 4}}}}}
    state.write_text(json.dumps(before))
    run = _manifests.run_eval(m, state_path=state, texts={"slow-skill": "a" * 5000 + "!"})
    r = run.results.set_index("assertion")
    assert r.loc["output_pattern", "passed"] is None and "timed out" in r.loc["output_pattern", "error"]
    assert r.loc["output_pattern", "state"] == "NOT_EVALUATED" and r.loc["min_words", "passed"] is True
    after = json.loads(state.read_text())["skills"]["slow-skill"]["assertions"]
    assert after["output_pattern"] == before["skills"]["slow-skill"]["assertions"]["output_pattern"]
    assert after["min_words"]["runs"] == 1


def test_skill_with_only_unevaluated_assertions_is_not_pass(tmp_path):
    # one assertion, a catastrophic regex on a long non-matching text: it times out -> passed None
    m = {"only-regex": {"output_pattern": "(a+)+$"},
         "mixed": {"min_words": 1, "output_pattern": "(a+)+$"},
         "fine": {"min_words": 1}}
    text = "a" * 5000 + "!"
    run = _manifests.run_eval(m, state_path=tmp_path / "s.json",
                     texts={"only-regex": text, "mixed": text, "fine": "hello world"})
    s = run.skills.set_index("skill")
    # hand count: only-regex 0 failed / 1 not evaluated; mixed 0 failed / 1 not evaluated; fine 0 / 0
    assert s.loc["only-regex", "status"] == "NOT_EVALUATED" and s.loc["only-regex", "not_evaluated"] == 1
    assert s.loc["mixed", "status"] == "NOT_EVALUATED" and s.loc["mixed", "failed"] == 0
    assert s.loc["fine", "status"] == "PASS"
    text_summary = run.summary()
    assert "PASS (1)" in text_summary and "FAIL (0; 0 NEW)" in text_summary
    assert "NOT_EVALUATED (2)" in text_summary
    assert "only-regex — 1 of 1 assertion(s) not evaluated" in text_summary
    assert "mixed — 1 of 2 assertion(s) not evaluated" in text_summary
    # a failure still wins over "not evaluated"
    run = _manifests.run_eval({"x": {"min_words": 50, "output_pattern": "(a+)+$"}}, state_path=None, texts={"x": text})
    assert run.skills["status"].tolist() == ["FAIL"]


MANIFEST_CASES = [
    ("truncated.json", None, None, "not valid JSON"),
    ("bad_syntax.yaml", None, None, "not valid YAML (line 3)"),
    ("wrong_type.yaml", "token-movers", "min_words", "non-negative integer"),
    ("bad_regex.yaml", "paper-pick", "output_pattern", "does not compile"),
    ("unknown_assertion.yaml", "paper-pick", "min_paragraphs", "unknown assertion type"),
    ("undefined_custom.yaml", "paper-pick", "must_have_foo", "no definition"),
    ("min_gt_max.yaml", "paper-pick", "min_words", "min_words 500 > max_words 100"),
    ("patterns_not_list.json", "paper-pick", "forbidden_patterns", "list of non-empty strings"),
    ("not_a_mapping.yaml", None, None, "expected a non-empty mapping"),
]


@pytest.mark.parametrize("name,skill,field,text", MANIFEST_CASES, ids=[c[0] for c in MANIFEST_CASES])
def test_malformed_manifests(name, skill, field, text):
    path = TD / "malformed" / name
    with pytest.raises(M.ManifestError) as ei:
        M.load_manifest(path)
    e = ei.value
    assert e.skill == skill and e.column == field and text in str(e) and str(path) in str(e)


@pytest.mark.parametrize("name,text", [("truncated.evals-state.json", "not valid JSON"),
                                       ("wrong_shape.evals-state.json", "expected"),
                                       ("bad_record.evals-state.json", "malformed")])
def test_malformed_state_is_never_overwritten(tmp_path, manifest, name, text):
    state = tmp_path / "evals-state.json"
    raw = (TD / "states" / name).read_bytes()
    state.write_bytes(raw)
    with pytest.raises(M.ManifestError, match=text):
        _manifests.run_eval(manifest, state_path=state, texts={"token-movers": GOOD_TOKEN})
    assert state.read_bytes() == raw


def test_bootstrap_p25_sections_default_forbidden():
    texts = [("# Summary\n## Details\n" if i != 2 else "# Summary\n") + " ".join(["w"] * n)
             for i, n in enumerate([100, 200, 300, 400, 500])]
    texts = ["I cannot help with that."] + texts  # a refusal is not a successful run
    m = bootstrap(texts)
    wc = [len(t.split()) for t in texts[1:]]
    assert m["min_words"] == math.floor(np.percentile(wc, 25))  # numpy's linear p25 of the 5 successful runs
    assert m["required_sections"] == ["Summary", "Details"]  # Details in 4/5 >= 60%
    assert m["forbidden_patterns"] == _manifests.DEFAULT_FORBIDDEN
    six = texts[1:] + ["# Other\n" + " ".join(["w"] * 1000)]
    assert bootstrap(six)["required_sections"] == ["Summary", "Details"]  # the oldest run dropped: last 5
    with pytest.raises(M.ManifestError, match="no successful output"):
        bootstrap(["", "As an AI, no."])


_cli = run_cli


def test_cli_bootstrap_prints_and_never_saves(tmp_path, capsys):
    d = tmp_path / "out" / "paper-pick"
    d.mkdir(parents=True)
    for i in range(3):
        (d / f"run{i}.md").write_text(f"# Central claim\n{'x ' * (10 * (i + 1))}")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    code, out = _cli(["manifests", "bootstrap", tmp_path / "out", "--skill", "paper-pick"], capsys)
    assert code == 0
    doc = parse_manifest(__import__("yaml").safe_load(out))
    assert doc["paper-pick"]["required_sections"] == ["Central claim"]
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_cli_manifests_eval_and_validate(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "token-movers.md").write_text(GOOD_TOKEN)
    state = tmp_path / "s.json"
    code, text = _cli(["manifests", "eval", TD / "valid.yaml", "--outputs", out, "--state", state], capsys)
    assert code == 0 and "PASS (1)" in text and state.exists()
    code, text = _cli(["validate", TD / "valid.yaml", state], capsys)
    assert code == 0, text
    code, text = _cli(["validate", *sorted((TD / "malformed").iterdir()), *sorted((TD / "states").iterdir()),
                       TD / "catastrophic.yaml"], capsys)
    # files that cannot be read or told apart (bad YAML, truncated JSON) are bad input: exit 2; findings exit 1
    assert code == 2 and text.count("ERROR ") == len(MANIFEST_CASES) + 3 and "nests quantifiers" in text
    assert "Traceback" not in text


def test_header_scanner_trims_closing_hashes_and_keeps_hash_words():
    from evallab.skills._manifests import _headers

    text = "# Intro\n## Methods ##\n### C# notes\n  #### Results   \n#not a header\n    # code, not a header\n"
    assert _headers(text) == ["Intro", "Methods", "C# notes", "Results"]
