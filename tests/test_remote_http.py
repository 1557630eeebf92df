"""The polite client against a real local server: retries, Retry-After, faults, limits, breaker."""
from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import httpx
import pytest
from remote_server import FakeClock, ResetServer, fast, fixture_bytes, holding, http_response, server  # noqa: F401  # noqa: F401
from werkzeug import Response

from resolvers.errors import RateLimited, RemoteUnavailable
from resolvers.remote.http import PoliteClient, parse_retry_after, user_agent

RATE_BODY = fixture_bytes("arxiv/api_rate_exceeded_429_body.txt")


def sequence_handler(responses):
    """Serve the given responses in order (the last one repeats)."""
    lock = threading.Lock()
    state = {"n": 0}

    def handler(request):
        with lock:
            i = min(state["n"], len(responses) - 1)
            state["n"] += 1
        r = responses[i]
        return r if isinstance(r, Response) else r()

    return handler


def client(settings, clock=None, **kw):
    clock = clock or FakeClock()
    return PoliteClient("svc", settings, mailto="tests@example.org", clock=clock, sleep=clock.sleep, **kw), clock


def test_parse_retry_after_seconds_and_http_date():
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    assert parse_retry_after("7", now) == 7.0
    assert parse_retry_after(format_datetime(now + timedelta(seconds=30), usegmt=True), now) == 30.0
    assert parse_retry_after(format_datetime(now - timedelta(seconds=30), usegmt=True), now) == 0.0
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after(None, now) is None


def test_user_agent_names_tool_version_and_contact(server):
    server.expect_request("/ua").respond_with_data("ok")
    c, _ = client(fast())
    c.get(server.url_for("/ua"))
    ua = server.log[0][0].headers["User-Agent"]
    assert ua.startswith("citeledger/") and "mailto:tests@example.org" in ua
    assert ua == user_agent("tests@example.org")


def test_429_with_retry_after_waits_then_succeeds(server):
    server.expect_request("/x").respond_with_handler(sequence_handler([
        Response(RATE_BODY, status=429, headers={"Retry-After": "2"}, content_type="text/plain"),
        Response("found", status=200),
    ]))
    c, clock = client(fast())
    response = c.get(server.url_for("/x"))
    assert response.status_code == 200 and response.text == "found"
    assert len(server.log) == 2
    assert 2.0 in clock.sleeps  # waited exactly what the server asked, not the short backoff


def test_429_with_http_date_retry_after(server):
    now = datetime(2026, 3, 1, 12, 0, 0, tzinfo=timezone.utc)  # the client's wall clock, injected
    when = now + timedelta(seconds=3)
    server.expect_request("/x").respond_with_handler(sequence_handler([
        Response(RATE_BODY, status=429, headers={"Retry-After": format_datetime(when, usegmt=True)}),
        Response("found", status=200),
    ]))
    c, clock = client(fast(), wallclock=lambda: now)
    assert c.get(server.url_for("/x")).status_code == 200
    assert 3.0 in clock.sleeps, clock.sleeps


def test_persistent_429_raises_rate_limited_with_retry_after(server):
    server.expect_request("/x").respond_with_data(RATE_BODY, status=429, headers={"Retry-After": "1"})
    c, _ = client(fast(retries=2))
    with pytest.raises(RateLimited) as info:
        c.get(server.url_for("/x"))
    assert info.value.retry_after == 1.0 and info.value.service == "svc"
    assert "Rate exceeded." in info.value.why
    assert len(server.log) == 3  # first attempt + 2 retries


def test_retry_after_longer_than_allowed_gives_up_at_once(server):
    server.expect_request("/x").respond_with_data(RATE_BODY, status=429, headers={"Retry-After": "3600"})
    c, clock = client(fast(retries=3, max_retry_after_seconds=10))
    with pytest.raises(RateLimited) as info:
        c.get(server.url_for("/x"))
    assert info.value.retry_after == 3600
    assert len(server.log) == 1 and not any(s >= 3600 for s in clock.sleeps)


def test_500_is_retried_with_growing_backoff(server):
    server.expect_request("/x").respond_with_handler(sequence_handler([
        Response("boom", status=500), Response("boom", status=502), Response("found", status=200),
    ]))
    c, clock = client(fast(retries=3, backoff_base_seconds=1.0, backoff_max_seconds=100))
    assert c.get(server.url_for("/x")).text == "found"
    assert len(server.log) == 3
    assert 0.5 <= clock.sleeps[0] <= 1.0 and 1.0 <= clock.sleeps[1] <= 2.0  # equal jitter


def test_persistent_500_raises_unavailable(server):
    server.expect_request("/x").respond_with_data("boom", status=500)
    c, _ = client(fast(retries=1))
    with pytest.raises(RemoteUnavailable) as info:
        c.get(server.url_for("/x"))
    assert not isinstance(info.value, RateLimited) and "HTTP 500" in info.value.why
    assert len(server.log) == 2


def test_404_is_an_answer_not_an_error(server):
    server.expect_request("/x").respond_with_data("Resource not found.", status=404, content_type="text/plain")
    c, _ = client(fast())
    assert c.get(server.url_for("/x")).status_code == 404
    assert len(server.log) == 1


def test_a_timeout_opens_the_circuit_and_the_probe_after_the_cooldown_succeeds(server, holding):
    """A timeout is a stall: not retried (each retry would wait as long), the circuit opens at once."""
    server.expect_request("/x").respond_with_handler(sequence_handler([lambda: holding(None),
                                                                       Response("found", status=200)]))
    c, clock = client(fast(timeout_seconds=0.2, circuit_cooldown_seconds=30))
    with pytest.raises(RemoteUnavailable, match="timeout"):
        c.get(server.url_for("/x"))
    with pytest.raises(RemoteUnavailable, match="circuit open: timeout"):
        c.get(server.url_for("/x"))
    clock.now += 31
    assert c.get(server.url_for("/x")).text == "found"


def test_timeout_every_time_raises_unavailable(server, holding):
    server.expect_request("/x").respond_with_handler(holding)
    c, _ = client(fast(timeout_seconds=0.1, retries=1))
    with pytest.raises(RemoteUnavailable) as info:
        c.get(server.url_for("/x"))
    assert "timeout" in info.value.why


def test_connection_reset_is_retried_then_succeeds():
    with ResetServer(resets=2, reply=http_response("200 OK", b"found", "text/plain")) as srv:
        c, _ = client(fast(retries=2))
        response = c.get(srv.url + "/x")
        assert response.text == "found"
        assert srv.connections == 3


def test_connection_reset_every_time_raises_unavailable():
    with ResetServer(resets=10, reply=b"") as srv:
        c, _ = client(fast(retries=1))
        with pytest.raises(RemoteUnavailable) as info:
            c.get(srv.url + "/x")
        assert "transport error" in info.value.why
        assert srv.connections == 2


def test_circuit_opens_after_consecutive_failures_and_half_opens_after_cooldown(server):
    server.expect_request("/x").respond_with_handler(sequence_handler([
        Response("boom", status=503), Response("boom", status=503), Response("boom", status=503),
        Response("found", status=200),
    ]))
    c, clock = client(fast(retries=0, circuit_failures=3, circuit_cooldown_seconds=30))
    for _ in range(3):
        with pytest.raises(RemoteUnavailable):
            c.get(server.url_for("/x"))
    assert c.breaker.state == "open"
    with pytest.raises(RemoteUnavailable) as info:
        c.get(server.url_for("/x"))
    assert "circuit open" in info.value.why
    assert len(server.log) == 3  # the open circuit sent nothing
    clock.now += 31
    assert c.get(server.url_for("/x")).text == "found"  # the half-open probe
    assert c.breaker.state == "closed" and len(server.log) == 4


def test_failed_probe_reopens_the_circuit(server):
    server.expect_request("/x").respond_with_data("boom", status=500)
    c, clock = client(fast(retries=0, circuit_failures=2, circuit_cooldown_seconds=10))
    for _ in range(2):
        with pytest.raises(RemoteUnavailable):
            c.get(server.url_for("/x"))
    clock.now += 11
    with pytest.raises(RemoteUnavailable):
        c.get(server.url_for("/x"))  # the probe reaches the server and fails
    assert len(server.log) == 3 and c.breaker.state == "open"
    with pytest.raises(RemoteUnavailable, match="circuit open"):
        c.get(server.url_for("/x"))
    assert len(server.log) == 3


def test_rate_limit_holds_across_threads_measured_at_the_sender(server):
    """The interval is checked where it is enforced: the limiter's own record of when each write
    started (a request's first byte). Arrival times at a server thread measure the scheduler too
    (a loaded machine delays one arrival and bunches it with the next), so they are left to
    ``benchmarks/bench_search.py --rate``."""
    server.expect_request("/x").respond_with_data("ok")
    interval = 0.05
    c = PoliteClient("svc", fast(min_interval_seconds=interval, max_concurrency=4))
    threads = [threading.Thread(target=c.get, args=(server.url_for("/x"),)) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(server.log) == 10
    starts = list(c.limiter.sends)
    assert len(starts) == 10
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert min(gaps) >= interval, gaps  # exact: each write waits for the previous one's end + interval


def test_concurrency_limit_holds_with_an_injected_transport(server):
    """httpx ignores limits= when transport= is given: the semaphore must do the limiting. The
    first two requests meet at a barrier inside the server (both allowed at once, or it breaks)."""
    lock = threading.Lock()
    state = {"now": 0, "max": 0, "seen": 0}
    both_inside = threading.Barrier(2, timeout=10)

    def handler(request):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
            state["seen"] += 1
            first_two = state["seen"] <= 2
        try:
            if first_two:
                both_inside.wait()
            time.sleep(0.01)
        finally:
            with lock:
                state["now"] -= 1
        return Response("ok")

    server.expect_request("/x").respond_with_handler(handler)
    c = PoliteClient("svc", fast(max_concurrency=2), transport=httpx.HTTPTransport())
    statuses: list[int] = []
    threads = [threading.Thread(target=lambda: statuses.append(c.get(server.url_for("/x")).status_code))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == [200] * 8  # the barrier held: two requests were inside at once
    assert state["max"] == 2  # never more than allowed
