"""The notice check of a run: the standing notice (retracted, corrected, withdrawn, ...) of every
work a run links to, from the catalog's notice sources, written beside the run's observations."""
from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from citeledger.engine.process_cache import get_catalog, get_notice_index
from citeledger.ledger.ledger_store import LedgerStore
from citeledger.storage.places import CatalogDir, LedgerDir
from resolvers.notices import notice_sources
from resolvers.notices import standing as notices
from resolvers.notices.standing import NoticeIndex, notice_row

# The sources that read a work's arXiv record, and with it whether the paper was withdrawn: only
# then was arXiv asked about it (an arXiv id from another source says nothing of a withdrawal).
ARXIV_RECORDS = frozenset({"arxiv_snapshot", "arxiv_oai"})


def work_notice(work: dict[str, Any], index: NoticeIndex, checked_at: str | None) -> Any:
    """The standing notice of one catalog work: Retraction Watch events for any of its DOIs, the
    Crossref update relations its record carries, OpenAlex's is_retracted, and arXiv's withdrawn flag
    (each source counted as asked only when the work's record came from it)."""
    extra_events, extra_sources = _work_extras(work, index)
    return index.notice_for(work.get("doi"), work.get("arxiv_id"), checked_at=checked_at,
                            extra_events=extra_events, extra_sources=extra_sources)


def _work_extras(work: dict[str, Any], index: NoticeIndex) -> tuple[list[Any], list[str]]:
    """The events the work's own record carries (and its other DOIs'), and the sources checked
    beyond the index's own."""
    extra_events: list[Any] = []
    extra_sources: list[str] = []
    work_sources = set(work.get("sources") or ())
    if "crossref" in work_sources:
        extra_sources += [notices.SOURCE_CROSSREF_PUBLISHER, notices.SOURCE_CROSSREF_RW]
        if work.get("relations") and work.get("doi"):
            extra_events += notice_sources.events_from_crossref_relations(work["doi"], json.loads(work["relations"]))
    if "openalex" in work_sources:
        extra_sources.append(notices.SOURCE_OPENALEX)
        if work.get("relations") and work.get("doi"):
            extra_events += notice_sources.events_from_openalex(work["doi"], json.loads(work["relations"]))
    if work.get("arxiv_id") and (work_sources & ARXIV_RECORDS or work.get("withdrawn")):
        extra_sources.append(notices.SOURCE_ARXIV)
        if work.get("withdrawn"):
            extra_events += notice_sources.events_from_arxiv_withdrawal(work["arxiv_id"])
    other_dois = [d for d in (work.get("alt_dois") or ()) if d != work.get("doi")]
    for doi in other_dois:  # a preprint's journal DOI (or the reverse) names the same work
        extra_events += [notices.rekey(e, work["doi"]) for e in index.events_for(doi)]
    return extra_events, extra_sources


def _plain_extras(work: dict[str, Any], made: dict[tuple[bool, bool, bool], list[str]]
                  ) -> tuple[list[Any], list[str]] | None:
    """``_work_extras`` of a work whose record carries no events of its own (no relations, not
    withdrawn, no DOI beside its own): none, and the sources checked follow from which sources
    hold it, so each such list is made once per run (most cited works are such). None for any
    other work: ``_work_extras`` judges it."""
    if work.get("relations") or work.get("withdrawn") or any(d != work.get("doi") for d in work.get("alt_dois") or ()):
        return None
    held = work.get("sources") or ()
    arxiv_read = bool(work.get("arxiv_id")) and bool(ARXIV_RECORDS.intersection(held))
    key = ("crossref" in held, "openalex" in held, arxiv_read)
    if key not in made:
        made[key] = ([notices.SOURCE_CROSSREF_PUBLISHER, notices.SOURCE_CROSSREF_RW] if key[0] else []) + \
            ([notices.SOURCE_OPENALEX] if key[1] else []) + ([notices.SOURCE_ARXIV] if key[2] else [])
    return [], made[key]


def work_notice_rows(catalog_dir: CatalogDir, work_ids: Any, run_id: str) -> list[dict[str, Any]]:
    """Notice rows (as the ledger stores them) of the given works, by work id."""
    catalog = get_catalog(catalog_dir)
    index = get_notice_index(catalog)
    checked_at = catalog.manifest.get("built_at")
    rows = []
    quiet: dict[tuple[bool, tuple[str, ...]], dict[str, Any]] = {}  # rows of works no event names
    plain_sources: dict[tuple[bool, bool, bool], list[str]] = {}
    for work_id, work in sorted(catalog.notice_rows(work_ids).items()):
        events, sources = _plain_extras(work, plain_sources) or _work_extras(work, index)
        if events or index.has_events(work.get("doi"), work.get("arxiv_id")):
            rows.append(_dated(notice_row(work_id, work.get("doi"), index.notice_for(
                work.get("doi"), work.get("arxiv_id"), checked_at=checked_at, extra_events=events,
                extra_sources=sources)), run_id))
            continue
        # most cited works have no notice event: their row differs from another such row only
        # in the work, given the sources checked (and whether it has an identifier at all)
        key = (bool(work.get("doi") or work.get("arxiv_id")), tuple(sources))
        if key not in quiet:
            quiet[key] = _dated(notice_row(work_id, work.get("doi"), index.notice_for(
                work.get("doi"), work.get("arxiv_id"), checked_at=checked_at, extra_sources=sources)), run_id)
        rows.append({**quiet[key], "work_id": work_id, "doi": work.get("doi"),
                     "sources_checked": list(quiet[key]["sources_checked"])})
    return rows


def _dated(row: dict[str, Any], run_id: str) -> dict[str, Any]:
    """A notice row as the ledger stores it: the run, and the check's time as a datetime."""
    row["run_id"] = run_id
    row["checked_at"] = datetime.fromisoformat(row["checked_at"]) if row["checked_at"] else None
    return row


def cited_doi_notice_rows(catalog_dir: CatalogDir, dois: Any, run_id: str) -> list[dict[str, Any]]:
    """Notice rows of cited DOIs that no catalog work carries but a notice source lists (a
    retracted paper the works table lacks is still retracted), keyed ``doi:<doi>``: the work id
    such a work would get. A DOI no source lists gets no row (its reference has no work)."""
    catalog = get_catalog(catalog_dir)
    index = get_notice_index(catalog)
    listed = sorted({d.lower() for d in dois if index.events_for(d)})
    known = catalog.works_by_doi(listed)
    checked_at = catalog.manifest.get("built_at")
    rows = []
    for doi in (d for d in listed if d not in known):
        row = notice_row(f"doi:{doi}", doi, index.notice_for(doi, checked_at=checked_at))
        row["run_id"] = run_id
        row["checked_at"] = datetime.fromisoformat(row["checked_at"]) if row["checked_at"] else None
        rows.append(row)
    return rows


def write_run_notices(ledger_dir: LedgerDir, catalog_dir: CatalogDir, run_id: str) -> int:
    """A notice for every work this run links to, and for every cited DOI that names no catalog
    work but is listed by a notice source, checked against the catalog's sources."""
    ledger = LedgerStore.of(ledger_dir)
    rows = work_notice_rows(catalog_dir, ledger.linked_work_ids(run_id), run_id)
    have = {r["work_id"] for r in rows}
    rows += [r for r in cited_doi_notice_rows(catalog_dir, ledger.unlinked_cited_dois(run_id), run_id)
             if r["work_id"] not in have]
    ledger.write_notices(run_id, sorted(rows, key=lambda r: r["work_id"]))
    return len(rows)
