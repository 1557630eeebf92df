"""A paper's own files from arXiv: its e-print (the source as submitted) and its PDF.

The e-print endpoint answers with whatever the author submitted: a gzipped tar, one gzipped
``.tex``, or a PDF (PDF-only submissions); the caller tells them apart by their bytes. Requests go
through the ``arxiv`` service's polite client (one at a time, three seconds apart, a User-Agent
with the configured contact). This module returns bytes and writes nothing: the caller caches
them (``citeledger/inputs/arxiv_fetch.py``).
"""
from __future__ import annotations

from typing import Any, Iterator

import httpx

from resolvers.errors import InputTooLarge, RemoteUnavailable
from resolvers.remote.arxiv import split_arxiv_id
from resolvers.remote.bounds import Fault, fault_of
from resolvers.remote.http import PoliteClient

SERVICE = "arxiv"


class ArxivFiles:
    """``/e-print/ID`` and ``/pdf/ID`` of one arXiv mirror; a download is at most ``max_bytes`` and
    the arXiv client's ``max_file_bytes``, whichever is smaller."""

    def __init__(self, http: PoliteClient, eprint_url: str, pdf_url: str, max_bytes: int):
        self.http = http
        self.eprint_url = eprint_url.rstrip("/")
        self.pdf_url = pdf_url.rstrip("/")
        self.max_bytes = max_bytes

    def eprint(self, arxiv_id: str) -> bytes | None:
        """The e-print's bytes, or None when arXiv has no such paper (404)."""
        return self._get(f"{self.eprint_url}/{_canonical(arxiv_id)}")

    def pdf(self, arxiv_id: str) -> bytes | None:
        """The PDF's bytes, or None when arXiv has none (404)."""
        return self._get(f"{self.pdf_url}/{_canonical(arxiv_id)}")

    def _get(self, url: str) -> bytes | None:
        kept: dict[str, Any] = {}
        limit = min(self.max_bytes, self.http.settings.max_file_bytes)

        def sink(response: httpx.Response, chunks: Iterator[bytes]) -> None:
            kept["body"] = b"".join(chunks)  # from scratch on every attempt: a retried body never appends

        try:
            response = self.http.get(url, sink=sink, max_bytes=limit)
        except RemoteUnavailable as exc:
            if fault_of(exc) is Fault.TOO_LARGE:  # the same next time: the paper's reject, not "try again"
                raise InputTooLarge(f"{url}: more than {limit:,} bytes (max_file_bytes, "
                                    "limits.max_input_bytes)") from exc
            raise
        if response.status_code == 404:
            return None
        if response.status_code != 200 or "body" not in kept:
            raise RemoteUnavailable(SERVICE, f"HTTP {response.status_code} for {url}")
        return bytes(kept["body"])


def _canonical(arxiv_id: str) -> str:
    """The id as arXiv's URLs take it (a version kept: ``2501.00254v1`` fetches that version)."""
    split = split_arxiv_id(arxiv_id)
    if split is None:
        raise ValueError(f"not a well-formed arXiv id: {arxiv_id!r}")
    return f"{split[0]}v{split[1]}" if split[1] else split[0]
