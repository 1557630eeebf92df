"""The XML catalog sources: DBLP (``dblp.xml`` / ``dblp.xml.gz``) and arXiv OAI-PMH responses
(``arXivRaw`` or ``arXiv`` metadata), streamed with lxml's iterparse so a 4 GB dblp.xml never sits
in memory: each record is read, turned into a row, and cleared.

DBLP's named character entities (``&uuml;``) are declared in ``dblp.dtd``. When a ``dblp.dtd``
sits beside the XML file its entity declarations are used; otherwise the HTML 4 / ISO 8879 entity
set bundled with Python (``html.entities``, a superset of what dblp.dtd declares) stands in. Either
way the declarations are put into the document's own DOCTYPE, so nothing is fetched.
"""
from __future__ import annotations

import gzip
import html.entities
import re
from pathlib import Path
from typing import IO, Any, Callable, Iterator

from lxml import etree

from citeledger.app_errors import CatalogSourceError
from citeledger.sources.source_rows import (
    READABLE,
    CatalogReject,
    CatalogSkip,
    SourceFormat,
    SourceRow,
    work_from_arxiv_snapshot,
)
from resolvers.identifiers.extract import canonical_arxiv_id, normalize_doi
from resolvers.work_fields import arxiv_doi, clean_text, first_page, int_year

PUBLICATIONS = ("article", "inproceedings", "proceedings", "book", "incollection", "phdthesis", "mastersthesis")
NOT_WORKS = {"www": "person page (www), not a work", "data": "research data record, not a work"}
_DBLP_DOCTYPE = re.compile(rb"<!DOCTYPE\s+dblp\s+SYSTEM\s+\"[^\"]*\"\s*>")
_DTD_ENTITY = re.compile(r"<!ENTITY\s+(\w+)\s+\"(&#x?[0-9A-Fa-f]+;)\"\s*>")
_HOMONYM = re.compile(r"\s+\d{4}$")  # DBLP's "Wei Wang 0001"
_ARXIV_EE = re.compile(r"arxiv\.org/(?:abs|pdf)/(.+?)(?:\.pdf)?$", re.I)


def sniff_xml(path: str | Path, head: str) -> SourceFormat:
    """Which XML catalog source ``head`` (the file's first characters) begins."""
    if "<!ELEMENT dblp" in head:
        return SourceFormat.COMPANION  # dblp.dtd: read for its entities, holds no works
    if re.search(r"<!DOCTYPE\s+dblp\b|<dblp\s*>", head):
        return SourceFormat.DBLP
    if "<OAI-PMH" in head and ("arXivRaw" in head or "arxiv.org/OAI/arXiv" in head or "arXiv.org" in head):
        return SourceFormat.ARXIV_OAI
    raise CatalogSourceError(f"{path}:1: an XML file that is neither DBLP nor arXiv OAI-PMH; {READABLE}")


def entity_declarations(xml_path: str | Path) -> bytes:
    """The ``<!ENTITY>`` declarations for dblp.xml: from ``dblp.dtd`` beside it, else bundled."""
    dtd = Path(xml_path).with_name("dblp.dtd")
    if dtd.is_file():
        pairs = _DTD_ENTITY.findall(dtd.read_text(encoding="latin-1"))
    else:
        pairs = [(name, f"&#{code};") for name, code in sorted(html.entities.name2codepoint.items())
                 if name not in ("amp", "lt", "gt", "quot", "apos")]
    return "".join(f'<!ENTITY {name} "{ref}">' for name, ref in pairs).encode("ascii")


class _WithEntities:
    """A byte stream of dblp.xml whose DOCTYPE carries the entity declarations (read() only)."""

    def __init__(self, raw: IO[bytes], declarations: bytes):
        self._raw = raw
        head = raw.read(1 << 16)
        doctype = b"<!DOCTYPE dblp [" + declarations + b"]>"
        head, n = _DBLP_DOCTYPE.subn(doctype, head, count=1)
        if not n:
            head = head.replace(b"<dblp", doctype + b"<dblp", 1)  # same line: line numbers hold
        self._head = head

    def read(self, size: int = -1) -> bytes:
        if self._head:
            if size < 0 or size >= len(self._head):
                out, self._head = self._head, b""
                return out + (self._raw.read(size - len(out)) if size > len(out) else b"")
            out, self._head = self._head[:size], self._head[size:]
            return out
        return self._raw.read(size)


def _open_bytes(path: str | Path) -> IO[bytes]:
    with open(path, "rb") as fh:
        magic = fh.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")  # type: ignore[return-value]


def iter_xml_rows(path: str | Path, fmt: SourceFormat) -> Iterator[SourceRow | CatalogReject | CatalogSkip]:
    """Every record of a DBLP or arXiv OAI-PMH file, as a work, a reject or a skip."""
    name = str(path)
    with _open_bytes(path) as raw:
        if fmt is SourceFormat.DBLP:
            source: Any = _WithEntities(raw, entity_declarations(path))
            events = etree.iterparse(source, events=("end",), huge_tree=True, resolve_entities=True,
                                     load_dtd=False, no_network=True)
            convert: Callable[[str, Any], SourceRow | CatalogReject | CatalogSkip] = _dblp_record
        else:
            events = etree.iterparse(raw, events=("end",), tag="{*}record", huge_tree=True,
                                     resolve_entities=False, no_network=True)
            convert = _oai_record
        try:
            for _, elem in events:
                if fmt is SourceFormat.DBLP and elem.getparent() is None:
                    continue  # the <dblp> root itself
                if fmt is SourceFormat.DBLP and elem.getparent().getparent() is not None:
                    continue  # a field inside a record: the record's end event comes later
                yield convert(name, elem)
                elem.clear(keep_tail=True)
                while elem.getprevious() is not None:  # what is read is let go
                    del elem.getparent()[0]
        except etree.XMLSyntaxError as exc:
            line = exc.position[0] if exc.position else None
            raise CatalogSourceError(f"{path}:{line}: bad XML: {exc.msg}") from None


def _text(elem: Any) -> str | None:
    if elem is None:
        return None
    text = elem.text if not len(elem) else "".join(elem.itertext())
    if text and "  " not in text and "\n" not in text and "\t" not in text and "<" not in text:
        return text.strip() or None  # the common case, without a regex (millions of records)
    return clean_text(text)


def _fields(elem: Any) -> dict[str, list[str]]:
    """A record's fields by tag, each text once (one pass over the children, not one per field)."""
    out: dict[str, list[str]] = {}
    for child in elem:
        text = _text(child)
        if text and isinstance(child.tag, str):
            out.setdefault(child.tag, []).append(text)
    return out


def _one(fields: dict[str, list[str]], tag: str) -> str | None:
    values = fields.get(tag)
    return values[0] if values else None


def _dblp_ids(fields: dict[str, list[str]], journal: str | None) -> tuple[str | None, str | None]:
    """(DOI, arXiv id) of a DBLP record from its ``ee`` links and CoRR's ``volume`` abs/ID."""
    doi = arxiv_id = None
    for url in fields.get("ee", ()):
        m = _ARXIV_EE.search(url)
        if m and not arxiv_id:
            arxiv_id = canonical_arxiv_id(m.group(1))
        elif "doi.org/" in url and not doi:
            doi = normalize_doi(url)
    if doi and doi.startswith("10.48550/arxiv."):
        arxiv_id = arxiv_id or canonical_arxiv_id(doi)
    volume = _one(fields, "volume") or ""
    if not arxiv_id and journal == "CoRR" and volume.startswith("abs/"):
        arxiv_id = canonical_arxiv_id(volume[4:])
    return doi, arxiv_id


def _dblp_record(name: str, elem: Any) -> SourceRow | CatalogReject | CatalogSkip:
    """One DBLP record element -> a work (CoRR entries keyed by their arXiv id)."""
    line = elem.sourceline
    if elem.tag not in PUBLICATIONS:
        return CatalogSkip(name, line, NOT_WORKS.get(elem.tag, f"<{elem.tag}> is not a publication"))
    key = elem.get("key")
    fields = _fields(elem)
    title = _one(fields, "title")
    if title and title.endswith(".") and not title.endswith(".."):
        title = title[:-1]  # DBLP ends every title with a full stop
    journal = _one(fields, "journal")
    doi, arxiv_id = _dblp_ids(fields, journal)
    if not (title or doi or arxiv_id):
        return CatalogReject(name, line, "title/ee", f"DBLP {elem.tag} {key or ''} has no title and no DOI")
    if arxiv_id:
        work_id = f"arxiv:{arxiv_id}"
        doi = doi if doi and not doi.startswith("10.48550/") else arxiv_doi(arxiv_id)
    else:
        work_id = f"doi:{doi}" if doi else f"dblp:{key}"
    people = fields.get("author") or fields.get("editor") or []
    return SourceRow(
        work_id=work_id, doi=doi, arxiv_id=arxiv_id, title=title,
        authors=tuple(_HOMONYM.sub("", p) if p[-1:].isdigit() else p for p in people),
        year=int_year(_one(fields, "year")),
        venue=journal or _one(fields, "booktitle") or _one(fields, "series"),
        volume=_one(fields, "volume"), first_page=first_page(_one(fields, "pages")),
        type="preprint" if journal == "CoRR" else elem.tag, alt_dois=(arxiv_doi(arxiv_id),) if arxiv_id else (),
        issue=_one(fields, "number"), source_ids=(f"dblp:{key}",) if key else (),
    )


# --- arXiv OAI-PMH --------------------------------------------------------------------------

def _local(elem: Any) -> str:
    return etree.QName(elem).localname


def _children(elem: Any) -> dict[str, Any]:
    return {_local(c): c for c in elem if isinstance(c.tag, str)}


def _oai_authors(meta: Any, fields: dict[str, Any]) -> str | None:
    """arXivRaw gives one string; ``arXiv`` gives <author><forenames/><keyname/></author>."""
    if "authors" in fields and not len(fields["authors"]):
        return _text(fields["authors"])
    names = []
    for author in meta.iter("{*}author"):
        parts = _children(author)
        names.append(" ".join(t for t in (_text(parts.get("forenames")), _text(parts.get("keyname"))) if t))
    return ", ".join(n for n in names if n) or None


def _oai_record(name: str, record: Any) -> SourceRow | CatalogReject | CatalogSkip:
    """One OAI-PMH <record> -> the arXiv snapshot's dict -> a work (the one arXiv mapping)."""
    line = record.sourceline
    header = next((c for c in record if isinstance(c.tag, str) and _local(c) == "header"), None)
    if header is not None and header.get("status") == "deleted":
        return CatalogSkip(name, line, "deleted OAI record")
    meta = next((m for m in record.iter("{*}arXivRaw", "{*}arXiv")), None)
    if meta is None:
        return CatalogReject(name, line, "metadata", "no arXivRaw or arXiv metadata in the record")
    fields = _children(meta)
    versions = [{"version": v.get("version"), "created": _text(_children(v).get("date"))}
                for v in meta.iterfind("{*}version")]
    if not versions and _text(fields.get("created")):
        versions = [{"version": "v1", "created": _text(fields.get("created"))}]
    obj = {"id": _text(fields.get("id")), "title": _text(fields.get("title")),
           "authors": _oai_authors(meta, fields), "doi": _text(fields.get("doi")),
           "journal-ref": _text(fields.get("journal-ref")), "comments": _text(fields.get("comments")),
           "categories": _text(fields.get("categories")), "versions": versions}
    row = work_from_arxiv_snapshot(obj)
    return row if row is not None else CatalogReject(name, line, "id", f"not an arXiv id: {obj['id']!r}")
