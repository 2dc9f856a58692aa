"""JSON on the judge hot path: orjson (https://github.com/ijl/orjson), read and written as the standard library
would.

Per live reply the client decodes the server's body and the reply text, and writes a journal row and a cache
value: with :mod:`json` that is about 15 µs of the client's CPU per request, with orjson about 3 µs (measured
with ``timeit`` on the bench's reply and row; ``benchmarks/bench_judges.py`` measures the whole client).
Where orjson and :mod:`json` differ, the standard library's reading wins:

- :func:`loads` falls back to :func:`json.loads` for what orjson refuses and Python reads (``NaN``,
  ``Infinity``, lone surrogate escapes, UTF-16/32 bytes), so a body is "malformed" only when :func:`json.loads`
  rejects it too (:class:`ValueError`). One difference remains: orjson reads an integer beyond 64 bits as a
  float (no token count or verdict field comes near);
- :func:`dumps` writes dates, dataclasses and other unknown objects as ``str(obj)`` (``json.dumps(...,
  default=str)``) and float subclasses (numpy floats) as numbers. ``NaN`` is written as ``null`` (valid JSON;
  :mod:`json` writes the invalid token ``NaN``). What orjson refuses (a lone surrogate, an integer beyond 64 bits)
  is written by :func:`json.dumps` with ASCII escapes (and any ``NaN`` in it as ``NaN``).

The canonical JSON that request keys and digests hash is NOT written here: it stays
:func:`evallab.judges._cache.canonical_json` (the standard library's bytes), so keys do not change.
"""

from __future__ import annotations

import json

import orjson

_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_NON_STR_KEYS


def _default(obj):
    if isinstance(obj, float):
        return float(obj)
    if isinstance(obj, int):
        return int(obj)
    return str(obj)


def loads(data: bytes | str):
    """The JSON value of ``data`` (bytes or text).

    Raises
    ------
    ValueError
        ``data`` is not JSON to :func:`json.loads` either (a :class:`json.JSONDecodeError`).
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def dumps(obj) -> bytes:
    """``obj`` as compact UTF-8 JSON bytes (unknown objects as ``str(obj)``); see the module docstring."""
    try:
        return orjson.dumps(obj, default=_default, option=_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError: lone surrogates, integers beyond 64 bits
        return json.dumps(obj, default=str).encode()


def dumps_text(obj) -> str:
    """:func:`dumps` as text."""
    return dumps(obj).decode()
