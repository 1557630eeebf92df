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

from citeledger.pith import export, schema
from citeledger.pith import receipts as pith_receipts
from citeledger.pith.export_parts import arxiv_parts, default_page
from citeledger.records import receipts
from citeledger.records.files import citation_record, citation_records, record_file_stem
from citeledger.records.ledger_reads import citing_papers
from citeledger.storage import locking
from citeledger.storage.atomic import atomic_write_files
from resolvers.errors import ConfigError
from resolvers.jcs import jcs

PITH_FOLDER = "pith"
BUILDER = f"{receipts.BUILDER} (pith.paper-citation-record.v1 export)"


def paper_pages(ledger_dir: str | Path, catalog_dir: str | Path) -> Callable[[str], str]:
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


def signing_key(ledger_dir: str | Path) -> pith_receipts.PithSigningKey:
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


def pith_record(paper_id: str, ledger_dir: str | Path, catalog_dir: str | Path, page_cap: int | None = None,
                key: pith_receipts.PithSigningKey | None = None) -> dict[str, Any]:
    """One paper's Pith record (``paper_id``: any alias), as ``write_pith_records`` writes it."""
    v2 = citation_record(paper_id, ledger_dir, catalog_dir, page_cap=page_cap)
    return signed(to_pith(v2, paper_pages(ledger_dir, catalog_dir)), key)


def write_pith_records(paper_ids: Sequence[str], ledger_dir: str | Path, catalog_dir: str | Path,
                       key: pith_receipts.PithSigningKey | None = None) -> list[Path]:
    """The Pith records of ``paper_ids`` (ledger paper ids) under ``<ledger>/records/pith/``."""
    folder = Path(ledger_dir) / "records" / PITH_FOLDER
    page_of = paper_pages(ledger_dir, catalog_dir)
    files = []
    for paper_id, v2 in zip(paper_ids, citation_records(paper_ids, ledger_dir, catalog_dir)):
        record = signed(to_pith(v2, page_of), key)
        files.append((folder / f"{record_file_stem(paper_id)}.json", pith_bytes(record)))
    held_before = locking.holds_ledger(ledger_dir)
    locking.acquire_ledger(ledger_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_files(files)
    finally:
        if not held_before:
            locking.release_ledger(ledger_dir)
    return [Path(f) for f, _ in files]
