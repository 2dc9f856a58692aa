"""Every ```python block of the README and the docs pages runs (issue 30): the blocks of one page run in order in
one namespace, in a temporary folder whose ``data`` is the bundled data, with the matplotlib backend Agg. Shell
sessions are ```console blocks and are not run (the commands are tested by tests/cli/). A block that cannot run
here is listed in SKIP with the reason, and the test checks the list is exact."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^([ \t]*)```(\w*)[^\n]*\n(.*?)^\1```", re.S | re.M)

#: (page, index of its python block) -> why it is not run
SKIP = {
    ("docs/guide/sweeps.md", 0): "needs dask-jobqueue and a SLURM or PBS cluster",
}

#: what a page's blocks take as given (a notebook's parameters, a table from the text before the block)
PRELUDE = {
    # the notebook's parameters
    "docs/guide/notebooks.md": "report_name, reports_dir, confidence, verdicts_path = 'example', 'reports', 0.95, None\n",
    # labels.csv as `evallab label` writes it (three annotators, 40 LLMBar Natural pairs, each label the gold one
    # but for every seventh), and `table`: those annotators beside a judge called gpt-4o
    "docs/guide/labelling.md": """
import csv
import evallab as ev
from evallab.datasets import load_llmbar
from evallab.importers import import_file
from evallab.importers._labels import LABEL_COLUMNS
_v = load_llmbar(subsets=["LLMBar/Natural"]).verdicts.query("order == 'ab' and strategy == 'Vanilla'")
_gold = _v.drop_duplicates("item_id").set_index("item_id")["gold"].astype(str).head(40)
with open("labels.csv", "w", newline="", encoding="utf-8") as f:
    w = csv.DictWriter(f, fieldnames=LABEL_COLUMNS, lineterminator="\\n")
    w.writeheader()
    for k, a in enumerate(["ana", "ben", "cy"]):
        for i, (item, g) in enumerate(_gold.items()):
            lab = g if (i + k) % 7 else {"1": "2", "2": "1"}.get(g, g)
            w.writerow(dict(item_id=item, annotator=a, kind="pairwise", action="label", label=lab, order="ab",
                            note="", labelled_at="2026-12-01T00:00:00Z"))
_judge = _v[_v.item_id.isin(_gold.index) & (_v.judge == "GPT-4")].assign(judge="gpt-4o")
table = ev.concat([_judge.assign(order="", dataset=""), import_file("labels.csv")])
""",
    # a table the three judges of the page answered: LLMBar Natural (Vanilla, both orders, gold) under their names
    "docs/guide/juries.md": """
from evallab.datasets import load_llmbar
_names = {"GPT-4": "gpt-4o", "ChatGPT": "claude-3-5-sonnet", "PaLM2": "gemini-1.5-pro"}
df = load_llmbar(subsets=["LLMBar/Natural"]).verdicts.query("strategy == 'Vanilla' and judge in @_names")
df = df.assign(judge=df["judge"].map(_names))
""",
    # labels in long format (item_id, annotator, label): three annotators on the first 30 AlpacaEval items
    "docs/own-table.md": """
import pandas as pd
from evallab.importers import import_file
_ids = import_file("data/formats/alpaca_eval/alpaca-7b__alpaca_eval_gpt4__annotations.json")["item_id"].unique()[:30]
labels = pd.DataFrame([{"item_id": i, "annotator": a, "label": "1" if (n + k) % 4 else "2"}
                       for n, i in enumerate(_ids) for k, a in enumerate(["ana", "ben", "cy"])])
""",
}


def _blocks(page: Path) -> list[str]:
    return [textwrap.dedent(code) for _, lang, code in FENCE.findall(page.read_text(encoding="utf-8"))
            if lang == "python"]


def _cases():
    for page in PAGES:
        rel = page.relative_to(ROOT).as_posix()
        if _blocks(page):
            yield pytest.param(rel, id=rel)


def test_every_block_is_python_or_a_marked_shell_session():
    """A fence names its language: ``python`` (run here), ``console`` (a shell session), or a data format."""
    unmarked = {p.relative_to(ROOT).as_posix(): n for p in PAGES
                if (n := sum(1 for _, lang, _ in FENCE.findall(p.read_text(encoding="utf-8")) if not lang))}
    assert unmarked == {}
    langs = {lang for p in PAGES for _, lang, _ in FENCE.findall(p.read_text(encoding="utf-8"))}
    assert langs <= {"python", "console", "text", "yaml", "json"}


def test_skip_list_is_exact():
    assert all(i < len(_blocks(ROOT / page)) for page, i in SKIP)


@pytest.mark.parametrize("rel", list(_cases()))
def test_page_examples_run(rel, tmp_path, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").symlink_to(ROOT / "data")
    ns: dict = {"__name__": "__docs__"}
    exec(PRELUDE.get(rel, ""), ns)
    for i, code in enumerate(_blocks(ROOT / rel)):
        if (rel, i) in SKIP:
            continue
        try:
            exec(compile(code, f"{rel} python block {i}", "exec"), ns)
        except Exception as exc:  # noqa: BLE001 - name the block, keep the cause
            raise AssertionError(f"{rel}, python block {i} failed: {exc!r}") from exc
    assert os.getcwd() == str(tmp_path)
