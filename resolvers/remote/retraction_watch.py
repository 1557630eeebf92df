"""Download of the Retraction Watch CSV: atomic, conditional, resumable by nature.

The file is streamed to a temporary file next to the destination and renamed over it only when
complete, so a failure leaves the previous copy intact. The ``ETag`` and ``Last-Modified`` of the
copy are kept in a small JSON file beside it and sent back on the next refresh, so an unchanged
export costs one 304.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from resolvers.errors import RemoteUnavailable

from .checkpoint import read_state, write_state
from .http import PoliteClient

SERVICE = "retraction_watch"


@dataclass(frozen=True)
class RefreshResult:
    path: Path
    changed: bool  # False: the server said 304, the existing copy is current
    bytes_written: int
    etag: str | None
    last_modified: str | None


def validators_path(dest: Path) -> Path:
    return dest.with_name(dest.name + ".http.json")


def refresh_retraction_watch(http: PoliteClient, url: str, dest: str | os.PathLike) -> RefreshResult:
    """Fetch ``url`` into ``dest`` unless the server says the copy we have is current."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    state_file = validators_path(dest)
    state = read_state(state_file) if dest.is_file() else {}
    headers = {}
    if state.get("url") == url:
        if state.get("etag"):
            headers["If-None-Match"] = state["etag"]
        if state.get("last_modified"):
            headers["If-Modified-Since"] = state["last_modified"]

    written: dict[str, Any] = {"tmp": None, "bytes": 0}

    def sink(response: httpx.Response) -> None:
        # starts from scratch on every call: a retried download never appends to a broken one
        if written["tmp"]:
            _discard(written["tmp"])
        fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
        written["tmp"], written["bytes"] = tmp, 0
        with os.fdopen(fd, "wb") as fh:
            for chunk in response.iter_bytes():
                fh.write(chunk)
                written["bytes"] += len(chunk)
            fh.flush()
            os.fsync(fh.fileno())

    try:
        response = http.get(url, headers=headers, sink=sink)
        if response.status_code == 304:
            return RefreshResult(dest, False, 0, state.get("etag"), state.get("last_modified"))
        if response.status_code != 200 or not written["tmp"]:
            raise RemoteUnavailable(SERVICE, f"HTTP {response.status_code} for {url}")
        os.replace(written["tmp"], dest)
        written["tmp"] = None
    finally:
        if written["tmp"]:
            _discard(written["tmp"])
    etag = response.headers.get("ETag")
    last_modified = response.headers.get("Last-Modified")
    write_state(state_file, {"url": url, "etag": etag, "last_modified": last_modified})
    return RefreshResult(dest, True, written["bytes"], etag, last_modified)


def _discard(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
