"""A polite HTTP client, one per remote service.

Every request of a service goes through the same gate: the circuit breaker, then the concurrency
limit, then (holding a slot) the rate limit shared by all threads, then retries with exponential
backoff and jitter that honour ``Retry-After``. When retries run out the caller gets ``RateLimited`` or
``RemoteUnavailable`` (transient: the reference becomes ``unavailable``). Any other answer,
404 included, is returned as a response: "not found" is a value the caller decides on.

httpx ignores ``limits=`` when a ``transport=`` is given, so the concurrency limit is our own
semaphore, not httpx's pool.
"""
from __future__ import annotations

import email.utils
import random
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Mapping

import httpx

from resolvers.errors import RateLimited, RemoteUnavailable
from resolvers.remote.settings import ServiceSettings

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


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` in seconds: either delay-seconds or an HTTP date (RFC 9110 10.2.3)."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    now = now or datetime.now(timezone.utc)
    return max(0.0, (when - now).total_seconds())


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

    def acquire(self) -> None:
        with self._lock:
            now = self._clock()
            slot = max(now, self._next_slot)
            self._next_slot = slot + self.min_interval
        wait = slot - now
        if wait > 0:
            self._sleep(wait)

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
            wait = self._last_send + self.min_interval - self._clock()
            if wait > 0:
                self._sleep(wait)
            self._in_write = True

    def sent(self) -> None:
        """The gated write is complete (or failed): the next write may start ``min_interval`` on."""
        with self._sending:
            self._in_write = False
            self._last_send = self._clock()
            self._sending.notify_all()


SEND_WAIT_MAX = 5.0


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
    """What one failed attempt left behind: the error to raise and how long to wait."""

    error: RemoteUnavailable
    wait: float


class PoliteClient:
    """An httpx client for one service, with its rate, concurrency, retry and circuit policy."""

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
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._wallclock = wallclock
        self.limiter = RateLimiter(settings.min_interval_seconds, clock, sleep)
        self.breaker = CircuitBreaker(
            service, settings.circuit_failures, settings.circuit_cooldown_seconds, clock
        )
        self._slots = threading.BoundedSemaphore(max(1, settings.max_concurrency))
        kwargs: dict[str, Any] = {
            "timeout": httpx.Timeout(settings.timeout_seconds),
            "headers": {"User-Agent": user_agent(mailto)},
            "follow_redirects": True,
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
        sink: Callable[[httpx.Response], None] | None = None,
    ) -> httpx.Response:
        """GET with the service's policy. Returns any non-retryable response (404 included).

        With ``sink`` the body is streamed: ``sink(response)`` is called for a 2xx answer inside
        the open stream (it may iterate ``response.iter_bytes()``) and must start from scratch
        each time, as a reset mid-body is retried like any other transport failure.
        """
        return self.request("GET", url, params=params, headers=headers, sink=sink)

    def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        sink: Callable[[httpx.Response], None] | None = None,
        data: Mapping[str, Any] | None = None,
        files: Mapping[str, Any] | None = None,
        final: Callable[[int, bytes], bool] | None = None,
    ) -> httpx.Response:
        """Any method with the service's policy. ``data``/``files`` make a form (multipart with
        ``files``; bytes, so a retry sends them again). ``final(status, body)`` marks an answer
        with a retryable status as the service's last word (GROBID's 500 for an unreadable PDF):
        it is returned, not retried."""
        attempts = max(0, self.settings.retries) + 1
        last: _Attempt | None = None
        body = {"params": params, "headers": headers, "data": data, "files": files}
        for attempt in range(attempts):
            self.breaker.before_request()
            outcome = self._attempt(method, url, body, sink, attempt, final)
            if isinstance(outcome, httpx.Response):
                return outcome
            last = outcome
            if attempt + 1 >= attempts:
                break
            if outcome.wait > self.settings.max_retry_after_seconds:
                break  # the server asks for a longer pause than a run should block for
            self._sleep(outcome.wait)
        assert last is not None
        raise last.error

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "PoliteClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -----------------------------------------------------------------------------
    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with equal jitter: half fixed, half random."""
        ceiling = min(self.settings.backoff_max_seconds, self.settings.backoff_base_seconds * (2**attempt))
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    def _attempt(self, method, url, request, sink, attempt, final=None) -> httpx.Response | _Attempt:
        # the rate limit is taken inside the concurrency slot: a thread that waited for a slot
        # must still wait for its turn, or the threads freed together would send in a burst
        with self._slots:
            self.limiter.acquire()
            try:
                with self._client.stream(method, url, **{k: v for k, v in request.items() if v is not None},
                                         extensions={"trace": self._trace}) as response:
                    if response.status_code in RETRY_STATUSES:
                        body = response.read()
                        if final is None or not final(response.status_code, body):
                            return self._failed_status(response, body, attempt)
                    if sink is not None and 200 <= response.status_code < 300:
                        sink(response)
                    else:
                        response.read()
            except httpx.TimeoutException as exc:
                self.breaker.record_failure()
                why = f"timeout ({type(exc).__name__}) on {method} {url}"
                return _Attempt(RemoteUnavailable(self.service, why), self._backoff(attempt))
            except httpx.TransportError as exc:
                self.breaker.record_failure()
                why = f"transport error ({type(exc).__name__}: {exc}) on {method} {url}"
                return _Attempt(RemoteUnavailable(self.service, why), self._backoff(attempt))
        self.breaker.record_success()
        return response

    def _trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's trace hook: the rate gate around the writing of the request headers."""
        if event.endswith("send_request_headers.started"):
            self.limiter.gate()
        elif event.endswith(("send_request_headers.complete", "send_request_headers.failed")):
            self.limiter.sent()

    def _failed_status(self, response: httpx.Response, body: bytes, attempt: int) -> _Attempt:
        retry_after = parse_retry_after(response.headers.get("Retry-After"), self._wallclock())
        wait = self._backoff(attempt) if retry_after is None else max(retry_after, 0.0)
        snippet = body[:80].decode("utf-8", "replace").strip()
        why = f"HTTP {response.status_code} on {response.request.url}: {snippet!r}"
        if retry_after is not None:
            self.limiter.defer(retry_after)
        if response.status_code == 429:
            # the service is alive and asking us to slow down: not a failure for the breaker
            return _Attempt(RateLimited(self.service, why, retry_after), wait)
        self.breaker.record_failure()
        return _Attempt(RemoteUnavailable(self.service, why), wait)
