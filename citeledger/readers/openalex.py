"""OpenAlex works snapshot (``works/updated_date=*/part_*.gz``, one work object a line) -> work rows.

Kept: title, authorships (display names), publication year, venue (the primary location's source),
biblio volume / issue / first page, the DOI, PMID and PMC id, the arXiv id (from an arXiv location
or a ``10.48550/arxiv.*`` DOI), ``type``, ``is_retracted`` (a notice source, in ``relations``), the
OpenAlex id and ``updated_date`` (of two copies of one work, the newest wins at the merge).
Everything else OpenAlex says is ignored.
"""
from __future__ import annotations

import json
import re
from typing import Any

from resolvers.identifiers import canonical_arxiv_id, normalize_doi

from ..sources import SourceRow, _first_page, _int_year, arxiv_doi, clean_text, content_work_id

OPENALEX_PREFIX = "https://openalex.org/"
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/(.+?)(?:\.pdf)?$", re.I)
_DIGITS = re.compile(r"(\d+)\s*$")


def _short_id(value: Any) -> str | None:
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


def _relations(obj: dict, openalex_id: str | None) -> str | None:
    """A retraction flag as a notice source (read back by ``notice_sources.events_from_openalex``)."""
    if obj.get("is_retracted") is True:
        return json.dumps({"openalex": {"id": openalex_id, "is_retracted": True}}, sort_keys=True)
    return None


def work_from_openalex(obj: dict) -> SourceRow | None:
    """One OpenAlex work object -> a work row (None: no identifier and no title)."""
    ids: dict[str, Any] = obj["ids"] if isinstance(obj.get("ids"), dict) else {}
    doi = normalize_doi(obj.get("doi") or ids.get("doi") or "")
    arxiv_id = openalex_arxiv_id(obj, doi)
    title = clean_text(obj.get("title") or obj.get("display_name"))
    authors = _authors(obj)
    year = _int_year(obj.get("publication_year") or obj.get("publication_date"))
    openalex_id = _short_id(obj.get("id") or ids.get("openalex"))
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
    return SourceRow(
        work_id=work_id, doi=doi, arxiv_id=arxiv_id, title=title, authors=authors, year=year,
        venue=clean_text(source.get("display_name")), volume=clean_text(biblio.get("volume")),
        first_page=_first_page(biblio.get("first_page")), pmid=_pmid(ids.get("pmid")) if ids.get("pmid") else None,
        type=clean_text(obj.get("type")), alt_dois=(arxiv_doi(arxiv_id),) if arxiv_id else (),
        relations=_relations(obj, openalex_id), issue=clean_text(biblio.get("issue")),
        pmcid=_pmcid(ids.get("pmcid")) if ids.get("pmcid") else None,
        source_ids=(f"openalex:{openalex_id}",) if openalex_id else (),
        source_updated=clean_text(obj.get("updated_date")),
    )
