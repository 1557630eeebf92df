"""citeledger's records in Pith's shape (``pith.paper-citation-record.v1``): built from the v2 record
(``pith.export``), checked against Pith's schema, and written as RFC 8785 bytes under
``<ledger>/records/pith/<stem>.json`` beside citeledger's own ``<ledger>/records/<stem>.json``.

Links are relative to that folder: the record's ``json`` is itself, its ``html`` and ``paper`` are
citeledger's page of the paper (``../<stem>.html``); a cited or citing paper the ledger has a record
of links to that record's page, any other to arXiv or doi.org. Signed (``--sign``), a record carries
a Pith receipt over its ``context_digest`` (``pith.receipts``) as a ``receipt`` member beside Pith's
members; Pith's schema, which admits no other member, is checked on the record without it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from citeledger.engine.process_cache import get_catalog
from citeledger.ledger.store import LedgerStore
from citeledger.pith import export, schema
from citeledger.pith import receipts as pith_receipts
from citeledger.pith.export_parts import arxiv_parts, default_page
from citeledger.records import receipts
from citeledger.records.files import citation_records, find_papers_works, record_file_stem
from citeledger.records.ledger_reads import citing_papers
from citeledger.storage import locking
from citeledger.storage.places import CatalogDir, LedgerDir
from resolvers.errors import ConfigError
from resolvers.jcs import jcs

BUILDER = f"{receipts.BUILDER} (pith.paper-citation-record.v1 export)"


def paper_pages(ledger_dir: LedgerDir, catalog_dir: CatalogDir) -> Callable[[str], str]:
    """Paper id -> its page: citeledger's record page when the ledger has the paper, else arXiv or doi.org."""
    known = {arxiv_parts(p)[0] or p: p for p in citing_papers(ledger_dir, catalog_dir, None)}

    def page_of(paper_id: str) -> str:
        paper = known.get(arxiv_parts(paper_id)[0] or paper_id)
        return f"../{record_file_stem(paper)}.html" if paper is not None else default_page(paper_id)
    return page_of


def to_pith(v2: Mapping[str, Any], page_of: Callable[[str], str],
            measurements: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The Pith record of a v2 record, checked against Pith's schema (``jsonschema.ValidationError``)."""
    stem = record_file_stem(str(v2["paper"]["id"]))
    links = {"json": f"{stem}.json", "html": f"../{stem}.html"}
    record = export.to_pith_record(v2, measurements=measurements, links=links, page_of=page_of)
    schema.validate(record)
    return record


MEASURED = (("openalex", "cited_by_count_openalex"), ("crossref", "cited_by_count_crossref"))


def measurements(work: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The paper's citation counts the catalog holds, one per source with the time it is of (a count
    without a time is not a measurement Pith's record can state, and is left out)."""
    work = work or {}
    openalex = [i.split(":", 1)[1] for i in work.get("source_ids") or [] if i.startswith("openalex:")]
    out = []
    for source, column in MEASURED:
        value, when = work.get(column), work.get(f"{column}_at")
        if value is None or not when:
            continue
        name = f"https://openalex.org/{openalex[0]}" if source == "openalex" and openalex else \
            work.get("doi") or str(work.get("work_id"))
        out.append(export.external_measurement(source, int(value), when, name))
    return out


def paper_measurements(paper_ids: Sequence[str], catalog_dir: CatalogDir) -> list[list[dict[str, Any]]]:
    """``measurements`` of each paper, from its catalog row (none for a paper the catalog lacks)."""
    return [measurements(w) for w in find_papers_works(get_catalog(catalog_dir), paper_ids)]


def signing_key(ledger_dir: LedgerDir) -> pith_receipts.PithSigningKey:
    """The ledger's active key, to sign Pith records with; an error when the ledger has none."""
    key = receipts.active_key(ledger_dir)
    if key is None:
        raise ConfigError(f"ledger {ledger_dir} has no signing key: run `citeledger keys init` first")
    return pith_receipts.PithSigningKey(key.key_id, key.private)


def signed(record: dict[str, Any], key: pith_receipts.PithSigningKey | None) -> dict[str, Any]:
    """``record`` with a Pith receipt over its context digest (none without a key)."""
    if key is None:
        return record
    receipt = pith_receipts.sign_citation_record(record, key, receipts.utc_now(), BUILDER)
    return dict(record, receipt=receipt)


def pith_bytes(record: Mapping[str, Any]) -> bytes:
    """The file bytes of a Pith record: its RFC 8785 bytes and a newline."""
    return jcs(record) + b"\n"


def pith_of(v2: Mapping[str, Any], ledger_dir: LedgerDir, catalog_dir: CatalogDir,
            key: pith_receipts.PithSigningKey | None = None) -> dict[str, Any]:
    """One paper's Pith record from its v2 record, as ``write_pith_records`` writes it."""
    found = paper_measurements([str(v2["paper"]["id"])], catalog_dir)[0]
    return signed(to_pith(v2, paper_pages(ledger_dir, catalog_dir), found), key)


PITH_PER_WRITE = 100  # Pith records held in memory and published with one disk sync


def write_pith_records(paper_ids: Sequence[str], ledger_dir: LedgerDir, catalog_dir: CatalogDir,
                       key: pith_receipts.PithSigningKey | None = None) -> list[Path]:
    """The Pith records of ``paper_ids`` (ledger paper ids) under ``<ledger>/records/pith/``, under
    the ledger's writer lock, ``PITH_PER_WRITE`` at a time."""
    page_of = paper_pages(ledger_dir, catalog_dir)
    counts = paper_measurements(paper_ids, catalog_dir)
    held_before = locking.holds_ledger(ledger_dir)
    locking.acquire_ledger(ledger_dir)
    try:
        written: list[Path] = []
        batch: list[tuple[str, bytes]] = []
        for paper_id, v2, found in zip(paper_ids, citation_records(paper_ids, ledger_dir, catalog_dir), counts):
            batch.append((record_file_stem(paper_id), pith_bytes(signed(to_pith(v2, page_of, found), key))))
            if len(batch) == PITH_PER_WRITE:
                written += LedgerStore(ledger_dir).write_pith_records(batch)
                batch = []
        return written + (LedgerStore(ledger_dir).write_pith_records(batch) if batch else [])
    finally:
        if not held_before:
            locking.release_ledger(ledger_dir)
