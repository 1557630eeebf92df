"""What the clients of one remote resolver share during a run: the run's remote time, and the stop.

The run's remote time is the wall-clock time during which at least one request of the run waits
for its turn or is in flight, across every service and thread. Past ``max_run_seconds`` every
further request of the run is refused (``run's remote time spent``: its references are
``unavailable`` and asked again on the next run), and a request in flight is cut at that moment
(``wire.RequestGuard``): a night whose services are slow but answering still ends in time.

``stop`` (an interrupt: Ctrl-C, SIGTERM) ends every request of the session at once: a waiting one
wakes (``Gate``), a socket blocked in a read or a connect is shut down, and each raises
``RemoteStopped`` (its batch is not written). ``stop_all`` stops every session of the process.
"""
from __future__ import annotations

import math
import threading
import time
import weakref
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Protocol

from resolvers.errors import RemoteStopped, RemoteUnavailable

_SESSIONS: weakref.WeakSet[RemoteSession] = weakref.WeakSet()
_SESSIONS_LOCK = threading.Lock()


class Cuttable(Protocol):
    def cut(self) -> None:
        """Shut down the request's socket (its blocked read or connect returns at once)."""


class RemoteSession:
    """The run's remote time (bounded by ``max_run_seconds``), the requests in flight, and the stop."""

    def __init__(self, max_run_seconds: float = math.inf, clock: Callable[[], float] = time.monotonic):
        self.max_run_seconds = max_run_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self.run_id: str | None = None
        self.stopped = False
        self._active = 0  # requests of the run waiting or in flight
        self._since = 0.0  # when _active last rose from 0
        self._spent = 0.0  # remote time of the run before _since
        self._refused = 0  # requests refused because the run's remote time was spent
        self._cut = 0  # requests in flight cut when it was spent
        self._guards: set[Cuttable] = set()
        self._wakers: list[Callable[[], None]] = []
        with _SESSIONS_LOCK:
            _SESSIONS.add(self)

    # -- the run -----------------------------------------------------------------------------
    def begin_run(self, run_id: str) -> bool:
        """Start counting a new run's remote time; False (nothing reset) when ``run_id`` is the
        run already counted (its next batch)."""
        with self._lock:
            if run_id == self.run_id:
                return False
            self.run_id = run_id
            self._spent, self._refused, self._cut = 0.0, 0, 0
            self._since = self._clock()
            return True

    def spent(self) -> float:
        """The run's remote time so far, in seconds."""
        with self._lock:
            return self._spent_now()

    def _spent_now(self) -> float:
        return self._spent + (self._clock() - self._since if self._active else 0.0)

    def left(self) -> float:
        """Seconds of remote time the run has left (inf without a bound)."""
        if self.max_run_seconds == math.inf:
            return math.inf
        with self._lock:
            return self.max_run_seconds - self._spent_now()

    def spent_error(self, service: str) -> RemoteUnavailable:
        from resolvers.remote.bounds import Fault, unavailable

        return unavailable(service, Fault.RUN_TIME, f"the run's remote time ({self.max_run_seconds:g} s, "
                                                    "max_run_seconds) is spent; asked again on the next run")

    def cut_error(self, service: str) -> RemoteUnavailable:
        """``spent_error`` for a request in flight when the run's remote time ran out (counted)."""
        with self._lock:
            self._cut += 1
        return self.spent_error(service)

    @contextmanager
    def active(self, service: str) -> Iterator[None]:
        """One request of the run, from its first wait to its answer: refused when the session is
        stopped or the run's remote time is spent; counted in the run's remote time meanwhile."""
        with self._lock:
            if self.stopped:
                raise RemoteStopped(service)
            if self.max_run_seconds - self._spent_now() <= 0:
                self._refused += 1
                raise self.spent_error(service)
            if self._active == 0:
                self._since = self._clock()
            self._active += 1
        try:
            yield
        finally:
            with self._lock:
                self._active -= 1
                if self._active == 0:
                    self._spent += self._clock() - self._since

    def report(self) -> dict[str, Any]:
        """The run's remote time, its bound, and the requests it ended: cut in flight and refused
        unsent because it was spent."""
        with self._lock:
            bound = None if self.max_run_seconds == math.inf else self.max_run_seconds
            return {"remote_seconds": round(self._spent_now(), 1), "max_run_seconds": bound,
                    "cut": self._cut, "refused": self._refused}

    # -- the stop ------------------------------------------------------------------------------
    @contextmanager
    def in_flight(self, guard: Cuttable, service: str) -> Iterator[None]:
        """A request's socket-level guard, known to ``stop`` while the request runs."""
        with self._lock:
            if self.stopped:
                raise RemoteStopped(service)
            self._guards.add(guard)
        try:
            yield
        finally:
            with self._lock:
                self._guards.discard(guard)

    def on_stop(self, wake: Callable[[], None]) -> None:
        """``wake`` is called by ``stop`` (a client's gate: its waiting requests wake and fail)."""
        with self._lock:
            self._wakers.append(wake)

    def stop(self) -> None:
        """End every request of the session now, and refuse every later one."""
        with self._lock:
            self.stopped = True
            guards, wakers = list(self._guards), list(self._wakers)
        for guard in guards:
            guard.cut()
        for wake in wakers:
            wake()


def stop_all() -> None:
    """Stop every remote session of this process (an interrupt: nothing waits on a remote any more)."""
    with _SESSIONS_LOCK:
        sessions = list(_SESSIONS)
    for session in sessions:
        session.stop()
