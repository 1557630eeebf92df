"""A stalled service costs a run seconds: the polite client against a local server that trickles,
stays silent, or asks for a pause longer than a run may wait.

An answer arriving slower than ``min_bytes_per_second`` (over ``stall_seconds``) is cut, headers
included, long before its deadline; a stall, a refused ``Retry-After`` or a run of 5xx opens the
circuit at once, and the requests already waiting behind it fail without being sent; after
``circuit_openings`` openings the circuit stays open for the rest of the run; the run's remote time
is bounded as a whole; ``stop`` ends a request blocked on a silent server at once.

No assertion here measures time: each bound is seen by the fault it reports and by what the server
received, and the failure mode it guards against would take many times longer than any wait below.
"""
from __future__ import annotations

import socket
import threading
import time

import pytest
from remote_hostile import Sent, trickle
from remote_server import FakeClock, fast, server  # noqa: F401
from werkzeug import Response

from resolvers.errors import RateLimited, RemoteStopped, RemoteUnavailable
from resolvers.remote.bounds import Fault, fault_of
from resolvers.remote.guard.session import RemoteSession
from resolvers.remote.http import PoliteClient


def slow_settings(**overrides):
    """Stall bounds small enough to meet in a test; deadlines far away, so the rate is what cuts."""
    base = {"min_bytes_per_second": 1000.0, "stall_seconds": 0.5, "timeout_seconds": 30.0,
            "deadline_seconds": 120.0, "retries": 2, "circuit_cooldown_seconds": 60.0}
    return fast(**{**base, **overrides})


def fault(call) -> RemoteUnavailable:
    with pytest.raises(RemoteUnavailable) as info:
        call()
    return info.value


def test_a_body_slower_than_the_minimum_rate_is_cut_long_before_its_deadline(server):
    server.expect_request("/x").respond_with_handler(trickle(Sent(), every=0.05, count=2400))
    c = PoliteClient("svc", slow_settings())
    error = fault(lambda: c.get(server.url_for("/x")))
    assert fault_of(error) is Fault.TOO_SLOW, error.why
    assert "min_bytes_per_second" in error.why
    assert len(server.log) <= 1  # not retried: the stall opened the circuit


class TrickledHeaders:
    """A TCP server whose answer's status line and headers come one byte at a time, ``every``
    seconds apart, for at most ``count`` bytes (so a client that never stops still ends)."""

    def __init__(self, every: float = 0.05, count: int = 1200):
        self.every, self.count = every, count
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/x"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            head = b"HTTP/1.1 200 OK\r\nX-Padding: " + b"a" * self.count
            for byte in head[: self.count]:
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return
                time.sleep(self.every)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.listener.close()


def test_headers_trickled_a_byte_at_a_time_are_cut_too():
    with TrickledHeaders() as srv:
        c = PoliteClient("svc", slow_settings())
        error = fault(lambda: c.get(srv.url))
    assert fault_of(error) is Fault.TOO_SLOW, error.why
    assert srv.connections == 1


class Gated:
    """``/slow`` sends nothing until released, then trickles; every other path answers at once."""

    def __init__(self):
        self.arrived = threading.Event()
        self.release = threading.Event()

    def __call__(self, request):
        if request.path != "/slow":
            return Response("found")
        self.arrived.set()
        self.release.wait(30)
        return trickle(Sent(), every=0.05, count=2400)(request)


def wait_for(condition, seconds: float = 30.0) -> None:
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "condition not met"
        time.sleep(0.01)


def test_a_stall_fails_the_requests_waiting_behind_it_at_once_without_sending_them(server):
    import re

    gated = Gated()
    server.expect_request(re.compile("^/.*")).respond_with_handler(gated)
    # a cool-down of 0: a request that comes after the stall is sent (as a probe); the ones that
    # were already waiting when it came are not
    c = PoliteClient("svc", slow_settings(max_concurrency=1, circuit_cooldown_seconds=0.0))
    outcomes: dict[str, object] = {}

    def ask(name: str, path: str) -> None:
        try:
            outcomes[name] = c.get(server.url_for(path)).text
        except RemoteUnavailable as exc:
            outcomes[name] = exc

    first = threading.Thread(target=ask, args=("slow", "/slow"))
    first.start()
    assert gated.arrived.wait(30)
    waiting = [threading.Thread(target=ask, args=(f"w{i}", f"/fast/{i}")) for i in range(4)]
    for t in waiting:
        t.start()
    wait_for(lambda: c.waiting() == 4)
    gated.release.set()
    for t in [first, *waiting]:
        t.join(60)
    assert fault_of(outcomes["slow"]) is Fault.TOO_SLOW  # type: ignore[arg-type]
    for i in range(4):
        error = outcomes[f"w{i}"]
        assert isinstance(error, RemoteUnavailable) and fault_of(error) is Fault.CIRCUIT_OPEN, error
        assert "answer too slow" in error.why  # the waiting request says what opened the circuit
    assert [entry[0].path for entry in server.log if entry[0].path != "/slow"] == []
    assert c.get(server.url_for("/fast/after")).text == "found"  # sent after the stall: the probe
    report = c.breaker.report()
    assert report["openings"] == 1 and report["refused"] == 4 and report["why"].startswith("answer too slow")


def test_a_run_of_5xx_opens_the_circuit_and_after_a_few_openings_it_stays_open_for_the_run(server):
    server.expect_request("/x").respond_with_data("busy", status=503)
    clock = FakeClock()
    c = PoliteClient("svc", slow_settings(retries=2, circuit_openings=3, circuit_cooldown_seconds=30.0),
                     clock=clock, sleep=clock.sleep)
    for opening, sent in enumerate((3, 4, 5)):  # the first request and its retries; then one probe each
        error = fault(lambda: c.get(server.url_for("/x")))
        assert "HTTP 503" in error.why and len(server.log) == sent, (opening, error.why)
        error = fault(lambda: c.get(server.url_for("/x")))
        assert fault_of(error) is Fault.CIRCUIT_OPEN and len(server.log) == sent
        clock.now += 31
    error = fault(lambda: c.get(server.url_for("/x")))  # the cool-down passed, but no probe any more
    assert fault_of(error) is Fault.CIRCUIT_OPEN and "rest of the run" in error.why and len(server.log) == 5
    clock.now += 10_000
    assert fault_of(fault(lambda: c.get(server.url_for("/x")))) is Fault.CIRCUIT_OPEN
    report = c.breaker.report()
    assert report["state"] == "open for the rest of the run" and report["openings"] == 3
    assert report["refused"] == 5 and report["why"].startswith("HTTP 503")
    c.breaker.new_run()  # the next run asks again
    assert "HTTP 503" in fault(lambda: c.get(server.url_for("/x"))).why and len(server.log) == 8


def test_a_refused_retry_after_opens_the_circuit_and_pauses_nothing(server):
    server.expect_request("/x").respond_with_data("slow down", status=429, headers={"Retry-After": "999999999999"})
    clock = FakeClock()
    c = PoliteClient("svc", slow_settings(max_retry_after_seconds=5.0, circuit_cooldown_seconds=30.0),
                     clock=clock, sleep=clock.sleep)
    with pytest.raises(RateLimited):
        c.get(server.url_for("/x"))
    error = fault(lambda: c.get(server.url_for("/x")))
    assert fault_of(error) is Fault.CIRCUIT_OPEN and "Retry-After" in error.why
    assert len(server.log) == 1 and clock.sleeps == []  # nobody slept through the asked-for pause
    server.clear()
    server.expect_request("/x").respond_with_data("found")
    clock.now += 31
    assert c.get(server.url_for("/x")).text == "found" and clock.sleeps == []


def test_a_silent_server_times_out_once_and_opens_the_circuit(server):
    import re

    gated = Gated()
    server.expect_request(re.compile("^/.*")).respond_with_handler(gated)
    c = PoliteClient("svc", slow_settings(timeout_seconds=0.3, retries=3))
    try:
        error = fault(lambda: c.get(server.url_for("/slow")))
    finally:
        gated.release.set()
    assert fault_of(error) is Fault.TIMEOUT and c.stats.attempts == 1
    assert fault_of(fault(lambda: c.get(server.url_for("/fast")))) is Fault.CIRCUIT_OPEN


def test_the_runs_remote_time_is_bounded_as_a_whole(server):
    server.expect_request("/x").respond_with_data("found")
    clock = FakeClock()
    session = RemoteSession(max_run_seconds=10.0, clock=clock)
    c = PoliteClient("svc", slow_settings(), clock=clock, sleep=clock.sleep, session=session)
    session.begin_run("first")
    for _ in range(4):
        c.get(server.url_for("/x"))
        clock.now += 3  # the time between two requests is not remote time
    assert session.spent() == 0.0
    original = c._exchange

    def slow_exchange(*args):  # each answer takes 3 s of the run's remote time
        clock.now += 3
        return original(*args)

    c._exchange = slow_exchange  # type: ignore[method-assign]
    for _ in range(3):
        c.get(server.url_for("/x"))
    error = fault(lambda: c.get(server.url_for("/x")))  # begun with 1 s left: cut before it is sent
    assert fault_of(error) is Fault.RUN_TIME and "max_run_seconds" in error.why
    error = fault(lambda: c.get(server.url_for("/x")))  # refused at once
    assert fault_of(error) is Fault.RUN_TIME
    assert len(server.log) == 7 and session.report()["refused"] == 1 and c.breaker.report()["openings"] == 0
    session.begin_run("second")
    assert c.get(server.url_for("/x")).text == "found"


def test_stop_ends_a_request_waiting_on_a_silent_server_at_once(server):
    import re

    gated = Gated()
    server.expect_request(re.compile("^/.*")).respond_with_handler(gated)
    session = RemoteSession()
    c = PoliteClient("svc", slow_settings(timeout_seconds=60.0, max_concurrency=1), session=session)
    outcomes: list[BaseException] = []

    def ask(path: str) -> None:
        try:
            c.get(server.url_for(path))
        except BaseException as exc:  # noqa: BLE001 - what the test looks at
            outcomes.append(exc)

    threads = [threading.Thread(target=ask, args=("/slow",)), threading.Thread(target=ask, args=("/fast",))]
    threads[0].start()
    assert gated.arrived.wait(30)
    threads[1].start()
    wait_for(lambda: c.waiting() == 1)
    try:
        session.stop()
        for t in threads:
            t.join(20)  # without the stop: 60 s of read timeout, then the deadline
        assert not any(t.is_alive() for t in threads)
    finally:
        gated.release.set()
    assert len(outcomes) == 2 and all(isinstance(e, RemoteStopped) for e in outcomes), outcomes
    with pytest.raises(RemoteStopped):
        c.get(server.url_for("/fast"))
