"""Helpers for the remote tests: recorded payloads, a threaded local server, a fake clock.

Nothing here touches the internet: every URL points at 127.0.0.1.
"""
from __future__ import annotations

import dataclasses
import json
import socket
import socketserver
import struct
import threading
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from citeledger.config import Config, Endpoints, ServiceSettings

FIXTURES = Path(__file__).parent / "fixtures" / "http"


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def fixture_json(name: str):
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


@pytest.fixture
def server():
    """A real HTTP server on localhost, threaded so slow handlers do not serialise clients."""
    srv = HTTPServer(host="127.0.0.1", threaded=True)
    srv.start()
    yield srv
    srv.clear()
    if srv.is_running():
        srv.stop()


def fast(**overrides) -> ServiceSettings:
    """Short intervals so the suite stays quick; each test overrides what it exercises."""
    base = ServiceSettings(
        min_interval_seconds=0.0,
        max_concurrency=4,
        timeout_seconds=2.0,
        retries=2,
        backoff_base_seconds=0.01,
        backoff_max_seconds=0.05,
        max_retry_after_seconds=5.0,
        circuit_failures=50,
        circuit_cooldown_seconds=1.0,
    )
    return dataclasses.replace(base, **overrides)


def test_config(base_url: str, remote=("arxiv", "crossref"), mailto="tests@example.org", **services) -> Config:
    """A configuration pointing every endpoint at the local server."""
    return Config(
        remote=frozenset(remote),
        mailto=mailto,
        arxiv=services.get("arxiv", fast()),
        crossref=services.get("crossref", fast()),
        retraction_watch=services.get("retraction_watch", fast()),
        endpoints=Endpoints(
            arxiv_api=base_url + "/api/query",
            arxiv_oai=base_url + "/oai",
            crossref_api=base_url,
            retraction_watch_csv=base_url + "/retraction_watch.csv",
        ),
    )


test_config.__test__ = False  # a helper, not a test


class FakeClock:
    """A monotonic clock that only moves when someone sleeps: backoff tests run instantly."""

    def __init__(self, start: float = 1000.0):
        self.now = start
        self.sleeps: list[float] = []
        self._lock = threading.Lock()

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            self.now += seconds


class Holding:
    """A handler that answers only once released (or ``limit`` seconds on, so nothing hangs): a
    client's timeout fires before the answer however loaded the machine, where a fixed sleep in
    the handler races the client's timer. Release it when the test ends (the ``holding`` fixture)."""

    def __init__(self, limit: float = 10.0):
        self.limit = limit
        self.released = threading.Event()

    def hold(self) -> None:
        self.released.wait(self.limit)

    def __call__(self, request):
        from werkzeug import Response

        self.hold()
        return Response("late", status=200)

    def release(self) -> None:
        self.released.set()


@pytest.fixture
def holding():
    """A ``Holding`` released when the test ends."""
    held = Holding()
    yield held
    held.release()


class ResetServer:
    """A TCP server that resets (RST) the first ``resets`` connections, then answers ``reply``
    (or, given a list, the replies in turn, the last one repeating).

    pytest-httpserver cannot drop a connection mid-request, so this stands in for a flaky
    network path.
    """

    def __init__(self, resets: int, reply: bytes):
        self.remaining = resets
        self.reply = reply
        self.connections = 0
        self.answered = 0
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                sock: socket.socket = self.request
                sock.recv(65536)
                with lock:
                    outer.connections += 1
                    reset = outer.remaining > 0
                    if reset:
                        outer.remaining -= 1
                if reset:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    sock.close()
                else:
                    replies = outer.reply if isinstance(outer.reply, list) else [outer.reply]
                    with lock:
                        answer = replies[min(outer.answered, len(replies) - 1)]
                        outer.answered += 1
                    sock.sendall(answer)

        lock = threading.Lock()
        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()


def http_response(status: str, body: bytes, content_type: str) -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    return head.encode() + body
