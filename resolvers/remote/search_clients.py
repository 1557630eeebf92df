"""The three search services' requests and answers, as works.

Each ``search_*`` function takes the service's polite client (the same one identifier lookups use,
so both share one rate limit), a query text and a row count, and returns the works found and how
many hits were set aside. A hit is set aside when it cannot become a catalog work (no DOI and no
arXiv id: its work id would not be the catalog's) or when it is a notice about another work
(a Crossref record with ``update-to``, an OpenAlex ``erratum``/``retraction``): a notice is never
the cited work. A refused query (HTTP 400: it would be refused again) is an empty answer; any
other failure raises ``RemoteUnavailable`` (the reference becomes ``unavailable``).
"""
from __future__ import annotations

import json
from typing import Any, Mapping

import httpx

from resolvers.errors import RemoteUnavailable
from resolvers.model import Work
from resolvers.openalex import openalex_work

from .arxiv import entries_to_work, parse_feed
from .crossref import CrossrefClient, message_to_work
from .http import PoliteClient

# Crossref's ``select``: only what verification and the catalog row need (a smaller answer)
CROSSREF_SELECT = ("DOI", "title", "author", "issued", "published-print", "published-online", "created",
                   "container-title", "volume", "page", "article-number", "type", "update-to")
OPENALEX_SELECT = ("id", "doi", "title", "display_name", "publication_year", "authorships", "primary_location",
                   "locations", "biblio", "type", "ids")
NOT_NOTICE_UPDATES = frozenset({"new_version", "new-version"})
OPENALEX_NOTICE_TYPES = frozenset({"erratum", "retraction", "editorial", "paratext"})

Found = tuple[list[Work], int]  # works, hits set aside


def _json(service: str, response: httpx.Response) -> Any:
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise RemoteUnavailable(service, f"HTTP {response.status_code} body is not JSON: {response.text[:80]!r}") \
            from None


def _checked(service: str, response: httpx.Response) -> bool:
    """True for an answer to read, False for a refused query (400); raises for the rest."""
    if response.status_code == 400:
        return False
    if response.status_code != 200:
        raise RemoteUnavailable(service, f"HTTP {response.status_code} for a search")
    return True


def crossref_is_notice(message: Mapping[str, Any]) -> bool:
    """A Crossref record that updates another (a correction, retraction, ...) is a notice."""
    updates = message.get("update-to") or []
    return any(isinstance(u, dict) and str(u.get("type", "")).lower() not in NOT_NOTICE_UPDATES for u in updates)


def search_crossref(http: PoliteClient, api_url: str, mailto: str | None, text: str, rows: int) -> Found:
    """``/works?query.bibliographic=`` with ``rows`` and ``select``: Crossref's own matching query."""
    works, aside = [], 0
    for item in CrossrefClient(http, api_url, mailto).query_bibliographic(text, rows, CROSSREF_SELECT):
        if not isinstance(item.get("DOI"), str) or crossref_is_notice(item):
            aside += 1
            continue
        try:
            works.append(message_to_work(item))
        except (KeyError, TypeError, AttributeError, ValueError, IndexError):
            aside += 1  # a garbled hit is no candidate; the others still are
    return works, aside


def openalex_hit(item: Any) -> Work | None:
    """An OpenAlex hit as the catalog reader makes it (``resolvers.openalex``: an arXiv DataCite
    DOI or arXiv location gives the arXiv id); None for a notice, or a hit with neither DOI nor
    arXiv id (its work id would not be the catalog's)."""
    if not isinstance(item, dict) or str(item.get("type", "")).lower() in OPENALEX_NOTICE_TYPES:
        return None
    found = openalex_work(item)
    if found is None or not (found.work.doi or found.work.arxiv_id):
        return None
    return found.work


def search_openalex(http: PoliteClient, api_url: str, mailto: str | None, text: str, rows: int) -> Found:
    """``/works?search=`` with ``per-page`` and ``select`` (and ``mailto``: OpenAlex's polite pool)."""
    params: dict[str, Any] = {"search": text, "per-page": rows, "select": ",".join(OPENALEX_SELECT)}
    if mailto:
        params["mailto"] = mailto
    response = http.get(f"{api_url.rstrip('/')}/works", params=params)
    if not _checked("openalex", response):
        return [], 0
    data = _json("openalex", response)
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise RemoteUnavailable("openalex", "search answer without a 'results' list")
    works, aside = [], 0
    for item in data["results"]:
        work = openalex_hit(item)
        if work is None:
            aside += 1
            continue
        works.append(work)
    return works, aside


def search_arxiv(http: PoliteClient, api_url: str, mailto: str | None, text: str, rows: int) -> Found:
    """The API's ``search_query`` (``ti:"..." AND au:...``), one entry per arXiv id."""
    response = http.get(api_url, params={"search_query": text, "start": 0, "max_results": rows})
    if not _checked("arxiv", response):
        return [], 0
    try:
        feed = parse_feed(response.content)
    except ValueError as exc:
        raise RemoteUnavailable("arxiv", f"unreadable API response: {exc}") from None
    if feed.errors:
        return [], 0  # the API refused the query (an Error entry): it would again
    by_id: dict[str, list] = {}
    for entry in feed.entries:
        by_id.setdefault(entry.arxiv_id, []).append(entry)
    return [entries_to_work(entries) for entries in by_id.values()], 0


SEARCHERS = {"crossref": search_crossref, "openalex": search_openalex, "arxiv": search_arxiv}
