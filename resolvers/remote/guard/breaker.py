"""The circuit breaker of one service: how a service that fails costs a run seconds, not hours.

The circuit opens

* after ``circuit_failures`` failed attempts in a row (resets, refused redirects, answers too large);
* at once on a stall (a timeout, an answer under the minimum rate, a deadline passed), a
  ``Retry-After`` longer than ``max_retry_after_seconds``, or a request whose attempts (two or
  more) all met 5xx (or 429): ``trip``. Waiting for such a service again would cost each request
  a whole stall.

While it is open every request fails at once (``circuit open: <why it opened>``), sending nothing,
and so does every request that was already waiting (for a connection slot, its rate slot, a
retry's pause) when it opened: each request carries the ``generation`` it started in, and a
request that waited across an opening is not sent. After ``circuit_cooldown_seconds`` one probe
request goes through: success closes the circuit, failure opens it again (a probe that ends
without a verdict, a 429 answered, lets the next request probe). After ``circuit_openings``
openings in one run the circuit stays open for the rest of the run (no more probes, each of which
would cost a stall again); ``new_run`` closes it for the next run. ``report`` says what happened,
for the run's summary.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from resolvers.errors import RemoteUnavailable
from resolvers.remote.bounds import Fault, unavailable


class CircuitBreaker:
    """One service's circuit, as the module says: its state, its openings this run, the requests it
    refused and what opened it last."""

    CLOSED, OPEN, HALF_OPEN = "closed", "open", "half_open"
    FOR_RUN = "open for the rest of the run"

    def __init__(self, service: str, threshold: int, cooldown: float, clock: Callable[[], float],
                 openings: int = 3, on_open: Callable[[], None] = lambda: None):
        self.service = service
        self.threshold = max(1, threshold)
        self.cooldown = cooldown
        self.max_openings = max(1, openings)
        self._clock = clock
        self._on_open = on_open
        self._lock = threading.Lock()
        self.new_run()

    def new_run(self) -> None:
        """A new run: the circuit closed, its counts from zero."""
        with self._lock:
            self.state = self.CLOSED
            self.generation = 0  # openings so far: a request that waited across one is not sent
            self.openings = 0
            self.refused = 0  # requests failed at once, unsent, because the circuit was open
            self.why = ""  # what opened it last
            self._failures = 0
            self._opened_at = 0.0
            self._probe_out = False

    def before_request(self) -> tuple[int, bool]:
        """The generation a request starts in, and whether it is the probe of a half-open circuit
        (which must end with ``probe_done``); raises (``circuit open``) while the circuit is open."""
        with self._lock:
            if self.state == self.OPEN and self.openings < self.max_openings \
                    and self._clock() - self._opened_at >= self.cooldown:
                self.state = self.HALF_OPEN
                self._probe_out = False
            if self.state == self.CLOSED:
                return self.generation, False
            if self.state == self.HALF_OPEN and not self._probe_out:
                self._probe_out = True
                return self.generation, True
            raise self._refuse()

    def probe_done(self) -> None:
        """The probe ended without a verdict (a 429 answered, the run's time spent, a stop): the
        next request may probe."""
        with self._lock:
            if self.state == self.HALF_OPEN:
                self._probe_out = False

    def check(self, generation: int) -> None:
        """A request that waited (for a slot, for its rate slot, a retry's pause): refused when
        the circuit opened meanwhile."""
        with self._lock:
            if self.generation != generation:
                raise self._refuse(" (it opened while this request waited)")

    def _refuse(self, when: str = "") -> RemoteUnavailable:
        self.refused += 1
        if self.openings >= self.max_openings:
            return unavailable(self.service, Fault.CIRCUIT_OPEN, f"for the rest of the run after {self.openings} "
                               f"openings{when}: {self.why}")
        return unavailable(self.service, Fault.CIRCUIT_OPEN, f"{self.why}{when}")

    def record_success(self) -> None:
        """An answer: a probe's closes the circuit; one that comes while it is open leaves it open."""
        with self._lock:
            if self.state != self.OPEN:
                self.state = self.CLOSED
            self._failures = 0
            self._probe_out = False

    def record_failure(self, why: str) -> bool:
        """A failed attempt; ``circuit_failures`` of them in a row (or a failed probe) open the
        circuit. True when this one opened it."""
        with self._lock:
            self._failures += 1
            opened = (self.state == self.HALF_OPEN or self._failures >= self.threshold) and self._open(why)
        if opened:
            self._on_open()
        return opened

    def trip(self, why: str) -> None:
        """A stall, a refused pause, a run of 5xx: the circuit opens now."""
        with self._lock:
            opened = self._open(why)
        if opened:
            self._on_open()  # the requests waiting for this service wake, and fail

    def _open(self, why: str) -> bool:
        if self.state == self.OPEN:  # another request of the same outage: not a new opening
            return False
        self.state = self.OPEN
        self.openings += 1
        self.generation += 1
        self.why = why[:300]
        self._opened_at = self._clock()
        self._probe_out = False
        return True

    def report(self) -> dict[str, Any]:
        """The circuit's state, openings, requests refused and why it last opened."""
        with self._lock:
            state = self.FOR_RUN if self.state == self.OPEN and self.openings >= self.max_openings else \
                self.state.replace("_", " ")
            return {"state": state, "openings": self.openings, "refused": self.refused, "why": self.why}
