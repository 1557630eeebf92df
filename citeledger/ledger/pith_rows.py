"""Pith's records in the ledger: ``import-pith`` writes the observations a Pith record states as rows
of the ``pith_observations`` view (``<ledger>/pith/``, one file per record, named by its digest), and
``compare`` sets them beside citeledger's ``current`` observations of the same paper.

Pith's rows are kept apart from ``observations`` on purpose: ``current`` is citeledger's own latest
verdict per reference, and a record read from elsewhere must never take its place there.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Sequence

import pyarrow as pa

from citeledger.catalog.store import dict_rows
from citeledger.ledger.store import PITH_OBSERVATION_SCHEMA, LedgerStore, connect_views, require_ledger
from citeledger.pith.export_parts import arxiv_parts
from citeledger.pith.reader import PithRead, load_pith_file, pair_rows
from citeledger.pith.schema import RecordKind
from citeledger.storage import locking
from citeledger.storage.places import LedgerDir
from resolvers.errors import InputError, NotFound


@dataclass
class PithImport:
    """One file read: what kind of Pith record, its digest, whether its content gives that digest,
    how many rows it gave and where they went (None: a number record, which states no observations)."""

    file: str
    kind: RecordKind
    digest: str
    digest_verified: bool
    paper: str | None
    rows: int
    written: Path | None = None


def _timestamp(value: Any, where: str) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        raise InputError(f"{where}: observed_at {value!r} is not an ISO 8601 time") from None


def pith_table(read: PithRead, file: str, imported_at: datetime) -> pa.Table:
    """The rows of one record with their origin, in ``PITH_OBSERVATION_SCHEMA``."""
    rows = []
    for n, row in enumerate(read.rows):
        where = f"{file}: {row['direction']} observation {n + 1}"
        rows.append({**row, "observed_at": _timestamp(row["observed_at"], where),
                     "record_digest_verified": read.digest_verified, "imported_from": file,
                     "imported_at": imported_at})
    return pa.Table.from_pylist(rows, schema=PITH_OBSERVATION_SCHEMA)


def import_pith(files: Sequence[Path], ledger_dir: LedgerDir, imported_at: datetime) -> list[PithImport]:
    """Read every file first (one bad file: an error naming it, and nothing written), then write each
    citation record's rows under the ledger's writer lock."""
    reads = [(str(path), load_pith_file(path)) for path in files]
    tables = [(file, read, pith_table(read, file, imported_at) if read.rows else None) for file, read in reads]
    store = LedgerStore(ledger_dir)
    locking.acquire_ledger(ledger_dir)
    try:
        out = []
        for file, read, table in tables:
            digest = read.digest.removeprefix("sha256:")
            written = store.write_pith_rows(digest, table) if table is not None else None
            paper = read.paper.get("arxiv_id")
            out.append(PithImport(file, read.kind, read.digest, read.digest_verified, paper, len(read.rows), written))
        return out
    finally:
        locking.release_ledger(ledger_dir)


# --- comparing ------------------------------------------------------------------------------

OURS_SQL = """SELECT citing_paper, reference_index, raw, status, reason, work_id, doi, arxiv_id, observation_id
FROM current WHERE contains(lower(citing_paper), lower(?)) ORDER BY reference_index"""
# Pith's latest statement of each reference of the paper (a record imported again, or re-dated, is
# one statement: the newest import wins).
THEIRS_SQL = """SELECT * EXCLUDE (rn) FROM (
  SELECT citing_paper, reference_index, status, pith_status, resolver_source, work_id, doi, arxiv_id, cited_title,
         notice_state, notice_reason, digest_verified, record_digest_verified, record_digest, observation_id,
         row_number() OVER (PARTITION BY reference_index ORDER BY imported_at DESC, observed_at DESC) AS rn
  FROM pith_observations WHERE direction = 'outbound' AND citing_paper = ?) WHERE rn = 1 ORDER BY reference_index"""


def paper_key(paper_id: str) -> str:
    """The paper as both sides name it: an arXiv id without prefix or version, else the id."""
    return arxiv_parts(paper_id)[0] or paper_id.strip()


def compare(paper_id: str, ledger_dir: LedgerDir) -> dict[str, Any]:
    """citeledger's current observations of a paper and Pith's, paired by reference index, with the
    counts of state pairs; a paper neither side knows is ``NotFound``."""
    require_ledger(ledger_dir)
    key = paper_key(paper_id)
    con = connect_views(ledger_dir, None)
    try:
        con.execute(OURS_SQL, [key])
        ours = [r for r in dict_rows(con) if paper_key(str(r["citing_paper"])) == key]
        con.execute(THEIRS_SQL, [key])
        theirs = dict_rows(con)
    finally:
        con.close()
    if not ours and not theirs:
        raise NotFound(f"the ledger {ledger_dir} has no observation of the paper {paper_id!r}, neither "
                       "citeledger's nor Pith's (`citeledger import-pith FILE` reads Pith's)")
    pairs = pair_rows(ours, theirs)
    state_pairs = Counter(f"{_status(p['ours'])} / {_status(p['theirs'])}" for p in pairs)
    return {"paper": key, "references": len(pairs), "citeledger": len(ours), "pith": len(theirs),
            "both": sum(1 for p in pairs if p["ours"] and p["theirs"]),
            "same_state": sum(1 for p in pairs if p["same_state"]),
            "state_pairs": dict(sorted(state_pairs.items())), "pairs": pairs}


def _status(row: Any) -> str:
    return str(row.get("status") or row.get("pith_status")) if row else "-"
