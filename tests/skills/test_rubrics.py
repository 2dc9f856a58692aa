"""MeowKit rubrics in evallab.skills: parsing, validation (bundled library clean, broken corpus), hard-fail verdict, anchor variants."""

from __future__ import annotations

from pathlib import Path

import pytest

from evallab import skills as R
from evallab.errors import DataError
from evallab.paths import data_dir
from evallab.skills import _rubrics
from evallab.skills._rubrics import (
    anchor_set,
    parse_preset,
    parse_rubric,
    preset_verdict,
    rubric_anchor_set,
    validate_library,
    validate_rubric,
)

HERE = Path(__file__).parents[1] / "data" / "rubrics"
LIB = data_dir("meowkit") / "rubrics"

# file -> (the one finding code it must yield, its 1-based line), written by hand from the fixture files
BROKEN_RUBRICS = {
    "only-pass-anchors.md": ("anchor-verdicts", 39),  # rule 1: '## Few-Shot Examples' line, a PASS example only
    "parity-five.md": ("anchor-parity", 39),  # rule 4: 3 PASS / 2 FAIL at 5 anchors
    "fail-first-anchors.md": ("anchor-alternation", 41),  # rule 5: Example 1 is FAIL
    "weight-too-big.md": ("weight-out-of-range", 4),  # weight_default: 1.5
    "unknown-threshold.md": ("unknown-threshold", 6),  # hard_fail_threshold: CRITICAL
    "injected-anchor.md": ("instruction-like", 45),  # rule 10 in an anchor's reasoning
    "you-are-now.md": ("instruction-like", 13),  # rule 10 in the intent
    "missing-anti-patterns.md": ("section-missing", 47),
    "criteria-before-intent.md": ("section-order", 11),
    "name-mismatch.md": ("name-mismatch", 2),
    "empty-anti-patterns.md": ("anti-patterns-empty", 31),  # rule 7
    "vague-anti-pattern.md": ("anti-pattern-vague", 36),  # rule 7: "Looks generic"
    "verdict-mismatch.md": ("anchor-verdict-mismatch", 41),
    "missing-applies-to.md": ("field-missing", 1),
    "bad-applies-to.md": ("applies-to-invalid", 5),
    "too-long.md": ("file-too-long", 201),
    "no-warn-row.md": ("grading-incomplete", 23),
    "no-frontmatter.md": ("frontmatter-missing", 1),
    "example-numbering.md": ("anchor-numbering", 47),
    "anchor-no-reasoning.md": ("anchor-fields", 41),
}
BROKEN_PRESETS = {
    "weights-not-one.md": [("weight-sum", 6)],  # rule 2: 0.30 × 3 = 0.90
    "unknown-rubric.md": [("unknown-rubric", 11)],  # 'performance' has no rubric file
    "weight-negative.md": [("weight-out-of-range", 7), ("weight-out-of-range", 9)],  # -0.20 and 1.20
    "duplicate-rubric.md": [("duplicate-rubric", 9)],
    "frontend-app.md": [("frontend-app-pruned", 6)],  # rule 8: code-quality instead of originality
    "not-applicable.md": [("rubric-not-applicable", 9)],  # design-quality in a backend preset
    "injected-preset.md": [("instruction-like", 5)],  # rule 10 in the description
    "no-description.md": [("field-missing", 1)],
}


def test_bundled_library_validates_clean():
    rubrics, presets = _rubrics.library_files()
    assert [p.stem for p in rubrics] == ["code-quality", "craft", "design-quality", "functionality", "originality",
                                         "product-depth", "ux-usability"]
    assert [p.stem for p in presets] == ["backend-api", "cli-tool", "frontend-app", "fullstack-product"]
    t = validate_library()
    assert t.empty, t.to_string()


def test_corpus_is_large_enough():
    assert len(BROKEN_RUBRICS) + len(BROKEN_PRESETS) >= 12
    on_disk = {p.name for p in HERE.glob("*.md")}
    assert set(BROKEN_RUBRICS) == on_disk


@pytest.mark.parametrize("name", sorted(BROKEN_RUBRICS))
def test_broken_rubric_yields_its_finding(name):
    found = validate_rubric(HERE / name)
    assert [(f.code, f.line) for f in found] == [BROKEN_RUBRICS[name]], [str(f) for f in found]
    f = found[0]
    assert f.path.endswith(name) and f.rule == _rubrics.CODES[f.code]
    assert str(f).startswith(f"{f.path}:{f.line}: [{f.code}/")


@pytest.mark.parametrize("name", sorted(BROKEN_PRESETS))
def test_broken_preset_yields_its_finding(name):
    found = _rubrics.validate_preset(HERE / "composition-presets" / name, LIB)
    assert [(f.code, f.line) for f in found] == BROKEN_PRESETS[name], [str(f) for f in found]


def test_upstream_rules_against_bundled_numbers():
    lib = R.load_library()
    # RUBRICS_INDEX / spec table: default weights and thresholds
    want = {"product-depth": (0.25, "FAIL"), "functionality": (0.25, "FAIL"), "design-quality": (0.15, "FAIL"),
            "originality": (0.15, "FAIL"), "code-quality": (0.10, "FAIL"), "craft": (0.05, "WARN"),
            "ux-usability": (0.05, "WARN")}
    assert {n: (r.weight_default, r.hard_fail_threshold) for n, r in lib.rubrics.items()} == want
    assert sum(r.weight_default for r in lib.rubrics.values()) == pytest.approx(1.0)
    assert lib.presets["frontend-app"].weights == {"product-depth": 0.30, "functionality": 0.30,
                                                   "design-quality": 0.20, "originality": 0.20}
    f = lib.rubrics["functionality"]
    assert [(a.number, a.verdict, a.line) for a in f.anchors] == [("1", "PASS", 41), ("2", "FAIL", 47)]
    assert f.grading["FAIL"].startswith("Any spec AC fails")
    assert len(f.anti_patterns) == 5


def test_load_library_strict_raises_naming_file(tmp_path):
    (tmp_path / "composition-presets").mkdir()
    src = (HERE / "parity-five.md").read_text()
    (tmp_path / "parity-five.md").write_text(src)
    with pytest.raises(R.RubricError) as e:
        R.load_library(tmp_path)
    assert "parity-five.md" in str(e.value) and "row 39" in str(e.value) and "anchor-parity" in str(e.value)
    assert R.load_library(tmp_path, strict=False).rubrics["parity-five"].name == "parity-five"


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(R.RubricError, match="file not found"):
        validate_rubric(tmp_path / "nope.md")


# ------------------------------------------------------------------------------------------ weighted verdict
def test_hard_fail_overrides_weighted_average_above_0_8():
    lib = R.load_library()
    pre = parse_preset(HERE / "composition-presets" / "lean-functionality.md")
    assert _rubrics.validate_preset(pre.path, LIB) == []
    v = preset_verdict(pre, {"product-depth": "PASS", "functionality": "FAIL", "code-quality": "PASS"},
                         lib.rubrics)
    # hand count: 0.35·1 + 0.15·0 + 0.50·1 = 0.85 > 0.8, yet functionality FAIL ≥ its threshold FAIL
    assert v.score == pytest.approx(0.85)
    assert v.verdict == "FAIL" and v.hard_failed == ["functionality"]
    ok = preset_verdict(pre, {"product-depth": "PASS", "functionality": "WARN", "code-quality": "PASS"},
                          lib.rubrics)
    assert ok.score == pytest.approx(0.35 + 0.075 + 0.50) and ok.verdict == "PASS" and ok.hard_failed == []


def test_spec_example_fullstack_every_rubric_passes_but_functionality():
    lib = R.load_library()
    pre = lib.presets["fullstack-product"]
    verdicts = {n: "PASS" for n in pre.weights} | {"functionality": "FAIL"}
    v = preset_verdict(pre, verdicts, lib.rubrics)
    assert v.score == pytest.approx(0.80) and v.verdict == "FAIL"


def test_warn_threshold_rubric_hard_fails_on_warn():
    lib = R.load_library()
    pre = lib.presets["cli-tool"]  # ux-usability has hard_fail_threshold WARN
    v = preset_verdict(pre, {n: "PASS" for n in pre.weights} | {"ux-usability": "WARN"}, lib.rubrics)
    assert v.score == pytest.approx(0.90) and v.verdict == "FAIL" and v.hard_failed == ["ux-usability"]
    v = preset_verdict(pre, {n: "PASS" for n in pre.weights} | {"code-quality": "WARN"}, lib.rubrics)
    assert v.score == pytest.approx(1 - 0.15 * 0.5) and v.verdict == "PASS"


def test_preset_verdict_errors():
    lib = R.load_library()
    pre = lib.presets["backend-api"]
    with pytest.raises(R.RubricError, match="no verdict for rubric 'code-quality'"):
        preset_verdict(pre, {"product-depth": "PASS", "functionality": "PASS"}, lib.rubrics)
    with pytest.raises(R.RubricError, match="unknown"):
        preset_verdict(pre, {"product-depth": "PASS", "functionality": "MEH", "code-quality": "PASS"},
                         lib.rubrics)


def test_preset_verdict_rejects_unknown_rubric_and_threshold():
    lib = R.load_library()
    # unknown-rubric.md names 'performance' at line 11 (hand-read from the fixture); no such rubric in the library
    pre = parse_preset(HERE / "composition-presets" / "unknown-rubric.md")
    all_pass = {"product-depth": "PASS", "functionality": "PASS", "performance": "PASS"}
    with pytest.raises(R.RubricError, match="rubric 'performance' is not in the rubric library") as e:
        preset_verdict(pre, all_pass, lib.rubrics)
    assert "unknown-rubric.md" in str(e.value) and "row 11" in str(e.value)
    # a rubric whose hard_fail_threshold is CRITICAL (unknown-threshold.md line 6) is never forced to FAIL
    pre = parse_preset(HERE / "composition-presets" / "lean-functionality.md")
    rubrics = dict(lib.rubrics)
    rubrics["functionality"] = parse_rubric(HERE / "unknown-threshold.md")
    with pytest.raises(R.RubricError, match="hard_fail_threshold 'CRITICAL'") as e:
        preset_verdict(pre, {"product-depth": "PASS", "functionality": "PASS", "code-quality": "PASS"}, rubrics)
    assert "lean-functionality.md, row 9" in str(e.value) and "unknown-threshold.md:6" in str(e.value)


def test_cli_verdict_validates_the_preset_first():
    from typer.testing import CliRunner

    from evallab.cli import app

    f = HERE / "composition-presets" / "unknown-rubric.md"
    r = CliRunner().invoke(app, ["rubrics", "verdict", str(f), "product-depth=PASS", "functionality=PASS",
                                 "performance=PASS"])
    assert r.exit_code == 1
    assert f"{f}:11: [unknown-rubric/evallab]" in r.stdout and "weighted score" not in r.stdout


# ------------------------------------------------------------------------------------------ anchor variants
P4, F4 = ["p1", "p2", "p3", "p4"], ["f1", "f2", "f3", "f4"]


@pytest.mark.parametrize("variant", ["balanced", "balanced-fail-first", "fail-last", "shuffled-2"])
@pytest.mark.parametrize("k", [1, 3, 0])
def test_mixed_variants_need_even_k(variant, k):
    with pytest.raises(DataError, match=f"even number of anchors k >= 2.*got k={k}|at least one example"):
        anchor_set(variant, P4, F4, k=k)


def test_one_sided_variants_take_odd_k_and_balanced_k2_differs_from_pass_only():
    assert anchor_set("pass-only", P4, F4, k=3) == ["p1", "p2", "p3"]
    assert anchor_set("fail-only", P4, F4, k=1) == ["f1"]
    assert anchor_set("balanced", P4, F4, k=2) == ["p1", "f1"]
    assert anchor_set("balanced-fail-first", P4, F4, k=2) == ["f1", "p1"]


@pytest.mark.parametrize("variant,expected", [
    ("none", []),
    ("balanced", ["p1", "f1", "p2", "f2"]),
    ("balanced-fail-first", ["f1", "p1", "f2", "p2"]),
    ("pass-only", ["p1", "p2", "p3", "p4"]),
    ("fail-only", ["f1", "f2", "f3", "f4"]),
    ("fail-last", ["p1", "p2", "f1", "f2"]),
])
def test_anchor_variants(variant, expected):
    assert anchor_set(variant, P4, F4, k=4) == expected


def test_shuffled_variant_is_seeded_permutation_of_balanced():
    a = anchor_set("shuffled-7", P4, F4, k=4)
    assert sorted(a) == ["f1", "f2", "p1", "p2"]
    assert a == anchor_set("shuffled-7", P4, F4, k=4)
    orders = {tuple(anchor_set(f"shuffled-{s}", P4, F4, k=4)) for s in range(20)}
    assert len(orders) > 3  # different seeds give different orders


def test_anchor_variant_errors():
    with pytest.raises(DataError, match="unknown anchor-set variant 'pass-first'"):
        anchor_set("pass-first", P4, F4)
    with pytest.raises(DataError, match="needs 4 PASS"):
        anchor_set("pass-only", P4[:2], F4, k=4)


def test_rubric_anchor_set_uses_the_rubric_examples():
    r = parse_rubric(LIB / "originality.md")
    bal = rubric_anchor_set(r, "balanced")
    assert [a.verdict for a in bal] == ["pass", "fail"]
    assert [a.source for a in bal] == ["originality#Example 1", "originality#Example 2"]
    assert bal[0].text.startswith("**Artifact:**")
    assert [a.verdict for a in rubric_anchor_set(r, "pass-only")] == ["pass"]
    assert [a.verdict for a in rubric_anchor_set(r, "balanced-fail-first")] == ["fail", "pass"]


# ------------------------------------------------------------------------------------------ CLI
def test_cli_validate_and_verdict():
    from typer.testing import CliRunner

    from evallab.cli import app

    run = CliRunner()
    r = run.invoke(app, ["rubrics", "validate"])
    assert r.exit_code == 0, r.output
    r = run.invoke(app, ["rubrics", "validate", str(HERE / "parity-five.md"),
                         str(HERE / "composition-presets" / "unknown-rubric.md"), "--rubrics-dir", str(LIB)])
    assert r.exit_code == 1
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    assert lines[0].endswith("parity-five.md:39: [anchor-parity/R4] 3 PASS vs 2 FAIL examples; rule 4 needs "
                             "equal counts at 4+ anchors")
    assert "unknown-rubric.md:11: [unknown-rubric/evallab]" in lines[1]
    args = ["rubrics", "verdict", "backend-api", "product-depth=PASS", "functionality=FAIL", "code-quality=PASS"]
    r = run.invoke(app, args)
    assert r.exit_code == 0 and "backend-api: FAIL (weighted score 0.550; hard fail: functionality)" in r.stdout


def test_shuffled_salt_varies_order_by_item():
    orders = {tuple(anchor_set("shuffled-1", P4, F4, k=4, salt=s)) for s in range(30)}
    assert len(orders) > 3 and all(sorted(o) == ["f1", "f2", "p1", "p2"] for o in orders)
    assert anchor_set("shuffled-1", P4, F4, k=4, salt=5) == anchor_set("shuffled-1", P4, F4, k=4, salt=5)
