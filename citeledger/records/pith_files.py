"""citeledger's records in Pith's shape (``pith.paper-citation-record.v1``): built from the v2 record
(``pith.export``) with what the ledger and catalog add (the catalog's facts of every arXiv paper the
record names, the notice of the paper's own work, its citation counts), checked against Pith's
strict schema and for consistency (``pith.consistency``: digests, counts, lanes), and written as
RFC 8785 bytes under ``<ledger>/records/pith/<stem>.json`` beside citeledger's own
``<ledger>/records/<stem>.json``.

Links are Pith's routes (``/paper/<id>``); where citeledger wrote the record and its pages is in the
``citeledger`` extension (``record_files``: this file, the v2 record, its HTML page). Signed (``--sign``),
a record carries a Pith receipt over its ``context_digest`` (``pith.pith_receipts``) as a ``receipt``
member beside the content it signs.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from citeledger.catalog.catalog_store import ParquetCatalog, dict_rows
from citeledger.engine.process_cache import get_catalog
from citeledger.ledger.ledger_store import LedgerStore, connect_views
from citeledger.pith import consistency, export, pith_receipts, schema
from citeledger.pith.export_parts import arxiv_parts, paper_facts
from citeledger.records import receipts
from citeledger.records.ledger_reads import ISO_Z, PASS_STATEMENTS
from citeledger.records.paper import iso_z, versions_of
from citeledger.records.record import notice_dict
from citeledger.records.record_files import citation_records, find_papers_works, record_file_stem
from citeledger.storage import locking
from citeledger.storage.places import CatalogDir, LedgerDir
from resolvers.errors import ConfigError
from resolvers.jcs import jcs

BUILDER = f"{receipts.BUILDER} (pith.paper-citation-record.v1 export)"
# caps.database_statements: the statements a batch of Pith records asks the ledger (the pass's, and
# the notices of the papers' own works), the same for one record or a hundred
STATEMENTS = PASS_STATEMENTS + 1


class Context:
    """What the Pith records of some papers take from the catalog and the ledger besides their v2
    records, looked up once for all of them: the catalog's facts of every arXiv paper they name (the
    papers themselves, those they cite, those citing them), the notices of the papers' own works,
    their citation counts, and when the catalog was built."""

    def __init__(self, v2s: Sequence[Mapping[str, Any]], ledger_dir: LedgerDir, catalog_dir: CatalogDir):
        catalog = get_catalog(catalog_dir)
        self.snapshot = iso_z(catalog.manifest.get("built_at"))
        named = sorted({a for v2 in v2s for a in _arxiv_ids(v2)})
        self.papers = {arxiv: facts for arxiv, work in zip(named, find_papers_works(catalog, named))
                       if (facts := paper_facts(work, versions_of(work), self.snapshot))}
        works = [str(((v2.get("paper") or {}).get("work") or {}).get("work_id") or "") for v2 in v2s]
        self.notices = own_notices([w for w in works if w], ledger_dir, catalog_dir)
        self.counts = paper_measurements(catalog, [str(v2["paper"]["id"]) for v2 in v2s])

    def pith(self, v2: Mapping[str, Any], n: int) -> dict[str, Any]:
        """The Pith record of the ``n``-th v2 record, checked (``to_pith``)."""
        work_id = ((v2.get("paper") or {}).get("work") or {}).get("work_id")
        return to_pith(v2, self.papers, self.notices.get(str(work_id)), self.snapshot, self.counts[n])


def _arxiv_ids(v2: Mapping[str, Any]) -> set[str]:
    ids = {(i.get("resolved") or {}).get("arxiv_id") for i in (v2.get("outbound") or {}).get("items") or []}
    ids |= {arxiv_parts(str(i.get("citing_paper")))[0] for i in (v2.get("inbound") or {}).get("items") or []}
    return {i for i in ids if i}


def own_notices(work_ids: Sequence[str], ledger_dir: LedgerDir, catalog_dir: CatalogDir) -> dict[str, dict]:
    """The ledger's latest notice of each of these works, as a v2 record writes a notice."""
    if not work_ids:
        return {}
    con = connect_views(ledger_dir, catalog_dir)
    try:
        con.execute(f"SELECT * REPLACE ({ISO_Z.format('checked_at')} AS checked_at) FROM notices "
                    "WHERE work_id IN (SELECT unnest(?))", [sorted(set(work_ids))])
        rows = dict_rows(con)
    finally:
        con.close()
    return {str(r["work_id"]): notice_dict(r, linked=True, source_times={}) for r in rows}


def to_pith(v2: Mapping[str, Any], papers: Mapping[str, Any], own_notice: Mapping[str, Any] | None,
            snapshot: str | None, measurements: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The Pith record of a v2 record, checked against Pith's schema (``jsonschema.ValidationError``)
    and for consistency (``ValueError`` naming each problem)."""
    stem = record_file_stem(str(v2["paper"]["id"]))
    files = {"json": f"{stem}.json", "record": f"../{stem}.json", "html": f"../{stem}.html"}
    record = export.to_pith_record(v2, measurements=measurements, papers=papers, own_notice=own_notice,
                                   snapshot=snapshot, files=files, statements=STATEMENTS)
    schema.validate(record)
    problems = consistency.problems(record)
    if problems:
        raise ValueError(f"the Pith record of {v2['paper']['id']} is not consistent: {'; '.join(problems)}")
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


def paper_measurements(catalog: ParquetCatalog, paper_ids: Sequence[str]) -> list[list[dict[str, Any]]]:
    """``measurements`` of each paper, from its catalog row (none for a paper the catalog lacks)."""
    return [measurements(w) for w in find_papers_works(catalog, paper_ids)]


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
    return signed(Context([v2], ledger_dir, catalog_dir).pith(v2, 0), key)


PITH_PER_WRITE = 100  # Pith records held in memory and published with one disk sync


def write_pith_records(paper_ids: Sequence[str], ledger_dir: LedgerDir, catalog_dir: CatalogDir,
                       key: pith_receipts.PithSigningKey | None = None) -> list[Path]:
    """The Pith records of ``paper_ids`` (ledger paper ids) under ``<ledger>/records/pith/``, under
    the ledger's writer lock, ``PITH_PER_WRITE`` at a time (their catalog facts and notices looked
    up once a batch)."""
    held_before = locking.holds_ledger(ledger_dir)
    locking.acquire_ledger(ledger_dir)
    try:
        written: list[Path] = []
        v2s = citation_records(paper_ids, ledger_dir, catalog_dir)
        for start in range(0, len(paper_ids), PITH_PER_WRITE):
            batch = [next(v2s) for _ in paper_ids[start:start + PITH_PER_WRITE]]
            context = Context(batch, ledger_dir, catalog_dir)
            files = [(record_file_stem(str(v2["paper"]["id"])), pith_bytes(signed(context.pith(v2, n), key)))
                     for n, v2 in enumerate(batch)]
            written += LedgerStore(ledger_dir).write_pith_records(files)
        return written
    finally:
        if not held_before:
            locking.release_ledger(ledger_dir)
