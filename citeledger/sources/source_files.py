"""Catalog sources: recognise each format of the contract by its content and turn rows into works.

Formats (contract section 3): works JSONL, the arXiv metadata snapshot (OAI/Kaggle shape),
Crossref REST ``message`` objects (JSONL, envelopes, or the public data file's ``{"items": [...]}``),
the two Retraction Watch CSVs (which carry notices, not works), OpenAlex works snapshot files, DBLP
XML and arXiv OAI-PMH XML (``xml_formats``, ``openalex_snapshot``). The rows themselves and their converters
live in ``source_rows``. Pure: the store decides where rows go.
"""
from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from citeledger.app_errors import CatalogSourceError
from citeledger.sources.source_rows import (
    FORMAT_NAMES,
    NOTICE_FORMATS,
    READABLE,
    CatalogReject,
    CatalogSkip,
    LineError,
    SourceFormat,
    SourceRow,
    lone_surrogate,
    open_text,
    work_from_arxiv_snapshot,
    work_from_crossref,
    work_from_works_jsonl,
)


def _first_meaningful_line(path: str | Path) -> str:
    with open_text(path) as fh:
        for line in fh:
            if line.strip() and not line.startswith("#"):
                return line.strip()
    return ""


def _head(path: str | Path, size: int = 65536) -> str:
    with open_text(path) as fh:
        return fh.read(size)


_ITEMS_HEAD = re.compile(r'\A\s*\{\s*"items"\s*:')
_MANIFEST_HEAD = re.compile(r'\A\s*\{\s*"entries"\s*:')


def sniff_format(path: str | Path) -> SourceFormat:
    """Recognise a catalog source by its content, not its name; an unknown shape is an error
    naming the formats this can read (never a silent misread)."""
    head = _head(path).lstrip("\ufeff")
    if not head.strip():
        raise CatalogSourceError(f"{path}: empty file, no catalog rows")
    if head.lstrip().startswith("<"):
        from citeledger.sources.xml_formats import sniff_xml

        return sniff_xml(path, head)
    if _ITEMS_HEAD.match(head):  # the Crossref public data file: one document, maybe one long line
        return SourceFormat.CROSSREF
    if _MANIFEST_HEAD.match(head) and '"meta"' in head:  # OpenAlex snapshot's manifest
        return SourceFormat.COMPANION
    first = _first_meaningful_line(path)
    lower = first.lower().lstrip("\ufeff")
    if lower.startswith("{"):
        try:
            obj = json.loads(first)
        except json.JSONDecodeError:
            if '"items"' in head:  # a pretty-printed Crossref public data file {"items": [...]}
                return SourceFormat.CROSSREF
            raise CatalogSourceError(f"{path}:1: not JSON Lines and not a Crossref items file; {READABLE}") from None
        return _sniff_json_object(obj, path)
    if "originalpaperdoi" in lower.replace(" ", "") or lower.startswith("record id"):
        return SourceFormat.RETRACTION_WATCH_CSV
    if lower.replace(" ", "").startswith("doi,retractionwatch"):
        return SourceFormat.DOI_NATURE_CSV
    raise CatalogSourceError(f"{path}:1: format not recognised; {READABLE}")


def json_shape(obj: Any) -> SourceFormat | None:
    """The JSON catalog format one object belongs to, or None when it could be several. OpenAlex
    is tried first: its works carry ``id`` and ``versions`` (read as an arXiv snapshot before) and
    ``title`` and ``doi`` (works JSONL) too."""
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("items"), list) or isinstance(obj.get("message"), dict) or "DOI" in obj:
        return SourceFormat.CROSSREF
    if str(obj.get("id") or "").startswith("https://openalex.org/W") or "authorships" in obj \
            or "primary_location" in obj:
        return SourceFormat.OPENALEX
    if "id" in obj and ("versions" in obj or "journal-ref" in obj or "categories" in obj):
        return SourceFormat.ARXIV_SNAPSHOT
    if "title" in obj and ("doi" in obj or "arxiv_id" in obj):
        return SourceFormat.WORKS_JSONL
    return None


def _sniff_json_object(obj: Any, path: str | Path) -> SourceFormat:
    if not isinstance(obj, dict):
        raise CatalogSourceError(f"{path}:1: a JSON line must be an object")
    shape = json_shape(obj)
    if shape is None:
        raise CatalogSourceError(f"{path}:1: JSON object with keys {sorted(obj)[:8]} is not a known catalog "
                                 f"format; {READABLE}")
    return shape


def check_format(path: str | Path, forced: SourceFormat | None) -> SourceFormat:
    """The format to read ``path`` as: its content's, and a forced one only where the content
    agrees or says nothing (an OpenAlex file forced as works JSONL would be misread)."""
    if forced is None:
        return sniff_format(path)
    try:
        found = sniff_format(path)
    except CatalogSourceError:
        return forced
    if found is not forced:
        raise CatalogSourceError(f"{path}: holds {FORMAT_NAMES.get(found, found.value)}, not "
                                 f"{FORMAT_NAMES.get(forced, forced.value)} (--format {forced.value})")
    return found


# --- normalisation helpers -----------------------------------------------------------------


# --- readers -------------------------------------------------------------------------------


def _json_lines(path: str | Path) -> Iterator[tuple[int, Any, LineError | None]]:
    """Yield (line number, object, error). Bad lines are reported, not raised."""
    with open_text(path) as fh:
        yield from json_lines_of(fh)


def json_lines_of(lines: Iterable[str]) -> Iterator[tuple[int, Any, LineError | None]]:
    """``_json_lines`` of lines already open (a byte range of a big file, ``catalog.extract``).
    A ``\\ud800``-style escape decodes to a lone surrogate, which no Parquet file can hold: that
    line is a reject naming its field, not a crash of the whole build at the write."""
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            yield lineno, None, (None, f"bad JSON: {exc.msg} at column {exc.colno}")
            continue
        bad = lone_surrogate(obj, "") if "\\u" in line else None  # (JSON spells the escape "\\u" only)
        yield (lineno, None, bad) if bad else (lineno, obj, None)


def rows_of_bytes(data: bytes, name: str, fmt: SourceFormat, line0: int, lines: list[int]
                  ) -> Iterator[SourceRow | CatalogReject]:
    """The per-row reader over bytes of a JSON-lines file (a byte range, a block), read as the
    whole file would be (UTF-8, bad bytes replaced, lines split as ``open_text`` splits them),
    lines numbered on from ``line0``; the bytes' line count is appended to ``lines``."""
    take = _json_row_taker(name, fmt)
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace", newline="")
    count = 0

    def counted() -> Iterator[str]:
        nonlocal count
        for line in text:
            count += 1
            yield line

    for lineno, obj, error in json_lines_of(counted()):
        yield CatalogReject(name, line0 + lineno, *error) if error else take(line0 + lineno, obj)
    lines.append(count)


def iter_work_rows(path: str | Path, fmt: SourceFormat | None = None
                   ) -> Iterator[SourceRow | CatalogReject | CatalogSkip]:
    """Every row of one catalog source file, as a work or as a reject, one at a time (a catalog
    source may hold millions of works: nothing here holds more than one row)."""
    fmt = fmt or sniff_format(path)
    if fmt in NOTICE_FORMATS or fmt is SourceFormat.COMPANION:
        return
    if fmt in (SourceFormat.DBLP, SourceFormat.ARXIV_OAI):
        from citeledger.sources.xml_formats import iter_xml_rows

        yield from iter_xml_rows(path, fmt)
        return
    take = _json_row_taker(str(path), fmt)
    if fmt is SourceFormat.CROSSREF and is_items_file(path):
        yield from _crossref_items(path, take)
        return
    for lineno, obj, error in _json_lines(path):
        yield CatalogReject(str(path), lineno, *error) if error else take(lineno, obj)


def _json_row_taker(name: str, fmt: SourceFormat) -> Callable[[int | None, Any], SourceRow | CatalogReject]:
    """One JSON object of a ``fmt`` file -> a work or a reject naming file, line and why; an
    object of another format's shape is a reject, never misread."""
    from citeledger.sources.openalex_snapshot import work_from_openalex

    convert: Callable[[dict], SourceRow | None] = {
        SourceFormat.WORKS_JSONL: work_from_works_jsonl, SourceFormat.ARXIV_SNAPSHOT: work_from_arxiv_snapshot,
        SourceFormat.CROSSREF: work_from_crossref, SourceFormat.OPENALEX: work_from_openalex}[fmt]

    def take(lineno: int | None, obj: Any) -> SourceRow | CatalogReject:
        if fmt is SourceFormat.CROSSREF and isinstance(obj, dict) and isinstance(obj.get("message"), dict):
            obj = obj["message"]
        if not isinstance(obj, dict):
            return CatalogReject(name, lineno, None, "row is not a JSON object")
        shape = json_shape(obj)
        if shape is not None and shape is not fmt:
            return CatalogReject(name, lineno, None, f"row is {FORMAT_NAMES[shape]}, not {FORMAT_NAMES[fmt]}")
        try:
            row = convert(obj)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            return CatalogReject(name, lineno, None, f"unreadable row: {exc}")
        if row is None:
            return CatalogReject(name, lineno, "doi/arxiv_id/title", "no identifier and no title")
        return row

    return take


def is_items_file(path: str | Path) -> bool:
    """A Crossref ``{"items": [...]}`` document (compact or pretty-printed), not JSON lines."""
    if _ITEMS_HEAD.match(_head(path, 4096).lstrip("\ufeff")):
        return True
    try:
        json.loads(_first_meaningful_line(path))
    except json.JSONDecodeError:
        return True
    return False


def _crossref_items(path: str | Path, take: Callable[[int | None, Any], SourceRow | CatalogReject]
                    ) -> Iterator[SourceRow | CatalogReject]:
    """The Crossref public data file: one ``{"items": [...]}`` document per file."""
    with open_text(path) as fh:
        try:
            doc = json.load(fh)
        except json.JSONDecodeError as exc:
            raise CatalogSourceError(f"{path}:{exc.lineno}: bad JSON in Crossref items file: {exc.msg}") from None
    for item in doc.get("items") or []:
        yield take(None, item)
