"""Standing notices of cited works: retractions, corrections, expressions of concern.

A citation ledger must say not only *which* work a reference names but whether that work still
stands. This module reads the named stored sources (the Retraction Watch database CSV, the
two-column ``doi,retractionwatch`` CSV, Crossref ``update-to`` / ``updated-by`` relations and
arXiv withdrawals), turns each into typed ``NoticeEvent`` records, and folds the events of one
work into a ``StandingNotice``. Pure Python: no DuckDB, no Prefect, no network, so the catalog
builder and the ledger can both feed it.

Rules that decide a standing (see ``standing_notice``):
* the same event seen from several sources counts once, and keeps every source's name;
* a later reinstatement ends a retraction, a withdrawal and an expression of concern;
  a later correction ends nothing;
* an undated reinstatement is taken to follow the retraction it reverses (a reinstatement
  presupposes one); the notice says so in ``notes``;
* "could not check" is never "clean": a notice is ``unavailable`` with a reason, standing
  ``unknown``, when no canonical work link exists.
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from datetime import date as _date
from enum import Enum
from pathlib import Path
from typing import Any, Iterable, Mapping

__all__ = [
    "EventType",
    "Standing",
    "NoticeState",
    "UnavailableReason",
    "NoticeEvent",
    "StandingNotice",
    "SourceReject",
    "SOURCE_RW_CSV",
    "SOURCE_RW_DOI_NATURE",
    "SOURCE_CROSSREF_PUBLISHER",
    "SOURCE_CROSSREF_RW",
    "SOURCE_ARXIV",
    "read_retraction_watch_csv",
    "read_doi_nature_csv",
    "events_from_crossref_relations",
    "events_from_arxiv_withdrawal",
    "is_retraction_watch_csv",
    "is_doi_nature_csv",
    "sniff_notice_format",
    "normalise_notice_doi",
    "standing_notice",
    "unavailable_notice",
    "merge_events",
    "NoticeIndex",
    "notice_to_dict",
    "notice_from_dict",
    "notice_row",
]


class EventType(str, Enum):
    """What happened to a work, in the words of the sources."""

    RETRACTION = "retraction"
    CORRECTION = "correction"
    EXPRESSION_OF_CONCERN = "expression_of_concern"
    REINSTATEMENT = "reinstatement"
    WITHDRAWAL = "withdrawal"


class Standing(str, Enum):
    """Where a work stands after all its events. ``unknown`` only for unavailable notices."""

    RETRACTED = "retracted"
    WITHDRAWN = "withdrawn"
    EXPRESSION_OF_CONCERN = "expression_of_concern"
    REINSTATED = "reinstated"
    CORRECTED = "corrected"
    NONE = "none"
    UNKNOWN = "unknown"


class NoticeState(str, Enum):
    """``measured``: sources were checked (events may be empty). ``unavailable``: not checked."""

    MEASURED = "measured"
    UNAVAILABLE = "unavailable"


class UnavailableReason(str, Enum):
    """Why a notice could not be measured."""

    NO_CANONICAL_WORK = "no_canonical_work"  # the reference is not linked to a work
    NO_WORK_IDENTIFIER = "no_work_identifier"  # the work has neither DOI nor arXiv id
    NOT_CHECKED = "not_checked"  # no notice was computed for this work (no sources loaded)
    SOURCE_UNREADABLE = "source_unreadable"  # a source meant to be checked could not be read


SOURCE_RW_CSV = "retraction_watch_csv"
SOURCE_RW_DOI_NATURE = "retraction_watch_doi_nature"
SOURCE_CROSSREF_PUBLISHER = "crossref_publisher"
SOURCE_CROSSREF_RW = "crossref_retraction_watch"
SOURCE_ARXIV = "arxiv"

_TYPE_ORDER = {t: i for i, t in enumerate(EventType)}


@dataclass(frozen=True, slots=True)
class NoticeEvent:
    """One notice about one original work, as one source (or several, once merged) gives it.

    ``original_doi`` is the lower-case DOI of the work the notice is about (for arXiv, the
    DataCite DOI ``10.48550/arxiv.<id>``); ``notice_doi`` the notice's own DOI when known;
    ``date`` an ISO date (``YYYY-MM-DD``) or None; ``nature_raw`` the source's own word for it.
    ``sources`` names every source that reported this event (``source`` is the first).
    """

    original_doi: str
    event_type: EventType
    date: str | None
    notice_doi: str | None
    source: str
    record_id: str | None = None
    nature_raw: str | None = None
    reasons: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.sources:
            object.__setattr__(self, "sources", (self.source,))

    def to_dict(self) -> dict[str, Any]:
        return {
            "original_doi": self.original_doi,
            "type": self.event_type.value,
            "date": self.date,
            "notice_doi": self.notice_doi,
            "source": self.source,
            "sources": list(self.sources),
            "record_id": self.record_id,
            "nature_raw": self.nature_raw,
            "reasons": list(self.reasons),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "NoticeEvent":
        return cls(
            original_doi=d["original_doi"],
            event_type=EventType(d.get("type") or d.get("event_type")),
            date=d.get("date"),
            notice_doi=d.get("notice_doi"),
            source=d.get("source") or (d.get("sources") or ["unknown"])[0],
            record_id=d.get("record_id"),
            nature_raw=d.get("nature_raw"),
            reasons=tuple(d.get("reasons") or ()),
            sources=tuple(d.get("sources") or ()),
        )


@dataclass(frozen=True, slots=True)
class StandingNotice:
    """The standing of one cited work: its merged events, the verdict, what was checked, when.

    ``checked_at`` comes from the caller (the catalog's build time or the run's time), never
    from the wall clock here, so a record built from the same inputs digests the same.
    """

    state: NoticeState
    reason: UnavailableReason | None
    events: tuple[NoticeEvent, ...]
    standing: Standing
    sources_checked: tuple[str, ...]
    checked_at: str | None
    notes: tuple[str, ...] = ()


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
    return path_or_text.lstrip("\ufeff")


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


# ---------------------------------------------------------------------------------------------
# Folding events into a standing


def _same_event(a: NoticeEvent, b: NoticeEvent) -> bool:
    """Same original, same type, and nothing that tells them apart.

    Two known notice DOIs decide alone. Otherwise the same Retraction Watch record id, or the
    same date, makes them one; an event missing both date and notice DOI (the doi-nature table)
    is the same as any event of its type.
    """
    if a.original_doi != b.original_doi or a.event_type != b.event_type:
        return False
    if a.notice_doi and b.notice_doi:
        return a.notice_doi == b.notice_doi
    if a.record_id and b.record_id and a.record_id == b.record_id:
        return True
    if a.date and b.date:
        return a.date == b.date
    return True


def _richness(e: NoticeEvent) -> tuple[int, int, int]:
    return (e.notice_doi is not None, e.date is not None, e.record_id is not None)


def _merge_two(a: NoticeEvent, b: NoticeEvent) -> NoticeEvent:
    sources = tuple(dict.fromkeys(a.sources + b.sources))
    return NoticeEvent(
        original_doi=a.original_doi,
        event_type=a.event_type,
        date=a.date or b.date,
        notice_doi=a.notice_doi or b.notice_doi,
        source=a.source,
        record_id=a.record_id or b.record_id,
        nature_raw=a.nature_raw or b.nature_raw,
        reasons=a.reasons or b.reasons,
        sources=sources,
    )


def _event_key(e: NoticeEvent):
    return (e.date is None, e.date or "", _TYPE_ORDER[e.event_type], e.notice_doi or "")


def merge_events(events: Iterable[NoticeEvent]) -> list[NoticeEvent]:
    """Count each event once however many sources report it; order by date (undated last).

    Richer events (with notice DOI, then date) are placed first so that sparse ones (the
    doi-nature table's) fold into them rather than into each other.
    """
    pending = sorted(events, key=lambda e: tuple(not x for x in _richness(e)))
    merged: list[NoticeEvent] = []
    for event in pending:
        for i, kept in enumerate(merged):
            if _same_event(kept, event):
                merged[i] = _merge_two(kept, event)
                break
        else:
            merged.append(event)
    return sorted(merged, key=_event_key)


def _ended_by(event: NoticeEvent, reinstatement: NoticeEvent) -> bool:
    """A reinstatement ends an event unless the event is known to come after it."""
    return not (event.date and reinstatement.date and event.date > reinstatement.date)


def standing_notice(work_doi: str | None, events: Iterable[NoticeEvent], sources_checked: Iterable[str],
                    checked_at: str | None) -> StandingNotice:
    """The measured standing of one work from every event found for it.

    Only events about ``work_doi`` (lower-cased) are used when it is given. Priority of what is
    still in force: retracted > withdrawn > expression of concern > reinstated > corrected.
    """
    wanted = work_doi.lower() if work_doi else None
    chosen = [e for e in events if wanted is None or e.original_doi == wanted]
    merged = merge_events(chosen)
    by_type: dict[EventType, list[NoticeEvent]] = {t: [] for t in EventType}
    for e in merged:
        by_type[e.event_type].append(e)
    reinstatements = by_type[EventType.REINSTATEMENT]
    notes: list[str] = []

    def in_force(kind: EventType) -> list[NoticeEvent]:
        return [e for e in by_type[kind] if not any(_ended_by(e, r) for r in reinstatements)]

    if reinstatements and any(
        (e.date is None or r.date is None)
        for kind in (EventType.RETRACTION, EventType.WITHDRAWAL, EventType.EXPRESSION_OF_CONCERN)
        for e in by_type[kind] for r in reinstatements
    ):
        notes.append("a reinstatement and an earlier notice are not both dated: the reinstatement "
                     "is taken to follow the notice it reverses")

    if in_force(EventType.RETRACTION):
        standing = Standing.RETRACTED
    elif in_force(EventType.WITHDRAWAL):
        standing = Standing.WITHDRAWN
    elif in_force(EventType.EXPRESSION_OF_CONCERN):
        standing = Standing.EXPRESSION_OF_CONCERN
    elif reinstatements:
        standing = Standing.REINSTATED
    elif by_type[EventType.CORRECTION]:
        standing = Standing.CORRECTED
    else:
        standing = Standing.NONE
    return StandingNotice(NoticeState.MEASURED, None, tuple(merged), standing,
                          tuple(dict.fromkeys(sources_checked)), checked_at, tuple(notes))


def unavailable_notice(reason: UnavailableReason | str, sources_checked: Iterable[str] = (),
                       checked_at: str | None = None) -> StandingNotice:
    """A notice that could not be measured: standing ``unknown``, never ``none``."""
    return StandingNotice(NoticeState.UNAVAILABLE, UnavailableReason(reason), (), Standing.UNKNOWN,
                          tuple(sources_checked), checked_at)


class NoticeIndex:
    """Events of every loaded source, by original DOI, and the sources loaded.

    What the catalog builder fills and the ledger asks: ``notice_for`` gives a measured notice
    listing every loaded source as checked, even when none of them names the work.
    """

    def __init__(self) -> None:
        self._events: dict[str, list[NoticeEvent]] = {}
        self.sources: list[str] = []

    def add(self, events: Iterable[NoticeEvent], source: str | None = None) -> None:
        for e in events:
            self._events.setdefault(e.original_doi, []).append(e)
            for s in e.sources:
                if s not in self.sources:
                    self.sources.append(s)
        if source and source not in self.sources:
            self.sources.append(source)

    def events_for(self, doi: str) -> list[NoticeEvent]:
        return list(self._events.get(doi.lower(), ()))

    def notice_for(self, doi: str | None, arxiv_id: str | None = None, *, checked_at: str | None,
                   extra_events: Iterable[NoticeEvent] = (), extra_sources: Iterable[str] = ()) -> StandingNotice:
        """The notice of a work known by DOI and/or arXiv id (events of both are pooled)."""
        keys = [k for k in (doi and doi.lower(), arxiv_id and "10.48550/arxiv." + arxiv_id.lower()) if k]
        if not keys:
            return unavailable_notice(UnavailableReason.NO_WORK_IDENTIFIER, checked_at=checked_at)
        sources = list(self.sources) + list(extra_sources)
        if not sources:
            return unavailable_notice(UnavailableReason.NOT_CHECKED, checked_at=checked_at)
        found: list[NoticeEvent] = [e for k in keys for e in self._events.get(k, ())]
        found.extend(extra_events)
        # events about the arXiv DOI are re-keyed to the work's own DOI so they merge and count
        primary = keys[0]
        pooled = [e if e.original_doi == primary else rekey(e, primary) for e in found
                  if e.original_doi in keys]
        return standing_notice(primary, pooled, sources, checked_at)


def rekey(e: NoticeEvent, doi: str) -> NoticeEvent:
    return NoticeEvent(doi, e.event_type, e.date, e.notice_doi, e.source, e.record_id, e.nature_raw,
                       e.reasons, e.sources)


# ---------------------------------------------------------------------------------------------
# Plain forms for the ledger's Parquet table and the citation record


def notice_to_dict(notice: StandingNotice) -> dict[str, Any]:
    """A JSON-ready dict (the shape the citation record carries)."""
    return {
        "state": notice.state.value,
        "reason": notice.reason.value if notice.reason else None,
        "standing": notice.standing.value,
        "events": [e.to_dict() for e in notice.events],
        "sources_checked": list(notice.sources_checked),
        "checked_at": notice.checked_at,
        "notes": list(notice.notes),
    }


def notice_from_dict(d: Mapping[str, Any]) -> StandingNotice:
    """Inverse of ``notice_to_dict``; also reads a ``notices`` view row (``events`` as JSON text)."""
    events = d.get("events") or []
    if isinstance(events, str):
        events = json.loads(events) if events.strip() else []
    reason = d.get("reason")
    return StandingNotice(
        state=NoticeState(d.get("state") or "measured"),
        reason=UnavailableReason(reason) if reason else None,
        events=tuple(NoticeEvent.from_dict(e) for e in events),
        standing=Standing(d.get("standing") or "none"),
        sources_checked=tuple(d.get("sources_checked") or ()),
        checked_at=str(d["checked_at"]) if d.get("checked_at") is not None else None,
        notes=tuple(d.get("notes") or ()),
    )


def notice_row(work_id: str, doi: str | None, notice: StandingNotice) -> dict[str, Any]:
    """One row of the ledger's ``notices`` table (events as a JSON string)."""
    d = notice_to_dict(notice)
    return {
        "work_id": work_id,
        "doi": doi,
        "state": d["state"],
        "reason": d["reason"],
        "standing": d["standing"],
        "events": json.dumps(d["events"], sort_keys=True, ensure_ascii=False),
        "sources_checked": d["sources_checked"],
        "checked_at": d["checked_at"],
    }
