"""Shared file reading and user-regex helpers for evallab's loaders.

- :func:`check_file` / :func:`check_folder` — refuse, at once and before any ``open()`` that could block, anything
  that is not a regular file (a directory, a FIFO, a device, a socket, a missing path) or not a folder.
- :func:`read_text` — a regular file's text, UTF-8 with or without a byte-order mark; a bad byte names its line.
- :func:`load_json` / :func:`load_yaml` — parse a file, refusing duplicated keys (a later key would silently
  shadow the earlier one) and naming the line of a syntax error.
- :func:`read_csv` — ``pandas.read_csv`` of a checked regular file, errors as one line.
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
        ``not valid JSON: <why> (line L, column C); expected ...`` or ``duplicated key 'k' in a JSON object;
        expected unique keys (a later one would silently replace the first)``.
    """
    where = None if path is None else str(path)
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

    return UniqueKeyLoader


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
    """``pandas.read_csv`` of a checked regular file (UTF-8, byte-order mark accepted).

    Raises
    ------
    err
        As :func:`check_file`; an empty file; a non-UTF-8 line (named); a malformed table.
    """
    p = Path(path)
    text = read_text(p, expected, err, missing=missing)
    if not text.strip():
        raise err(f"the file is empty; expected {expected}", path=str(p))
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
            yield lineno, obj
