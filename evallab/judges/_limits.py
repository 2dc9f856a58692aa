"""How much to send to one endpoint at once: an adaptive concurrency limit, server rate-limit headers and
optional request/token budgets.

:class:`AdaptiveLimiter` is an AIMD limit with a latency signal, in the manner of Netflix's concurrency-limits
(``AIMDLimit`` and the Vegas/Gradient limits: https://github.com/Netflix/concurrency-limits):

- it starts low (``initial``, default 2 requests in flight) and grows while the latency holds: in slow start +2
  per reply whose latency is within ``flat`` (1.2) × the no-load latency — no queueing anywhere, the limit triples
  per round trip — and +1 per other reply (it doubles), +1/limit per reply after the first cut (+1 per round
  trip);
  growth needs the limit to be in use (at least half of it in flight), so an idle client does not inflate it;
- it cuts on overload: a timeout, HTTP 429 or 503 halves the limit; a recent latency (an exponentially weighted
  mean, ``smoothing``) above ``tolerance`` × the no-load latency (the smallest latency of the last ``window`` replies) — in slow start, any
  reply above 1.5 × — multiplies it by the gradient ``tolerance × no-load / latency``, kept within
  ``[backoff, latency_backoff]`` (Gradient2's rule). At most one cut per round trip: a reply to a request sent
  before the last cut does not cut again (TCP's rule), so a burst of 32 timeouts is one halving, not 32;
- the limit stays in ``[1, ceiling]`` (``ceiling`` = the judge's ``max_concurrency``, ``--concurrency``);
- what it learnt carries over: a later limiter on the same endpoint starts from ``learnt`` (the judge keeps the
  limit of each (base URL, model) in the process), not from ``initial`` again;
- :meth:`pause` holds every new request until a time (``Retry-After`` of a 429, too few remaining tokens until
  their reset); :meth:`set_budget` counts down the requests the server still allows (``x-ratelimit-remaining-
  requests``) and holds new ones at 0 until the reset.

Waiting for a slot happens BEFORE a request is sent: the client's timeout counts from the send, never while
a request waits here. Against a server that answers one request at a time (llama.cpp's server with one slot) the
limit stays low — measured (``make bench``: 0.5 s per reply, a 3 s timeout, 60 calls) it is cut about 15 times,
ends near 3 and at most 4 requests are at the server at once, so the server is never idle and the slowest reply
waits about 2 s (4 replies' time), inside the timeout. Replies slower than about a quarter of the timeout leave
no such room: raise the timeout or pass ``max_concurrency=1``.

:func:`ratelimit_pause` reads OpenAI's rate-limit headers (``x-ratelimit-remaining-requests`` /
``-tokens`` and ``x-ratelimit-reset-requests`` / ``-tokens``, durations such as ``"1s"``, ``"6m0s"``, ``"20ms"``).
:func:`parse_retry_after` reads every form of Retry-After.
"""

from __future__ import annotations

import asyncio
import email.utils
import re
import time
from collections import deque
from collections.abc import Mapping

from evallab.errors import ArgumentError

#: outcome of one request, as seen by the limiter
OK, OVERLOAD, OTHER = "ok", "overload", "other"


class AdaptiveLimiter:
    """An adaptive limit on the requests in flight to one endpoint (see the module docstring).

    Parameters
    ----------
    ceiling : int
        The most requests in flight at once (>= 1).
    initial : int
        The limit at the start (clipped to ``[1, ceiling]``).
    tolerance : float
        A reply slower than ``tolerance`` × the no-load latency counts as rising latency (> 1).
    backoff : float
        Factor applied on a timeout, 429 or 503 (in (0, 1)).
    latency_backoff : float
        The gentlest factor applied on rising latency (in (0, 1]); the steepest is ``backoff``.
    window : int
        Replies over which the no-load latency (their minimum) is taken.
    smoothing : float
        Weight of the newest reply in the recent latency (an exponentially weighted mean) compared with
        ``tolerance`` × the no-load latency.
    flat : float
        In slow start, a reply within ``flat`` × the no-load latency shows no queueing: the limit grows by 2 for it
        (by 1 otherwise); between 1 and ``tolerance``.
    adaptive : bool
        ``False`` = a fixed limit of ``ceiling`` (a plain semaphore; pauses still apply).
    learnt : (float, bool), optional
        A limit learnt earlier on the same endpoint and whether it was still in slow start
        (:meth:`learnt_state`): the limiter starts there (clipped to ``[1, ceiling]``) instead of at ``initial``.

    Attributes
    ----------
    limit : float
        The current limit (requests in flight allowed = ``max(1, int(limit))``).
    in_flight : int
        Requests holding a slot.
    cuts, max_seen : int, float
        Number of cuts so far and the highest limit reached.
    history : list of (seconds since start, limit)
        Every change of the integer limit.

    Raises
    ------
    ArgumentError
        A parameter out of its range (a ``ValueError``).
    """

    def __init__(self, ceiling: int, *, initial: int = 2, tolerance: float = 2.0, backoff: float = 0.5,
                 latency_backoff: float = 0.9, window: int = 100, adaptive: bool = True,
                 smoothing: float = 0.3, flat: float = 1.2, learnt: tuple[float, bool] | None = None) -> None:
        if (ceiling < 1 or tolerance <= 1 or not 0 < backoff < 1 or not 0 < latency_backoff <= 1 or window < 1
                or not 1 <= flat <= tolerance):
            raise ArgumentError("AdaptiveLimiter: expected ceiling >= 1, tolerance > 1, 0 < backoff < 1, "
                             "0 < latency_backoff <= 1, window >= 1, 1 <= flat <= tolerance")
        self.ceiling = int(ceiling)
        self.adaptive = bool(adaptive)
        self.limit = float(max(1, min(self.ceiling, int(initial) if adaptive else self.ceiling)))
        self.slow_start = True
        if adaptive and learnt is not None:
            self.limit, self.slow_start = max(1.0, min(float(self.ceiling), float(learnt[0]))), bool(learnt[1])
        self._cap = int(self.limit)
        self.tolerance, self.backoff, self.latency_backoff = tolerance, backoff, latency_backoff
        self.smoothing = smoothing
        self.flat = float(flat)
        self._recent: float | None = None
        self.in_flight = 0
        self.cuts = 0
        self.max_seen = self.limit
        self._rtts: deque[float] = deque(maxlen=window)
        self._base = float("inf")
        self._last_cut = -1.0
        self._paused_until = 0.0
        self._budget: int | None = None  # requests the server still allows until _budget_until (None = unknown)
        self._budget_until = 0.0
        self._waiters: deque[asyncio.Future] = deque()
        self._woken = 0  # slots handed to waiters that have not run yet
        self._t0 = time.monotonic()
        self.history: list[tuple[float, int]] = [(0.0, self._cap)]

    def __repr__(self) -> str:
        return f"AdaptiveLimiter(limit={self.limit:.2f}, ceiling={self.ceiling}, in_flight={self.in_flight})"

    # -- slots ----------------------------------------------------------------------------------------------
    async def acquire(self) -> float:
        """Wait for a slot (and for the end of any pause); returns the send time (``time.monotonic()``) to pass
        to :meth:`release`. Waiting requests get their slots in arrival order: a released slot is handed to the
        first waiter (reserved for it until it runs), so it counts as in use from the hand-off on."""
        woken = reserved = False
        while True:
            now = time.monotonic()
            if self._paused_until > now or (self._budget is not None and now < self._budget_until
                                            and self._budget <= 0):
                if reserved:  # a pause or a spent budget came between the hand-off and now: give the slot back
                    self._woken -= 1
                    reserved = False
                until = self._paused_until if self._paused_until > now else self._budget_until
                await asyncio.sleep(until - now)
                woken = True
                continue
            if self._budget is not None and now >= self._budget_until:
                self._budget = None
            if reserved:
                self._woken -= 1
                reserved = False
                free = self.in_flight < self._cap  # the limit may have been cut since the hand-off
            else:
                free = self.in_flight + self._woken < self._cap and (woken or not self._waiters)
            if free:
                self.in_flight += 1
                if self._budget is not None:
                    self._budget -= 1
                if self._waiters:
                    self._wake()
                return now
            fut = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            try:
                await fut
            except BaseException:
                if fut in self._waiters:
                    self._waiters.remove(fut)
                elif fut.done() and not fut.cancelled():
                    self._woken -= 1
                    self._wake()  # pass on a wake-up this task will not use
                raise
            woken = reserved = True

    def _wake(self) -> None:
        free = self._cap - self.in_flight - self._woken
        while free > 0 and self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                self._woken += 1
                free -= 1

    def learnt_state(self) -> tuple[float, bool]:
        """``(limit, slow_start)``: what a later limiter on the same endpoint starts from (``learnt=``)."""
        return self.limit, self.slow_start

    def reset(self) -> None:
        """Forget the requests in flight and waiting (their event loop is gone); the learnt limit is kept."""
        self._waiters.clear()
        self.in_flight = self._woken = 0

    def release(self, sent: float, outcome: str = OK, latency: float | None = None) -> None:
        """Give back the slot taken at ``sent`` and adapt the limit to the ``outcome`` (:data:`OK` with its
        ``latency`` in seconds, :data:`OVERLOAD` for a timeout/429/503, :data:`OTHER` for anything that says
        nothing about load)."""
        busy = self.in_flight + self._woken  # slots handed to waiters count as in use
        self.in_flight -= 1
        if not self.adaptive:
            pass
        elif outcome == OK and latency is not None:
            evicted = self._rtts[0] if len(self._rtts) == self._rtts.maxlen else None
            self._rtts.append(latency)
            if latency <= self._base:
                self._base = latency
            elif evicted == self._base:
                self._base = min(self._rtts)  # the minimum left the window
            # the recent latency (an EWMA, so one slow reply — a GC pause, a long answer — does not cut)
            self._recent = latency if self._recent is None else self._recent + self.smoothing * (latency - self._recent)
            # slow start ends early, at 1.5x (the reply and the recent mean both), since the limit doubles per trip
            rising = self._recent > self.tolerance * self._base or self.slow_start and latency > 1.5 * self._base
            if rising:  # the gradient: cut by how far latency rose
                self._cut(sent, max(self.backoff, min(self.latency_backoff, self.tolerance * self._base / self._recent)))
            elif busy * 2 >= self._cap:  # grow only while the limit is in use
                if self.slow_start:  # +1 per reply (doubling per round trip), +2 (tripling) while no queueing shows
                    step = 2.0 if latency <= self.flat * self._base else 1.0
                else:
                    step = 1.0 / self.limit
                self.limit = min(float(self.ceiling), self.limit + step)
                if self.limit > self.max_seen:
                    self.max_seen = self.limit
        elif outcome == OVERLOAD:
            self._cut(sent, self.backoff)
        cap = max(1, int(self.limit))
        if cap != self._cap:
            self._cap = cap
            self.history.append((time.monotonic() - self._t0, cap))
        if self._waiters:
            self._wake()

    def _cut(self, sent: float, factor: float) -> None:
        if sent <= self._last_cut:  # sent before the last cut: that cut already answered this overload
            return
        self.slow_start = False
        self.limit = max(1.0, self.limit * factor)
        self._last_cut = time.monotonic()
        self.cuts += 1

    def set_budget(self, requests: int, reset: float) -> None:
        """The server allows ``requests`` more requests (beyond those in flight) for the next ``reset`` seconds:
        each send takes one; at 0 new requests wait for the reset (``x-ratelimit-remaining-requests``)."""
        self._budget = int(requests)
        self._budget_until = time.monotonic() + max(0.0, reset)

    def pause(self, seconds: float) -> None:
        """Send nothing new for ``seconds`` (extends, never shortens, a pause already set)."""
        until = time.monotonic() + max(0.0, seconds)
        if until > self._paused_until:
            self._paused_until = until


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asks to wait, from the headers of a reply (``None`` when absent or unreadable).

    Forms read, first found wins: ``retry-after-ms`` (milliseconds; OpenAI), ``x-ms-retry-after-ms``
    (milliseconds; Azure OpenAI), ``retry-after`` (seconds, or an HTTP date — RFC 9110 §10.2.3). Header names are
    matched case-insensitively when ``headers`` is case-insensitive (httpx, aiohttp). Negative values give 0.
    """
    if not headers:
        return None
    for name in ("retry-after-ms", "x-ms-retry-after-ms"):
        v = headers.get(name)
        if v:
            try:
                return max(0.0, float(v) / 1000.0)
            except ValueError:
                pass
    v = headers.get("retry-after")
    if not v:
        return None
    try:
        return max(0.0, float(v))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def parse_duration(value: str | None) -> float | None:
    """An OpenAI reset duration (``"1s"``, ``"6m0s"``, ``"1h2m3.5s"``, ``"20ms"``, or a bare number of seconds)
    → seconds; ``None`` when unreadable."""
    if not value:
        return None
    v = value.strip()
    try:
        return max(0.0, float(v))
    except ValueError:
        pass
    parts = _DURATION.findall(v)
    if not parts or "".join(n + u for n, u in parts) != v:
        return None
    unit = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    return sum(float(n) * unit[u] for n, u in parts)


def ratelimit_pause(headers: Mapping[str, str], *, in_flight: int, tokens_per_request: float) -> float:
    """Seconds to hold new requests so that the server's rate limit is not hit (0 = none).

    Reads ``x-ratelimit-remaining-requests`` / ``x-ratelimit-reset-requests`` and ``x-ratelimit-remaining-tokens``
    / ``x-ratelimit-reset-tokens``: when the remaining requests do not cover the ``in_flight`` requests already
    sent, or the remaining tokens do not cover them at ``tokens_per_request`` each, new requests wait for the
    reset. Missing or unreadable headers give 0.
    """
    pause = 0.0
    rem = headers.get("x-ratelimit-remaining-requests")
    if rem is not None:
        try:
            if float(rem) <= in_flight:
                pause = max(pause, parse_duration(headers.get("x-ratelimit-reset-requests")) or 0.0)
        except ValueError:
            pass
    rem = headers.get("x-ratelimit-remaining-tokens")
    if rem is not None:
        try:
            if float(rem) < (in_flight + 1) * tokens_per_request:
                pause = max(pause, parse_duration(headers.get("x-ratelimit-reset-tokens")) or 0.0)
        except ValueError:
            pass
    return pause
