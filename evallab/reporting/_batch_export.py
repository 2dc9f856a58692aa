"""An executed report notebook exported to HTML: stderr outputs moved to a "Run notes" section, absolute paths made
relative (:func:`tidy_paths`, also used by the index page and the Dask runner). Re-exported by
:mod:`evallab.reporting._batch`.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from evallab.paths import _project_roots, _strip_roots

_WARNING_LINE = re.compile(r"^(?P<path>\S+?):(?P<line>\d+): (?P<cat>\w*(?:Warning|Error))\b: ?(?P<msg>.*)$")


_ABS_PATH = re.compile(r"(?<![\w.~:/+=-])/(?:home|root|tmp|work|Users|usr|opt|var|private|mnt|srv|nix|Library)"
                       r"/(?:[\w.+@-]+/)*[\w.+@-]*")


def tidy_paths(text: str, out_dir: Path | None = None, *, shorten: bool = True) -> str:
    """Absolute paths made relative: to the output folder, then to the project root; anything else under a
    Python installation shortened to its package path; other absolute paths reduced to their last two parts
    (``shorten=False``: left whole, e.g. a user's own file named in an error message)."""
    if out_dir is not None:
        text = text.replace(str(out_dir) + "/", "")
    text = _strip_roots(text, _project_roots())
    if not shorten:
        return text

    def short(m):
        p = m.group(0)
        if "site-packages/" in p:
            return p.split("site-packages/", 1)[1]
        parts = [x for x in p.split("/") if x]
        return ".../" + "/".join(parts[-2:]) if len(parts) > 2 else ".../" + parts[-1]
    return _ABS_PATH.sub(short, text)



def run_notes(nb, out_dir: Path | None = None):
    """Move stderr stream outputs (warnings, progress bars) of an executed notebook into one short "Run notes"
    section at its end, replace an error output (a failed cell's traceback) by one line naming the error, and make
    paths in every output relative. Returns the notebook (changed in place; the ``.ipynb`` on disk keeps the
    traceback)."""
    import nbformat

    notes: list[str] = []
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        kept = []
        for o in c.get("outputs", []):
            if o.get("output_type") == "stream" and o.get("name") == "stderr":
                for ln in tidy_paths(o.get("text", ""), out_dir).replace("\r", "\n").splitlines():
                    ln = ln.strip()
                    m = _WARNING_LINE.match(ln)
                    if m:
                        src = m["path"].rsplit("/", 1)[-1]
                        where = "" if re.fullmatch(r"\d+\.py", src) else f" ({src}:{m['line']})"  # a kernel cell
                        notes.append(f"{m['cat']}: {m['msg']}{where}")
                    elif ln and not ln.startswith(("warnings.warn", "from ", "import ")) and "it/s]" not in ln \
                            and not re.match(r"^[\w\s]*:?\s*\d+%\|", ln):
                        notes.append(ln)
                continue
            if o.get("output_type") == "stream":
                o["text"] = tidy_paths(o.get("text", ""), out_dir)
            for key in ("text/plain", "text/html", "text/markdown"):
                data = o.get("data", {})
                if key in data:
                    data[key] = tidy_paths(data[key] if isinstance(data[key], str) else "".join(data[key]),
                                            out_dir)
            if o.get("output_type") == "error":  # one line in the report; the traceback stays in the .ipynb
                line = f"{o.get('ename', 'Error')}: {tidy_paths(str(o.get('evalue', '')), out_dir)}".strip()
                o = nbformat.v4.new_output("display_data", data={
                    "text/html": "<p class='failed'><b>The report stopped here.</b> " + html.escape(line[:2000])
                                 + " — the sections above are complete; the executed notebook beside this page "
                                   "keeps the full traceback.</p>",
                    "text/plain": "The report stopped here. " + line[:2000]})
            kept.append(o)
        c["outputs"] = kept
    notes = list(dict.fromkeys(n[:300] for n in notes))
    if notes:
        body = "\n".join(f"- {html.escape(n)}" for n in notes[:30])
        more = f"\n- … and {len(notes) - 30} more (see the executed notebook)" if len(notes) > 30 else ""
        nb.cells.append(nbformat.v4.new_markdown_cell(
            "## Run notes\nMessages the run printed to its error stream (warnings, progress), kept here so the "
            "report itself stays clean. They do not change the numbers above.\n\n" + body + more))
    return nb


#: what nbconvert's ``HTMLExporter`` writes as the alternative text of an image that has none
NO_ALT = "No description has been provided for this image"
_IMG_WITHOUT_ALT = re.compile(r"<img(?![^>]*\salt=)(?=[\s>/])", re.IGNORECASE)
_FOCUSABLE = re.compile(r'<div(?=\s)(?![^>]*\stabindex=)([^>]*\sclass="[^"]*\b(?:jp-Cell-inputWrapper|jp-OutputArea-output)\b'
                        r'[^"]*"[^>]*)>')


def _accessible(body: str, log=None) -> str:
    """The two accessibility edits nbconvert's ``HTMLExporter.from_notebook_node`` makes to the lab template's
    page (nbconvert 7.x): an ``alt`` on every image without one (:data:`NO_ALT`), and ``tabindex="0"`` on every
    input wrapper and output area so a keyboard reaches them. nbconvert makes them by parsing the whole page with
    BeautifulSoup's pure-Python ``html.parser`` and writing it back — a second of CPU on the bundled batch, most of
    its export time on a report with long tables; here they are made on the template's tags as they are written.
    The result is the same document (a test parses both and compares them)."""
    body, missing = _IMG_WITHOUT_ALT.subn(f'<img alt="{NO_ALT}"', body)
    if missing and log is not None:
        log.warning("Alternative text is missing on %s image(s).", missing)  # nbconvert's warning
    return _FOCUSABLE.sub(r'<div\1 tabindex="0">', body)


def export_html(ipynb: Path, html_path: Path) -> None:
    """Export an executed notebook to HTML without input cells or prompts (nbconvert's lab template), with stderr
    output moved to a "Run notes" section and paths relative to the output folder or project root."""
    import nbformat
    from nbconvert import HTMLExporter
    from nbconvert.exporters.templateexporter import TemplateExporter

    class _Exporter(HTMLExporter):
        def from_notebook_node(self, nb, resources=None, **kw):
            # HTMLExporter.from_notebook_node's filters, then the template (TemplateExporter's), then its
            # accessibility edits without the BeautifulSoup round trip (:func:`_accessible`)
            from nbconvert.exporters.html import Highlight2HTML, WidgetsDataTypeFilter

            lang = nb.metadata.get("language_info", {})
            lexer = lang.get("pygments_lexer", lang.get("name", None))
            self.register_filter("highlight_code", self.filters.get(
                "highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)))
            resources = self._init_resources(resources)
            self.register_filter("filter_data_type", WidgetsDataTypeFilter(
                notebook_metadata=self._nb_metadata, parent=self, resources=resources))
            body, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
            return _accessible(body, self.log), resources

    nb = run_notes(nbformat.read(str(ipynb), as_version=4), html_path.parent.resolve())
    exporter = _Exporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb)
    html_path.write_text(body, encoding="utf-8")
