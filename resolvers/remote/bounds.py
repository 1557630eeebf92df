"""What a remote answer may cost: bytes, wall-clock time, redirects, encodings, pauses.

A remote service is a hostile input like any file: its body may be endless (with a Content-Length
of gigabytes, or streamed without one), a small gzip body may decode to gigabytes, a byte may
trickle every second (each read within the timeout, the answer never done: ``guard/wire.py`` cuts an
answer under a minimum rate, and every read at the deadline), a ``Retry-After`` may ask for
centuries, a redirect may loop or lead to another host (carrying the contact e-mail of the
User-Agent). Each is stopped here and becomes ``RemoteUnavailable`` whose
``why`` starts with its ``Fault``: the reference is ``unavailable`` (reason ``remote_unavailable``,
the why in its evidence) and asked again on the next run; the batch goes on.

The bounds of one request (``RequestBounds``): ``max_bytes`` decoded bytes (counted as httpx's
``iter_bytes`` yields them, so a gzip bomb is stopped after at most one network read's worth of
decoding: 64 KiB of deflate decodes to at most about 66 MB), and ``deadline_seconds`` of wall
clock from the first attempt's send slot, across connects, reads and retries' sleeps, checked at
every chunk read here and by every socket read's timeout (``guard/wire.py``).
"""
from __future__ import annotations

import email.utils
import math
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from typing import Callable, Iterator

import httpx

from resolvers.errors import RateLimited, RemoteUnavailable

# the longest pause a Retry-After is read as (one day): anything longer, a date centuries ahead,
# 999999999999 seconds, is that long; the client then gives up at once (``max_retry_after_seconds``)
RETRY_AFTER_CEILING = 86_400.0
# an error status's body is read for its first bytes only (the reason shown, GROBID's error code)
ERROR_BODY_MAX = 64 * 1024
# content codings httpx decodes (with brotli or zstandard installed, also br and zstd): more than
# one on one answer ("gzip, gzip") multiplies the expansion of each network read, so it is refused
DECODED_CODINGS = frozenset({"gzip", "deflate", "br", "zstd"})
_DELAY_SECONDS = re.compile(r"^\d{1,20}(?:\.\d{0,9})?$")


class Fault(str, Enum):
    """Why a remote request gave no usable answer: the start of its ``RemoteUnavailable.why``."""

    TIMEOUT = "timeout"
    TRANSPORT = "transport error"
    STATUS = "HTTP"  # a 5xx (or a 429, see RATE_LIMITED) after the retries
    RATE_LIMITED = "rate limited"
    TOO_LARGE = "answer too large"
    TOO_SLOW = "answer too slow"  # under min_bytes_per_second over stall_seconds (``wire.RequestGuard``)
    DEADLINE = "deadline passed"
    RUN_TIME = "run's remote time spent"  # max_run_seconds (``session.RemoteSession``)
    REDIRECT = "redirect refused"
    ENCODING = "content encoding refused"
    CIRCUIT_OPEN = "circuit open"
    OTHER = "other"


# the faults of a service that stalls: each opens its circuit at once (``breaker.CircuitBreaker.trip``)
STALLS = frozenset({Fault.TIMEOUT, Fault.TOO_SLOW, Fault.DEADLINE})


def fault_of(error: RemoteUnavailable) -> Fault:
    """The fault a ``RemoteUnavailable`` of the polite client reports (OTHER for a caller's own)."""
    if isinstance(error, RateLimited):
        return Fault.RATE_LIMITED
    why = getattr(error, "cause", error).why
    for fault in Fault:
        if fault is not Fault.OTHER and why.startswith(fault.value):
            return fault
    return Fault.OTHER


def unavailable(service: str, fault: Fault, detail: str) -> RemoteUnavailable:
    return RemoteUnavailable(service, f"{fault.value}: {detail}"[:500])


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` in seconds, between 0 and ``RETRY_AFTER_CEILING``: delay-seconds or an HTTP
    date (RFC 9110 10.2.3). None when absent or unreadable (the client's own backoff applies)."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if _DELAY_SECONDS.match(value):
        return min(float(value), RETRY_AFTER_CEILING)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    now = now or datetime.now(timezone.utc)
    try:
        seconds = (when - now).total_seconds()
    except OverflowError:  # pragma: no cover - datetime's range is narrower than any overflow
        return RETRY_AFTER_CEILING
    return min(max(0.0, seconds), RETRY_AFTER_CEILING)


@dataclass
class RequestBounds:
    """One request's limits: the decoded bytes an answer may have, and its wall-clock deadline."""

    service: str
    clock: Callable[[], float]
    max_bytes: int
    seconds: float
    at: float = math.inf  # the deadline on ``clock``, set when the first attempt has its send slot

    def start(self) -> None:
        if self.at == math.inf:
            self.at = self.clock() + self.seconds

    def left(self) -> float:
        return self.at - self.clock()

    def check(self, url: object) -> None:
        if self.clock() >= self.at:
            raise self.passed(url)

    def passed(self, url: object) -> RemoteUnavailable:
        return unavailable(self.service, Fault.DEADLINE,
                           f"{url} took more than {self.seconds:g} s in all (deadline_seconds)")


def check_encoding(service: str, response: httpx.Response) -> None:
    """Refuses an answer whose body would be decoded more than once (``gzip, gzip``)."""
    codings = [c.strip().lower() for c in response.headers.get("content-encoding", "").split(",")]
    if sum(c in DECODED_CODINGS for c in codings) > 1:
        raise unavailable(service, Fault.ENCODING, f"{response.request.url} is encoded {codings} (stacked "
                          "compression is not read)")


def declared_length(response: httpx.Response) -> int | None:
    """The body's Content-Length when it is the decoded size (no content coding), else None."""
    coding = response.headers.get("content-encoding", "").strip().lower()
    if coding not in ("", "identity"):
        return None
    try:
        value = int(response.headers.get("content-length", ""))
    except ValueError:
        return None
    return value if value >= 0 else None


def bounded_chunks(response: httpx.Response, bounds: RequestBounds, limit: int, stats: "ClientStats",
                   cut: bool = False) -> Iterator[bytes]:
    """The answer's decoded bytes, chunk by chunk as they arrive. Past ``limit`` bytes (or a
    Content-Length over it, before any byte is read): ``answer too large``, or with ``cut`` the
    end of the iteration (an error body read for its first bytes). The deadline is checked at
    every chunk."""
    url = response.request.url
    size = declared_length(response)
    if size is not None and size > limit and not cut:
        raise unavailable(bounds.service, Fault.TOO_LARGE, f"{url} declares {size:,} bytes, over the limit "
                          f"of {limit:,}")
    taken = 0
    try:
        for chunk in response.iter_bytes():
            bounds.check(url)
            if taken + len(chunk) > limit:
                if cut:
                    yield chunk[: limit - taken]
                    taken = limit
                    return
                raise unavailable(bounds.service, Fault.TOO_LARGE, f"{url} sent more than {limit:,} bytes "
                                  "(decoded); the rest was not read")
            taken += len(chunk)
            yield chunk
    finally:
        stats.took(taken)


def redirect_refused(origin: httpx.URL, target: httpx.URL, hops: int, max_hops: int, seen: set[str]) -> str | None:
    """Why a redirect is not followed, or None: only within the origin's host and port (an
    http to https upgrade on the same host is allowed, never the reverse), at most ``max_hops``,
    never back to a URL already asked."""
    if hops >= max_hops:
        return f"{origin} redirects more than {max_hops} time(s) (max_redirects)"
    if str(target) in seen:
        return f"{origin} redirects in a loop (back to {target})"
    upgrade = origin.scheme == "http" and target.scheme == "https"
    same_port = target.port == origin.port or (upgrade and target.port in (None, 443))
    if target.host != origin.host or not same_port or (origin.scheme == "https" and target.scheme != "https"):
        return f"{origin} redirects to another host or scheme ({target.scheme}://{target.host}); not followed"
    return None


@dataclass
class ClientStats:
    """What one client did: requests, attempts, bytes taken in, failures by fault."""

    requests: int = 0
    attempts: int = 0
    bytes_taken: int = 0  # decoded body bytes taken in, all answers together
    largest_answer: int = 0  # the most decoded bytes taken in of one answer (at most its limit)
    faults: Counter[str] = field(default_factory=Counter)  # Fault value -> requests that failed so
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def took(self, size: int) -> None:
        with self._lock:
            self.bytes_taken += size
            self.largest_answer = max(self.largest_answer, size)

    def count(self, what: str) -> None:
        with self._lock:
            if what == "request":
                self.requests += 1
            else:
                self.attempts += 1

    def failed(self, error: RemoteUnavailable) -> None:
        with self._lock:
            self.faults[fault_of(error).value] += 1
