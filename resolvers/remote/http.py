"""A polite HTTP client, one per remote service.

Every request of a service goes through the same gate: the circuit breaker (``guard/breaker.py``), then
a connection slot, then (holding it) the rate limit shared by all threads (``guard/pacing.py``), then
retries with exponential backoff and jitter that honour ``Retry-After``. When retries run out the
caller gets ``RateLimited`` or ``RemoteUnavailable`` (transient: the reference becomes
``unavailable``). Any other answer, 404 included, is returned as a response: "not found" is a value
the caller decides on.

Every answer is read within its bounds (``bounds.py``, and ``guard/wire.py`` at the socket): at most
``max_body_bytes`` decoded bytes, streamed and counted, a deadline over the whole request, a
minimum rate once the answer has begun, a clamped ``Retry-After``, redirects only within the same
host. Crossing one is ``RemoteUnavailable`` too, its ``why`` naming the bound. A stall (a timeout,
an answer too slow, a deadline passed), a ``Retry-After`` longer than ``max_retry_after_seconds``
or a request whose retries all met 5xx opens the service's circuit at once: the requests waiting
behind it fail without being sent, and it is not retried.

httpx's own log line of each request (INFO) is redacted as every message is (``redaction``).

The clients of one resolver share a ``RemoteSession``: the run's remote time, bounded as a whole,
and the stop that ends every request at once (``RemoteStopped``) on an interrupt.
"""
from __future__ import annotations

import itertools
import random
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Iterator, Mapping

import httpx

from resolvers.errors import RateLimited, RemoteStopped, RemoteUnavailable
from resolvers.redaction import redact_logger
from resolvers.remote.bounds import (
    ERROR_BODY_MAX,
    STALLS,
    ClientStats,
    Fault,
    RequestBounds,
    bounded_chunks,
    check_encoding,
    fault_of,
    parse_retry_after,
    redirect_refused,
    unavailable,
)
from resolvers.remote.guard.breaker import CircuitBreaker
from resolvers.remote.guard.pacing import Gate, RateLimiter
from resolvers.remote.guard.session import RemoteSession
from resolvers.remote.guard.wire import GuardedTransport, RequestGuard, guarding
from resolvers.remote.settings import ServiceSettings

__all__ = ["PoliteClient", "RateLimiter", "CircuitBreaker", "parse_retry_after", "user_agent", "Sink"]

redact_logger("httpx")  # its INFO line of every request names the URL: user info, api_key and contact hidden

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


@dataclass
class _Attempt:
    """What one failed attempt left behind: the error to raise, how long to wait, whether another
    attempt may help (a body over its limit or a refused redirect would come again), and whether
    it opened the circuit (a stall, a refused pause: no other attempt either)."""

    error: RemoteUnavailable
    wait: float
    retry: bool = True
    tripped: bool = False


class PoliteClient:
    """An httpx client for one service, with its rate, concurrency, retry and circuit policy, and
    the bounds of every answer (``bounds.py``: bytes, deadline, redirects, encodings; ``guard/wire.py``:
    the minimum rate and the deadline at the socket). ``sleep`` (tests: a fake clock's) replaces
    the waits, which otherwise end early when the circuit opens or the session stops."""

    def __init__(
        self,
        service: str,
        settings: ServiceSettings,
        *,
        mailto: str | None = None,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] | None = None,
        rng: random.Random | None = None,
        wallclock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
        session: RemoteSession | None = None,
    ):
        self.service = service
        self.settings = settings
        self._clock = clock
        self.gate = Gate(settings.max_concurrency)
        self._sleep = sleep or self.gate.pause
        self._rng = rng or random.Random()
        self._wallclock = wallclock
        self.session = session or RemoteSession()
        self.session.on_stop(self.gate.wake)
        self.stats = ClientStats()
        self.limiter = RateLimiter(settings.min_interval_seconds, clock, self._sleep)
        self.breaker = CircuitBreaker(service, settings.circuit_failures, settings.circuit_cooldown_seconds, clock,
                                      settings.circuit_openings, on_open=self.gate.wake)
        limits = httpx.Limits(max_connections=max(1, settings.max_concurrency),
                              max_keepalive_connections=max(1, settings.max_concurrency))
        self._client = httpx.Client(
            transport=transport if transport is not None else GuardedTransport(limits),
            timeout=httpx.Timeout(settings.timeout_seconds), headers={"User-Agent": user_agent(mailto)},
            follow_redirects=False)  # followed here, within the same host only (``_open``)

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
            with self.session.active(self.service):
                return self._attempts(method, url, body, sink, final, bounds)
        except RemoteUnavailable as exc:
            self.stats.failed(exc)
            raise

    def waiting(self) -> int:
        """Requests waiting for a connection slot or in a pause."""
        return self.gate.waiting()

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "PoliteClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -----------------------------------------------------------------------------
    def _attempts(self, method, url, body, sink, final, bounds: RequestBounds) -> httpx.Response:
        """The first attempt and the retries, while they may help and fit the deadline. A request
        whose attempts (two or more) all met a retryable status opens the circuit (a run of 5xx)."""
        attempts = max(0, self.settings.retries) + 1
        last: _Attempt | None = None
        for attempt in range(attempts):
            generation, probe = self.breaker.before_request()
            try:
                outcome = self._attempt(method, url, body, sink, attempt, final, bounds, generation)
            finally:
                if probe:
                    self.breaker.probe_done()
            if isinstance(outcome, httpx.Response):
                return outcome
            last = outcome
            if outcome.tripped or not outcome.retry:
                break
            if attempt + 1 >= attempts or outcome.wait >= bounds.left():
                if attempt and fault_of(outcome.error) in (Fault.STATUS, Fault.RATE_LIMITED):
                    self.breaker.trip(outcome.error.why)  # every attempt met a 5xx (or 429): a run of them
                break
            self._sleep(outcome.wait)
            self._may_go_on(generation)
        assert last is not None
        raise last.error

    def _may_go_on(self, generation: int) -> None:
        """Raise when a request that waited must not be sent: the session stopped, the circuit opened."""
        if self.session.stopped:
            raise RemoteStopped(self.service)
        self.breaker.check(generation)

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with equal jitter: half fixed, half random."""
        ceiling = min(self.settings.backoff_max_seconds, self.settings.backoff_base_seconds * (2**attempt))
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    def _attempt(self, method, url, request, sink, attempt, final, bounds, generation) -> httpx.Response | _Attempt:
        # the rate limit is taken inside the concurrency slot: a thread that waited for a slot
        # must still wait for its turn, or the threads freed together would send in a burst
        with self.gate.slot(lambda: self._may_go_on(generation)):
            self._may_go_on(generation)
            if not self.limiter.acquire(bounds.at):
                why = f"the service's pause (Retry-After) ends after the deadline of {method} {url}"
                return _Attempt(unavailable(self.service, Fault.DEADLINE, why), 0.0, retry=False)
            self._may_go_on(generation)
            bounds.start()
            self.stats.count("attempt")
            guard = RequestGuard(bounds, f"{method} {url}", self.settings.min_bytes_per_second,
                                 self.settings.stall_seconds, self.session.left, self.session.cut_error)
            try:
                with self.session.in_flight(guard, self.service), guarding(guard):
                    outcome = self._exchange(method, url, request, sink, attempt, final, bounds)
            except httpx.TimeoutException as exc:
                if bounds.left() <= 0:
                    return self._stalled(bounds.passed(f"{method} {url}"))
                why = f"({type(exc).__name__}) on {method} {url}"
                return self._stalled(unavailable(self.service, Fault.TIMEOUT, why))
            except (httpx.HTTPError, httpx.InvalidURL) as exc:  # resets, undecodable bodies, bad Locations...
                error = unavailable(self.service, Fault.TRANSPORT, f"({type(exc).__name__}: {exc}) on {method} {url}")
                opened = self.breaker.record_failure(error.why)
                return _Attempt(error, self._backoff(attempt), tripped=opened)
            except RemoteUnavailable as exc:  # a bound: too large, too slow, deadline, redirect, encoding
                fault = fault_of(exc)
                if fault in STALLS:
                    return self._stalled(exc)
                # the run's remote time spent is the run's bound, not a failure of the service
                opened = fault is not Fault.RUN_TIME and self.breaker.record_failure(exc.why)
                return _Attempt(exc, 0.0, retry=False, tripped=opened)
        if isinstance(outcome, httpx.Response):
            self.breaker.record_success()
        return outcome

    def _stalled(self, error: RemoteUnavailable) -> _Attempt:
        """A stall: the circuit opens at once, and the request is not tried again."""
        self.breaker.trip(error.why)
        return _Attempt(error, 0.0, retry=False, tripped=True)

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
        if response.status_code == 429:
            # the service is alive and asking us to slow down: not a failure for the breaker
            error: RemoteUnavailable = RateLimited(self.service, f"{Fault.RATE_LIMITED.value}: {why}"[:500],
                                                   retry_after)
        else:
            error = RemoteUnavailable(self.service, why[:500])
            if self.breaker.record_failure(why):  # a failed probe, or the last of circuit_failures
                return _Attempt(error, wait, retry=False, tripped=True)
        if retry_after is not None and retry_after > self.settings.max_retry_after_seconds:
            # a longer pause than a run may wait: nobody waits it out; the circuit opens instead
            self.breaker.trip(f"{Fault.RATE_LIMITED.value}: HTTP {response.status_code} asks for a pause of "
                              f"{retry_after:g} s (Retry-After), longer than max_retry_after_seconds "
                              f"{self.settings.max_retry_after_seconds:g}")
            return _Attempt(error, retry_after, retry=False, tripped=True)
        if retry_after is not None:  # the whole service pauses, as asked
            self.limiter.defer(retry_after)
        return _Attempt(error, wait)


def _answered(response: httpx.Response, body: bytes) -> httpx.Response:
    """The response with its body as read (decoded): what ``.content``, ``.text`` and ``.json()`` give."""
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"]
    answered = httpx.Response(response.status_code, headers=headers, content=body, request=response.request,
                              extensions=response.extensions)
    answered.history = response.history
    return answered
