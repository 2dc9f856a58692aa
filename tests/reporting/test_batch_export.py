"""The HTML export of an executed report notebook (:mod:`evallab.reporting._batch_export`): the same document
nbconvert's ``HTMLExporter`` writes, without its BeautifulSoup round trip."""

from __future__ import annotations

import base64
import re

import nbformat
from bs4 import BeautifulSoup
from nbconvert import HTMLExporter
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from evallab.reporting._batch_export import NO_ALT, export_html, run_notes

#: a 1×1 PNG
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000100"
    "05fe02fea7d6a4b30000000049454e44ae426082")).decode()


def _notebook():
    nb = new_notebook(cells=[
        new_markdown_cell(f"# A report\n\nA figure in the text: ![a dot](data:image/png;base64,{PNG})"),
        new_code_cell("fig", outputs=[new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"})]),
        new_code_cell("html", outputs=[new_output("display_data", data={
            "text/html": f'<p>Bare: <img src="data:image/png;base64,{PNG}"> described: '
                         f'<img alt="A dot" src="data:image/png;base64,{PNG}"/> and <IMG src="x.png"></p>'
                         '<table><tr><td>0.52 [0.48, 0.55]</td></tr></table>',
            "text/plain": "html"})]),
        new_code_cell("df", outputs=[new_output("execute_result", execution_count=1, data={
            "text/html": "<div><table class='dataframe'><tr><th>a</th></tr><tr><td>1</td></tr></table></div>",
            "text/plain": "a\n1"})]),
        new_code_cell("warn", outputs=[new_output("stream", name="stderr", text="x.py:3: UserWarning: careful\n"),
                                       new_output("stream", name="stdout", text="printed\n")]),
        new_code_cell("boom", outputs=[new_output("error", ename="ValueError", evalue="bad", traceback=["tb"])]),
    ], metadata={"language_info": {"name": "python", "pygments_lexer": "ipython3"}})
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i}"  # fixed: a notebook read without ids gets new random ones, named in the page
    return nb


def test_export_is_the_document_nbconvert_writes(tmp_path):
    ipynb, page = tmp_path / "r.ipynb", tmp_path / "r.html"
    nbformat.write(_notebook(), str(ipynb))
    export_html(ipynb, page)
    ours = page.read_text(encoding="utf-8")
    reference, _ = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True) \
        .from_notebook_node(run_notes(nbformat.read(str(ipynb), as_version=4), tmp_path))
    # nbconvert parses its page with BeautifulSoup and writes it back; the same parse of ours gives its text
    # (but for the id of the "Run notes" cell, new in each call of run_notes)
    run_notes_id = re.compile(r"cell-id=[0-9a-f]{8}\b")
    assert run_notes_id.sub("", str(BeautifulSoup(ours, features="html.parser"))) == run_notes_id.sub("", reference)
    soup = BeautifulSoup(ours, features="html.parser")
    images = soup.find_all("img")
    assert len(images) == 5 and all(img.get("alt") for img in images)
    assert sorted(img["alt"] for img in images).count(NO_ALT) == 3  # the bare figure, the bare and the upper-case <IMG>
    outputs = soup.select("div.jp-OutputArea-output")
    assert outputs and all(o.get("tabindex") == "0" for o in outputs)
