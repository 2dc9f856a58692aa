"""On-disk cache of judge replies, keyed by the canonical request (DESIGN.md, "Judges").

An sqlite database in WAL mode (``PRAGMA journal_mode=WAL``, a 30 s busy timeout): two processes can read and
write it at once — sqlite serialises the writers, readers never block. Writes are batched (one transaction per
256 replies or per second, and at the end of a run); a crash loses at most that batch of cached replies, never a
row of the run's output (the runner's journal holds those). Values are JSON: the raw reply text,
token counts, latency, and the model and system fingerprint the server reported — never a request header, so an
API key cannot reach it. Verdicts are re-parsed and costs re-priced on every read, so a parser fix or a new price
table applies to cached replies too.

The key is the sha256 of the canonical JSON (:func:`canonical_json`: keys sorted, except a response schema's
``properties``, whose order changes what a structured-output model writes) of the base URL, the exact body sent (model, messages,
temperature, seed, max tokens and every ``extra_body`` field, which may override any of them) and the sample
index: :func:`cache_key`. A run looks its keys up at once (:meth:`Cache.prefetch`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from evallab.errors import EvallabError
from evallab.judges import _jsoncodec as jsoncodec
from evallab.judges._types import JudgeRequest

#: version of the cache key/value layout (part of the key, so an incompatible change starts a fresh key space);
#: 2 = keyed on the exact JSON body sent (``extra_body`` included)
CACHE_FORMAT = 2


def chat_body(model: str, request: JudgeRequest, extra_body: Mapping | None = None) -> dict:
    """The JSON body of a ``/chat/completions`` request, exactly as :class:`~evallab.judges.OpenAICompatibleJudge`
    sends it: ``model``, ``messages``, ``temperature``, ``seed``/``max_tokens``/``reasoning_effort``/``thinking``
    when set, then ``extra_body`` merged over them (an ``extra_body`` field overrides a field of the same name)."""
    b = {"model": model, "messages": [{"role": m.role, "content": m.content} for m in request.messages],
         "temperature": request.temperature}
    if request.seed is not None:
        b["seed"] = request.seed
    if request.max_tokens is not None:
        b["max_tokens"] = request.max_tokens
    if request.reasoning_effort is not None:
        b["reasoning_effort"] = request.reasoning_effort
    if request.thinking_budget is not None:
        b["thinking"] = {"type": "enabled", "budget_tokens": int(request.thinking_budget)}
    if extra_body:
        b.update(extra_body)
    return b


def canonical(obj):
    """``obj`` with every mapping's keys sorted — except the members of a JSON schema's ``properties``, kept in the
    order given: a structured-output model writes the fields in that order (OpenAI "Structured Outputs": outputs
    are produced in the order of the schema's keys; llama.cpp's json-schema-to-grammar follows ``properties``), so
    it is part of what is asked, while every other key order is not. Lists keep their order."""
    return _canonical(obj, False)


def _canonical(obj, keep: bool):
    if isinstance(obj, Mapping):
        items = obj.items() if keep else sorted(obj.items())
        return {k: _canonical(v, k == "properties" and not keep) for k, v in items}
    if isinstance(obj, (list, tuple)):
        return [_canonical(v, False) for v in obj]
    return obj


class _NotPlain(Exception):
    """A mapping that is not a dict: :func:`canonical` turns it into one first."""


def _plain_default(obj):
    if isinstance(obj, Mapping):
        raise _NotPlain
    return str(obj)


_SORTED = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=_plain_default)


def canonical_json(obj) -> str:
    """The canonical JSON text of ``obj`` (:func:`canonical`, compact separators, UTF-8 kept): what evallab sends
    as a request body and hashes for its keys and digests.

    Written in one pass of the C encoder with every key sorted whenever that is the same text: when ``obj`` holds
    no key ``properties`` (whose members keep their order) and no mapping other than a dict; otherwise through
    :func:`canonical` (a test checks both ways give the same text)."""
    try:
        text = _SORTED.encode(obj)
    except _NotPlain:
        text = None
    if text is None or '"properties"' in text:  # the key is written as "properties": — nothing else is missed
        return json.dumps(canonical(obj), ensure_ascii=False, separators=(",", ":"), default=str)
    return text


def body_key(base_url: str, body: Mapping, sample: int = 0) -> str:
    """sha256 hex of :func:`canonical_json` of ``{"base_url": base URL without trailing slash, "body": body,
    "sample": sample, "v": format}`` — keys sorted, a response schema's ``properties`` in the order sent.

    ``body`` is the JSON body sent; ``sample`` the repeat index (the same body asked twice as two samples is two
    replies)."""
    doc = {"base_url": base_url.rstrip("/"), "body": body, "sample": int(sample), "v": CACHE_FORMAT}
    return hashlib.sha256(canonical_json(doc).encode()).hexdigest()


def cache_key(base_url: str, model: str, request: JudgeRequest, *, extra_body: Mapping | None = None) -> str:
    """The cache key of ``request`` sent to ``model`` at ``base_url``: :func:`body_key` of the exact body sent
    (:func:`chat_body`, ``extra_body`` included) and the sample index (``request.metadata["sample"]``, default 0).

    Returns
    -------
    str
        64 hex characters. Equal bodies give equal keys (e.g. ``extra_body={"temperature": 0.7}`` keys like a
        request with ``temperature=0.7``); any difference in what is sent gives a different key.
    """
    return body_key(base_url, chat_body(model, request, extra_body), int(request.metadata.get("sample", 0) or 0))


class Cache:
    """A reply cache file.

    Parameters
    ----------
    path : str or Path
        The sqlite file (created with its folder when missing).
    read : bool
        Answer from the cache (``False`` = bypass reads).
    write : bool
        Store new replies. ``read=False, write=False`` bypasses the cache; ``read=False, write=True`` refreshes it
        (every request goes live and overwrites its entry).

    Raises
    ------
    EvallabError
        The file cannot be opened as an sqlite database.
    """

    def __init__(self, path: str | Path, *, read: bool = True, write: bool = True) -> None:
        self.path = Path(path)
        self.read, self.write = read, write
        self._local = threading.local()
        self.hits = 0
        self.misses = 0
        self.batch_size, self.batch_seconds = 256, 1.0
        self._pending: dict[str, str] = {}
        self._known: dict[str, str] = {}  # looked up by prefetch(): key -> stored JSON
        self._absent: set[str] = set()  # looked up by prefetch() and not stored (until put)
        self._last_flush = time.monotonic()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn()  # fail early on a bad file

    @classmethod
    def bypass(cls, path: str | Path) -> Cache:
        """A cache that neither reads nor writes."""
        return cls(path, read=False, write=False)

    @classmethod
    def refresh(cls, path: str | Path) -> Cache:
        """A cache that ignores stored replies and overwrites them with fresh ones."""
        return cls(path, read=False, write=True)

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            self._local.conn = conn
        return conn

    #: how long opening waits for another process that is setting up the same new file
    OPEN_SECONDS = 30.0

    def _open(self) -> sqlite3.Connection:
        """A connection with the cache's settings and tables. Two processes opening one new file at once: switching
        it to WAL takes an exclusive lock, and SQLite answers the other "database is locked" at once, without
        waiting out the connection's timeout (seen on CI: one of two writers started together failed). The set-up
        is asked again until :attr:`OPEN_SECONDS` have passed; any other error is a file that is not a cache."""
        deadline = time.monotonic() + self.OPEN_SECONDS
        while True:
            conn = None
            try:
                conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, value TEXT NOT NULL, "
                             "created REAL NOT NULL)")
                conn.execute("CREATE TABLE IF NOT EXISTS endpoints (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                return conn
            except sqlite3.OperationalError as exc:
                if conn is not None:
                    conn.close()
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise self._unreadable(exc) from None
                time.sleep(0.05)
            except sqlite3.DatabaseError as exc:
                if conn is not None:
                    conn.close()
                raise self._unreadable(exc) from None

    def _unreadable(self, exc: Exception) -> EvallabError:
        return EvallabError(f"{self.path}: cannot open the judge cache ({exc}); expected an sqlite file written by "
                            "evallab — delete it to start a fresh cache")

    def get(self, key: str) -> dict | None:
        """The stored value of ``key`` (``None`` when absent or when reads are bypassed)."""
        if not self.read:
            return None
        if key in self._pending:
            self.hits += 1
            return jsoncodec.loads(self._pending[key])
        if key in self._absent:
            self.misses += 1
            return None
        if key in self._known:
            self.hits += 1
            return jsoncodec.loads(self._known[key])
        row = self._conn().execute("SELECT value FROM replies WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return jsoncodec.loads(row[0])

    def put(self, key: str, value: dict) -> None:
        """Store ``value`` (JSON-serialisable) under ``key``; a no-op when writes are off.

        Writes are batched: they reach the file (one transaction) every :attr:`batch_size` values or
        :attr:`batch_seconds` seconds, and on :meth:`flush`/:meth:`close`. Until then :meth:`get` still sees them.
        """
        if not self.write:
            return
        self._absent.discard(key)
        self._known.pop(key, None)
        self._pending[key] = jsoncodec.dumps_text(value)
        now = time.monotonic()
        if len(self._pending) >= self.batch_size or now - self._last_flush >= self.batch_seconds:
            self.flush()

    def prefetch(self, keys: Iterable[str]) -> int:
        """Look ``keys`` up in a few queries (500 keys each) instead of one query per :meth:`get`.

        Until a key is :meth:`put`, :meth:`get` answers it from this lookup: a reply another process stores under
        that key later in this run is not seen (the output file's lock keeps two runs of one output apart, so they
        never share keys while both run). Returns how many of the keys are stored; 0 when reads are bypassed."""
        if not self.read:
            return 0
        keys = [k for k in dict.fromkeys(keys) if k not in self._pending]
        conn, found = self._conn(), {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            found.update(conn.execute(f"SELECT key, value FROM replies WHERE key IN ({','.join('?' * len(chunk))})",
                                      chunk).fetchall())
        self._known.update(found)
        self._absent.update(k for k in keys if k not in found)
        return len(found)

    def flush(self) -> None:
        """Write the pending values in one transaction."""
        if not self._pending:
            self._last_flush = time.monotonic()
            return
        items, self._pending = self._pending, {}
        now = time.time()
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("INSERT OR REPLACE INTO replies (key, value, created) VALUES (?, ?, ?)",
                             [(k, v, now) for k, v in items.items()])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._last_flush = time.monotonic()

    def get_endpoint(self, key: str) -> str | None:
        """What was learnt about an endpoint (e.g. its structured-output dialect), ``None`` when nothing.
        Stored beside the replies, never holding a key or header."""
        row = self._conn().execute("SELECT value FROM endpoints WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put_endpoint(self, key: str, value: str) -> None:
        """Remember ``value`` for the endpoint ``key`` (written at once; a no-op when writes are off)."""
        if self.write:
            self._conn().execute("INSERT OR REPLACE INTO endpoints (key, value) VALUES (?, ?)", (key, value))

    def __len__(self) -> int:
        self.flush()
        return self._conn().execute("SELECT COUNT(*) FROM replies").fetchone()[0]

    def __contains__(self, key: str) -> bool:
        if key in self._pending:
            return True
        return self._conn().execute("SELECT 1 FROM replies WHERE key = ?", (key,)).fetchone() is not None

    def close(self) -> None:
        self.flush()
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def __repr__(self) -> str:
        return f"Cache({str(self.path)!r}, read={self.read}, write={self.write})"
