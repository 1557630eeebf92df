"""The rows of catalog sources: the formats of the contract (``SourceFormat``), a work as one source
gives it (``SourceRow``), the rejects and skips a reader reports, and the row converters of the JSON
formats (works JSONL, the arXiv snapshot, Crossref). Pure: the store decides where rows go."""
from __future__ import annotations

import gzip
import io
import json
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Any

from citeledger.sources.arxiv_details import arxiv_details
from citeledger.works.row_schema import SOURCE_FIELDS
from resolvers.identifiers.extract import canonical_arxiv_id, normalize_doi
from resolvers.identifiers.journal_ref import parse_journal_ref
from resolvers.model import Work
from resolvers.parsing.text import unicode_problem
from resolvers.work_fields import arxiv_doi, clean_text, content_work_id
from resolvers.work_fields import first_page as _first_page
from resolvers.work_fields import int_year as _int_year


class SourceFormat(str, Enum):
    WORKS_JSONL = "works_jsonl"
    ARXIV_SNAPSHOT = "arxiv_snapshot"
    CROSSREF = "crossref"
    RETRACTION_WATCH_CSV = "retraction_watch_csv"
    DOI_NATURE_CSV = "doi_nature_csv"
    OPENALEX = "openalex"
    DBLP = "dblp"
    ARXIV_OAI = "arxiv_oai"
    COMPANION = "companion"  # a file that travels with a snapshot (OpenAlex manifest, dblp.dtd): no rows

NOTICE_FORMATS = (SourceFormat.RETRACTION_WATCH_CSV, SourceFormat.DOI_NATURE_CSV)

# What each format is called in messages (the error for an unknown file lists them all).
FORMAT_NAMES = {
    SourceFormat.WORKS_JSONL: "works JSONL", SourceFormat.ARXIV_SNAPSHOT: "arXiv metadata snapshot JSONL",
    SourceFormat.CROSSREF: 'Crossref works (JSONL of messages or {"items": [...]})',
    SourceFormat.RETRACTION_WATCH_CSV: "Retraction Watch CSV", SourceFormat.DOI_NATURE_CSV: "doi,retractionwatch CSV",
    SourceFormat.OPENALEX: "OpenAlex works snapshot (JSON lines)", SourceFormat.DBLP: "DBLP XML",
    SourceFormat.ARXIV_OAI: "arXiv OAI-PMH XML (arXivRaw or arXiv)",
}

READABLE = "readable formats: " + "; ".join(FORMAT_NAMES.values())

# Which source wins a field when two sources describe the same work: richer metadata first.
SOURCE_PRECEDENCE = {SourceFormat.CROSSREF: 0, SourceFormat.ARXIV_SNAPSHOT: 1, SourceFormat.WORKS_JSONL: 2,
                     SourceFormat.OPENALEX: 1, SourceFormat.ARXIV_OAI: 1, SourceFormat.DBLP: 2,
                     SourceFormat.COMPANION: 2}

@dataclass(frozen=True, slots=True)
class SourceRow(Work):
    """One work as a source describes it, before merging with other sources."""

    relations: str | None = None  # JSON: Crossref update-to / updated-by, OpenAlex is_retracted: notices
    categories: tuple[str, ...] = ()  # the details of work_row.DETAIL_TYPES
    versions: tuple[dict[str, str | None], ...] = ()
    journal_ref: str | None = None
    comments: str | None = None
    issue: str | None = None
    pmcid: str | None = None
    source_ids: tuple[str, ...] = ()
    source_updated: str | None = None
    cited_by_count_openalex: int | None = None
    cited_by_count_openalex_at: str | None = None
    cited_by_count_crossref: int | None = None
    cited_by_count_crossref_at: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in SOURCE_FIELDS}

@dataclass(slots=True)
class CatalogReject:
    """A catalog source row that became no work, and why (``file:line``)."""

    file: str
    line: int | None
    field: str | None
    reason: str

@dataclass(slots=True)
class CatalogSkip:
    """A source record that is not a work and was left out on purpose (a DBLP person page)."""

    file: str
    line: int | None
    reason: str

def open_text(path: str | Path) -> io.TextIOBase:
    """Open a plain or gzipped text file as UTF-8, replacing undecodable bytes (kept visible)."""
    path = Path(path)
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace", newline="")

_WS = re.compile(r"\s+")

# an accent over a letter, or over a dotless \\i or \\j (``Garc\\'{\\i}a``, ``Mart\\'\\i nez``: the space a
# command word eats)
_LATEX_ACCENT = re.compile(r"\\[`'^\"~=.uvHtcdbk]\{?(\\[ij](?![A-Za-z]) ?|[A-Za-z])\}?")

_LATEX_ACCENT_MAP = {"`": "\u0300", "'": "\u0301", "^": "\u0302", '"': "\u0308", "~": "\u0303",
                     "=": "\u0304", ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b",
                     "c": "\u0327", "k": "\u0328"}

# LaTeX's letters that are commands (``M{\\O}bro``, ``Pucha{\\l}a``), and the space a command word eats
_LATEX_LETTERS = {"O": "\u00d8", "o": "\u00f8", "L": "\u0141", "l": "\u0142", "ss": "\u00df", "AE": "\u00c6",
                  "ae": "\u00e6", "OE": "\u0152", "oe": "\u0153", "AA": "\u00c5", "aa": "\u00e5", "i": "\u0131",
                  "j": "\u0237"}

_LATEX_LETTER = re.compile(r"\\(" + "|".join(sorted(_LATEX_LETTERS, key=len, reverse=True)) + r")(?![A-Za-z]) ?")

def delatex(text: str) -> str:
    """Turn the LaTeX accents and letters of arXiv author strings into Unicode (``Bal\\'azs`` ->
    ``Balázs``, ``{\\O}bro`` -> ``Øbro``)."""

    def repl(m: re.Match) -> str:
        cmd = m.group(0)[1]
        mark = _LATEX_ACCENT_MAP.get(cmd)
        letter = m.group(1).strip()[-1]  # "\\i" accented is "i" accented
        return unicodedata.normalize("NFC", letter + mark) if mark else letter

    text = _LATEX_ACCENT.sub(repl, text)
    if "\\" in text:
        text = _LATEX_LETTER.sub(lambda m: _LATEX_LETTERS[m.group(1)], text)
    return text.replace("{", "").replace("}", "")

_PARENTHESES = re.compile(r"\([^()]*\)")

_AUTHOR_SEPARATOR = re.compile(r",\s*(?:and\s+)?|\s+and\s+|;\s*")

def split_arxiv_authors(authors: str | None) -> list[str]:
    """``"A. One, B. Two and C. Three"`` -> ``["A. One", "B. Two", "C. Three"]``, affiliations dropped:
    arXiv's ``"A. One (1), B. Two (2) ((1) Univ. X, (2) Univ. Y)"`` nests them, and a field cut short
    leaves one open (from its "(" on, it is no name)."""
    if not authors:
        return []
    text = delatex(_WS.sub(" ", authors))
    while "(" in text:
        shorter = _PARENTHESES.sub("", text)
        if shorter == text:
            text = text[:text.index("(")]
            break
        text = shorter
    parts = _AUTHOR_SEPARATOR.split(text.replace(")", ""))
    return [p.strip() for p in parts if p.strip() and len(p.strip()) > 1]

LineError = tuple[str | None, str]  # (field or None, reason): a line that is no row

def lone_surrogate(value: Any, field: str) -> LineError | None:
    """The first string in ``value`` (keys included) that is not valid Unicode, as (field, why)."""
    if isinstance(value, str):
        problem = unicode_problem(value)
        return (field or None, problem) if problem else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        name = f"{field}[{key}]" if isinstance(key, int) else f"{field}.{key}" if field else str(key)
        found = lone_surrogate(key, name) if isinstance(key, str) else None
        if found := found or lone_surrogate(item, name):
            return found
    return None

def work_from_works_jsonl(obj: dict) -> SourceRow | None:
    doi = normalize_doi(obj["doi"]) if obj.get("doi") else None
    arxiv_id = canonical_arxiv_id(obj["arxiv_id"]) if obj.get("arxiv_id") else None
    title = clean_text(obj.get("title"))
    authors = [name for name in map(clean_text, obj.get("authors") or []) if name]
    year = _int_year(obj.get("year"))
    if not (doi or arxiv_id or title):
        return None
    alt = [arxiv_doi(arxiv_id)] if arxiv_id else []
    if arxiv_id:
        work_id = f"arxiv:{arxiv_id}"
    elif doi:
        work_id = f"doi:{doi}"
    else:
        work_id = content_work_id(title, authors, year)
    return SourceRow(work_id=work_id, doi=doi, arxiv_id=arxiv_id, title=title, authors=tuple(authors), year=year,
                     venue=clean_text(obj.get("venue")), volume=clean_text(obj.get("volume")),
                     first_page=_first_page(obj.get("first_page")), pmid=clean_text(obj.get("pmid")),
                     type=clean_text(obj.get("type")), alt_dois=tuple(alt), withdrawn=bool(obj.get("withdrawn")))

_WITHDRAWN = re.compile(r"\b(withdrawn|withdraw(?:s|n)? (?:this|the) (?:paper|article|submission))\b", re.I)

def work_from_arxiv_snapshot(obj: dict) -> SourceRow | None:
    arxiv_id = canonical_arxiv_id(str(obj.get("id") or ""))
    if not arxiv_id:
        return None
    journal_doi = None
    for cand in re.split(r"\s+", obj.get("doi") or ""):
        journal_doi = normalize_doi(cand) if cand else None
        if journal_doi:
            break
    versions = obj.get("versions") or []
    year = None
    if versions:
        m = re.search(r"\b(19|20)\d\d\b", str(versions[0].get("created", "")))
        year = int(m.group(0)) if m else None
    if year is None and re.match(r"\d{4}\.", arxiv_id):
        year = 2000 + int(arxiv_id[:2])
    comments = obj.get("comments") or ""
    journal_ref = clean_text(obj.get("journal-ref"))
    ref = parse_journal_ref(journal_ref)  # venue, volume and first page of the journal version
    return SourceRow(
        work_id=f"arxiv:{arxiv_id}", doi=journal_doi or arxiv_doi(arxiv_id), arxiv_id=arxiv_id,
        title=clean_text(obj.get("title")),
        authors=tuple(split_arxiv_authors(obj.get("authors"))), year=year, type="preprint",
        venue=(ref.venue if ref and ref.venue else journal_ref), volume=ref.volume if ref else None,
        first_page=ref.first_page if ref else None,
        alt_dois=(arxiv_doi(arxiv_id),), withdrawn=bool(_WITHDRAWN.search(comments)),
        **arxiv_details(obj),
    )

def _date_year(message: dict) -> int | None:
    for key in ("issued", "published", "published-print", "published-online", "created"):
        parts = (message.get(key) or {}).get("date-parts") or []
        if parts and parts[0] and parts[0][0]:
            return _int_year(parts[0][0])
    return None

def citation_count(value: Any) -> int | None:
    """A source's citation count as given: a non-negative integer, else nothing."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def utc_time(value: Any) -> str | None:
    """A source's date or time as ISO 8601 UTC with ``Z`` (a date alone: its midnight; a time
    without an offset: UTC, as OpenAlex and Crossref give them); nothing when it is not one."""
    try:
        when = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00")) if value else None
    except ValueError:
        return None
    if when is None:
        return None
    when = when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when.astimezone(timezone.utc)
    return when.isoformat().replace("+00:00", "Z")


def work_from_crossref(message: dict) -> SourceRow | None:
    doi = normalize_doi(message.get("DOI") or "")
    if not doi:
        return None
    authors: list[str] = []
    for a in message.get("author") or []:
        name = a.get("family") or a.get("name") or a.get("literal")
        if a.get("family") and a.get("given"):
            name = f"{a['given']} {a['family']}"
        cleaned = clean_text(name)
        if cleaned:
            authors.append(cleaned)
    titles = message.get("title") or []
    venue = (message.get("container-title") or [None])[0] or (message.get("short-container-title") or [None])[0]
    relations = {k: message[k] for k in ("update-to", "updated-by") if message.get(k)}
    if message.get("relation"):
        relations["relation"] = message["relation"]
    arxiv_id = None
    if doi.startswith("10.48550/arxiv."):
        arxiv_id = canonical_arxiv_id(doi[len("10.48550/arxiv."):])
    return SourceRow(
        work_id=f"arxiv:{arxiv_id}" if arxiv_id else f"doi:{doi}", doi=doi, arxiv_id=arxiv_id,
        title=clean_text(titles[0]) if titles else None, authors=tuple(authors), year=_date_year(message),
        venue=clean_text(venue), volume=clean_text(message.get("volume")),
        first_page=_first_page(message.get("page") or message.get("article-number")),
        type=clean_text(message.get("type")), issue=clean_text(message.get("issue")),
        relations=json.dumps(relations, sort_keys=True, ensure_ascii=False) if relations else None,
        **_crossref_count(message),
    )


def _crossref_count(message: dict) -> dict[str, Any]:
    """Crossref's ``is-referenced-by-count`` and the time Crossref indexed the record it is read from."""
    count = citation_count(message.get("is-referenced-by-count"))
    indexed = message.get("indexed")
    when = utc_time(indexed.get("date-time")) if isinstance(indexed, dict) else None
    return {"cited_by_count_crossref": count, "cited_by_count_crossref_at": when if count is not None else None}
