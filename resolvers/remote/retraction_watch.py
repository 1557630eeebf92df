"""Download of the Retraction Watch CSV: atomic, conditional, resumable by nature.

Resolvers write no file: the caller gives the copy (``CsvCopy``: ``replace()`` stages a new copy
that takes the old one's place only when complete, so a failure leaves the previous copy intact)
and a ``Checkpoint`` for the ``ETag`` and ``Last-Modified`` of that copy, sent back on the next
refresh, so an unchanged export costs one 304. ``citeledger.storage.remote_state`` has the file versions.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, ContextManager, Iterator, Protocol

import httpx

from resolvers.errors import RemoteUnavailable
from resolvers.remote.checkpoint import Checkpoint
from resolvers.remote.http import PoliteClient

SERVICE = "retraction_watch"


class CsvCopy(Protocol):
    """The caller's copy of the export."""

    path: Path

    def exists(self) -> bool:
        """Whether there is a copy to revalidate (else the validators are not sent)."""
        ...

    def replace(self) -> ContextManager[BinaryIO]:
        """A fresh staged copy, put in place only when the block ends without an error."""
        ...


@dataclass(frozen=True)
class RefreshResult:
    path: Path
    changed: bool  # False: the server said 304, the existing copy is current
    bytes_written: int
    etag: str | None
    last_modified: str | None


def refresh_retraction_watch(http: PoliteClient, url: str, copy: CsvCopy, validators: Checkpoint) -> RefreshResult:
    """Fetch ``url`` into ``copy`` unless the server says the copy we have is current."""
    state = validators.read() if copy.exists() else {}
    headers = {}
    if state.get("url") == url:
        if state.get("etag"):
            headers["If-None-Match"] = state["etag"]
        if state.get("last_modified"):
            headers["If-Modified-Since"] = state["last_modified"]
    written = {"bytes": -1}  # -1: no 200 body was streamed into place

    def sink(response: httpx.Response, chunks: Iterator[bytes]) -> None:
        # each call stages from scratch: a retried download never appends to a broken one
        if response.status_code != 200:
            for _ in chunks:
                pass
            return
        with copy.replace() as fh:
            count = 0
            for chunk in chunks:
                fh.write(chunk)
                count += len(chunk)
        written["bytes"] = count

    response = http.get(url, headers=headers, sink=sink)
    if response.status_code == 304:
        return RefreshResult(copy.path, False, 0, state.get("etag"), state.get("last_modified"))
    if response.status_code != 200 or written["bytes"] < 0:
        raise RemoteUnavailable(SERVICE, f"HTTP {response.status_code} for {url}")
    etag = response.headers.get("ETag")
    last_modified = response.headers.get("Last-Modified")
    validators.write({"url": url, "etag": etag, "last_modified": last_modified})
    return RefreshResult(copy.path, True, written["bytes"], etag, last_modified)
