"""An OpenAlex work object as a catalog work: the one conversion both the catalog reader
(``citeledger.sources.openalex_snapshot``, snapshot files) and the OpenAlex search client
(``resolvers.remote.search_clients``) use, so a work found by a search is the work the catalog
would hold: same id (an arXiv DataCite DOI or an arXiv location gives the arXiv id), same DOI
form, same author names (display names, whose surname the verifier takes itself).

Kept: title, authorships (display names), publication year, venue (the primary location's
source), biblio volume / issue / first page, the DOI, PMID and PMC id, the arXiv id, ``type``,
``is_retracted``, the OpenAlex id and ``updated_date``. Everything else OpenAlex says is ignored.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from resolvers.identifiers.extract import canonical_arxiv_id, normalize_doi
from resolvers.model import Work
from resolvers.work_fields import arxiv_doi, clean_text, content_work_id, first_page, int_year

OPENALEX_PREFIX = "https://openalex.org/"
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/(.+?)(?:\.pdf)?$", re.I)
_DIGITS = re.compile(r"(\d+)\s*$")


@dataclass(frozen=True, slots=True)
class OpenAlexWork:
    """The work, and what a catalog row keeps besides (a search client needs only ``work``)."""

    work: Work
    openalex_id: str | None
    issue: str | None
    pmcid: str | None
    is_retracted: bool
    updated_date: str | None


def short_id(value: Any) -> str | None:
    text = clean_text(value)
    if text and text.startswith(OPENALEX_PREFIX):
        text = text[len(OPENALEX_PREFIX):]
    return text


def _pmid(value: Any) -> str | None:
    """``https://pubmed.ncbi.nlm.nih.gov/29456894`` -> ``29456894``."""
    m = _DIGITS.search(str(value or "").rstrip("/"))
    return m.group(1) if m else None


def _pmcid(value: Any) -> str | None:
    """``https://www.ncbi.nlm.nih.gov/pmc/articles/5815332`` -> ``PMC5815332``."""
    m = _DIGITS.search(str(value or "").rstrip("/"))
    return f"PMC{m.group(1)}" if m else None


def openalex_arxiv_id(obj: dict, doi: str | None) -> str | None:
    """The arXiv id of a work: from arXiv's DataCite DOI, else from an arXiv location's URL."""
    if doi and doi.startswith("10.48550/arxiv."):
        return canonical_arxiv_id(doi)
    for loc in obj.get("locations") or ():
        if not isinstance(loc, dict):
            continue
        for url in (loc.get("landing_page_url"), loc.get("pdf_url")):
            m = _ARXIV_URL.search(str(url or ""))
            arxiv_id = canonical_arxiv_id(m.group(1)) if m else None
            if arxiv_id:
                return arxiv_id
    return None


def _authors(obj: dict) -> tuple[str, ...]:
    names = []
    for a in obj.get("authorships") or ():
        if not isinstance(a, dict):
            continue
        name = clean_text((a.get("author") or {}).get("display_name") or a.get("raw_author_name"))
        if name:
            names.append(name)
    return tuple(names)


def openalex_work(obj: dict) -> OpenAlexWork | None:
    """One OpenAlex work object -> its catalog work (None: no identifier and no title)."""
    ids: dict[str, Any] = obj["ids"] if isinstance(obj.get("ids"), dict) else {}
    doi = normalize_doi(obj.get("doi") or ids.get("doi") or "")
    arxiv_id = openalex_arxiv_id(obj, doi)
    title = clean_text(obj.get("title") or obj.get("display_name"))
    authors = _authors(obj)
    year = int_year(obj.get("publication_year") or obj.get("publication_date"))
    openalex_id = short_id(obj.get("id") or ids.get("openalex"))
    if not (doi or arxiv_id or title):
        return None
    if arxiv_id:
        work_id = f"arxiv:{arxiv_id}"
        doi = doi if doi and not doi.startswith("10.48550/") else arxiv_doi(arxiv_id)
    elif doi:
        work_id = f"doi:{doi}"
    else:
        work_id = f"openalex:{openalex_id}" if openalex_id else content_work_id(title, list(authors), year)
    biblio: dict[str, Any] = obj["biblio"] if isinstance(obj.get("biblio"), dict) else {}
    source = ((obj.get("primary_location") or {}).get("source") or {})
    work = Work(work_id=work_id, doi=doi, arxiv_id=arxiv_id, title=title, authors=authors, year=year,
                venue=clean_text(source.get("display_name")), volume=clean_text(biblio.get("volume")),
                first_page=first_page(biblio.get("first_page")),
                pmid=_pmid(ids.get("pmid")) if ids.get("pmid") else None, type=clean_text(obj.get("type")),
                alt_dois=(arxiv_doi(arxiv_id),) if arxiv_id else ())
    return OpenAlexWork(work, openalex_id, clean_text(biblio.get("issue")),
                        _pmcid(ids.get("pmcid")) if ids.get("pmcid") else None, obj.get("is_retracted") is True,
                        clean_text(obj.get("updated_date")))
