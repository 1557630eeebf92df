"""Crossref REST API: one work by DOI, the registration agency, bibliographic search, harvest.

``/works/{doi}`` answers 404 with the plain-text body ``Resource not found.`` both for DOIs that
do not exist and for DOIs registered elsewhere (arXiv's 10.48550 DOIs are DataCite's); the
``/works/{doi}/agency`` endpoint tells the two apart so the caller can route to arXiv.
"""
from __future__ import annotations

import json
from typing import Any, Iterator, Mapping, Sequence
from urllib.parse import quote

import httpx

from resolvers.errors import RemoteUnavailable
from resolvers.model import Work
from resolvers.remote.checkpoint import Checkpoint, read_state, write_state
from resolvers.remote.http import PoliteClient

SERVICE = "crossref"
DATE_FIELDS = ("issued", "published", "published-print", "published-online", "created")


class CrossrefClient:
    def __init__(self, http: PoliteClient, api_url: str, mailto: str | None = None):
        self.http = http
        self.api_url = api_url.rstrip("/")
        self.mailto = mailto

    def _params(self, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        params = dict(extra or {})
        if self.mailto:
            params["mailto"] = self.mailto  # the polite pool, in addition to the User-Agent
        return params

    def _works_url(self, doi: str, suffix: str = "") -> str:
        return f"{self.api_url}/works/{quote(doi.strip(), safe='/')}{suffix}"

    def _json(self, response: httpx.Response) -> dict[str, Any]:
        try:
            data = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            why = f"HTTP {response.status_code} body is not JSON: {response.text[:80]!r}"
            raise RemoteUnavailable(SERVICE, why) from None
        if not isinstance(data, dict) or not isinstance(data.get("message"), dict):
            raise RemoteUnavailable(SERVICE, "response without a 'message' object")
        return data["message"]

    def work(self, doi: str) -> dict[str, Any] | None:
        """The REST ``message`` of one DOI, or None when Crossref has no such work (404)."""
        response = self.http.get(self._works_url(doi), params=self._params())
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise RemoteUnavailable(SERVICE, f"HTTP {response.status_code} for /works/{doi}")
        return self._json(response)

    def agency(self, doi: str) -> str | None:
        """The DOI's registration agency id (``crossref``, ``datacite``, ``medra``, ...), or None
        when no agency knows the DOI (it does not exist)."""
        response = self.http.get(self._works_url(doi, "/agency"), params=self._params())
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise RemoteUnavailable(SERVICE, f"HTTP {response.status_code} for /works/{doi}/agency")
        agency = self._json(response).get("agency") or {}
        agency_id = agency.get("id") if isinstance(agency, dict) else None
        return str(agency_id).lower() if agency_id else None

    def query_bibliographic(self, text: str, rows: int = 5, select: Sequence[str] = ()) -> list[dict[str, Any]]:
        """Candidate works for a raw reference string, in Crossref's order (``select``: only these
        fields of each). A query Crossref refuses (HTTP 400) has no candidates; other failures
        raise ``RemoteUnavailable``. The search step's request (``search_clients.search_crossref``).

        Crossref's relevance ``score`` is not a confidence, and copies of famous papers exist
        (posted-content duplicates): every hit must pass citeledger's own verification.
        """
        extra: dict[str, Any] = {"query.bibliographic": text, "rows": rows}
        if select:
            extra["select"] = ",".join(select)
        response = self.http.get(f"{self.api_url}/works", params=self._params(extra))
        if response.status_code == 400:
            return []
        if response.status_code != 200:
            raise RemoteUnavailable(SERVICE, f"HTTP {response.status_code} for query.bibliographic")
        items = self._json(response).get("items") or []
        return [item for item in items if isinstance(item, dict)]

    def harvest(
        self,
        from_index_date: str,
        *,
        until_index_date: str | None = None,
        rows: int = 1000,
        checkpoint: Checkpoint | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Works indexed since ``from_index_date``, page by page with ``cursor=*``/``next-cursor``.

        The checkpoint keeps the cursor of the next page. Crossref cursors expire after a few
        minutes of disuse: if a resumed cursor is refused (HTTP 400/404) the harvest starts again
        from ``from_index_date`` (records may repeat; loading is idempotent; none are skipped).
        """
        filters = [f"from-index-date:{from_index_date}"]
        if until_index_date:
            filters.append(f"until-index-date:{until_index_date}")
        request = {"filter": ",".join(filters), "rows": rows}
        state = read_state(checkpoint)
        cursor = "*"
        resumed = False
        if not state.get("completed") and state.get("request") == request and state.get("cursor"):
            cursor, resumed = state["cursor"], True
        while True:
            response = self.http.get(f"{self.api_url}/works", params=self._params({**request, "cursor": cursor}))
            if resumed and response.status_code in (400, 404):
                cursor, resumed = "*", False
                continue
            if response.status_code != 200:
                raise RemoteUnavailable(SERVICE, f"HTTP {response.status_code} during harvest")
            message = self._json(response)
            items = [i for i in message.get("items") or [] if isinstance(i, dict)]
            yield from items
            next_cursor = message.get("next-cursor")
            if not items or not next_cursor:
                write_state(checkpoint, {"request": request, "cursor": None, "completed": True})
                return
            cursor, resumed = next_cursor, False
            write_state(checkpoint, {"request": request, "cursor": cursor, "completed": False})


def _first(value: Any) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    if value is None:
        return None
    text = " ".join(str(value).split())
    return text or None


def message_year(message: Mapping[str, Any]) -> int | None:
    """Year of publication: ``issued`` (Crossref's earliest known date), then the others."""
    for key in DATE_FIELDS:
        parts = (message.get(key) or {}).get("date-parts") or []
        if parts and parts[0] and isinstance(parts[0][0], int):
            return parts[0][0]
    return None


def message_to_work(message: Mapping[str, Any]) -> Work:
    """A Crossref ``message`` as a catalog ``Work`` (DOI lower-case, ``work_id`` ``doi:<doi>``)."""
    doi = str(message["DOI"]).strip().lower()
    authors = []
    for author in message.get("author") or []:
        name = author.get("family") or author.get("name")
        if name:
            authors.append(" ".join(str(name).split()))
    page = _first(message.get("page"))
    first_page = page.split("-")[0].strip() or None if page else None
    return Work(
        work_id=f"doi:{doi}",
        doi=doi,
        title=_first(message.get("title")),
        authors=tuple(authors),
        year=message_year(message),
        venue=_first(message.get("container-title")),
        volume=_first(message.get("volume")),
        first_page=first_page or _first(message.get("article-number")),
        type=message.get("type"),
    )


def message_relations(message: Mapping[str, Any]) -> dict[str, Any]:
    """What notices are made of: ``updated-by``/``update-to`` (retractions, corrections, with
    their source) and ``relation`` (is-version-of, ...). Empty parts are left out."""
    out = {}
    for key in ("updated-by", "update-to", "relation"):
        value = message.get(key)
        if value:
            out[key] = value
    return out
