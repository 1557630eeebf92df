"""Standing notices of cited works: retractions, corrections, expressions of concern.

A citation ledger must say not only *which* work a reference names but whether that work still
stands. The sources (the Retraction Watch database CSV, the two-column
``doi,retractionwatch`` CSV, Crossref ``update-to`` / ``updated-by`` relations and arXiv
withdrawals) are read into typed ``NoticeEvent`` records by ``resolvers.notices.notice_sources``; this
module holds the records and folds the events of one work into a ``StandingNotice``. Pure
Python: no DuckDB, no Prefect, no network, so the catalog builder and the ledger can both feed it.

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

import json
from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterable, Mapping

__all__ = [
    "EventType",
    "Standing",
    "NoticeState",
    "UnavailableReason",
    "NoticeEvent",
    "StandingNotice",
    "SOURCE_RW_CSV",
    "SOURCE_RW_DOI_NATURE",
    "SOURCE_CROSSREF_PUBLISHER",
    "SOURCE_CROSSREF_RW",
    "SOURCE_ARXIV",
    "SOURCE_OPENALEX",
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
SOURCE_OPENALEX = "openalex"  # a work's is_retracted flag in the OpenAlex snapshot

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


_EVENT_TYPES = tuple(EventType)  # (iterating the Enum class itself is slow: once per cited work)


def standing_notice(work_doi: str | None, events: Iterable[NoticeEvent], sources_checked: Iterable[str],
                    checked_at: str | None) -> StandingNotice:
    """The measured standing of one work from every event found for it.

    Only events about ``work_doi`` (lower-cased) are used when it is given. Priority of what is
    still in force: retracted > withdrawn > expression of concern > reinstated > corrected.
    """
    wanted = work_doi.lower() if work_doi else None
    chosen = [e for e in events if wanted is None or e.original_doi == wanted]
    merged = merge_events(chosen)
    by_type: dict[EventType, list[NoticeEvent]] = {t: [] for t in _EVENT_TYPES}
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

    def has_events(self, doi: str | None, arxiv_id: str | None = None) -> bool:
        """Does any loaded source have an event for the work (its DOI or its arXiv DOI)?"""
        return bool((doi and doi.lower() in self._events) or
                    (arxiv_id and "10.48550/arxiv." + arxiv_id.lower() in self._events))

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
