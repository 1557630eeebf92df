"""What a citation record (schema v2) claims and what it does not: one coverage lane per part of
the record, each with a state (``measured``: all of it; ``partial``: some; ``not_measured``:
none) beside its counts, and a receipt per notice source saying when it was checked and what it
said. Pure functions of the record's entries."""
from __future__ import annotations

import functools
from typing import Any, Iterable, Mapping

from citeledger.records.paper import iso_z, metadata_lane

NOTICE_FAMILIES = (("crossref", "Crossref"), ("retraction_watch", "Retraction Watch"), ("openalex", "OpenAlex"))


@functools.lru_cache(maxsize=256)
def family(source: str) -> str:
    """The organisation a notice source's data comes from (``retraction_watch_csv`` -> Retraction Watch)."""
    low = source.lower()
    return next((name for prefix, name in NOTICE_FAMILIES if low.startswith(prefix)), source)


def notice_receipts(notice: Mapping[str, Any], source_times: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One receipt per source checked: which source, when the check ran, how fresh the source was
    (when the catalog took it in), and what it said about this work."""
    receipts = []
    for source in notice.get("sources_checked") or []:
        said = [e for e in notice.get("events") or [] if source in (e.get("sources") or [e.get("source")])]
        words = "; ".join(f"{e['type']} {e.get('date') or 'undated'}" for e in said)
        receipts.append({
            "source": source, "family": family(source), "checked_at": iso_z(notice.get("checked_at")),
            "source_as_of": iso_z(source_times.get(source)), "events": len(said),
            "said": words or "no notice for this work",
        })
    return receipts


def answered_sources(notices: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The notice sources that answered (those of the measured notices, an unavailable notice asked
    none), each with the latest time it was asked: what the notices lane names, in every form of
    the record (JSON, text, HTML, Pith)."""
    latest: dict[str, Any] = {}
    for notice in notices:
        if notice.get("state") != "measured":
            continue
        when = notice.get("checked_at")
        for source in notice.get("sources_checked") or []:
            old = latest.get(source)
            latest[source] = max(old, when) if old and when else old or when
    return dict(sorted(latest.items()))


def lane_state(observed: int, denominator: int | None) -> str:
    if not denominator or not observed:
        return "not_measured"
    return "measured" if observed >= denominator else "partial"


def _names(tables: Mapping[str, Any], *wanted: str) -> list[str]:
    return [t for t in wanted if t in tables] or list(wanted[:1])


def lanes(references: int, decided: int, named_notices: list[Mapping[str, Any]], inbound_page: Mapping[str, Any],
          tables: Mapping[str, Any], as_of: Any, paper_work: Mapping[str, Any] | None) -> dict[str, Any]:
    """Resolution, notices, inbound, external citations and the paper's metadata: what each covers,
    out of what, from which tables, as of when, and whether it was measured; from the record's
    counts: its references, those decided, the notice of each one naming a catalog work (a link or
    a ``metadata_mismatch``)."""
    measured = sum(1 for n in named_notices if n["state"] == "measured")
    distinct = {id(n): n for n in named_notices}.values()  # the records of a pass share a work's notice
    answered = answered_sources(distinct)
    checked = sorted(answered)
    times = sorted(t for t in answered.values() if t)
    families = {family(s) for s in checked}
    return {
        "resolution": {
            "state": lane_state(decided, references), "observed": decided, "denominator": references,
            "means": "references with a decided state (not 'unavailable') out of the paper's references in the ledger",
            "sources": _names(tables, "current", "observations"), "as_of": as_of,
        },
        "notices": {
            "state": lane_state(measured, len(named_notices)), "observed": measured,
            "denominator": len(named_notices),
            "means": "references naming a catalog work (linked, or whose identifier names another work) whose "
                     "work's notices were checked, out of all of them; "
                     "sources checked: " + (", ".join(checked) or "none") + "; not checked: " +
                     (", ".join(n for _, n in NOTICE_FAMILIES if n not in families) or "none"),
            "sources": checked, "as_of": times[-1] if times else None, "source_times": answered,
        },
        "inbound": {
            "state": "partial" if inbound_page["total"] else "not_measured",
            "observed": inbound_page["listed"], "denominator": inbound_page["total"],
            "means": "citing references listed out of those in this ledger resolved to this work; only papers "
                     "whose references are in this ledger are examined, so this is never the whole of them",
            "sources": _names(tables, "current", "observations"), "as_of": as_of,
        },
        "external_citations": {
            "state": "not_measured", "observed": 0, "denominator": None,
            "means": "citations of this paper from outside this ledger (other papers, citation indexes) are "
                     "not measured: this record claims nothing about them, and zero here means unknown",
            "sources": [], "as_of": None,
        },
        "paper_metadata": {**metadata_lane(paper_work), "sources": _names(tables, "works"), "as_of": as_of},
    }
