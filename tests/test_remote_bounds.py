"""The bounds of a remote answer against a real local server: bytes (declared, streamed, gzip
bombs, stacked encodings), the deadline of a request (trickled bodies, retries), Retry-After
values out of range, redirects (loops, chains, other hosts). Each ends as ``RemoteUnavailable``
with its fault, never an exception of another kind, and the bytes taken in stay under the limit.
"""
from __future__ import annotations

import gzip
import json
from datetime import datetime, timezone

import pytest
from pytest_httpserver import HTTPServer
from remote_hostile import GIB, MIB, Sent, gzip_bomb, huge, redirect, stacked_gzip, trickle
from remote_server import FakeClock, fast, server  # noqa: F401
from werkzeug import Response

from resolvers.errors import InputTooLarge, PdfUnreadable, RateLimited, RemoteUnavailable
from resolvers.remote.bounds import RETRY_AFTER_CEILING, Fault, fault_of, parse_retry_after, redirect_refused
from resolvers.remote.eprint import ArxivFiles
from resolvers.remote.grobid import GrobidClient
from resolvers.remote.http import PoliteClient

LIMIT = MIB


class TickClock(FakeClock):
    """A clock that moves ``step`` seconds each time it is read (and when slept on): a deadline is
    reached after a known number of reads, however loaded the machine."""

    def __init__(self, step: float):
        super().__init__()
        self.step = step

    def __call__(self) -> float:
        with self._lock:
            self.now += self.step
            return self.now


def client(clock=None, **settings):
    clock = clock or FakeClock()
    base = {"max_body_bytes": LIMIT, "retries": 2}
    return PoliteClient("svc", fast(**{**base, **settings}), mailto="tests@example.org", clock=clock,
                        sleep=clock.sleep), clock


def refused(c: PoliteClient, url: str, fault: Fault) -> RemoteUnavailable:
    with pytest.raises(RemoteUnavailable) as info:
        c.get(url)
    assert fault_of(info.value) is fault, info.value.why
    assert c.stats.faults == {fault.value: 1}
    return info.value


# -- bytes ---------------------------------------------------------------------------------------


def test_a_declared_8_gib_body_is_refused_before_any_byte(server):
    sent = Sent()
    server.expect_request("/x").respond_with_handler(huge(sent, declared=8 * GIB))
    c, _ = client()
    error = refused(c, server.url_for("/x"), Fault.TOO_LARGE)
    assert "declares 8,589,934,592 bytes" in error.why
    assert c.stats.largest_answer == 0 and len(server.log) == 1  # not read, not asked again


def test_a_body_streamed_without_length_stops_at_the_limit(server):
    sent = Sent()
    server.expect_request("/x").respond_with_handler(huge(sent, declared=None))
    c, _ = client()
    refused(c, server.url_for("/x"), Fault.TOO_LARGE)
    assert 0 < c.stats.largest_answer <= LIMIT and len(server.log) == 1


def test_a_gzip_bomb_is_counted_decoded(server):
    sent = Sent()
    server.expect_request("/x").respond_with_handler(gzip_bomb(sent))
    c, _ = client()
    error = refused(c, server.url_for("/x"), Fault.TOO_LARGE)
    assert "(decoded)" in error.why
    assert c.stats.largest_answer <= LIMIT and c.stats.bytes_taken <= LIMIT


def test_an_answer_under_the_limit_is_whole_and_decoded(server):
    payload = json.dumps({"message": {"title": ["x" * 5000]}}).encode()
    server.expect_request("/x").respond_with_data(gzip.compress(payload), headers={"Content-Encoding": "gzip"},
                                                  content_type="application/json")
    c, _ = client()
    response = c.get(server.url_for("/x"))
    assert response.content == payload and response.json()["message"]["title"] == ["x" * 5000]
    assert c.stats.largest_answer == len(payload)


def test_stacked_encodings_are_refused(server):
    server.expect_request("/x").respond_with_handler(stacked_gzip(b'{"message": {}}'))
    c, _ = client()
    refused(c, server.url_for("/x"), Fault.ENCODING)


def test_a_body_that_does_not_decode_is_unavailable(server):
    server.expect_request("/x").respond_with_data(b"not gzip at all", headers={"Content-Encoding": "gzip"})
    c, _ = client(retries=1)
    refused(c, server.url_for("/x"), Fault.TRANSPORT)
    assert len(server.log) == 2  # retried like a reset: a flaky proxy may send it whole next time


def test_an_error_body_is_read_for_its_first_bytes_only(server):
    sent = Sent()
    server.expect_request("/x").respond_with_handler(
        lambda request: Response(huge(sent, declared=None)(request).response, status=503))
    c, _ = client(retries=0)
    refused(c, server.url_for("/x"), Fault.STATUS)
    assert c.stats.largest_answer <= 64 * 1024


def test_an_eprint_over_max_file_bytes_is_too_large_whatever_the_caller_allows(server):
    sent = Sent()
    server.expect_request("/e-print/2501.00254").respond_with_handler(huge(sent, declared=None))
    c, _ = client(max_file_bytes=2 * MIB, max_body_bytes=64 * 1024)
    files = ArxivFiles(c, server.url_for("/e-print"), server.url_for("/pdf"), max_bytes=2 * GIB)
    with pytest.raises(InputTooLarge, match="max_file_bytes"):
        files.eprint("2501.00254")
    assert 64 * 1024 < c.stats.largest_answer <= 2 * MIB  # a file has its own limit, not the API's


def test_an_eprint_within_max_file_bytes_is_fetched(server):
    server.expect_request("/e-print/2501.00254").respond_with_data(bytes(3 * MIB))
    c, _ = client(max_file_bytes=4 * MIB, max_body_bytes=64 * 1024)
    files = ArxivFiles(c, server.url_for("/e-print"), server.url_for("/pdf"), max_bytes=2 * GIB)
    assert files.eprint("2501.00254") == bytes(3 * MIB)


def test_grobid_is_not_sent_a_pdf_over_max_file_bytes(server):
    server.expect_request("/api/processReferences").respond_with_data("<TEI/>")
    c, _ = client(max_file_bytes=MIB)
    with pytest.raises(PdfUnreadable, match="max_file_bytes"):
        GrobidClient(c, server.url_for("")).process_references(b"%PDF-1.4" + bytes(MIB))
    assert len(server.log) == 0


def test_grobid_answer_over_max_body_bytes_is_unavailable(server):
    sent = Sent()
    server.expect_request("/api/processReferences", method="POST").respond_with_handler(huge(sent, declared=None))
    c, _ = client()
    with pytest.raises(RemoteUnavailable) as info:
        GrobidClient(c, server.url_for("")).process_references(b"%PDF-1.4 small")
    assert fault_of(info.value) is Fault.TOO_LARGE and c.stats.largest_answer <= LIMIT


# -- the deadline --------------------------------------------------------------------------------


def test_a_trickled_body_is_cut_at_the_deadline(server):
    """One byte every 50 ms, each read well within the timeout: the deadline ends it. The clock
    moves a quarter second at each reading, so the deadline comes after about 20 reads."""
    sent = Sent()
    server.expect_request("/x").respond_with_handler(trickle(sent, every=0.05, count=600))
    c, _ = client(TickClock(0.25), timeout_seconds=5.0, deadline_seconds=5.0, retries=0)
    error = refused(c, server.url_for("/x"), Fault.DEADLINE)
    assert "more than 5 s" in error.why and c.stats.largest_answer < 600


def test_retries_sleep_within_the_deadline(server):
    server.expect_request("/x").respond_with_data("busy", status=503)
    c, clock = client(retries=20, backoff_base_seconds=1.0, backoff_max_seconds=4.0, deadline_seconds=10.0)
    with pytest.raises(RemoteUnavailable, match="HTTP 503"):
        c.get(server.url_for("/x"))
    assert sum(clock.sleeps) < 10.0 and len(server.log) < 21


def test_a_pause_past_the_deadline_is_not_waited_out(server):
    """Between two attempts the service is paused (another thread met a Retry-After) beyond the
    request's deadline: the retry fails at once, sending nothing, instead of sleeping through it.
    (Waiting for the first send slot is politeness, not the remote's fault: it is not counted.)"""
    server.expect_request("/x").respond_with_data("busy", status=503)
    clock = FakeClock()
    c = PoliteClient("svc", fast(deadline_seconds=2.0, max_retry_after_seconds=60.0), clock=clock, sleep=clock.sleep)

    def sleep_while_another_thread_meets_a_retry_after(seconds: float) -> None:
        clock.sleep(seconds)
        c.limiter.defer(30.0)

    c._sleep = sleep_while_another_thread_meets_a_retry_after
    error = refused(c, server.url_for("/x"), Fault.DEADLINE)
    assert "pause" in error.why and len(server.log) == 1 and max(clock.sleeps) < 1.0


# -- Retry-After ---------------------------------------------------------------------------------


def test_retry_after_out_of_range_is_clamped_or_ignored():
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert parse_retry_after("999999999999", now) == RETRY_AFTER_CEILING
    assert parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT", now) == RETRY_AFTER_CEILING
    for garbage in ("1e400", "inf", "nan", "-5", "0x10", "Wed, 99 Foo 99999 99:99:99 GMT", "9" * 400):
        assert parse_retry_after(garbage, now) is None, garbage
    assert parse_retry_after("12", now) == 12.0 and parse_retry_after("1.5", now) == 1.5


@pytest.mark.parametrize("value", ["999999999999", "Fri, 31 Dec 9999 23:59:59 GMT"])
def test_a_huge_retry_after_is_unavailable_and_nobody_waits_it_out(server, value):
    """The circuit opens (for the cool-down, or ``max_retry_after_seconds`` if longer): the next
    request fails at once instead of sleeping, and the one after the cool-down is sent."""
    server.expect_request("/x").respond_with_data("slow down", status=429, headers={"Retry-After": value})
    c, clock = client(retries=3, max_retry_after_seconds=5.0, circuit_cooldown_seconds=2.0)
    with pytest.raises(RateLimited) as info:
        c.get(server.url_for("/x"))
    assert info.value.retry_after == RETRY_AFTER_CEILING and len(server.log) == 1
    with pytest.raises(RemoteUnavailable, match="circuit open"):
        c.get(server.url_for("/x"))
    server.clear()
    server.expect_request("/x").respond_with_data("found")
    clock.now += 5.0
    assert c.get(server.url_for("/x")).text == "found" and clock.sleeps == []


# -- redirects -----------------------------------------------------------------------------------


def test_a_redirect_within_the_host_is_followed(server):
    server.expect_request("/old").respond_with_handler(redirect("/new", 301))
    server.expect_request("/new").respond_with_data("moved here")
    c, _ = client()
    assert c.get(server.url_for("/old")).text == "moved here"
    assert [entry[0].path for entry in server.log] == ["/old", "/new"]


def test_a_redirect_loop_ends_unavailable(server):
    server.expect_request("/a").respond_with_handler(redirect("/b"))
    server.expect_request("/b").respond_with_handler(redirect("/a"))
    c, _ = client()
    error = refused(c, server.url_for("/a"), Fault.REDIRECT)
    assert "loop" in error.why and len(server.log) == 2  # not asked again: it would loop again


def test_an_endless_redirect_chain_ends_at_max_redirects(server):
    for n in range(10):
        server.expect_request(f"/r{n}").respond_with_handler(redirect(f"/r{n + 1}"))
    c, _ = client(max_redirects=3)
    refused(c, server.url_for("/r0"), Fault.REDIRECT)
    assert len(server.log) == 4


def test_no_redirect_is_followed_when_the_service_allows_none(server):
    server.expect_request("/old").respond_with_handler(redirect("/new"))
    server.expect_request("/new").respond_with_data("moved here")
    c, _ = client(max_redirects=0)
    refused(c, server.url_for("/old"), Fault.REDIRECT)
    assert len(server.log) == 1


def test_a_redirect_to_another_host_is_not_followed(server):
    """The contact e-mail rides in the User-Agent: it goes to the configured host, nowhere else."""
    elsewhere = HTTPServer(host="127.0.0.1")
    elsewhere.start()
    try:
        elsewhere.expect_request("/x").respond_with_data("elsewhere")
        server.expect_request("/x").respond_with_handler(redirect(elsewhere.url_for("/x")))
        c, _ = client()
        error = refused(c, server.url_for("/x"), Fault.REDIRECT)
        assert "another host" in error.why and len(elsewhere.log) == 0
    finally:
        elsewhere.clear()
        elsewhere.stop()


def test_redirect_rules():
    import httpx

    origin = httpx.URL("http://api.example.org/works")
    ok = redirect_refused(origin, httpx.URL("https://api.example.org/works"), 0, 3, set())
    downgrade = redirect_refused(httpx.URL("https://api.example.org/w"), httpx.URL("http://api.example.org/w"),
                                 0, 3, set())
    other_port = redirect_refused(origin, httpx.URL("http://api.example.org:8080/works"), 0, 3, set())
    assert ok is None and downgrade and other_port


def test_a_retraction_watch_export_over_the_limit_keeps_the_copy_in_place(server, tmp_path):
    from citeledger.storage.remote_state import retraction_watch_files
    from resolvers.remote.retraction_watch import refresh_retraction_watch

    server.expect_request("/rw.csv").respond_with_data("Record ID,Title\n1,A retracted work\n", content_type="text/csv")
    dest = tmp_path / "retraction_watch.csv"
    c, _ = client()
    refresh_retraction_watch(c, server.url_for("/rw.csv"), *retraction_watch_files(dest))
    kept = dest.read_bytes()
    server.clear()
    server.expect_request("/rw.csv").respond_with_handler(huge(Sent(), declared=None))
    with pytest.raises(RemoteUnavailable) as info:
        refresh_retraction_watch(c, server.url_for("/rw.csv"), *retraction_watch_files(dest))
    assert fault_of(info.value) is Fault.TOO_LARGE and dest.read_bytes() == kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["retraction_watch.csv", "retraction_watch.csv.http.json"]
