"""A polite HTTP client, one per remote service.

Every request of a service goes through the same gate: the circuit breaker, then the concurrency
limit, then (holding a slot) the rate limit shared by all threads, then retries with exponential
backoff and jitter that honour ``Retry-After``. When retries run out the caller gets ``RateLimited`` or
``RemoteUnavailable`` (transient: the reference becomes ``unavailable``). Any other answer,
404 included, is returned as a response: "not found" is a value the caller decides on.

Every answer is read within its bounds (``bounds.py``): at most ``max_body_bytes`` decoded bytes,
streamed and counted, a deadline over the whole request, a clamped ``Retry-After``, redirects only
within the same host. Crossing one is ``RemoteUnavailable`` too, its ``why`` naming the bound.

httpx ignores ``limits=`` when a ``transport=`` is given, so the concurrency limit is our own
semaphore, not httpx's pool.
"""
from __future__ import annotations

import itertools
import math
import random
import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Iterator, Mapping

import httpx

from resolvers.errors import RateLimited, RemoteUnavailable
from resolvers.remote.bounds import (
    ERROR_BODY_MAX,
    ClientStats,
    Fault,
    RequestBounds,
    bounded_chunks,
    check_encoding,
    parse_retry_after,
    redirect_refused,
    unavailable,
)
from resolvers.remote.settings import ServiceSettings

__all__ = ["PoliteClient", "RateLimiter", "CircuitBreaker", "parse_retry_after", "user_agent", "Sink"]

# ``sink(response, chunks)``: a 2xx body streamed; ``chunks`` are its decoded bytes within the bounds
Sink = Callable[[httpx.Response, Iterator[bytes]], None]

try:  # the installed distribution's version, so the User-Agent tells the truth
    from importlib.metadata import version as _dist_version

    TOOL_VERSION = _dist_version("citeledger")
except Exception:  # pragma: no cover - running from a bare checkout
    TOOL_VERSION = "0.1"

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


def user_agent(mailto: str | None) -> str:
    """Names the tool, its version and a contact, as Crossref's and arXiv's etiquette asks."""
    contact = f"mailto:{mailto}" if mailto else "+https://github.com/citeledger/citeledger"
    return f"citeledger/{TOOL_VERSION} ({contact})"


SEND_WAIT_MAX = 5.0
SENDS_KEPT = 10_000  # the write starts a limiter remembers (what the tests and the soak measure)


class RateLimiter:
    """Minimum interval between request starts, enforced across threads.

    Each caller reserves the next free slot under a lock, then sleeps outside the lock until its
    slot: N threads calling at once start at t, t+i, t+2i, ... ``defer`` pushes the next slot
    later (a server's ``Retry-After`` pauses the whole service, not one thread).
    """

    def __init__(self, min_interval: float, clock: Callable[[], float], sleep: Callable[[float], None]):
        self.min_interval = max(0.0, min_interval)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next_slot = float("-inf")
        self._sending = threading.Condition()
        self._in_write = False
        self._last_send = float("-inf")
        self.sends: deque[float] = deque(maxlen=SENDS_KEPT)  # when each write started, on ``clock``

    def acquire(self, until: float = math.inf) -> bool:
        """Waits for this caller's slot; False (no slot taken, no wait) when the slot would come
        after ``until`` (a request's deadline: a long pause of the service is not waited out)."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._next_slot)
            if slot > until:
                return False
            self._next_slot = slot + self.min_interval
        wait = slot - now
        if wait > 0:
            self._sleep(wait)
        return True

    def defer(self, seconds: float) -> None:
        with self._lock:
            self._next_slot = max(self._next_slot, self._clock() + seconds)

    def gate(self) -> None:
        """Called as a request's bytes are about to be written: the write starts at least
        ``min_interval`` after the previous write was complete. A thread descheduled between its
        slot and its write (a loaded machine, the GIL) would otherwise write right beside the
        next one, and the server would count both in one interval (``bench_search.py --rate``
        measured gaps of 14 ms at a 0.2 s interval without this gate). ``sent`` ends the write;
        a write that never reports (it cannot happen through httpcore's trace) is waited for at
        most ``SEND_WAIT_MAX`` seconds."""
        with self._sending:
            deadline = self._clock() + SEND_WAIT_MAX
            while self._in_write and self._clock() < deadline:
                self._sending.wait(timeout=0.05)
            while (wait := self._last_send + self.min_interval - self._clock()) > 0:
                self._sleep(wait)
            self._in_write = True
            self.sends.append(self._clock())

    def sent(self) -> None:
        """The gated write is complete (or failed): the next write may start ``min_interval`` on."""
        with self._sending:
            self._in_write = False
            self._last_send = self._clock()
            self._sending.notify_all()


class CircuitBreaker:
    """Opens after ``threshold`` consecutive failed attempts; half-open after ``cooldown``.

    While open every call fails at once with ``RemoteUnavailable`` (no request is sent). When the
    cool-down has passed one probe request is let through: success closes the circuit, failure
    opens it for another cool-down.
    """

    CLOSED, OPEN, HALF_OPEN = "closed", "open", "half_open"

    def __init__(self, service: str, threshold: int, cooldown: float, clock: Callable[[], float]):
        self.service = service
        self.threshold = max(1, threshold)
        self.cooldown = cooldown
        self._clock = clock
        self._lock = threading.Lock()
        self.state = self.CLOSED
        self._failures = 0
        self._opened_at = 0.0
        self._probe_out = False

    def before_request(self) -> None:
        with self._lock:
            if self.state == self.CLOSED:
                return
            if self.state == self.OPEN and self._clock() - self._opened_at >= self.cooldown:
                self.state = self.HALF_OPEN
                self._probe_out = False
            if self.state == self.HALF_OPEN and not self._probe_out:
                self._probe_out = True
                return
            raise RemoteUnavailable(self.service, "circuit open after repeated failures")

    def record_success(self) -> None:
        with self._lock:
            self.state = self.CLOSED
            self._failures = 0
            self._probe_out = False

    def record_failure(self) -> None:
        with self._lock:
            self._failures += 1
            if self.state == self.HALF_OPEN or self._failures >= self.threshold:
                self.state = self.OPEN
                self._opened_at = self._clock()
                self._probe_out = False


@dataclass
class _Attempt:
    """What one failed attempt left behind: the error to raise, how long to wait, and whether
    another attempt may help (a body over its limit or a refused redirect would come again)."""

    error: RemoteUnavailable
    wait: float
    retry: bool = True


class PoliteClient:
    """An httpx client for one service, with its rate, concurrency, retry and circuit policy, and
    the bounds of every answer (``bounds.py``: bytes, deadline, redirects, encodings)."""

    def __init__(
        self,
        service: str,
        settings: ServiceSettings,
        *,
        mailto: str | None = None,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        wallclock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
    ):
        self.service = service
        self.settings = settings
        self._clock = clock
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._wallclock = wallclock
        self.stats = ClientStats()
        self.limiter = RateLimiter(settings.min_interval_seconds, clock, sleep)
        self.breaker = CircuitBreaker(
            service, settings.circuit_failures, settings.circuit_cooldown_seconds, clock
        )
        self._slots = threading.BoundedSemaphore(max(1, settings.max_concurrency))
        kwargs: dict[str, Any] = {
            "timeout": httpx.Timeout(settings.timeout_seconds),
            "headers": {"User-Agent": user_agent(mailto)},
            "follow_redirects": False,  # followed here, within the same host only (``_open``)
        }
        if transport is not None:
            kwargs["transport"] = transport
        else:
            kwargs["limits"] = httpx.Limits(
                max_connections=max(1, settings.max_concurrency),
                max_keepalive_connections=max(1, settings.max_concurrency),
            )
        self._client = httpx.Client(**kwargs)

    # -- public --------------------------------------------------------------------------------
    def get(
        self,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        sink: Sink | None = None,
        max_bytes: int | None = None,
    ) -> httpx.Response:
        """GET with the service's policy. Returns any non-retryable response (404 included).

        With ``sink`` the body is streamed: ``sink(response, chunks)`` is called for a 2xx answer
        inside the open stream (``chunks``: the decoded body within its bounds) and must start
        from scratch each time, as a reset mid-body is retried like any other transport failure.
        ``max_bytes``: this answer's byte limit instead of the service's ``max_body_bytes``.
        """
        return self.request("GET", url, params=params, headers=headers, sink=sink, max_bytes=max_bytes)

    def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        sink: Sink | None = None,
        data: Mapping[str, Any] | None = None,
        files: Mapping[str, Any] | None = None,
        final: Callable[[int, bytes], bool] | None = None,
        max_bytes: int | None = None,
    ) -> httpx.Response:
        """Any method with the service's policy. ``data``/``files`` make a form (multipart with
        ``files``; bytes, so a retry sends them again). ``final(status, body)`` marks an answer
        with a retryable status as the service's last word (GROBID's 500 for an unreadable PDF):
        it is returned, not retried."""
        self.stats.count("request")
        bounds = RequestBounds(self.service, self._clock, max_bytes or self.settings.max_body_bytes,
                               self.settings.deadline_seconds)
        body = {"params": params, "headers": headers, "data": data, "files": files}
        try:
            return self._attempts(method, url, body, sink, final, bounds)
        except RemoteUnavailable as exc:
            self.stats.failed(exc)
            raise

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "PoliteClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -----------------------------------------------------------------------------
    def _attempts(self, method, url, body, sink, final, bounds: RequestBounds) -> httpx.Response:
        """The first attempt and the retries, while they may help and fit the deadline."""
        attempts = max(0, self.settings.retries) + 1
        last: _Attempt | None = None
        for attempt in range(attempts):
            self.breaker.before_request()
            outcome = self._attempt(method, url, body, sink, attempt, final, bounds)
            if isinstance(outcome, httpx.Response):
                return outcome
            last = outcome
            if not outcome.retry or attempt + 1 >= attempts:
                break
            if outcome.wait > self.settings.max_retry_after_seconds:
                break  # the server asks for a longer pause than a run should block for
            if outcome.wait >= bounds.left():
                break  # no time left for another attempt: the last failure is the answer
            self._sleep(outcome.wait)
        assert last is not None
        raise last.error

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with equal jitter: half fixed, half random."""
        ceiling = min(self.settings.backoff_max_seconds, self.settings.backoff_base_seconds * (2**attempt))
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    def _attempt(self, method, url, request, sink, attempt, final, bounds) -> httpx.Response | _Attempt:
        # the rate limit is taken inside the concurrency slot: a thread that waited for a slot
        # must still wait for its turn, or the threads freed together would send in a burst
        with self._slots:
            if not self.limiter.acquire(bounds.at):
                why = f"the service's pause (Retry-After) ends after the deadline of {method} {url}"
                return _Attempt(unavailable(self.service, Fault.DEADLINE, why), 0.0, retry=False)
            bounds.start()
            self.stats.count("attempt")
            try:
                outcome = self._exchange(method, url, request, sink, attempt, final, bounds)
            except httpx.TimeoutException as exc:
                self.breaker.record_failure()
                if bounds.left() <= 0:
                    return _Attempt(bounds.passed(f"{method} {url}"), 0.0, retry=False)
                why = f"({type(exc).__name__}) on {method} {url}"
                return _Attempt(unavailable(self.service, Fault.TIMEOUT, why), self._backoff(attempt))
            except (httpx.HTTPError, httpx.InvalidURL) as exc:  # resets, undecodable bodies, bad Locations...
                self.breaker.record_failure()
                why = f"({type(exc).__name__}: {exc}) on {method} {url}"
                return _Attempt(unavailable(self.service, Fault.TRANSPORT, why), self._backoff(attempt))
            except RemoteUnavailable as exc:  # a bound: too large, deadline, redirect, encoding
                self.breaker.record_failure()
                return _Attempt(exc, 0.0, retry=False)
        if isinstance(outcome, httpx.Response):
            self.breaker.record_success()
        return outcome

    def _exchange(self, method, url, request, sink, attempt, final, bounds) -> httpx.Response | _Attempt:
        """One attempt's request (and its allowed redirects) and its answer, read within the bounds."""
        response = self._open(method, url, request, bounds)
        try:
            check_encoding(self.service, response)
            if response.status_code in RETRY_STATUSES:
                cap = min(bounds.max_bytes, ERROR_BODY_MAX)
                body = b"".join(bounded_chunks(response, bounds, cap, self.stats, cut=True))
                if final is None or not final(response.status_code, body):
                    return self._failed_status(response, body, attempt)
                return _answered(response, body)
            if sink is not None and 200 <= response.status_code < 300:
                sink(response, bounded_chunks(response, bounds, bounds.max_bytes, self.stats))
                return response
            return _answered(response, b"".join(bounded_chunks(response, bounds, bounds.max_bytes, self.stats)))
        finally:
            response.close()

    def _open(self, method, url, request, bounds: RequestBounds) -> httpx.Response:
        """The response of ``url`` with its body still to read, after the redirects the service
        allows (same host, ``max_redirects``, no loop): each one a request through the rate gate."""
        timeout = httpx.Timeout(max(0.001, min(self.settings.timeout_seconds, bounds.left())))
        sent = self._client.build_request(method, url, **{k: v for k, v in request.items() if v is not None},
                                          timeout=timeout, extensions={"trace": self._trace})
        origin, seen = sent.url, {str(sent.url)}
        for hops in itertools.count():
            response = self._client.send(sent, stream=True)
            target = response.next_request
            if target is None:
                return response
            response.close()
            why = redirect_refused(origin, target.url, hops, self.settings.max_redirects, seen)
            if why is not None:
                raise unavailable(self.service, Fault.REDIRECT, why)
            bounds.check(url)
            seen.add(str(target.url))
            sent = target
        raise AssertionError("unreachable")  # pragma: no cover

    def _trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's trace hook: the rate gate around the writing of the request headers."""
        if event.endswith("send_request_headers.started"):
            self.limiter.gate()
        elif event.endswith(("send_request_headers.complete", "send_request_headers.failed")):
            self.limiter.sent()

    def _failed_status(self, response: httpx.Response, body: bytes, attempt: int) -> _Attempt:
        retry_after = parse_retry_after(response.headers.get("Retry-After"), self._wallclock())
        wait = self._backoff(attempt) if retry_after is None else retry_after
        snippet = body[:80].decode("utf-8", "replace").strip()
        why = f"HTTP {response.status_code} on {response.request.url}: {snippet!r}"
        if retry_after is not None:  # the whole service pauses, at most as long as a run may wait
            self.limiter.defer(min(retry_after, self.settings.max_retry_after_seconds))
        if response.status_code == 429:
            # the service is alive and asking us to slow down: not a failure for the breaker
            return _Attempt(RateLimited(self.service, f"{Fault.RATE_LIMITED.value}: {why}"[:500], retry_after), wait)
        self.breaker.record_failure()
        return _Attempt(RemoteUnavailable(self.service, why[:500]), wait)


def _answered(response: httpx.Response, body: bytes) -> httpx.Response:
    """The response with its body as read (decoded): what ``.content``, ``.text`` and ``.json()`` give."""
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"]
    answered = httpx.Response(response.status_code, headers=headers, content=body, request=response.request,
                              extensions=response.extensions)
    answered.history = response.history
    return answered
