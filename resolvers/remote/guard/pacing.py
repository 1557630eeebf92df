"""The pace of one service's requests: the rate limit shared by its threads (``RateLimiter``) and
its connection slots, where a request waits its turn (``Gate``).

Every wait of a request (for a connection slot, for its rate slot, a retry's pause) is a wait on
the gate, which ``wake`` ends at once: when the service's circuit opens (the requests already
waiting fail, ``breaker.py``) or the session stops (an interrupt, ``session.py``). httpx ignores
``limits=`` when a ``transport=`` is given, so the concurrency limit is the gate's, not httpx's pool.
"""
from __future__ import annotations

import math
import threading
from collections import deque
from contextlib import contextmanager
from typing import Callable, Iterator

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


class Gate:
    """A service's ``slots`` connection slots, and the waits of its requests."""

    def __init__(self, slots: int):
        self._cond = threading.Condition()
        self._free = max(1, slots)
        self._changes = 0
        self._waiting = 0

    def wake(self) -> None:
        """End every wait now (each waiter then asks whether it may go on)."""
        with self._cond:
            self._changes += 1
            self._cond.notify_all()

    def waiting(self) -> int:
        """Requests waiting for a slot or in a pause."""
        with self._cond:
            return self._waiting

    def free(self) -> int:
        """Connection slots free now."""
        with self._cond:
            return self._free

    @contextmanager
    def slot(self, may_go_on: Callable[[], None]) -> Iterator[None]:
        """Hold a connection slot while the block runs. ``may_go_on`` raises when a request that
        waited must not be sent (the circuit opened, the session stopped); it is asked after every wake."""
        with self._cond:
            self._waiting += 1
            try:
                while self._free == 0:
                    self._cond.wait()
                    may_go_on()
            finally:
                self._waiting -= 1
            self._free -= 1
        try:
            yield
        finally:
            with self._cond:
                self._free += 1
                self._cond.notify_all()

    def pause(self, seconds: float) -> None:
        """Wait ``seconds``, or less when woken."""
        if seconds <= 0 or math.isnan(seconds):
            return
        with self._cond:
            seen = self._changes
            self._waiting += 1
            try:
                self._cond.wait_for(lambda: self._changes != seen, timeout=seconds)
            finally:
                self._waiting -= 1
