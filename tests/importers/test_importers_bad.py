"""Bad input: each file in tests/data/importers/bad/ gives one exact line ``error: <file>, <where>, field '<f>': ...``
and exit status 2 through ``evallab import`` (no traceback), and the same message from the Python API."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helper import run_cli

from evallab import importers as I

BAD = Path(__file__).parents[1] / "data" / "importers" / "bad"
TABLE = ["--map", "verdict=winner,item_id=question,judge=rater", "--values", "model_a=1,model_b=2,tie=tie"]

#: file -> (extra CLI options, exact message after the file name)
CASES = {
    'alpaca_eval_bad_preference.json': ([],
        ", entry 2, field 'preference': unknown preference 3; expected a number: 1 or 2 (preferred output), 0 or 1.5 (draw), in [1, 2] (weighted), or null (unparsed)"),
    'alpaca_eval_not_array.json': ([],
        ': is not a JSON array; expected AlpacaEval annotations.json: a JSON array of objects (instruction, output_1, generator_1, output_2, generator_2, annotator, preference)'),
    'arena_hard_games_not_list.jsonl': ([],
        ", line 1, field 'games': is 'A>B'; expected a list of 2 game objects (1 when not pairwise)"),
    'arena_hard_unknown_score.jsonl': ([],
        ", line 1 game 2, field 'score': unknown verdict 'A>>>B'; expected one of 'A>>B', 'A>B', 'A=B', 'B>A', 'B>>A' (or null when the judge gave none)"),
    'duplicate_pair.jsonl': ([],
        ", line 2: repeats the judge reply of line 1 (same key {'dataset': 'mt_bench', 'item_id': '81-t1-phi-3-vs-phi-3-dpo', 'judge': 'gpt-4', 'strategy': 'pair-v2', 'anchor_set': 'none', 'order': 'ab', 'sample': 0}); expected one reply per (dataset, item_id, judge, strategy, anchor_set, order, sample)"),
    'empty.json': ([],
        ': the file is empty; expected a judge-verdict file'),
    'inspect_bad_grade.json': ([],
        ", sample 2 epoch 1, field 'scores.model_graded_fact.value': unknown score value 'X'; expected a model-graded grade 'C', 'I', 'P' or 'N' (choose the model-graded scorers with scorers=[...] / --scorer)"),
    'inspect_damaged.eval': ([],
        ': is a damaged zip (File is not a zip file); expected an inspect_ai eval log (.json: {version, eval, samples, ...}; .eval: a zip with header.json and samples/)'),
    'judgebench_unknown_decision.jsonl': ([],
        ", line 1 judgment 2, field 'decision': unknown decision 'A>C'; expected one of 'A>>B', 'A>B', 'A=B', 'B>A', 'B>>A' (or null when the judge gave none)"),
    'mt_bench_human_unknown_winner.jsonl': ([],
        ", line 1, field 'winner': unknown verdict 'model_c'; expected one of ['model_a', 'model_b', 'tie', 'tie (bothbad)']"),
    'mt_bench_pair_bad_json.jsonl': ([],
        ', line 3: not valid JSON (Unterminated string starting at: column 41); expected one JSON object per line (a judge-verdict JSON / JSON-lines file)'),
    'mt_bench_pair_missing_field.jsonl': ([],
        ", line 3, field 'g2_winner': missing; expected one of ['model_1', 'model_2', 'tie', 'error']"),
    'mt_bench_pair_unknown_winner.jsonl': ([],
        ", line 2, field 'g1_winner': unknown verdict 'model_3'; expected one of ['model_1', 'model_2', 'tie', 'error']"),
    'mt_bench_single_bad_score.jsonl': ([],
        ", line 2, field 'score': unknown score 11; expected a rating 1-10, or -1 when none was parsed"),
    'not_utf8.jsonl': ([],
        ': line 2 is not valid UTF-8 (byte 0xe9 at column 36); expected UTF-8 text'),
    'promptfoo_bad_pass.json': ([],
        ", result 1 component 1, field 'pass': unknown verdict 'yes'; expected true or false"),
    'table_missing_column.csv': (TABLE,
        ", field 'winner': column 'winner' (mapped to verdict) is not in the file; its columns are ['question', 'rater', 'choice']"),
    'table_unknown_value.csv': (TABLE,
        ", row 2 (file line 3), field 'winner': unknown verdict value 'model_c'; expected a key of the value map ['model_a', 'model_b', 'tie'] or one of ['1', '2', 'tie', 'pass', 'warn', 'fail']"),
    'unknown_format.json': ([],
        ": content matches no known format (first record's fields: ['bar', 'foo']); expected one of ['mt_bench_pair', 'mt_bench_single', 'mt_bench_human', 'alpaca_eval', 'arena_hard', 'inspect', 'promptfoo', 'judgebench', 'labels', 'position_bias_analyzer', 'table'] — name it with --format"),
}


def test_at_least_twelve_bad_files_all_covered():
    files = sorted(p.name for p in BAD.iterdir())
    assert len(files) >= 12
    assert files == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_cli_one_exact_line_exit_2(tmp_path, capsys, name):
    opts, tail = CASES[name]
    path = BAD / name
    code, out = run_cli(["import", path, *opts, "--out", tmp_path / "out.csv"], capsys)
    assert code == 2
    assert out == f"error: {path}{tail}\n"
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("name", sorted(CASES))
def test_python_api_same_message(name):
    opts, tail = CASES[name]
    path = BAD / name
    kw = {}
    if opts:
        kw = {"format": "table", "columns": opts[1], "values": opts[3]}
    with pytest.raises(I.ImportDataError) as ei:
        I.import_file(path, **kw)
    assert str(ei.value) == f"{path}{tail}"


def test_named_format_also_refuses_with_its_own_expectation():
    path = BAD / "mt_bench_pair_bad_json.jsonl"
    with pytest.raises(I.ImportDataError) as ei:
        I.import_file(path, "mt_bench_pair")
    assert str(ei.value) == (
        f"{path}, line 3: not valid JSON (Unterminated string starting at: column 41); expected one JSON object per "
        "line (FastChat *_pair.jsonl lines (question_id, model_1, model_2, g1_winner, g2_winner, judge, turn))")


def test_unknown_format_and_option():
    path = BAD / "empty.json"
    with pytest.raises(I.ImportDataError, match=r"unknown format 'nope'; expected one of \['mt_bench_pair'"):
        I.import_file(path, "nope")
    pair = Path(__file__).parents[2] / "data" / "formats" / "mt_bench" / "gpt-4_pair.jsonl"
    with pytest.raises(I.ImportDataError) as ei:
        I.import_file(pair, "mt_bench_pair", thresholds=(1, 2))
    assert str(ei.value) == (f"{pair}, field 'thresholds': option(s) ['thresholds'] do not apply to format "
                             "'mt_bench_pair'; it takes []")
