"""What the section tests share: a section's content as plain text."""

from __future__ import annotations

import re

from evallab.reporting._context import Report


def section_text(sec, tmp_path) -> str:
    """Everything a section shows, as text (tables rendered through the report context)."""
    rep = Report("t", tmp_path)
    parts = [f.sentence for f in sec.findings] + [x for x in sec.items if isinstance(x, str)]
    parts += [re.sub(r"<[^>]+>", " ", rep.table_html(t.table, t.columns, caption=t.caption)) for t in sec.tables]
    return re.sub(r"\s+", " ", " ".join(parts))
