"""Shared file reading and user-regex helpers for evallab's loaders.

- :func:`check_file` / :func:`check_folder` — refuse, at once and before any ``open()`` that could block, anything
  that is not a regular file (a directory, a FIFO, a device, a socket, a missing path) or not a folder.
- :func:`read_text` — a regular file's text, UTF-8 with or without a byte-order mark; a bad byte names its line.
- :func:`load_json` / :func:`load_yaml` — parse a file, refusing duplicated keys (a later key would silently
  shadow the earlier one) and naming the line of a syntax error.
- :func:`read_csv` — ``pandas.read_csv`` of a checked regular file, errors as one line.
- :func:`read_table` — THE reader of every table format (CSV, TSV, JSON lines, JSON array, Parquet), used by the
  loaders and the importers alike: the text encoding from a byte-order mark (UTF-8, UTF-16) or refused naming the
  byte offset ("save it as UTF-8"), duplicated column names, nested Parquet columns and non-finite numbers refused
  (:func:`sniff_encoding`, :func:`check_header`, :func:`check_flat_schema`, :func:`check_finite`).
- :func:`quote` — a user value quoted in a message, cut to :data:`QUOTE_LIMIT` characters with its full length
  given, so a 200 MB cell never becomes a 200 MB error line.
- :data:`REGEX_TIMEOUT_S`, :func:`nested_quantifier`, :func:`compile_regex`, :func:`search` — every user-supplied
  regular expression (scenario ``regex`` graders, manifest patterns) is compiled and run with the third-party
  ``regex`` package under a per-call timeout, so a catastrophic-backtracking pattern fails within the bound
  instead of hanging.

Every error is raised as the caller's error class (a :class:`~evallab.errors.DataError` subclass) built as
``err(message, path=...)``, so it renders as one line naming the file.
"""

from __future__ import annotations

import functools
import io
import json
import os
import re
import stat
from pathlib import Path

import pandas as pd
import regex
import yaml

from evallab.errors import DataError, DuplicateKey

#: seconds a user-supplied regex may run on one text before it is abandoned
REGEX_TIMEOUT_S = 1.0
_NESTED = re.compile(r"\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)[+*{]")
_BOM = "\ufeff"
#: characters of a user value quoted in an error message (:func:`quote`)
QUOTE_LIMIT = 60
#: aliases a YAML document may use (:func:`parse_yaml`): enough for any hand-written file, far below a
#: "billion laughs" expansion
YAML_MAX_ALIASES = 100


def quote(value: object, limit: int = QUOTE_LIMIT, *, length: int | None = None) -> str:
    """``repr(value)`` for an error message, cut to ``limit`` characters of the value with its full length given
    (``length``: the full length of a string of which ``value`` is only the start).

    >>> quote("abc")
    "'abc'"
    >>> quote("x" * 1000, 5)
    "'xxxxx…' (1,000 characters)"
    >>> quote(list(range(12000)), 10)
    '[0, 1, 2, …] (12,000 items)'
    """
    if isinstance(value, str):
        n = len(value) if length is None else length
        if n <= limit:
            return repr(value)
        return f"{value[:limit]!r}"[:-1] + f"…' ({n:,} characters)"
    if isinstance(value, (list, tuple, set, dict)) and len(value) > 0:
        import reprlib

        short = reprlib.Repr()  # bounded even for a structure of shared aliases ("billion laughs")
        short.maxlevel, short.maxstring, short.maxother = 3, limit, limit
        short.maxlist = short.maxtuple = short.maxset = short.maxdict = 12
        text = short.repr(value)
        if len(text) <= limit and "..." not in text:
            return text
        return f"{text[:limit]}…{repr(value.__class__())[-1]} ({len(value):,} items)"
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def _what(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "not a regular file"


def _checked(path: str | Path, err: type[DataError], missing: str, wanted: str, expected: str) -> Path:
    """``path`` as a :class:`Path` when its ``os.stat`` says it is a ``wanted`` one (``"regular file"`` or
    ``"folder"``); else ``err`` naming the path, what it is and what was expected."""
    p = Path(path)
    try:
        st = os.stat(p)
    except (FileNotFoundError, NotADirectoryError):
        raise err(missing, path=str(p)) from None
    except OSError as exc:
        raise err(f"cannot read ({exc.strerror or exc})", path=str(p)) from None
    if not (stat.S_ISREG if wanted == "regular file" else stat.S_ISDIR)(st.st_mode):
        raise err(f"is {_what(st.st_mode)}, not a {wanted}; expected {expected}", path=str(p))
    return p


def check_file(path: str | Path, expected: str, err: type[DataError] = DataError, *,
               missing: str | None = None) -> Path:
    """``path`` as a :class:`Path` when it is a regular file (symbolic links followed).

    Parameters
    ----------
    expected : what the file should hold, e.g. ``"a JSONL catalog"`` (ends the messages).
    err : the error class raised.
    missing : the message for a missing path (default ``"no such file; expected <expected>"``).

    Raises
    ------
    err
        A missing path; a directory, FIFO, device or socket ("is a directory, not a regular file; expected ...");
        a path that cannot be stat-ed (e.g. permission denied). Nothing is opened.
    """
    return _checked(path, err, missing or f"no such file; expected {expected}", "regular file", expected)


def check_folder(path: str | Path, expected: str, err: type[DataError] = DataError, *,
                 missing: str | None = None) -> Path:
    """``path`` as a :class:`Path` when it is a directory.

    Raises
    ------
    err
        A missing path (``missing`` or ``"no such folder; expected <expected>"``), or anything that is not a
        directory ("is a regular file, not a folder; expected ...").
    """
    return _checked(path, err, missing or f"no such folder; expected {expected}", "folder", expected)


def read_bytes(path: str | Path, expected: str, err: type[DataError] = DataError, *,
               missing: str | None = None) -> bytes:
    """The bytes of a regular file (:func:`check_file` first). Raises ``err`` as it does, or when reading fails."""
    p = check_file(path, expected, err, missing=missing)
    try:
        return p.read_bytes()
    except OSError as exc:
        raise err(f"cannot read ({exc.strerror or exc})", path=str(p)) from None


def decode(raw: bytes, path: str | Path | None, err: type[DataError] = DataError) -> str:
    """UTF-8 text of ``raw`` without a leading byte-order mark.

    Raises
    ------
    err
        ``line N is not valid UTF-8 (byte 0xNN at column C); expected UTF-8 text``.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise err(f"line {line} is not valid UTF-8 (byte {raw[exc.start]:#04x} at column {col}); expected UTF-8 "
                  "text", path=None if path is None else str(path)) from None
    return text[1:] if text.startswith(_BOM) else text


def read_text(path: str | Path, expected: str, err: type[DataError] = DataError, *,
              missing: str | None = None) -> str:
    """A regular file's UTF-8 text, byte-order mark removed. Raises ``err`` as :func:`check_file` and
    :func:`decode` do."""
    p = Path(path)
    return decode(read_bytes(p, expected, err, missing=missing), p, err)


def unique_pairs(pairs: list[tuple[str, object]]) -> dict:
    """``json.loads``' ``object_pairs_hook`` that refuses a repeated key (:class:`DuplicateKey`) instead of keeping
    the last value silently."""
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise DuplicateKey(k)
        out[k] = v
    return out


def parse_json(text: str, path: str | Path | None, expected: str, err: type[DataError] = DataError) -> object:
    """Decode JSON text, refusing a key repeated within one object.

    Raises
    ------
    err
        ``the file is empty; expected ...`` (nothing but white space), ``not valid JSON: <why> (line L, column
        C); expected ...`` or ``duplicated key 'k' in a JSON object;
        expected unique keys (a later one would silently replace the first)``.
    """
    where = None if path is None else str(path)
    if not text.strip():
        raise err(f"the file is empty; expected {expected}", path=where)
    try:
        return json.loads(text, object_pairs_hook=unique_pairs)
    except DuplicateKey as exc:
        raise err(f"duplicated key {exc.key!r} in a JSON object; expected unique keys (the later one would "
                  "silently replace the first)", path=where) from None
    except json.JSONDecodeError as exc:
        raise err(f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}); expected {expected}",
                  path=where) from None
    except RecursionError:
        raise err(f"not usable JSON: nested too deeply; expected {expected}", path=where) from None


def load_json(path: str | Path, expected: str, err: type[DataError] = DataError, *,
              missing: str | None = None) -> object:
    """:func:`read_text` then :func:`parse_json`."""
    p = Path(path)
    return parse_json(read_text(p, expected, err, missing=missing), p, expected, err)


@functools.cache
def _yaml_loader():
    class UniqueKeyLoader(yaml.SafeLoader):
        """SafeLoader that refuses a mapping key given twice (PyYAML keeps the last one silently)."""

        def construct_mapping(self, node, deep=False):
            if isinstance(node, yaml.MappingNode):
                first: dict = {}
                for key_node, _ in node.value:
                    try:
                        key = self.construct_object(key_node, deep=True)
                        hash(key)
                    except (TypeError, yaml.YAMLError):
                        continue
                    if key in first:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"duplicated key {key!r} (first on line {first[key] + 1}); expected unique "
                                        "keys (the later one would silently replace the first)",
                            key_node.start_mark)
                    first[key] = key_node.start_mark.line
            return super().construct_mapping(node, deep=deep)

        def compose_document(self):
            node = super().compose_document()
            _check_expansion(node)
            return node

    return UniqueKeyLoader


#: values a YAML document may expand to through its aliases (``*name`` repeating an ``&name`` node)
YAML_MAX_EXPANDED = 100_000


def _check_expansion(root) -> None:
    """Refuse a composed YAML document whose aliases expand it past :data:`YAML_MAX_EXPANDED` values (a "billion
    laughs" file is a few hundred bytes of nested aliases that expand exponentially) or that uses more than
    :data:`YAML_MAX_ALIASES` aliases. The node graph is walked once, each shared node sized once."""
    size: dict[int, int] = {}
    seen_ids: set[int] = set()
    aliases = 0

    def walk(node) -> int:
        nonlocal aliases
        key = id(node)
        if key in size:
            aliases += 1
            return size[key]
        if key in seen_ids:  # a recursive alias (a node that holds itself)
            raise yaml.composer.ComposerError(None, None, "a recursive alias (a node that contains itself)",
                                              node.start_mark)
        seen_ids.add(key)
        n = 1
        if isinstance(node, yaml.SequenceNode):
            for child in node.value:
                n += walk(child)
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                n += walk(k) + walk(v)
        size[key] = n
        return n

    if root is None:
        return
    total = walk(root)
    if aliases > YAML_MAX_ALIASES or total > YAML_MAX_EXPANDED:
        raise yaml.composer.ComposerError(
            None, None, f"{aliases:,} aliases expand the document to {total:,} values (a 'billion laughs' file; "
                        f"at most {YAML_MAX_ALIASES} aliases and {YAML_MAX_EXPANDED:,} values are read)", None)


def parse_yaml(text: str, path: str | Path | None, expected: str, err: type[DataError] = DataError, *,
               line_offset: int = 0) -> object:
    """Decode YAML text (safe loader), refusing duplicated mapping keys.

    Raises
    ------
    err
        ``not valid YAML (line L): <problem>; expected ...`` (``line_offset`` is added to L, for a YAML block
        inside a larger file).
    """

    try:
        return yaml.load(text, Loader=_yaml_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise err(yaml_message(exc, expected, line_offset), path=None if path is None else str(path)) from None
    except RecursionError:
        raise err(f"not usable YAML: nested too deeply; expected {expected}",
                  path=None if path is None else str(path)) from None


def yaml_message(exc: Exception, expected: str, line_offset: int = 0) -> str:
    """One line for a :class:`yaml.YAMLError`: ``not valid YAML (line L): <problem>; expected ...``."""
    mark = getattr(exc, "problem_mark", None)
    line = f" (line {mark.line + 1 + line_offset})" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc)
    problem = " ".join(str(problem).split())
    if "expected unique keys" in problem:  # a repeated key already says what was expected
        return f"not valid YAML{line}: {problem}"
    return f"not valid YAML{line}: {problem}; expected {expected}"


def load_yaml(path: str | Path, expected: str, err: type[DataError] = DataError, *,
              missing: str | None = None) -> object:
    """:func:`read_text` then :func:`parse_yaml`."""
    p = Path(path)
    return parse_yaml(read_text(p, expected, err, missing=missing), p, expected, err)


def read_csv(path: str | Path, expected: str, err: type[DataError] = DataError, *, missing: str | None = None,
             **kw):
    """``pandas.read_csv`` of a checked regular file (UTF-8, byte-order mark accepted; UTF-16 with its byte-order
    mark decoded), its header's names checked (:func:`check_header`).

    Raises
    ------
    err
        As :func:`check_file`; an empty file; a non-UTF-8 line (named); a column name given twice; a malformed
        table.
    """
    import csv

    p = check_file(path, expected, err, missing=missing)
    if sniff_encoding(p, err) == "utf-16":
        try:
            text = read_bytes(p, expected, err).decode("utf-16")
        except UnicodeDecodeError as exc:
            raise err(f"is not UTF-16 text although it starts with a UTF-16 byte-order mark (byte offset "
                      f"{exc.start:,}); save it as UTF-8", path=str(p)) from None
    else:
        text = read_text(p, expected, err, missing=missing)
    if not text.strip():
        raise err(f"the file is empty; expected {expected}", path=str(p))
    check_header(next(csv.reader([text.split("\n", 1)[0].rstrip("\r")], delimiter=kw.get("sep", ",")), []), p,
                 err)
    try:
        return pd.read_csv(io.StringIO(text), **kw)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise err(f"not a well-formed CSV table ({' '.join(str(exc).split())}); expected {expected}",
                  path=str(p)) from None


# ----------------------------------------------------------------------------------------- user regexes
def nested_quantifier(pattern: str) -> bool:
    """True when a group that contains a quantifier is itself quantified (``(a+)+``, ``(\\w+\\s?)*``) — the
    classic catastrophic-backtracking shape. A heuristic: evaluation still runs under :data:`REGEX_TIMEOUT_S`."""
    return bool(_NESTED.search(pattern))


def compile_regex(pattern: str, flags: int = 0):
    """Compile a user-supplied pattern with the ``regex`` package. Raises :class:`regex.error` when it does not
    compile."""
    return regex.compile(pattern, flags)


def search(pattern: str, text: str, flags: int = 0, *, timeout: float = REGEX_TIMEOUT_S):
    """``regex.search`` of a user-supplied pattern bounded by ``timeout`` seconds.

    Raises
    ------
    TimeoutError
        When the search runs past ``timeout`` (catastrophic backtracking).
    """
    return regex.search(pattern, text, flags, timeout=timeout)


def finditer(pattern: str, text: str, flags: int = 0, *, timeout: float = REGEX_TIMEOUT_S):
    """``list(regex.finditer(...))`` bounded by ``timeout`` seconds (raises :class:`TimeoutError`)."""
    return list(regex.finditer(pattern, text, flags, timeout=timeout))


def iter_jsonl(path: str | Path, *, expected: str = "one JSON object per line"):
    """Yield ``(line_number, object)`` for each non-blank line of a JSON-lines file (1-based line numbers).

    A UTF-8 byte-order mark at the start of the file is accepted.

    Raises
    ------
    DataError
        Missing file, or a path that is not a regular file (directory, FIFO, device — refused before it is
        opened); a read error; a line that is not UTF-8, not valid JSON, or not a JSON object — naming the file
        and line and saying what was ``expected``.
    """
    path = check_file(path, f"JSON lines ({expected})")
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise DataError(f"cannot read ({exc.strerror or exc})", path=str(path)) from None
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(f"line {lineno} is not valid UTF-8 (byte {raw[exc.start]:#04x}); expected UTF-8 text",
                                path=str(path), row=lineno) from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line, object_pairs_hook=unique_pairs)
            except DuplicateKey as exc:
                raise DataError(f"line {lineno} repeats the key {exc.args[0]!r}; expected each key once per object",
                                path=str(path), row=lineno, column=str(exc.args[0])) from None
            except json.JSONDecodeError as exc:
                raise DataError(f"line {lineno} is not valid JSON ({exc.msg.removesuffix(' at')} at column "
                                f"{exc.colno}); expected "
                                f"{expected}", path=str(path), row=lineno) from None
            except RecursionError:
                raise DataError(f"line {lineno} is nested too deeply; expected {expected}", path=str(path),
                                row=lineno) from None
            if not isinstance(obj, dict):
                raise DataError(f"line {lineno} is a JSON {type(obj).__name__}; expected {expected}",
                                path=str(path), row=lineno)
            del raw, line  # only the parsed object is kept while the caller holds it (a line may be 200 MB)
            yield lineno, obj


# ----------------------------------------------------------------------------------------- the table reader
#: the table formats :func:`read_table` reads (by extension)
TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson", ".json", ".parquet")
_HEADER_MAX = 1 << 20  # bytes of a CSV header line read to check its names


def _cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with its full length given when cut (no quotes)."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def located(err: type[DataError], message: str, path: str | Path | None, row: int | None = None,
            column: str | None = None, unit: str = "row") -> DataError:
    """``err`` naming the place in the caller's own terms: a :class:`~evallab.errors.ImportDataError` takes
    ``where`` (``"<unit> N"``) and ``field``, every other :class:`~evallab.errors.DataError` ``row`` and
    ``column``."""
    from evallab.errors import ImportDataError

    where = None if path is None else str(path)
    if issubclass(err, ImportDataError):
        return err(message, where, None if row is None else f"{unit} {row}", column)
    return err(message, path=where, row=row, column=column)


def sniff_encoding(path: str | Path, err: type[DataError] = DataError) -> str:
    """The text encoding of a table file from its byte-order mark: ``"utf-8-sig"``, ``"utf-16"`` (either byte
    order) or ``"utf-8"`` (no mark).

    Raises
    ------
    err
        A UTF-32 mark, or a NUL byte in the first line (UTF-16 without a byte-order mark): ``is not UTF-8 text
        (...); save it as UTF-8``.
    """
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if head.startswith((b"\x00\x00\xfe\xff", b"\xff\xfe\x00\x00")):
        raise err("is UTF-32 text (byte-order mark at byte offset 0); save it as UTF-8", path=str(path))
    if head.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    nul = head.split(b"\n", 1)[0].find(b"\x00")
    if nul >= 0:
        raise err(f"is not UTF-8 text (byte 0x00 at byte offset {nul}: UTF-16 without a byte-order mark?); "
                  "save it as UTF-8", path=str(path))
    return "utf-8"


def utf8_offset(path: str | Path, chunk: int = 1 << 22) -> tuple[int, int, int, int] | None:
    """``(byte_offset, byte, line, column)`` (column in bytes, 1-based; 0 when the line is longer than 64 KiB) of the
    first byte of ``path`` that is not UTF-8, or ``None``; read in chunks of
    ``chunk`` bytes (memory bounded whatever the file's size)."""
    import codecs

    dec = codecs.getincrementaldecoder("utf-8")()
    pos, lines = 0, 0  # bytes fed to the decoder so far; newlines before ``pos``
    with open(path, "rb") as fh:
        while True:
            block = fh.read(chunk)
            pending = len(dec.getstate()[0])  # bytes of an unfinished character carried over
            try:
                dec.decode(block, final=not block)
            except UnicodeDecodeError as exc:
                start = pos - pending + exc.start  # exc.start counts the carried bytes first
                fh.seek(start)
                bad = fh.read(1)
                upto = block[: max(start - pos, 0)]
                back = max(start - (1 << 16), 0)
                fh.seek(back)
                before = fh.read(start - back)
                nl = before.rfind(b"\n")
                col = start - (back + nl + 1) + 1 if nl >= 0 or back == 0 else 0
                return start, bad[0] if bad else 0, lines + upto.count(b"\n") + 1, col
            if not block:
                return None
            lines += block.count(b"\n")
            pos += len(block)


def encoding_error(path: str | Path, err: type[DataError] = DataError) -> DataError | None:
    """The one-line error for a table file that is not UTF-8 (``None`` when it is)."""
    found = utf8_offset(path)
    if found is None:
        return None
    offset, byte, line, col = found
    at = f"line {line}, column {col}" if col else f"line {line}"
    return err(f"is not UTF-8 text (byte {byte:#04x} at byte offset {offset:,}: {at}); save it as UTF-8",
               path=str(path))


def check_header(names: list[str], path: str | Path | None, err: type[DataError] = DataError) -> list[str]:
    """Refuse a column name given twice (pandas would silently rename the second ``name.1``), naming both."""
    first: dict[str, int] = {}
    for i, n in enumerate(names, start=1):
        if n in first:
            raise located(err, f"column {first[n]} and column {i} are both named {quote(n)}; expected each column "
                               "name once", path, column=n)
        first[n] = i
    return names


def _csv_header(raw: bytes, sep: str, encoding: str, path: Path, err: type[DataError]) -> list[str]:
    import csv

    line = raw.split(b"\n", 1)[0].rstrip(b"\r")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise encoding_error(path, err) or err("is not UTF-8 text; save it as UTF-8", path=str(path)) from None
    text = text.lstrip(_BOM)
    return next(csv.reader([text], delimiter=sep), [])


def _ragged(data, sep: str, path: Path, err: type[DataError], expected: str) -> DataError:
    """The first line whose number of fields differs from the header's (read again with the ``csv`` module)."""
    import csv

    fh = io.TextIOWrapper(data, encoding="utf-8-sig", errors="replace", newline="")
    reader = csv.reader(fh, delimiter=sep)
    header = next(reader, [])
    for row in reader:
        if row and len(row) != len(header):
            return err(f"not a well-formed CSV table: line {reader.line_num} has {len(row)} fields, the header "
                       f"{len(header)}; expected {expected}", path=str(path))
    return err(f"not a well-formed CSV table; expected {expected}", path=str(path))


def read_csv_arrow(path: str | Path, sep: str = ",", err: type[DataError] = DataError, *, text: bool = True,
                   expected: str = "a header row and the same number of fields on every line"):
    """A CSV/TSV file as a :class:`pyarrow.Table` (pyarrow's multi-threaded parser): every column as text
    (``text=True``; the only missing value is an empty field) or with pyarrow's type inference.

    The encoding is read from a byte-order mark (:func:`sniff_encoding`: UTF-8 with or without it, UTF-16 decoded);
    the header's names are checked (:func:`check_header`).

    Raises
    ------
    err
        Not UTF-8 (the byte offset and line of the first bad byte, "save it as UTF-8"), a column name given twice
        (both named), a line with another number of fields than the header (named), an empty file.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    p = Path(path)
    encoding = sniff_encoding(p, err)
    data = b""
    if encoding == "utf-16":
        try:
            data = p.read_bytes().decode("utf-16").encode("utf-8")
        except UnicodeDecodeError as exc:
            raise err(f"is not UTF-16 text although it starts with a UTF-16 byte-order mark (byte offset "
                      f"{exc.start:,}); save it as UTF-8", path=str(p)) from None
        head = data[:_HEADER_MAX]
    else:
        with p.open("rb") as fh:
            head = fh.read(_HEADER_MAX)
    names = check_header(_csv_header(head, sep, encoding, p, err), p, err)
    if not names or names == [""]:
        raise err("the file has no header row; expected a header row and at least one row", path=str(p))
    convert = pacsv.ConvertOptions(strings_can_be_null=True, null_values=[""], auto_dict_encode=False,
                                   column_types={n: pa.string() for n in names} if text else None)
    def parse(block_size: int):
        src = pa.BufferReader(data) if encoding == "utf-16" else p
        return pacsv.read_csv(src, read_options=pacsv.ReadOptions(use_threads=True, block_size=block_size),
                              parse_options=pacsv.ParseOptions(delimiter=sep), convert_options=convert)

    try:
        try:
            tbl = parse(1 << 24)
        except pa.ArrowInvalid as exc:
            if "straddl" not in str(exc):
                raise
            # a row longer than a block (a cell of hundreds of MB): one block as large as the file
            size = len(data) if encoding == "utf-16" else p.stat().st_size
            tbl = parse(min(size + 1, (1 << 31) - 1))
    except pa.ArrowInvalid as exc:
        msg = str(exc)
        if "UTF8" in msg or "utf8" in msg.lower():
            raise (encoding_error(p, err) or err("is not UTF-8 text; save it as UTF-8", path=str(p))) from None
        if "Expected" in msg and "columns" in msg:
            with (io.BytesIO(data) if encoding == "utf-16" else p.open("rb")) as fh:
                raise _ragged(fh, sep, p, err, expected) from None
        if "Empty CSV file" in msg:
            raise err("the file is empty; expected a header row and at least one row", path=str(p)) from None
        raise err(f"not a well-formed CSV table ({_cut(msg.splitlines()[0], 120)}); expected {expected}",
                  path=str(p)) from None
    if tbl.column_names and tbl.column_names[0].startswith(_BOM):
        tbl = tbl.rename_columns([tbl.column_names[0][1:], *tbl.column_names[1:]])
    if not text and any(pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type) for f in tbl.schema):
        raise (encoding_error(p, err) or err("is not UTF-8 text; save it as UTF-8", path=str(p)))
    return tbl


def check_flat_schema(schema, path: str | Path | None, err: type[DataError] = DataError) -> None:
    """Refuse a nested column (struct, list, map, union) of an Arrow/Parquet schema, naming it and its type; and a
    column name given twice."""
    import pyarrow as pa

    check_header(list(schema.names), path, err)
    for f in schema:
        t = f.type
        if pa.types.is_dictionary(t):
            t = t.value_type
        if pa.types.is_nested(t):
            raise located(err, f"is a nested column of type {_cut(str(f.type), 80)}; expected flat columns (text, "
                               "numbers, booleans, dates)", path, column=f.name)


def read_parquet_arrow(path: str | Path, err: type[DataError] = DataError):
    """A Parquet file as a :class:`pyarrow.Table`, its schema checked first (:func:`check_flat_schema`)."""
    import pyarrow.parquet as pq

    p = Path(path)
    try:
        pf = pq.ParquetFile(p)
    except Exception as exc:  # pyarrow raises several types
        raise err(f"not a readable Parquet file ({_cut(str(exc).splitlines()[0], 120)})",
                  path=str(p)) from None
    check_flat_schema(pf.schema_arrow, p, err)
    try:
        return pf.read()
    except Exception as exc:  # pyarrow raises several types
        raise err(f"not a readable Parquet file ({_cut(str(exc).splitlines()[0], 120)})",
                  path=str(p)) from None


def check_finite(df: pd.DataFrame, path: str | Path | None, err: type[DataError] = DataError, *,
                 unit: str = "row", columns=None) -> pd.DataFrame:
    """Refuse ``inf``/``-inf`` in a numeric column (of ``columns``, default every one), naming the first row
    (1-based) and column. NaN stays a missing value."""
    import numpy as np

    for c in (df.columns if columns is None else [c for c in columns if c in df.columns]):
        s = df[c]
        if not (pd.api.types.is_float_dtype(s.dtype) or s.dtype == object):
            continue
        if s.dtype == object:
            vals = [v for v in s if isinstance(v, float)]
            if not vals or all(np.isfinite(vals)):
                continue
            arr = np.array([v if isinstance(v, float) else 0.0 for v in s], dtype=float)
        else:
            arr = s.to_numpy(dtype=float, na_value=np.nan)
        bad = np.isinf(arr)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise located(err, f"non-finite number {float(arr[i])!r}; expected a finite number or empty (missing)", path,
                          row=i + 1, column=str(c), unit=unit)
    return df


def read_table(path: str | Path, expected: str = "a table (.csv, .tsv, .jsonl, .ndjson, .json or .parquet)",
               err: type[DataError] = DataError, *, missing: str | None = None, na: str = "nan",
               json_arrays: bool = False) -> tuple[pd.DataFrame, str]:
    """Read any table file — the one reader of the loaders and the importers. Returns ``(frame, unit)``: ``unit``
    names a data row in errors (``row`` for CSV/TSV/Parquet, ``line`` for JSON lines, ``entry`` for a JSON array).

    CSV/TSV: every column as text, only an empty field missing (:func:`read_csv_arrow`); Parquet: its own types
    (:func:`read_parquet_arrow`); JSON lines: one object per line (:func:`iter_jsonl`); ``.json``: JSON lines, or
    with ``json_arrays`` also an array of objects. Text columns are pandas ``str`` (``na="nan"``) or ``string``
    (``na="NA"``).

    Raises
    ------
    err
        As :func:`check_file`; an unknown extension; an empty file; every refusal of the format's reader; a
        non-finite number in a numeric column (:func:`check_finite`).
    """
    import pyarrow as pa

    p = check_file(path, expected, err, missing=missing)
    suffix = p.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise err(f"unknown file type {suffix!r}; expected {expected}", path=str(p))
    if p.stat().st_size == 0:
        raise err(f"the file is empty; expected {expected}", path=str(p))

    def mapper(t):
        if na == "NA" and (pa.types.is_string(t) or pa.types.is_large_string(t)):
            return pd.StringDtype()
        return None

    if suffix == ".parquet":
        df = read_parquet_arrow(p, err).to_pandas(types_mapper=mapper)
        return check_finite(df, p, err), "row"
    if suffix in (".csv", ".tsv"):
        tbl = read_csv_arrow(p, "\t" if suffix == ".tsv" else ",", err)
        return tbl.to_pandas(types_mapper=mapper), "row"
    df = pd.DataFrame([obj for _, obj in iter_jsonl(p, expected="one JSON object per line")])
    return check_finite(df, p, err, unit="line"), "line"


def read_csv_typed(path: str | Path, sep: str = ",", err: type[DataError] = DataError) -> pd.DataFrame | None:
    """A CSV/TSV file with pandas' C parser and its type inference (the fast path of the table importer), after the
    same checks as :func:`read_csv_arrow`: the encoding from a byte-order mark (:func:`sniff_encoding`) and the
    header's names (:func:`check_header`). ``None`` when the file needs the text reader (:func:`read_csv_arrow`)
    to name its problem: not UTF-8, malformed."""
    p = Path(path)
    encoding = sniff_encoding(p, err)
    with p.open("rb") as fh:
        head = fh.read(_HEADER_MAX)
    if encoding == "utf-16":
        head = head[: len(head) // 2 * 2].decode("utf-16", errors="replace").encode("utf-8")
    check_header(_csv_header(head, sep, encoding, p, err), p, err)
    try:
        return pd.read_csv(p, sep=sep, keep_default_na=False, na_values=[""], encoding=encoding)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError):
        return None
