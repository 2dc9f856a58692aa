"""Every loader refuses bad input clearly (issue 11, part 4).

- A corpus of bad inputs in ``tests/data/bad/`` (one file — or, for folder loaders, one folder with one defective
  file — each, named for the defect), each checked against the EXACT one-line message (``{path}`` = the input).
- A UTF-8 byte-order mark gives the same rows as the file without it, in every text format.
- A FIFO, a directory and a device where a file is expected (and a file where a folder is expected) are refused
  within 1 s, before anything is opened.
- A catastrophic-backtracking regex is refused at load (nested quantifiers) or bounded in time when graded.
- The CLI prints one ``error:`` line and exits 2, never a traceback.
"""

from __future__ import annotations

import os
import shutil
import stat
import threading
import time
from pathlib import Path

import pytest
from cli_helper import run_cli

from evallab import _fileio as F
from evallab import skills
from evallab.datasets import load_alpaca_eval, load_gold_set, load_llmbar, load_verdicts
from evallab.datasets._alpaca_eval import load_alpaca_eval_annotators
from evallab.datasets._generic import read_table
from evallab.errors import DataError, EvallabError
from evallab.judges import load_recordings
from evallab.judges._recordings import load_recording
from evallab.paths import data_dir
from evallab.skills import _catalogs, _manifests, _rubrics
from evallab.skills._grading import grade_answer
from evallab.skills._manifests import evaluate, load_state
from evallab.skills._rubrics import parse_preset, parse_rubric, validate_library, validate_rubric
from evallab.skills._scenario_schema import parse_evals

BAD = Path(__file__).parents[1] / "data" / "bad"
TD = Path(__file__).parents[1] / "data"

LOADERS = {
    "load_verdicts": load_verdicts,
    "load_gold_set": load_gold_set,
    "load_catalog": skills.load_catalog,
    "load_recording": load_recording,
    "load_evals": skills.load_evals,
    "load_eval_report": skills.load_eval_report,
    "parse_rubric": parse_rubric,
    "parse_preset": parse_preset,
    "load_library": lambda p: skills.load_library(p, strict=False),
    "load_manifest": skills.load_manifest,
    "load_llmbar": load_llmbar,
    "load_alpaca_eval": load_alpaca_eval,
    "load_alpaca_eval_annotators": load_alpaca_eval_annotators,
    "load_tree": skills.load_tree,
}

# (loader, input under tests/data/bad, exact message with {path} = the input path)
CASES = [
    ("load_tree", "evals_tree_duplicate_skill", "{path}/b/review/evals.json: skill 'review' is also defined by "
                                                "{path}/a/review/evals.json; expected one evals.json per <pack>__<skill>"),
    ("load_alpaca_eval_annotators", "alpaca_config_duplicate_annotator",
     "{path}/evaluator_configs/b/configs.yaml, column 'ann': annotator 'ann' is also configured in "
     "{path}/evaluator_configs/a/configs.yaml; expected one configuration per annotator"),
    ("load_alpaca_eval_annotators", "alpaca_config_repeated_key", "{path}/evaluator_configs/ann/configs.yaml: not valid YAML (line 4): duplicated key 'prompt_template' (first on line 2); expected unique keys (the later one would silently replace the first)"),
    ("load_alpaca_eval", "alpaca_preference_out_of_range", "{path}/multi_annotator_preferences.csv, row 2, column 'preference': preference 3.0 outside [1, 2] (file line 3)"),
    ("load_catalog", "catalog_duplicate_name.jsonl", "{path}, row 3, column 'name': duplicate skill name 'review' (first on line 1); expected each name once, else one skill shadows the other"),
    ("load_catalog", "catalog_line_is_string.jsonl", '{path}, row 2: line 2 is a JSON str; expected one skill per line, a JSON object'),
    ("load_catalog", "catalog_repeated_key.jsonl", "{path}, row 1, column 'name': line 1 repeats the key 'name'; expected each key once per object"),
    ("load_eval_report", "eval_report_missing_skillid.json", "{path}, row 2, column 'skillId': report 2: missing string 'skillId'"),
    ("load_eval_report", "eval_report_trials_not_list.json", "{path}, row 1, column 'trialRecords': report 1: scenarios[0] (s1): 'trialRecords' holds a str; expected a list of trial objects"),
    ("load_evals", "evals_duplicate_id.json", "{path}, scenario 's1', field 'id': duplicated scenario id: scenarios[0] and scenarios[2] both use it; expected unique ids"),
    ("load_evals", "evals_nested_quantifier.json", "{path}, scenario 's2', field 'expected_behavior[0].value': regex '^(\\\\w+\\\\s?)*$' nests quantifiers (catastrophic backtracking risk); expected a pattern without a quantified group that itself holds a quantifier"),
    ("load_evals", "evals_not_utf8.json", '{path}: line 13 is not valid UTF-8 (byte 0xef at column 19); expected UTF-8 text'),
    ("load_evals", "evals_regex_does_not_compile.json", "{path}, scenario 's1', field 'expected_behavior[0].value': regex '(unclosed' does not compile: missing ) at position 9"),
    ("load_evals", "evals_repeated_key.json", "{path}: duplicated key 'scenarios' in a JSON object; expected unique keys (the later one would silently replace the first)"),
    ("load_evals", "evals_top_level_list.json", "{path}: top level is list; expected an object with 'scenarios'"),
    ("load_gold_set", "gold_duplicate_item_id.jsonl", "{path}, row 3, column 'item_id': duplicated item_id 'g1' (first on line 1); expected unique ids"),
    ("load_gold_set", "gold_messages_not_list.jsonl", '{path}, row 1, column \'messages\': messages must be a non-empty list of {"role": str, "content": str}'),
    ("load_gold_set", "gold_no_items.jsonl", '{path}: the file holds no item; expected one JSON object per line'),
    ("load_gold_set", "gold_pointwise_missing_answer.jsonl", "{path}, row 1, column 'answer': missing 'answer'; a pointwise item needs ['answer', 'rubric_text', 'pass_criteria'] (or 'messages')"),
    ("load_gold_set", "gold_unknown_gold.jsonl", "{path}, row 1, column 'gold': unknown gold 'PASS!'; expected one of ['1', '2', 'tie', 'pass', 'warn', 'fail']"),
    ("load_llmbar", "llmbar_missing_label_column", "{path}/verdicts.csv, column 'label': missing column(s) ['label']; expected ['subset', 'idx', 'judge', 'strategy', 'label', 'winner_order_12', 'winner_order_21', 'score_1', 'score_2']"),
    ("load_llmbar", "llmbar_unknown_winner", "{path}/verdicts.csv, row 2, column 'winner_order_12': unknown winner_order_12 '3'; expected one of ['1', '2', 'tie'] or empty (unparsed) (file line 3)"),
    ("load_manifest", "manifest_duplicate_skill.yaml", "{path}: not valid YAML (line 5): duplicated key 'token-movers' (first on line 1); expected unique keys (the later one would silently replace the first)"),
    ("load_manifest", "manifest_not_utf8.yaml", '{path}: line 2 is not valid UTF-8 (byte 0xe9 at column 27); expected UTF-8 text'),
    ("load_manifest", "manifest_regex_does_not_compile.yaml", "{path}, skill 'token-movers', field 'output_pattern': regex '[unclosed' does not compile: unterminated character set at position 9"),
    ("load_manifest", "manifest_repeated_key.json", "{path}: duplicated key 'min_words' in a JSON object; expected unique keys (the later one would silently replace the first)"),
    ("load_manifest", "manifest_tab_indent.yaml", "{path}: not valid YAML (line 2): found character '\\t' that cannot start any token; expected an assertion manifest (mapping skill -> assertions)"),
    ("parse_preset", "preset_not_utf8.md", '{path}: line 7 is not valid UTF-8 (byte 0xff at column 1); expected UTF-8 text'),
    ("load_recording", "recording_duplicate_entry.json", "{path}, row 3, column 'kind': entry 3 (s1/echo): duplicated (scenarioId, kind), first recorded as entry 1; expected one entry per scenario and kind"),
    ("load_recording", "recording_not_utf8.json", '{path}: line 14 is not valid UTF-8 (byte 0xe9 at column 25); expected UTF-8 text'),
    ("load_recording", "recording_repeated_key.json", "{path}: duplicated key 'entries' in a JSON object; expected unique keys (the later one would silently replace the first)"),
    ("load_recording", "recording_unknown_kind.json", "{path}, row 1, column 'kind': entry 1 (s1/echoes): unknown kind 'echoes'; expected one of ['empty', 'echo', 'vague', 'known-wrong', 'subtle-wrong', 'injection', 'stuffed', 'known-right']"),
    ("load_recording", "recording_unknown_verdict.json", "{path}, row 2, column 'verdict': entry 2 (s1/vague) sample 2: unknown verdict 'PASS!'; expected one of ['pass', 'fail'], or null with an 'error' for an unparsed reply"),
    ("load_recording", "recording_verdict_not_string.json", "{path}, row 1, column 'verdict': entry 1 (s1/echo) sample 2: 'verdict' is int; expected a string"),
    ("load_library", "rubric_library_duplicate_name", "{path}/functionality.md, row 2, column 'name': duplicated rubric name 'functionality': also used by {path}/functionality-v2.md; expected one rubric per name"),
    ("parse_rubric", "rubric_not_utf8.md", '{path}: line 4 is not valid UTF-8 (byte 0xe9 at column 6); expected UTF-8 text'),
    ("load_verdicts", "verdicts_duplicate_reply.csv", "{path}, row 3, column 'item_id': duplicated key {'dataset': '', 'item_id': 'q1', 'judge': 'gpt', 'strategy': '', 'anchor_set': 'none', 'order': '', 'sample': 0} (first at row 1): more than one reply for the same (dataset, item_id, judge, strategy, anchor_set, order, sample); expected one row per reply (file line 4)"),
    ("load_verdicts", "verdicts_empty.csv", '{path}: the file is empty; expected a header line and at least one row'),
    ("load_verdicts", "verdicts_line_is_array.jsonl", '{path}, row 2: line 2 is a JSON list; expected one JSON object per line'),
    ("load_verdicts", "verdicts_missing_judge_column.csv", "{path}, column 'judge': missing required column(s) ['judge']; a verdict table needs ['item_id', 'judge', 'verdict'] (optional: ['dataset', 'subset', 'model', 'strategy', 'anchor_set', 'order', 'sample', 'gold', 'score', 'error', 'latency_s', 'input_tokens', 'output_tokens', 'cost_usd'])"),
    ("load_verdicts", "verdicts_not_utf8.csv", '{path}: is not UTF-8 text (byte 0xe9 at byte offset 37: line 3, column 7); save it as UTF-8'),
    ("load_verdicts", "verdicts_ragged_row.csv", '{path}: not a well-formed CSV table: line 3 has 5 fields, the header 3; expected a header row and the same number of fields on every line'),
    ("load_verdicts", "verdicts_repeated_key.jsonl", "{path}, row 1, column 'verdict': line 1 repeats the key 'verdict'; expected each key once per object"),
    ("load_verdicts", "verdicts_sample_not_integer.csv", "{path}, row 2, column 'sample': expected Int64 values (Unable to parse string 'two' at position 1); first bad value 'two' (file line 3)"),
    ("load_verdicts", "verdicts_truncated_line.jsonl", '{path}, row 2: line 2 is not valid JSON (Invalid control character at column 40); expected one JSON object per line'),
    ("load_verdicts", "verdicts_unknown_extension.txt", "{path}: unknown file type '.txt'; expected .csv, .tsv, .jsonl, .ndjson or .parquet"),
    ("load_verdicts", "verdicts_unknown_order.csv", "{path}, row 2, column 'order': unknown order 'xy'; expected 'ab', 'ba' or '' (file line 3)"),
    ("load_verdicts", "verdicts_unknown_verdict.csv", "{path}, row 2, column 'verdict': unknown verdict 'PASS!'; expected one of ['1', '2', 'tie', 'pass', 'warn', 'fail'] or empty (NA) (file line 3)"),
]


def test_corpus_is_complete():
    """At least 30 bad inputs, every one of them in the table (and nothing in the table missing)."""
    assert len(CASES) >= 30
    assert sorted(c[1] for c in CASES) == sorted(p.name for p in BAD.iterdir())


@pytest.mark.parametrize("loader,name,expected", CASES, ids=[c[1] for c in CASES])
def test_bad_input_exact_message(loader, name, expected):
    path = BAD / name
    with pytest.raises(EvallabError) as ei:
        LOADERS[loader](path)
    assert isinstance(ei.value, DataError)
    msg = str(ei.value)
    assert "\n" not in msg
    assert msg == expected.replace("{path}", str(path))


# ----------------------------------------------------------------------------------------------- byte-order mark
def _with_bom(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(b"\xef\xbb\xbf" + src.read_bytes())
    return dst


def _copy(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    return dst


def _frame_eq(a, b):
    import pandas as pd

    pd.testing.assert_frame_equal(a, b)
    return True


BOM_CASES = {
    "csv": ("verdicts.csv", "item_id,judge,verdict,order\nq1,gpt,1,ab\nq1,gpt,2,ba\n",
            load_verdicts, _frame_eq),
    "tsv": ("verdicts.tsv", "item_id\tjudge\tverdict\nq1\tgpt\t1\nq2\tgpt\ttie\n", load_verdicts, _frame_eq),
    "jsonl": ("verdicts.jsonl", '{"item_id": "q1", "judge": "gpt", "verdict": "1"}\n'
                                '{"item_id": "q2", "judge": "gpt", "verdict": "2"}\n', load_verdicts, _frame_eq),
}


@pytest.mark.parametrize("fmt", list(BOM_CASES))
def test_bom_verdict_tables_give_the_same_rows(tmp_path, fmt):
    name, text, load, same = BOM_CASES[fmt]
    plain = tmp_path / "plain" / name
    plain.parent.mkdir()
    plain.write_text(text, encoding="utf-8")
    bom = _with_bom(plain, tmp_path / "bom" / name)
    assert same(load(plain), load(bom))
    assert len(load(bom)) == 2
    assert list(read_table(bom).columns) == list(read_table(plain).columns)


FILE_BOM_CASES = [
    ("gold_set", TD / "drift" / "gold_set.jsonl", load_gold_set, lambda a, b: _frame_eq(a, b)),
    ("catalog", data_dir("catalogs") / "keryx_bundled_core.jsonl", skills.load_catalog,
     lambda a, b: a.skills == b.skills),
    ("recording", TD / "scenarios" / "recordings" / "good.json", load_recording,
     lambda a, b: a.entries == b.entries and a.judge == b.judge),
    ("evals", TD / "scenarios" / "valid" / "evals.json", skills.load_evals,
     lambda a, b: a.scenarios == b.scenarios and a.triggers == b.triggers),
    ("eval_report", TD / "scenarios" / "eval_reports" / "tampered.eval.json", skills.load_eval_report,
     lambda a, b: a == b),
    ("manifest_yaml", TD / "manifests" / "valid.yaml", skills.load_manifest, lambda a, b: a == b),
    ("rubric_md", TD / "rubrics" / "weight-too-big.md", parse_rubric,
     lambda a, b: (a.meta, a.sections, a.anchors, a.lines) == (b.meta, b.sections, b.anchors, b.lines)),
    ("preset_md", TD / "rubrics" / "composition-presets" / "lean-functionality.md", parse_preset,
     lambda a, b: (a.meta, a.rubrics) == (b.meta, b.rubrics)),
]


@pytest.mark.parametrize("label,src,load,same", FILE_BOM_CASES, ids=[c[0] for c in FILE_BOM_CASES])
def test_bom_text_files_give_the_same_content(tmp_path, label, src, load, same):
    plain = _copy(src, tmp_path / "plain" / "same-skill" / src.name)
    bom = _with_bom(src, tmp_path / "bom" / "same-skill" / src.name)
    assert same(load(plain), load(bom))


def test_bom_manifest_json_and_rubric_findings(tmp_path):
    plain = tmp_path / "plain" / "m.json"
    plain.parent.mkdir()
    plain.write_text('{"token-movers": {"min_words": 20}}', encoding="utf-8")
    assert skills.load_manifest(_with_bom(plain, tmp_path / "bom" / "m.json")) == skills.load_manifest(plain)
    src = TD / "rubrics" / "weight-too-big.md"
    plain_f = [(f.line, f.code) for f in validate_rubric(_copy(src, tmp_path / "p2" / src.name))]
    bom_f = [(f.line, f.code) for f in validate_rubric(_with_bom(src, tmp_path / "b2" / src.name))]
    assert plain_f == bom_f


def test_bom_llmbar_and_alpaca_folders(tmp_path):
    llm = tmp_path / "llmbar"
    llm.mkdir()
    _with_bom(data_dir("llmbar") / "verdicts.csv", llm / "verdicts.csv")
    a = load_llmbar(llm, subsets=["LLMBar/Natural"]).verdicts
    b = load_llmbar(subsets=["LLMBar/Natural"]).verdicts
    assert list(a.columns) == list(b.columns) and len(a) == len(b)
    assert (a["verdict"].fillna("") == b["verdict"].fillna("")).all()
    cfg = tmp_path / "alpaca" / "evaluator_configs" / "alpaca_eval_gpt4"
    _with_bom(data_dir("alpaca_eval") / "evaluator_configs" / "alpaca_eval_gpt4" / "configs.yaml",
              cfg / "configs.yaml")
    got = load_alpaca_eval_annotators(tmp_path / "alpaca")
    want = load_alpaca_eval_annotators()
    assert got.to_dict("records") == want[want["annotator"].isin(got["annotator"])].to_dict("records")


# --------------------------------------------------------------------------------------- not a regular file
FILE_LOADERS = [
    ("x.csv", load_verdicts), ("x.jsonl", load_verdicts), ("x.parquet", load_verdicts), ("x.tsv", read_table),
    ("gold.jsonl", load_gold_set), ("cat.jsonl", skills.load_catalog), ("rec.json", load_recording),
    ("evals.json", skills.load_evals), ("eval.json", skills.load_eval_report), ("r.md", parse_rubric),
    ("p.md", parse_preset), ("r2.md", validate_rubric), ("m.yaml", skills.load_manifest), ("m.json", skills.load_manifest),
    ("state.json", load_state),
]


def _within(seconds: float, fn, *args):
    """Run ``fn(*args)`` in a daemon thread; fail unless it returns or raises within ``seconds``."""
    box = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    start = time.monotonic()
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"{fn} still running after {seconds} s (blocked on open?)"
    return box, time.monotonic() - start


@pytest.mark.parametrize("name,load", FILE_LOADERS, ids=[f"{n}-{getattr(f, '__name__', f)}" for n, f in FILE_LOADERS])
@pytest.mark.parametrize("what", ["fifo", "directory"])
def test_fifo_and_directory_refused_within_one_second(tmp_path, name, load, what):
    p = tmp_path / name
    if what == "fifo":
        os.mkfifo(p)
    else:
        p.mkdir()
    box, secs = _within(1.0, load, p)
    assert secs < 1.0
    err = box.get("error")
    assert isinstance(err, DataError), box
    kind = "a FIFO (named pipe)" if what == "fifo" else "a directory"
    assert str(err).startswith(f"{p}: is {kind}, not a regular file; expected ")
    assert "\n" not in str(err)


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="no /dev/null")
def test_device_refused():
    with pytest.raises(DataError, match=r"^/dev/null: is a character device, not a regular file; expected "):
        load_verdicts("/dev/null")


def test_missing_files_name_the_path(tmp_path):
    p = tmp_path / "nope.csv"
    with pytest.raises(DataError) as ei:
        load_verdicts(p)
    assert str(ei.value) == f"{p}: no such file; expected a table (.csv, .tsv, .jsonl, .ndjson or .parquet)"


FOLDER_LOADERS = [
    ("load_tree", skills.load_tree), ("load_recordings", load_recordings),
    ("library_files", _rubrics.library_files), ("load_library", skills.load_library), ("load_llmbar", load_llmbar),
    ("load_alpaca_eval", load_alpaca_eval),
]


@pytest.mark.parametrize("label,load", FOLDER_LOADERS, ids=[c[0] for c in FOLDER_LOADERS])
@pytest.mark.parametrize("what", ["file", "fifo", "missing"])
def test_folder_loaders_check_for_a_folder(tmp_path, label, load, what):
    p = tmp_path / "folder"
    if what == "file":
        p.write_text("not a folder\n")
    elif what == "fifo":
        os.mkfifo(p)
    box, secs = _within(1.0, load, p)
    err = box.get("error")
    assert isinstance(err, DataError), box
    msg = str(err)
    assert msg.startswith(f"{p}: ") and "\n" not in msg
    if what == "missing":
        assert "no such" in msg or "not found" in msg
    else:
        kind = "a regular file" if what == "file" else "a FIFO (named pipe)"
        assert f"is {kind}, not a folder; expected " in msg


def test_a_fifo_inside_a_folder_is_refused_not_skipped(tmp_path):
    """A ``*.json`` FIFO among recordings, a FIFO ``evals.json`` in a tree: refused (named), never read or dropped."""
    (tmp_path / "rec").mkdir()
    shutil.copyfile(TD / "scenarios" / "recordings" / "good.json", tmp_path / "rec" / "a.json")
    os.mkfifo(tmp_path / "rec" / "b.json")
    box, _ = _within(1.0, load_recordings, tmp_path / "rec")
    assert str(box["error"]).startswith(f"{tmp_path / 'rec' / 'b.json'}: is a FIFO (named pipe)")
    tree = tmp_path / "tree" / "stacks" / "p" / "skills" / "s"
    tree.mkdir(parents=True)
    os.mkfifo(tree / "evals.json")
    box, _ = _within(1.0, skills.load_tree, tmp_path / "tree")
    assert str(box["error"]).startswith(f"{tree / 'evals.json'}: is a FIFO (named pipe)")
    lib = tmp_path / "lib"
    lib.mkdir()
    os.mkfifo(lib / "fifo.md")
    box, _ = _within(1.0, validate_library, lib)
    assert str(box["error"]).startswith(f"{lib / 'fifo.md'}: is a FIFO (named pipe)")


def test_skill_md_fifo_beside_evals_is_refused(tmp_path):
    shutil.copyfile(TD / "scenarios" / "valid" / "evals.json", tmp_path / "evals.json")
    os.mkfifo(tmp_path / "SKILL.md")
    box, _ = _within(1.0, skills.load_evals, tmp_path / "evals.json")
    assert str(box["error"]).startswith(f"{tmp_path / 'SKILL.md'}: is a FIFO (named pipe), not a regular file")


def test_unreadable_file_is_one_line(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads anything")
    p = tmp_path / "v.csv"
    p.write_text("item_id,judge,verdict\nq1,g,1\n")
    p.chmod(0)
    try:
        with pytest.raises(DataError) as ei:
            load_verdicts(p)
        assert str(ei.value) == f"{p}: cannot read (Permission denied)"
    finally:
        p.chmod(stat.S_IRUSR | stat.S_IWUSR)


# ---------------------------------------------------------------------------------------------- user regexes
ADVERSARIAL = "a" * 5000 + "!"


def test_nested_quantifier_refused_at_load_and_in_memory():
    doc = {"scenarios": [{"id": "s1", "prompt": "p", "expected_behavior": [{"grader": "regex",
                                                                          "value": "(a+)+$"}]}]}
    with pytest.raises(skills.EvalSpecError) as ei:
        parse_evals(doc, "mem.json")
    assert str(ei.value) == ("mem.json, scenario 's1', field 'expected_behavior[0].value': regex '(a+)+$' nests "
                             "quantifiers (catastrophic backtracking risk); expected a pattern without a quantified "
                             "group that itself holds a quantifier")


def test_adversarial_regex_grading_is_time_bounded():
    """``(a|aa)+$`` escapes the nested-quantifier heuristic; grading a 5,000-character answer stops at the bound
    with an error naming the scenario, the field and the pattern."""
    doc = {"scenarios": [{"id": "s1", "prompt": "p", "expected_behavior": [{"grader": "regex",
                                                                          "value": "(a|aa)+$"}]}]}
    spec = parse_evals(doc, "mem.json", skill="sk")
    box, secs = _within(F.REGEX_TIMEOUT_S + 10, grade_answer, spec.scenarios[0], ADVERSARIAL)
    assert secs < F.REGEX_TIMEOUT_S + 5
    err = box.get("error")
    assert isinstance(err, skills.EvalSpecError), box
    assert str(err) == ("<in-memory evals>, scenario 's1', field 'expected_behavior[0].value': skill sk: regex "
                        f"'(a|aa)+$' timed out after {F.REGEX_TIMEOUT_S} s on a 5001-character answer (catastrophic "
                        "backtracking); expected a pattern that runs in bounded time")


def test_adversarial_regex_in_integrity_rules_names_the_file(tmp_path):
    p = tmp_path / "evals.json"
    p.write_text('{"scenarios": [{"id": "s1", "prompt": "' + ADVERSARIAL + '", "expected_behavior": '
                 '[{"grader": "regex", "value": "(a|aa)+$"}]}]}', encoding="utf-8")
    spec = skills.load_evals(p)
    box, secs = _within(F.REGEX_TIMEOUT_S * 3 + 10, skills.integrity_findings, spec)
    err = box.get("error")
    assert isinstance(err, skills.EvalSpecError), box
    assert str(err).startswith(f"{p}, scenario 's1', field 'expected_behavior[0].value': regex '(a|aa)+$' timed "
                               "out after")


def test_manifest_regexes_share_the_bound():
    assert _manifests.REGEX_TIMEOUT_S == F.REGEX_TIMEOUT_S and _manifests.nested_quantifier is F.nested_quantifier
    start = time.monotonic()
    res = evaluate("sk", {"output_pattern": "(a|aa)+$"}, ADVERSARIAL)
    assert time.monotonic() - start < F.REGEX_TIMEOUT_S + 5
    assert res[0].passed is None and "timed out" in res[0].error


# --------------------------------------------------------------------------------------------------------- CLI
def test_cli_fifo_verdict_table_one_line_exit_2(tmp_path, capsys):
    fifo = tmp_path / "base.csv"
    os.mkfifo(fifo)
    other = tmp_path / "cand.csv"
    other.write_text("item_id,judge,verdict\nq1,g,1\n")
    box, secs = _within(5.0, run_cli, ["drift", "--baseline", fifo, "--candidate", other], capsys)
    code, out = box["value"]
    assert code == 2 and "Traceback" not in out
    assert out.strip() == (f"error: {fifo}: is a FIFO (named pipe), not a regular file; expected a table (.csv, "
                           ".tsv, .jsonl, .ndjson or .parquet)")


def test_cli_directory_catalog_one_line_exit_2(tmp_path, capsys):
    d = tmp_path / "cat.jsonl"
    d.mkdir()
    code, out = run_cli(["triggers", "tune", d], capsys)
    assert code == 2 and "Traceback" not in out
    assert out.strip() == (f"error: {d}: is a directory, not a regular file; expected a JSONL catalog, one skill "
                           "per line")


def test_cli_duplicate_catalog_name_one_line_exit_2(capsys):
    p = BAD / "catalog_duplicate_name.jsonl"
    code, out = run_cli(["triggers", "tune", p], capsys)
    assert code == 2 and "Traceback" not in out
    assert out.strip() == (f"error: {p}, row 3, column 'name': duplicate skill name 'review' (first on line 1); "
                           "expected each name once, else one skill shadows the other")


def test_cli_escaped_oserror_is_one_line(monkeypatch, capsys):
    """An OSError that escapes a loader still ends as one line and exit 2."""

    def boom(path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(skills, "load_catalog", boom)
    code, out = run_cli(["triggers", "tune", "somewhere.jsonl"], capsys)
    assert code == 2 and out.strip() == "error: somewhere.jsonl: Permission denied"


def test_bundled_catalogs_still_load():
    """The only repeated names accepted are the bundled sickn33 catalog's upstream ones (distinct ids)."""
    cat = skills.load_catalog("sickn33")
    assert len(cat) == 559
    names = [s.name for s in cat]
    assert sorted({n for n in names if names.count(n) > 1}) == sorted(
        _catalogs.UPSTREAM_DUPLICATE_NAMES["sickn33_antigravity-awesome-skills.jsonl"])


def test_a_copy_of_the_bundled_catalog_is_held_to_the_rule(tmp_path):
    p = _copy(data_dir("catalogs") / "sickn33_antigravity-awesome-skills.jsonl",
              tmp_path / "sickn33_antigravity-awesome-skills.jsonl")
    with pytest.raises(DataError, match=r"row 67, column 'name': duplicate skill name 'brand-guidelines' \(first "
                                        r"on line 66\)"):
        skills.load_catalog(p)
