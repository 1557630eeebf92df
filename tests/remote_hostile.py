"""Hostile answers for the remote tests and the soak: endless, bombed, trickled, looping; and the
healthy answers of the "stalled world" (references that a stalled service makes ``unavailable``
and the same services, answering, resolve: ``stalled_reference``, ``healthy_services``).

Every body is generated as the socket takes it (a generator), never held: an "8 GiB" answer costs
the server one 64 KiB chunk. Every generator is bounded in count (and the trickle in time), so a
client that does not stop still ends. ``Sent`` counts what a generator handed to the socket.
"""
from __future__ import annotations

import json
import re
import threading
import time
import zlib
from typing import Callable, Iterator
from urllib.parse import unquote

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


# -- the stalled world: a third DOIs, a third arXiv ids, a third titles to search ----------------

ATOM = "application/atom+xml; charset=utf-8"
_NUMBER = re.compile(r"stalled world, case (\d+)", re.I)


def stalled_title(i: int) -> str:
    """The title of the stalled world's work ``i`` (what a search answer matches)."""
    return f"Remote services that stalled world, case {i}"


def stalled_reference(i: int) -> dict:
    """Reference ``i``: with a DOI (Crossref's lookup), an arXiv id (arXiv's), or neither (searched)."""
    tail = ("doi:10.5555/stalled." + str(i) if i % 3 == 0 else f"arXiv:2101.{i:05d}" if i % 3 == 1 else "")
    return {"citing_paper": "stalled", "reference_index": i + 1,
            "raw": f"Doe, J. {stalled_title(i)}. Journal of Stalls 12, {100 + i} (2020). {tail}".strip()}


def stalled_message(i: int) -> dict:
    return {"DOI": f"10.5555/stalled.{i}", "title": [stalled_title(i)], "author": [{"family": "Doe", "given": "J."}],
            "issued": {"date-parts": [[2020]]}, "container-title": ["Journal of Stalls"], "volume": "12",
            "page": str(100 + i), "type": "journal-article"}


def stalled_feed(ids: list[str]) -> str:
    entries = "".join(
        f"<entry><id>http://arxiv.org/abs/{aid}v1</id><published>2021-01-05T00:00:00Z</published>"
        f"<updated>2021-01-05T00:00:00Z</updated><title>{stalled_title(int(aid.split('.')[1]))}</title>"
        f"<author><name>J. Doe</name></author><arxiv:primary_category term=\"cs.DL\"/></entry>" for aid in ids)
    return ('<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom" '
            'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
            f"<opensearch:totalResults>{len(ids)}</opensearch:totalResults>{entries}</feed>")


def healthy_services(request: Request) -> Response:
    """Crossref, arXiv and OpenAlex answering the stalled world's requests in their recorded shapes
    (under ``/crossref``, ``/arxiv/api/query`` and ``/openalex``; ``stalled_config``)."""
    path = request.path
    if path.startswith("/crossref/works/"):
        i = int(unquote(path.removeprefix("/crossref/works/")).rsplit(".", 1)[1])
        return Response(json.dumps({"status": "ok", "message": stalled_message(i)}), content_type="application/json")
    if path == "/crossref/works":
        found = _NUMBER.search(request.args.get("query.bibliographic", ""))
        items = [stalled_message(int(found.group(1)))] if found else []
        return Response(json.dumps({"status": "ok", "message": {"items": items}}), content_type="application/json")
    if path == "/openalex/works":
        return Response(json.dumps({"results": []}), content_type="application/json")
    if path == "/arxiv/api/query" and request.args.get("id_list"):
        return Response(stalled_feed(request.args["id_list"].split(",")), content_type=ATOM)
    return Response(stalled_feed([]), content_type=ATOM)


def stalled_config(base_url: str, state_dir: str, services: str = "", remote: str = "") -> str:
    """A settings file with Crossref, arXiv and OpenAlex on at ``base_url``: the stall bounds are
    the defaults, only the pacing between requests is taken off (a healthy run of thousands of
    references does not wait on arXiv's one request every 3 s); ``services``: more TOML lines;
    ``remote``: more lines of the ``[remote]`` table."""
    pacing = "".join(f"[remote.{service}]\nmin_interval_seconds = 0.0\n" for service in ("arxiv", "crossref", "openalex"))
    return f"""state_dir = "{state_dir}"
[remote]
enabled = ["arxiv", "crossref", "openalex"]
mailto = "tests@example.org"
{remote}{pacing}{services}
[endpoints]
arxiv_api = "{base_url}/arxiv/api/query"
crossref_api = "{base_url}/crossref"
openalex_api = "{base_url}/openalex"
"""
