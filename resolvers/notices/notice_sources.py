"""Reading the notice sources into ``NoticeEvent`` records: the Retraction Watch database CSV,
the two-column ``doi,retractionwatch`` CSV, Crossref ``update-to`` / ``updated-by`` relations and
arXiv withdrawals. Every source row becomes an event or a ``SourceReject`` with its line and
reason. Pure Python, like ``resolvers.notices.standing``, which folds the events into a standing."""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from datetime import date as _date
from pathlib import Path
from typing import Any, Mapping

from resolvers.notices.standing import (
    SOURCE_ARXIV,
    SOURCE_CROSSREF_PUBLISHER,
    SOURCE_CROSSREF_RW,
    SOURCE_OPENALEX,
    SOURCE_RW_CSV,
    SOURCE_RW_DOI_NATURE,
    EventType,
    NoticeEvent,
)

__all__ = [
    "SourceReject",
    "read_retraction_watch_csv",
    "read_doi_nature_csv",
    "events_from_crossref_relations",
    "events_from_arxiv_withdrawal",
    "events_from_openalex",
    "is_retraction_watch_csv",
    "is_doi_nature_csv",
    "sniff_notice_format",
    "normalise_notice_doi",
]


@dataclass(frozen=True, slots=True)
class SourceReject:
    """A source row that did not become an event (or lost a field): never silently lost.

    ``kept`` is True when the event was kept but one of its fields was unreadable.
    """

    source: str
    line: int
    reason: str
    record_id: str | None = None
    raw: str | None = None
    kept: bool = False


# ---------------------------------------------------------------------------------------------
# DOIs and dates as the sources write them

_DOI_RE = re.compile(r"^10\.\d{4,9}/\S+$")
_PCT_RE = re.compile(r"%([0-9A-Fa-f]{2})")
_SENTINELS = {"", "0", "unavailable", "n/a", "na", "none", "null", "nan", "-"}
_DOI_PREFIXES = ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/",
                 "http://dx.doi.org/", "doi.org/", "doi:")


def normalise_notice_doi(value: str | None) -> tuple[str | None, str | None]:
    """A source's DOI cell -> (lower-case DOI, None) or (None, why it is not a DOI).

    Percent escapes are decoded (Retraction Watch stores SICI DOIs with ``%3C``/``%3E``);
    the sentinels ``0``, ``unavailable`` and empty are "no DOI", not DOIs.
    """
    if value is None:
        return None, "empty"
    text = value.strip()
    if text.lower() in _SENTINELS:
        return None, f"sentinel {text!r}" if text else "empty"
    text = _PCT_RE.sub(lambda m: chr(int(m.group(1), 16)), text)
    low = text.lower()
    for prefix in _DOI_PREFIXES:
        if low.startswith(prefix):
            low = low[len(prefix):].strip()
            break
    if not _DOI_RE.match(low):
        return None, f"not a DOI: {value.strip()!r}"
    return low, None


_MDY_RE = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})(?:\s+\d{1,2}:\d{2}(?::\d{2})?)?$")
_ISO_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


def _iso_date(value: str | None) -> tuple[str | None, str | None]:
    """``M/D/YYYY H:MM`` or ISO -> (``YYYY-MM-DD``, None); empty -> (None, None); else why."""
    text = (value or "").strip()
    if not text:
        return None, None
    m = _MDY_RE.match(text)
    try:
        if m:
            return _date(int(m.group(3)), int(m.group(1)), int(m.group(2))).isoformat(), None
        m = _ISO_RE.match(text)
        if m:
            return _date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat(), None
    except ValueError:
        pass
    return None, f"unreadable date {text!r}"


_NATURES = {
    "retraction": EventType.RETRACTION,
    "correction": EventType.CORRECTION,
    "expression of concern": EventType.EXPRESSION_OF_CONCERN,
    "reinstatement": EventType.REINSTATEMENT,
    "withdrawal": EventType.WITHDRAWAL,
}


def _split_list(value: str | None) -> list[str]:
    """``a;b;`` -> ``['a', 'b']`` (Retraction Watch ends its lists with ``;``)."""
    return [p.strip() for p in (value or "").split(";") if p.strip()]


def _natures(value: str | None) -> tuple[list[tuple[EventType, str]], list[str]]:
    known, unknown = [], []
    for part in _split_list(value):
        event_type = _NATURES.get(" ".join(part.lower().split()))
        if event_type is None:
            unknown.append(part)
        else:
            known.append((event_type, part))
    return known, unknown


def _read_text(path_or_text: str | Path) -> str:
    """A path, or the CSV text itself (text with a line break, or naming no existing file)."""
    is_path = isinstance(path_or_text, Path) or (
        "\n" not in path_or_text and "\r" not in path_or_text and Path(path_or_text).is_file())
    if is_path:
        data = Path(path_or_text).read_bytes()
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return data.decode("cp1252", errors="replace")
    return str(path_or_text).lstrip("\ufeff")


def _csv_with_header(path_or_text: str | Path, source: str):
    """(header, the rows after it with their line numbers), or (None, reject) for an empty file."""
    rows = _rows_with_lines(_read_text(path_or_text))
    try:
        _, header = next(rows)
    except StopIteration:
        return None, SourceReject(source, 1, "empty file")
    return header, rows


def _rows_with_lines(text: str):
    """Yield (first physical line of the row, row) so rejects name the line a person sees."""
    reader = csv.reader(io.StringIO(text, newline=""))
    previous_end = 0
    for row in reader:
        start = previous_end + 1
        previous_end = reader.line_num
        yield start, row


# ---------------------------------------------------------------------------------------------
# Retraction Watch: the database export

RW_REQUIRED_COLUMNS = ("Record ID", "RetractionDate", "RetractionDOI", "OriginalPaperDOI",
                       "RetractionNature")


def _header_fields(header_line: str) -> list[str]:
    try:
        row = next(csv.reader([header_line.lstrip("\ufeff").splitlines()[0]]))
    except (StopIteration, csv.Error, IndexError):
        return []
    return [c.strip() for c in row]


def is_retraction_watch_csv(header_line: str) -> bool:
    """True for the database export's header (20 named columns, with or without the trailing
    comma that the export carries since 2026)."""
    fields = set(_header_fields(header_line))
    return all(c in fields for c in RW_REQUIRED_COLUMNS)


def is_doi_nature_csv(header_line: str) -> bool:
    """True for the two-column ``doi,retractionwatch`` table."""
    fields = [f.lower() for f in _header_fields(header_line)]
    while fields and fields[-1] == "":
        fields.pop()
    return fields == ["doi", "retractionwatch"]


def sniff_notice_format(head: str) -> str | None:
    """The first line (or more) of a file -> its notice source name, or None if neither."""
    line = head.lstrip("\ufeff").split("\n", 1)[0].rstrip("\r")
    if is_retraction_watch_csv(line):
        return SOURCE_RW_CSV
    if is_doi_nature_csv(line):
        return SOURCE_RW_DOI_NATURE
    return None


def read_retraction_watch_csv(path_or_text: str | Path) -> tuple[list[NoticeEvent], list[SourceReject]]:
    """The Retraction Watch database CSV -> (events, rejects).

    One event per nature of each row (``RetractionNature`` may join several with ``;``).
    ``OriginalPaperDOI`` is the work the notice is about, ``RetractionDOI`` the notice itself.
    Rows whose every cell is empty (the export's trailer) are skipped; a row without a usable
    original DOI, with an unknown nature or the wrong number of cells is a reject naming its
    line. Reasons lose the ``+`` prefix of the 2023 Labs API variant.
    """
    events: list[NoticeEvent] = []
    rejects: list[SourceReject] = []
    header, rows = _csv_with_header(path_or_text, SOURCE_RW_CSV)
    if header is None:
        return events, [rows]
    header = [h.strip() for h in header]
    if not all(c in header for c in RW_REQUIRED_COLUMNS):
        missing = [c for c in RW_REQUIRED_COLUMNS if c not in header]
        return events, [SourceReject(SOURCE_RW_CSV, 1, f"not a Retraction Watch header: missing {missing}")]
    named = len(header)
    while named and header[named - 1] == "":
        named -= 1  # the trailing comma since 2026 makes an unnamed last column
    col = {name: i for i, name in enumerate(header) if name}

    for line, row in rows:
        if not any(cell.strip() for cell in row):
            continue  # trailer rows of the export, or a blank line
        raw = ",".join(row)
        if not (named <= len(row) <= len(header)) or any(c.strip() for c in row[named:]):
            rejects.append(SourceReject(SOURCE_RW_CSV, line,
                                        f"expected {named} fields, got {len(row)}", raw=raw[:500]))
            continue

        def cell(name: str, row: list[str] = row) -> str:  # bound now, not at call time
            i = col.get(name)
            return row[i] if i is not None and i < len(row) else ""

        record_id = cell("Record ID").strip() or None
        original, why = normalise_notice_doi(cell("OriginalPaperDOI"))
        if original is None:
            rejects.append(SourceReject(SOURCE_RW_CSV, line, f"no usable OriginalPaperDOI ({why})",
                                        record_id=record_id, raw=raw[:500]))
            continue
        known, unknown = _natures(cell("RetractionNature"))
        if unknown or not known:
            what = f"unknown RetractionNature {unknown}" if unknown else "empty RetractionNature"
            rejects.append(SourceReject(SOURCE_RW_CSV, line, what, record_id=record_id, raw=raw[:500]))
            continue
        notice_doi, _ = normalise_notice_doi(cell("RetractionDOI"))
        when, date_problem = _iso_date(cell("RetractionDate"))
        if date_problem:
            rejects.append(SourceReject(SOURCE_RW_CSV, line, f"{date_problem}; event kept without a date",
                                        record_id=record_id, kept=True))
        reasons = tuple(r.lstrip("+").strip() for r in _split_list(cell("Reason")))
        for event_type, word in known:
            events.append(NoticeEvent(original, event_type, when, notice_doi, SOURCE_RW_CSV,
                                      record_id=record_id, nature_raw=word, reasons=reasons))
    return events, rejects


def read_doi_nature_csv(path_or_text: str | Path) -> tuple[list[NoticeEvent], list[SourceReject]]:
    """The two-column ``doi,retractionwatch`` table -> (events, rejects).

    It carries no dates and no notice DOIs: one undated event per nature. DOIs are lower-cased
    (the table keeps Retraction Watch's mixed case, and lists some DOIs twice in two cases).
    """
    events: list[NoticeEvent] = []
    rejects: list[SourceReject] = []
    header, rows = _csv_with_header(path_or_text, SOURCE_RW_DOI_NATURE)
    if header is None:
        return events, [rows]
    if not is_doi_nature_csv(",".join(header)):
        return events, [SourceReject(SOURCE_RW_DOI_NATURE, 1, f"not a doi,retractionwatch header: {header}")]
    for line, row in rows:
        if not any(cell.strip() for cell in row):
            continue
        raw = ",".join(row)
        if len(row) != 2:
            rejects.append(SourceReject(SOURCE_RW_DOI_NATURE, line, f"expected 2 fields, got {len(row)}",
                                        raw=raw[:500]))
            continue
        original, why = normalise_notice_doi(row[0])
        if original is None:
            rejects.append(SourceReject(SOURCE_RW_DOI_NATURE, line, f"no usable DOI ({why})", raw=raw[:500]))
            continue
        known, unknown = _natures(row[1])
        if unknown or not known:
            what = f"unknown nature {unknown}" if unknown else "empty nature"
            rejects.append(SourceReject(SOURCE_RW_DOI_NATURE, line, what, raw=raw[:500]))
            continue
        for event_type, word in known:
            events.append(NoticeEvent(original, event_type, None, None, SOURCE_RW_DOI_NATURE,
                                      nature_raw=word))
    return events, rejects


# ---------------------------------------------------------------------------------------------
# Crossref relations and arXiv withdrawals

# Crossref's update types -> ours. Types that are not notices about the work's standing
# (new_version, new_edition) are left out. A partial retraction is recorded as a correction:
# calling a work "retracted" for part of it would overstate the notice (nature_raw keeps it).
CROSSREF_UPDATE_TYPES: dict[str, EventType] = {
    "retraction": EventType.RETRACTION,
    "partial_retraction": EventType.CORRECTION,
    "correction": EventType.CORRECTION,
    "corrigendum": EventType.CORRECTION,
    "erratum": EventType.CORRECTION,
    "addendum": EventType.CORRECTION,
    "clarification": EventType.CORRECTION,
    "expression_of_concern": EventType.EXPRESSION_OF_CONCERN,
    "reinstatement": EventType.REINSTATEMENT,
    "withdrawal": EventType.WITHDRAWAL,
    "removal": EventType.WITHDRAWAL,
}
_CROSSREF_SOURCES = {"publisher": SOURCE_CROSSREF_PUBLISHER, "retraction-watch": SOURCE_CROSSREF_RW}


def _crossref_date(updated: Any) -> str | None:
    if not isinstance(updated, Mapping):
        return None
    when, _ = _iso_date(str(updated.get("date-time") or ""))
    if when:
        return when
    parts = (updated.get("date-parts") or [[None]])[0]
    if len(parts) >= 3 and all(isinstance(p, int) for p in parts[:3]):
        try:
            return _date(parts[0], parts[1], parts[2]).isoformat()
        except ValueError:
            return None
    return None


def events_from_crossref_relations(work_doi: str, message_or_fragment: Mapping[str, Any]) -> list[NoticeEvent]:
    """A Crossref work (``message``, a whole envelope, or a fragment holding ``update-to`` /
    ``updated-by``) -> events.

    ``updated-by`` sits on the original: each entry's DOI is the notice. ``update-to`` sits on
    the notice record: each entry's DOI is the original, and ``work_doi`` is the notice.
    Entries pointing at the record itself (Crossref's ``new_version`` self-links) and types
    that are not notices are skipped; sources other than ``publisher`` / ``retraction-watch``
    keep their own name prefixed ``crossref_``.
    """
    msg: Mapping[str, Any] = message_or_fragment
    if isinstance(msg.get("message"), Mapping):
        msg = msg["message"]
    own, _ = normalise_notice_doi(work_doi or msg.get("DOI"))
    events: list[NoticeEvent] = []
    for key in ("updated-by", "update-to"):
        for entry in msg.get(key) or ():
            if not isinstance(entry, Mapping):
                continue
            kind = str(entry.get("type") or "").strip().lower()
            event_type = CROSSREF_UPDATE_TYPES.get(kind)
            other, _ = normalise_notice_doi(entry.get("DOI"))
            if event_type is None or other is None or own is None or other == own:
                continue
            original, notice = (own, other) if key == "updated-by" else (other, own)
            src = str(entry.get("source") or "publisher").strip().lower()
            source = _CROSSREF_SOURCES.get(src, "crossref_" + re.sub(r"\W+", "_", src))
            record_id = entry.get("record-id")
            events.append(NoticeEvent(original, event_type, _crossref_date(entry.get("updated")), notice,
                                      source, record_id=str(record_id) if record_id is not None else None,
                                      nature_raw=entry.get("label") or kind))
    return events


def events_from_arxiv_withdrawal(
    arxiv_id: str, date: str | None = None, version: str | None = None
) -> list[NoticeEvent]:
    """A withdrawn arXiv version -> one withdrawal event on ``10.48550/arxiv.<id>``."""
    original = "10.48550/arxiv." + arxiv_id.strip().lower()
    when, _ = _iso_date(date)
    raw = f"withdrawn {version}" if version else "withdrawn"
    return [NoticeEvent(original, EventType.WITHDRAWAL, when, None, SOURCE_ARXIV, nature_raw=raw)]


def events_from_openalex(work_doi: str, relations: Mapping[str, Any]) -> list[NoticeEvent]:
    """OpenAlex's ``is_retracted`` (kept in the catalog's relations as ``{"openalex": {"id",
    "is_retracted"}}``) -> one undated retraction event on ``work_doi``; OpenAlex names no notice."""
    flag = relations.get("openalex") if isinstance(relations, Mapping) else None
    own, _ = normalise_notice_doi(work_doi)
    if not isinstance(flag, Mapping) or flag.get("is_retracted") is not True or own is None:
        return []
    return [NoticeEvent(own, EventType.RETRACTION, None, None, SOURCE_OPENALEX, nature_raw="is_retracted")]
