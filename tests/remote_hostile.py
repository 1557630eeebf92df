"""Hostile answers for the remote tests and the soak: endless, bombed, trickled, looping.

Every body is generated as the socket takes it (a generator), never held: an "8 GiB" answer costs
the server one 64 KiB chunk. Every generator is bounded in count (and the trickle in time), so a
client that does not stop still ends. ``Sent`` counts what a generator handed to the socket.
"""
from __future__ import annotations

import threading
import time
import zlib
from typing import Callable, Iterator

from werkzeug import Request, Response

GIB = 1024**3
MIB = 1024**2
CHUNK = bytes(64 * 1024)


class Sent:
    """Bytes a handler's generators handed to the server (thread-safe), decoded and on the wire."""

    def __init__(self) -> None:
        self.wire = 0
        self.decoded = 0
        self._lock = threading.Lock()

    def add(self, wire: int, decoded: int) -> None:
        with self._lock:
            self.wire += wire
            self.decoded += decoded


def _zero_block() -> tuple[bytes, bytes]:
    """A gzip header with 1 MiB of zeros, and a block that adds 1 MiB of zeros each time it is
    repeated (a full flush resets the history, so every such block is the same ~1 KB)."""
    zeros = bytes(MIB)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    return head, block


GZIP_HEAD, GZIP_BLOCK = _zero_block()


def huge(sent: Sent, declared: int | None = 8 * GIB, chunks: int = 4096) -> Callable[[Request], Response]:
    """An answer of ``declared`` bytes (None: no Content-Length, streamed until the socket closes),
    at most ``chunks`` chunks of 64 KiB of it ever generated."""

    def handler(request: Request) -> Response:
        def body() -> Iterator[bytes]:
            for _ in range(chunks):
                sent.add(len(CHUNK), len(CHUNK))
                yield CHUNK

        headers = {} if declared is None else {"Content-Length": str(declared)}
        return Response(body(), headers=headers, content_type="application/json", direct_passthrough=True)

    return handler


def gzip_bomb(sent: Sent, mib: int = 4096) -> Callable[[Request], Response]:
    """About 4 MB of gzip that decodes to ``mib`` MiB of zeros (4 GiB by default)."""

    def handler(request: Request) -> Response:
        def body() -> Iterator[bytes]:
            sent.add(len(GZIP_HEAD), MIB)
            yield GZIP_HEAD
            for _ in range(mib - 1):
                sent.add(len(GZIP_BLOCK), MIB)
                yield GZIP_BLOCK

        return Response(body(), headers={"Content-Encoding": "gzip"}, content_type="application/json",
                        direct_passthrough=True)

    return handler


def trickle(sent: Sent, every: float = 0.05, count: int = 400) -> Callable[[Request], Response]:
    """A 200 whose body comes one byte every ``every`` seconds, ``count`` bytes in all."""

    def handler(request: Request) -> Response:
        def body() -> Iterator[bytes]:
            for _ in range(count):
                sent.add(1, 1)
                yield b" "
                time.sleep(every)

        return Response(body(), content_type="application/json", direct_passthrough=True)

    return handler


def stacked_gzip(payload: bytes) -> Callable[[Request], Response]:
    """``payload`` gzipped twice, said so (``Content-Encoding: gzip, gzip``)."""
    once = zlib.compress(payload, wbits=31)
    twice = zlib.compress(once, wbits=31)

    def handler(request: Request) -> Response:
        return Response(twice, headers={"Content-Encoding": "gzip, gzip"}, content_type="application/json")

    return handler


def redirect(location: str, status: int = 302) -> Callable[[Request], Response]:
    def handler(request: Request) -> Response:
        return Response("", status=status, headers={"Location": location})

    return handler
