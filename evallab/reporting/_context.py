"""The report a notebook writes, as an explicit object (issue 25: no hidden kernel globals).

A notebook creates one from its parameters and hangs everything it states off it::

    from evallab import Report
    report = Report(report_name, reports_dir, confidence=confidence)
    report.show(bias, ["judge", "position_consistency", "first_slot_preference"], caption="Position bias")
    report.finding("GPT-4 keeps its verdict when the outputs swap places.", bias.estimate("position_consistency"))
    report.conclusions([...], caveats=[...])
    report.save({"position_bias": bias}, title="Position bias")

:meth:`Report.save` writes ``<out_dir>/<name>.metrics.json`` with the findings stated through this object (and
nothing stated elsewhere in the kernel); the batch runner and ``evallab run`` read that file. Long tables are
written beside the report as ``<name>.tables/NN-<stem>.csv``, numbered by this object.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evallab._results import Estimate
from evallab.reporting._params import check_report_name


@dataclass
class Shown:
    """A table a section shows: the :class:`~evallab.Results`, which columns (a list, or column → label), the
    caption and the stem of its CSV when long."""

    table: object
    columns: Mapping[str, str] | Sequence[str] | None = None
    caption: str = ""
    csv_name: str | None = None


@dataclass
class Section:
    """What one section of a report states, in the order it is shown: findings, tables, figures and sentences
    (``items``), plus what it contributes to the report's metrics, conclusions and caveats.

    Built by the library's section functions (:mod:`evallab.reporting.sections`), shown by
    :meth:`Report.render`; a notebook only calls and renders. A section the table cannot support holds one
    sentence saying so (``text``) and no empty table.
    """

    items: list = field(default_factory=list)
    metrics: dict = field(default_factory=dict)
    conclusions: list[str] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)
    #: built from data bundled in ``data/`` (a demo run, a simulation, a bundled dataset), not from the table the
    #: report studies: :meth:`Report.render` leaves it out of a report on the user's table (issue 26)
    bundled: bool = False

    def finding(self, sentence: str, estimate: Estimate | None = None) -> Section:
        from evallab.reporting._tables import Finding

        self.items.append(Finding.of(sentence, estimate))
        return self

    def table(self, table, columns=None, *, caption: str = "", csv_name: str | None = None) -> Section:
        self.items.append(Shown(table, columns, caption, csv_name))
        return self

    def figure(self, fig) -> Section:
        self.items.append(fig)
        return self

    def from_bundled(self, bundled: bool = True) -> Section:
        """Mark the section as built from bundled data (:attr:`bundled`); returns it."""
        self.bundled = bool(bundled)
        return self

    def text(self, sentence: str) -> Section:
        """A sentence shown as a paragraph (e.g. why the section cannot be computed on this table)."""
        self.items.append(str(sentence))
        return self

    @property
    def findings(self) -> list:
        from evallab.reporting._tables import Finding

        return [x for x in self.items if isinstance(x, Finding)]

    @property
    def tables(self) -> list[Shown]:
        return [x for x in self.items if isinstance(x, Shown)]


class Report:
    """One report's name, output folder and confidence level, and what it has stated so far.

    Parameters
    ----------
    name : str
        The report's name: the file stem of its outputs (letters, digits, ``_.-``; checked).
    out_dir : str or Path
        Output folder; ``""`` means ``<reports>/adhoc`` (:func:`evallab.paths.reports_dir`), so a notebook run
        by hand never overwrites the batch's reports (the batch always passes its folder).
    confidence : float
        The confidence level of every interval the report shows, in (0, 1).
    user_table : str, default ""
        The path of the user's own table the report studies (the notebook's ``verdicts_path``); when set, a
        section built from bundled data (:attr:`Section.bundled`: the SmolLM2 live runs, simulations, the bundled
        AlpacaEval …) is left out — nothing shown, nothing in ``metrics.json``, no index finding — so a report on
        the user's table shows that table's findings only.
    bundled_sections : bool, default False
        Show the bundled sections on the user's table too.

    Attributes
    ----------
    findings : list[Finding]
        Findings stated with :meth:`finding`, in order (a re-run cell replaces its sentence, not appends).

    Raises
    ------
    evallab.reporting.ParameterError
        A name that is not a safe file stem, or a confidence outside (0, 1).
    """

    def __init__(self, name: str = "adhoc", out_dir: str | Path = "", *, confidence: float = 0.95,
                 user_table: str | Path = "", bundled_sections: bool = False) -> None:
        from evallab.paths import reports_dir
        from evallab.reporting._params import ParameterError

        self.name = check_report_name(name)
        if not 0 < float(confidence) < 1:
            raise ParameterError(f"confidence {confidence!r}; expected a level strictly between 0 and 1 (0.95: 95%)")
        self.confidence = float(confidence)
        self.out_dir = Path(out_dir) if out_dir else reports_dir() / "adhoc"
        self.user_table = str(user_table or "")
        self.bundled_sections = bool(bundled_sections)
        self.findings: list = []
        self.metrics: dict = {}
        self._conclusions: list[str] = []
        self._caveats: list[str] = []
        self._tables = 0

    def __repr__(self) -> str:
        return f"Report({self.name!r}, confidence={self.confidence:g}, findings={len(self.findings)})"

    # -- tables ------------------------------------------------------------------------------------------
    def table_html(self, table, columns: Mapping[str, str] | Sequence[str] | None = None, *, caption: str = "",
                   csv_name: str | None = None, **kwargs) -> str:
        """The HTML :meth:`show` displays (:func:`evallab.reporting.to_html`); a long table's CSV is written to
        ``<out_dir>/<name>.tables/``."""
        from evallab.reporting._tables import MAX_ROWS, to_html

        csv_to = None
        if len(table) > kwargs.get("max_rows", MAX_ROWS):
            self._tables += 1
            stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", csv_name or caption[:40] or "table").strip("-").lower()
            csv_to = (self.out_dir, Path(f"{self.name}.tables") / f"{self._tables:02d}-{stem or 'table'}.csv")
        return to_html(table, columns=columns, caption=caption, csv_to=csv_to, **kwargs).html

    def show(self, table, columns: Mapping[str, str] | Sequence[str] | None = None, *, caption: str = "",
             csv_name: str | None = None, **kwargs) -> None:
        """Display ``table`` as a publication table: for a :class:`~evallab.Results`, labels, units, intervals,
        their level and method come from its measures; ``columns`` picks which (and may relabel them). Returns
        nothing, so a cell ending in ``show`` shows the table once."""
        from IPython.display import HTML, display

        display(HTML(self.table_html(table, columns, caption=caption, csv_name=csv_name, **kwargs)))

    # -- findings ----------------------------------------------------------------------------------------
    def finding(self, sentence, estimate: Estimate | None = None, *, display: bool = True):
        """State a finding: one sentence and, optionally, the :class:`~evallab.Estimate` behind it (its value,
        interval, level, method and n are written after the sentence and kept for the index). ``sentence`` may
        also be a :class:`Finding` built by a library function. Returns the :class:`Finding`."""
        from evallab.reporting._tables import Finding

        f = sentence if isinstance(sentence, Finding) else Finding.of(str(sentence), estimate)
        self.findings = [x for x in self.findings if x.sentence != f.sentence] + [f]
        if display:
            from IPython.display import HTML
            from IPython.display import display as show

            show(HTML(f.html()))
        return f

    def conclusions(self, items: Sequence[str], *, caveats: Sequence[str] = (), title: str = "Conclusions") -> str:
        """Display the closing "Conclusions" and "Caveats" lists; returns their HTML."""
        from evallab.reporting._tables import conclusions

        return conclusions(items, caveats=caveats, title=title)

    # -- sections --------------------------------------------------------------------------------------
    def render(self, section: Section) -> None:
        """Show a :class:`Section`'s items in order (findings, tables, figures, sentences) and keep its metrics,
        conclusions and caveats for :meth:`conclude` and :meth:`save`. A bundled section (:attr:`Section.bundled`)
        is left out entirely on the user's table (``user_table``) unless ``bundled_sections`` asks for it."""
        from IPython.display import HTML, Markdown, display

        from evallab.reporting._tables import Finding

        if self.skips(section):
            for x in section.items:  # close a figure that is not shown
                if hasattr(x, "savefig"):
                    import matplotlib.pyplot as plt

                    plt.close(x)
            return

        for x in section.items:
            if isinstance(x, Finding):
                self.finding(x)
            elif isinstance(x, Shown):
                self.show(x.table, x.columns, caption=x.caption, csv_name=x.csv_name)
            elif isinstance(x, str):
                display(Markdown(x))
            elif hasattr(x, "savefig"):  # a matplotlib figure: shown once, as <img alt=its title>, then closed
                display(HTML(figure_html(x)))
                import matplotlib.pyplot as plt

                plt.close(x)
            else:
                display(HTML(str(x)))
        self.metrics.update(section.metrics)
        self._conclusions += [c for c in section.conclusions if c not in self._conclusions]
        self._caveats += [c for c in section.caveats if c not in self._caveats]

    def skips(self, section: Section) -> bool:
        """Whether :meth:`render` leaves ``section`` out: it is bundled and the report is on the user's table."""
        return bool(section.bundled and self.user_table and not self.bundled_sections)

    def conclude(self, *, title: str = "Conclusions") -> str:
        """Display the conclusions and caveats the rendered sections gave; returns their HTML."""
        return self.conclusions(self._conclusions, caveats=self._caveats, title=title)

    # -- metrics -----------------------------------------------------------------------------------------
    def save(self, metrics: Mapping | None = None, *, title: str = "") -> Path:
        """Write ``<out_dir>/<name>.metrics.json``: the rendered sections' metrics and ``metrics``, and the
        findings stated through this report. Returns the path.

        A :class:`~evallab.Results` is written as its records, its measures under ``"measures"`` (so the index
        renders it with its own labels, units, intervals and methods); an :class:`~evallab.Estimate` as its value
        (``key``), its bounds (``key_low``/``key_high``) and its meaning under ``"measures"``; NaN → null.
        """
        from evallab.reporting._batch import save_metrics

        doc, meanings = {}, {}
        for k, v in {**self.metrics, **dict(metrics or {})}.items():
            if isinstance(v, Estimate):
                doc[k] = v.value
                if v.has_interval:
                    doc[f"{k}_low"], doc[f"{k}_high"] = v.low, v.high
                meanings[k] = {"estimate": {f: x for f, x in v.as_dict().items() if f not in ("value", "low", "high")}}
            elif hasattr(v, "to_dict") and hasattr(v, "columns"):
                doc[k] = pd_records(v)
                if getattr(v, "measures", None):
                    meanings[k] = v.meta()
            else:
                doc[k] = v
        return save_metrics(self.name, doc, title=title, reports_dir_=self.out_dir, findings=self.findings,
                            measures=meanings)


def bundled_section(fn=None, *, when: str | None = None, unless: str | None = None, heading: str | None = None):
    """Mark what a section function returns as built from bundled data (:attr:`Section.bundled`).

    Bare, always (e.g. the committed SmolLM2 live run); ``when="simulated"``: when that argument is truthy;
    ``unless="source"``: when that argument is empty (``""``/None: the bundled copy was read). ``heading``
    (markdown) opens the section, so a section left out of a report on the user's table leaves no heading.
    """
    import functools
    import inspect

    def wrap(f):
        sig = inspect.signature(f)

        @functools.wraps(f)
        def section(*args, **kwargs):
            sec = f(*args, **kwargs)
            if heading:
                sec.items.insert(0, heading)
            if when is None and unless is None:
                return sec.from_bundled()
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            flag = bool(bound.arguments[when]) if when is not None else not bound.arguments[unless]
            return sec.from_bundled(flag)

        return section

    return wrap(fn) if fn is not None else wrap


def figure_title(fig) -> str:
    """A matplotlib figure's title: its ``suptitle``, else its axes' titles joined with "; " (colour-bar axes have
    none), else ``"Figure"``."""
    sup = getattr(fig, "_suptitle", None)
    titles = [sup.get_text()] if sup is not None and sup.get_text() else []
    titles += [t for ax in fig.axes for t in (ax.get_title(loc) for loc in ("center", "left", "right")) if t]
    return " ".join("; ".join(dict.fromkeys(titles)).split()) or "Figure"


def figure_html(fig) -> str:
    """A matplotlib figure as ``<img alt="<its title>" src="data:image/png;base64,…">``: the alt text every image
    needs (WCAG 2.1, 1.1.1 Non-text Content) — nbconvert writes "No description has been provided for this image"
    for a figure displayed as a bare ``image/png`` output. The PNG is what the inline backend draws (tight box)."""
    import base64
    import html
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    src = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="{html.escape(figure_title(fig), quote=True)}" src="data:image/png;base64,{src}">'


def pd_records(frame) -> list[dict]:
    """A table's rows as JSON-ready records (NaN → None is done by the metrics writer)."""
    import pandas as pd

    return pd.DataFrame(frame).to_dict("records")


__all__ = ["Report", "Section", "Shown"]
