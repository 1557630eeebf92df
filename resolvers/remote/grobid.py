"""GROBID: a PDF's reference list through a GROBID service's ``/api/processReferences``.

GROBID is the user's own service (``docker run --rm --init --ulimit core=0 -p 8070:8070
grobid/grobid:0.9.1-full``), off unless configured. The request goes through the same polite
client as the other services (rate, concurrency, retries with ``Retry-After``, circuit breaker).
What an answer means, by GROBID's own error table (``doc/Grobid-service.md``, "Errors handling"):

* 200: the TEI, read here into references (the raw string beside GROBID's parsed fields);
* 204: GROBID read the PDF and found no reference list;
* 503 (all its threads busy), 429, timeouts, resets: transient, retried, then
  ``RemoteUnavailable`` (the paper is ``unavailable`` and tried again on the next run);
* 500 naming ``BAD_INPUT_DATA``, ``NO_BLOCKS``, ``TOO_MANY_BLOCKS``, ``TOO_MANY_TOKENS``,
  ``PDFALTO_CONVERSION_FAILURE`` or ``PARSING_ERROR``: this PDF cannot be read, and will not be
  next time either: ``PdfUnreadable`` (a reject with the reason), never retried;
* any other answer (another 500, a 400 or 404 from a wrong URL, a TEI that is not XML):
  the service could not answer usefully: ``RemoteUnavailable``.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from lxml import etree

from resolvers.errors import PdfUnreadable, RemoteUnavailable
from resolvers.redaction import keep_private
from resolvers.remote.arxiv import split_arxiv_id
from resolvers.remote.http import PoliteClient
from resolvers.remote.settings import RemoteSettings

SERVICE = "grobid"
PATH = "/api/processReferences"
TEI = "{http://www.tei-c.org/ns/1.0}"
NS = {"t": "http://www.tei-c.org/ns/1.0"}
# GROBID's error codes that say "this PDF", not "this server" (all sent as HTTP 500)
PERMANENT_CODES = ("BAD_INPUT_DATA", "NO_BLOCKS", "TOO_MANY_BLOCKS", "TOO_MANY_TOKENS",
                   "PDFALTO_CONVERSION_FAILURE", "PARSING_ERROR")
_SPACE = re.compile(r"\s+")
_ARXIV_IDNO = re.compile(r"^(?:arxiv:|abs/)?\s*(\S+)$", re.I)


def _permanent_code(status: int, body: bytes) -> str | None:
    """The GROBID error code of a 500 that condemns the PDF itself, else None."""
    if status != 500:
        return None
    text = body[:2000].decode("utf-8", "replace")
    return next((code for code in PERMANENT_CODES if code in text), None)


class GrobidClient:
    """``processReferences`` on one GROBID service, through its polite client."""

    def __init__(self, http: PoliteClient, base_url: str):
        self.http = http
        self.url = base_url.rstrip("/") + PATH

    def process_references(self, pdf: bytes, filename: str = "paper.pdf") -> bytes:
        """The TEI GROBID gives for ``pdf`` (``b""`` when it found no references). Raises
        ``PdfUnreadable`` for a PDF GROBID cannot read, ``RemoteUnavailable`` otherwise."""
        limit = self.http.settings.max_file_bytes
        if len(pdf) > limit:  # not sent: the same PDF would be as large next time
            raise PdfUnreadable(f"the PDF has {len(pdf):,} bytes, more than GROBID is sent "
                                f"([remote.grobid] max_file_bytes, {limit:,})")
        files = {"input": (filename, pdf, "application/pdf")}
        data = {"consolidateCitations": "0", "includeRawCitations": "1"}
        response = self.http.request("POST", self.url, data=data, files=files,
                                     final=lambda status, body: _permanent_code(status, body) is not None)
        body = response.content
        if response.status_code == 200:
            return body
        if response.status_code == 204:
            return b""
        snippet = _SPACE.sub(" ", body[:200].decode("utf-8", "replace")).strip()
        code = _permanent_code(response.status_code, body)
        if code is not None:
            raise PdfUnreadable(f"GROBID cannot read this PDF ({code}): {snippet}"[:300])
        raise RemoteUnavailable(SERVICE, f"HTTP {response.status_code} from {self.url}: {snippet!r}"[:300])


# -- the TEI ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GrobidReference:
    """One ``biblStruct``: the raw string as printed in the PDF and GROBID's reading of it.
    ``raw_from_pdf`` is False when the TEI carried no raw string and ``raw`` was put together
    from the fields (a TEI made without ``includeRawCitations``)."""

    raw: str
    title: str | None = None
    authors: tuple[str, ...] = ()  # surnames, in order
    year: int | None = None
    venue: str | None = None
    volume: str | None = None
    pages: str | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    raw_from_pdf: bool = True

    def fields(self) -> dict[str, str]:
        """GROBID's fields under BibTeX's names, as a ``.bib`` entry's are kept."""
        out = {"title": self.title, "author": " and ".join(self.authors) or None,
               "year": str(self.year) if self.year else None, "journal": self.venue, "volume": self.volume,
               "pages": self.pages, "doi": self.doi, "eprint": self.arxiv_id}
        return {k: v for k, v in out.items() if v}


def _text(el: Any) -> str | None:
    if el is None:
        return None
    value = _SPACE.sub(" ", "".join(el.itertext())).strip()
    return value or None


def _first(el: Any, *paths: str) -> Any:
    for path in paths:
        found = el.find(path, NS)
        if found is not None:
            return found
    return None


def _pages(imprint: Any) -> str | None:
    scope = imprint.find("t:biblScope[@unit='page']", NS) if imprint is not None else None
    if scope is None:
        return None
    start, end = scope.get("from"), scope.get("to")
    if start:
        return f"{start}-{end}" if end else start
    return _text(scope)


def _year(imprint: Any) -> int | None:
    date = imprint.find("t:date", NS) if imprint is not None else None
    if date is None:
        return None
    m = re.match(r"\d{4}", date.get("when") or _text(date) or "")
    return int(m.group(0)) if m else None


def _identifiers(struct: Any) -> tuple[str | None, str | None]:
    doi = arxiv = None
    for idno in struct.iter(f"{TEI}idno"):
        value, kind = _text(idno), (idno.get("type") or "").lower()
        if not value:
            continue
        if kind == "doi" and doi is None:
            doi = value.lower()
        elif kind in ("arxiv", "") and arxiv is None:
            m = _ARXIV_IDNO.match(value)  # GROBID 0.6 wrote CoRR ids as "abs/1806.01620"
            split = split_arxiv_id(m.group(1)) if m else None
            arxiv = split[0] if split else None
    return doi, arxiv


def _reference(struct: Any) -> GrobidReference | None:
    analytic, monogr = struct.find("t:analytic", NS), struct.find("t:monogr", NS)
    imprint = monogr.find("t:imprint", NS) if monogr is not None else None
    title_el = _first(struct, "t:analytic/t:title", "t:monogr/t:title[@level='m']", "t:monogr/t:title")
    venue_el = _first(struct, "t:monogr/t:title[@level='j']") if analytic is not None or title_el is None \
        else None
    if venue_el is None and analytic is not None:
        venue_el = _first(struct, "t:monogr/t:title")
    holder = analytic if analytic is not None and analytic.find("t:author", NS) is not None else monogr
    authors = tuple(s for p in (holder.findall("t:author/t:persName", NS) if holder is not None else [])
                    if (s := _text(p.find("t:surname", NS))))
    doi, arxiv = _identifiers(struct)
    volume = _text(imprint.find("t:biblScope[@unit='volume']", NS)) if imprint is not None else None
    ref = GrobidReference(raw="", title=_text(title_el), authors=authors, year=_year(imprint),
                          venue=_text(venue_el), volume=volume, pages=_pages(imprint), doi=doi, arxiv_id=arxiv)
    raw = _text(struct.find("t:note[@type='raw_reference']", NS))
    if raw:
        return dataclasses.replace(ref, raw=raw)
    rendered = render(ref)
    return dataclasses.replace(ref, raw=rendered, raw_from_pdf=False) if rendered else None


def render(ref: GrobidReference) -> str:
    """A reference string from GROBID's fields, when the TEI has no raw string: authors, year,
    title, venue, volume, pages, identifiers, in the order most styles print them."""
    parts = [", ".join(ref.authors), str(ref.year) if ref.year else "", ref.title or "",
             " ".join(p for p in (ref.venue, ref.volume) if p), ref.pages or "",
             f"doi:{ref.doi}" if ref.doi else "", f"arXiv:{ref.arxiv_id}" if ref.arxiv_id else ""]
    return ". ".join(p for p in parts if p)


def parse_tei(payload: bytes) -> list[GrobidReference]:
    """The references of a GROBID TEI answer, in the order of its ``listBibl`` (the header's own
    ``biblStruct`` is not a reference). Raises ``ValueError`` when it is not GROBID's TEI.
    The parser resolves no entity and fetches nothing (no XXE from a hostile server)."""
    if not payload.strip():
        return []
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        root = etree.fromstring(payload, parser)
    except etree.XMLSyntaxError as exc:
        raise ValueError(f"not XML: {exc}") from None
    if root.tag != f"{TEI}TEI":
        raise ValueError(f"not a TEI document: root is {root.tag}")
    references = []
    for struct in root.iterfind(".//t:listBibl/t:biblStruct", NS):
        ref = _reference(struct)
        if ref is not None:
            references.append(ref)
    return references


def build_grobid(settings: RemoteSettings, url: str | None = None, **http_kwargs: Any) -> GrobidClient | None:
    """The GROBID client of the settings (``url`` overrides ``endpoints.grobid``), or None when no
    GROBID service is configured: then no PDF is ever sent anywhere."""
    url = url or settings.endpoints.grobid
    if not url:
        return None
    if settings.private_mailto:  # sent in the User-Agent only, never printed or stored
        keep_private(settings.mailto, "mailto")
    http = PoliteClient(SERVICE, settings.grobid, mailto=settings.mailto, **http_kwargs)
    return GrobidClient(http, url)
