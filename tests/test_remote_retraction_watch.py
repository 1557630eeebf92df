"""Retraction Watch CSV download: atomic replace, conditional refresh, failure keeps the old copy."""
from __future__ import annotations

import json

import pytest
from remote_server import FakeClock, ResetServer, fast, fixture_bytes, http_response, server  # noqa: F401
from werkzeug import Response

from citeledger.storage.remote_state import retraction_watch_files, validators_path
from resolvers.errors import RemoteUnavailable
from resolvers.remote.http import PoliteClient
from resolvers.remote.retraction_watch import refresh_retraction_watch

CSV = fixture_bytes("retraction_watch/retraction_watch_2026-09_sample.csv")
ETAG = '"rw-2026-09-25"'
LAST_MODIFIED = "Thu, 25 Sep 2026 06:00:00 GMT"


def client(**settings):
    clock = FakeClock()
    return PoliteClient("retraction_watch", fast(**settings), clock=clock, sleep=clock.sleep)


def test_download_then_304_then_failure_keeps_the_copy(server, tmp_path):
    def handler(request):
        if request.headers.get("If-None-Match") == ETAG:
            return Response(status=304, headers={"ETag": ETAG})
        return Response(CSV, content_type="text/csv", headers={"ETag": ETAG, "Last-Modified": LAST_MODIFIED})

    server.expect_request("/rw.csv").respond_with_handler(handler)
    dest = tmp_path / "rw" / "retraction_watch.csv"
    url = server.url_for("/rw.csv")
    first = refresh_retraction_watch(client(), url, *retraction_watch_files(dest))
    assert first.changed and dest.read_bytes() == CSV and first.bytes_written == len(CSV)
    assert json.loads(validators_path(dest).read_text())["etag"] == ETAG

    second = refresh_retraction_watch(client(), url, *retraction_watch_files(dest))
    assert not second.changed and dest.read_bytes() == CSV
    assert server.log[1][0].headers["If-None-Match"] == ETAG
    assert server.log[1][0].headers["If-Modified-Since"] == LAST_MODIFIED

    server.clear()
    server.expect_request("/rw.csv").respond_with_data("down", status=503)
    with pytest.raises(RemoteUnavailable):
        refresh_retraction_watch(client(retries=1), url, *retraction_watch_files(dest))
    assert dest.read_bytes() == CSV
    assert sorted(p.name for p in dest.parent.iterdir()) == ["retraction_watch.csv", "retraction_watch.csv.http.json"]


def test_body_cut_short_is_retried_and_never_installed(tmp_path):
    """A body shorter than its Content-Length is a transport error: retried, and the partial temp
    file never replaces anything. (Werkzeug rewrites Content-Length, so a raw socket server.)"""
    head = f"HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nContent-Length: {len(CSV)}\r\nConnection: close\r\n\r\n"
    truncated = head.encode() + CSV[:100]
    with ResetServer(resets=0, reply=[truncated, http_response("200 OK", CSV, "text/csv")]) as srv:
        dest = tmp_path / "retraction_watch.csv"
        result = refresh_retraction_watch(client(), srv.url + "/rw.csv", *retraction_watch_files(dest))
        assert result.changed and dest.read_bytes() == CSV and srv.answered == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["retraction_watch.csv", "retraction_watch.csv.http.json"]
