"""Skill catalogs: JSONL files of SKILL.md frontmatter (one skill per line), validated with errors naming the file
and line. Used by the trigger scorer (:func:`evallab.skills.score_matrix` and the leave-one-out and threshold
functions beside it).

Format: ``{"name", "description", "triggers": [...]}`` and optionally ``catalog_id`` (``category/skill``); the bundled
catalogs are ``keryx``, ``meowkit`` and ``sickn33`` (``data/catalogs``, see its SOURCE.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from evallab import _fileio as F
from evallab._fileio import iter_jsonl
from evallab.errors import DataError, EvallabError
from evallab.paths import data_dir


@dataclass(frozen=True)
class Skill:
    """One catalog entry.

    ``id`` is unique in its catalog; ``category`` is the id's first "/"-segment (keryx: "review/review-frontend"
    → "review"); catalogs whose ids have no "/" put every skill in a category of its own.
    """

    id: str
    name: str
    description: str
    triggers: tuple[str, ...] = ()
    category: str = ""
    line: int | None = None


@dataclass
class Catalog:
    """A list of :class:`Skill` read from one file (``path``), in file order."""

    skills: list[Skill]
    path: str | None = None

    def __len__(self) -> int:
        return len(self.skills)

    def __iter__(self):
        return iter(self.skills)

    @property
    def ids(self) -> list[str]:
        return [s.id for s in self.skills]

    def index_of(self, skill_id: str) -> int:
        """Position of ``skill_id``; raises :class:`EvallabError` naming the catalog when absent."""
        try:
            return self._pos[skill_id]
        except AttributeError:
            self._pos = {s.id: i for i, s in enumerate(self.skills)}
            return self.index_of(skill_id)
        except KeyError:
            raise EvallabError(f"{self.path or '<catalog>'}: no skill with id {skill_id!r}") from None

    def without_trigger(self, skill_id: str, trigger: str) -> Catalog:
        """The catalog with ``trigger`` removed from ``skill_id``'s own triggers only (every copy of it)."""
        return Catalog([s if s.id != skill_id else Skill(s.id, s.name, s.description,
                                                          tuple(t for t in s.triggers if t != trigger),
                                                          s.category, s.line) for s in self.skills], self.path)


#: skill names repeated in a bundled catalog as published upstream (distinct ids, see data/catalogs/SOURCE.md); only
#: these are accepted twice, and only in that file — any other repeated name is refused
UPSTREAM_DUPLICATE_NAMES = {
    "sickn33_antigravity-awesome-skills.jsonl": frozenset({"brand-guidelines", "internal-comms"}),
}


def _check_unique(s: Skill, line: int, ids: dict[str, int], names: dict[str, int], path: str | None,
                  allowed: frozenset[str] = frozenset()) -> None:
    """Refuse a repeated id or name, naming both lines (a repeated name would let one skill shadow the other)."""
    if s.id in ids:
        raise DataError(f"duplicate skill id {s.id!r} (first on line {ids[s.id]})", path=path, row=line,
                        column="id")
    ids[s.id] = line
    key = s.name.strip()
    if key in names and key not in allowed:
        raise DataError(f"duplicate skill name {key!r} (first on line {names[key]}); expected each name once, "
                        "else one skill shadows the other", path=path, row=line, column="name")
    names.setdefault(key, line)


def _category(skill_id: str) -> str:
    return skill_id.split("/", 1)[0]


def _record_to_skill(rec, path: str | None, line: int | None) -> Skill:
    def err(msg, col=None):
        return DataError(msg, path=path, row=line, column=col)

    if not isinstance(rec, Mapping):
        raise err(f"expected a JSON object, got {type(rec).__name__}")
    name = rec.get("name")
    if not isinstance(name, str) or not name.strip():
        raise err("missing or empty 'name'; expected a non-empty string", "name")
    desc = rec.get("description")
    if not isinstance(desc, str) or not desc.strip():
        raise err("missing or empty 'description'; expected a non-empty string", "description")
    trig = rec.get("triggers", [])
    if trig is None:
        trig = []
    if not isinstance(trig, list):
        raise err(f"'triggers' is a {type(trig).__name__}; expected a list of strings", "triggers")
    for k, t in enumerate(trig):
        if not isinstance(t, str):
            raise err(f"triggers[{k}] is a {type(t).__name__} ({t!r}); expected a string", "triggers")
    sid = rec.get("catalog_id") or rec.get("id")
    if sid is None:
        p = rec.get("path")
        sid = Path(p).parent.name if isinstance(p, str) and Path(p).parent.name else name
    if not isinstance(sid, str) or not sid.strip():
        raise err("'catalog_id'/'id' must be a non-empty string", "catalog_id")
    return Skill(sid, name, desc, tuple(trig), _category(sid), line)


def catalog_from_records(records: Iterable[Mapping], path: str | None = None) -> Catalog:
    """Build a :class:`Catalog` from dicts with ``name``, ``description`` and optional ``triggers``/ids.

    The id is ``catalog_id``, else ``id``, else the folder of ``path`` (``skills/<id>/SKILL.md``), else ``name``.

    Raises
    ------
    DataError
        Missing/empty name or description, non-list triggers or a non-string trigger, a duplicated id or name
        (both records named) — naming the file and the 1-based record (line) number.
    """
    skills, ids, names = [], {}, {}
    for i, rec in enumerate(records, start=1):
        s = _record_to_skill(rec, path, i)
        _check_unique(s, i, ids, names, path)
        skills.append(s)
    if not skills:
        raise DataError("the catalog has no skills", path=path)
    return Catalog(skills, path)


_ALIASES = {"keryx": "keryx_bundled_core.jsonl", "meowkit": "meowkit_skills.jsonl",
            "sickn33": "sickn33_antigravity-awesome-skills.jsonl"}


def resolve_catalog_path(catalog: str | Path) -> Path:
    """A path as given, or a bundled catalog by short name: ``keryx`` (64), ``meowkit`` (128), ``sickn33`` (559)."""

    s = str(catalog)
    if s in _ALIASES:
        return data_dir("catalogs") / _ALIASES[s]
    return Path(s)


def load_catalog(path: str | Path) -> Catalog:
    """Read a JSONL catalog (one SKILL.md frontmatter object per line; blank lines skipped).

    Parameters
    ----------
    path : a file path, or a bundled short name (see :func:`resolve_catalog_path`).

    A UTF-8 byte-order mark is accepted.

    Raises
    ------
    DataError
        Missing file, or a path that is not a regular file (directory, FIFO, device: refused before opening); a
        line that is not UTF-8 or not valid JSON; any error of :func:`catalog_from_records`, including a skill id
        or NAME used twice (both lines named; the bundled catalogs' upstream duplicates
        :data:`UPSTREAM_DUPLICATE_NAMES` excepted) — each naming the file and line.
    """
    p = resolve_catalog_path(path)
    F.check_file(p, "a JSONL catalog, one skill per line",
                 missing="no such catalog file; expected a JSONL file with one skill per line")
    allowed = frozenset()
    if p.name in UPSTREAM_DUPLICATE_NAMES and p.resolve() == (data_dir("catalogs") / p.name).resolve():
        allowed = UPSTREAM_DUPLICATE_NAMES[p.name]
    skills, ids, names = [], {}, {}
    for ln, rec in iter_jsonl(p, expected="one skill per line, a JSON object"):
        s = _record_to_skill(rec, str(p), ln)
        _check_unique(s, ln, ids, names, str(p), allowed)
        skills.append(s)
    if not skills:
        raise DataError("the catalog has no skills", path=str(p))
    return Catalog(skills, str(p))


def as_catalog(catalog) -> Catalog:
    """``catalog`` as a :class:`Catalog`: a Catalog as is, an iterable of skill records through
    :func:`catalog_from_records`.

    Raises
    ------
    EvallabError
        A path: read it with :func:`load_catalog` first (the scorer never reads files).
    """
    if isinstance(catalog, Catalog):
        return catalog
    if isinstance(catalog, (str, Path)):
        raise EvallabError(f"{catalog}: a path, not a catalog; read it with load_catalog() first")
    return catalog_from_records(catalog)
