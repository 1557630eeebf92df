"""Pith's records in the ledger: ``import-pith`` keeps each Pith record whole (``pith_records``, one
row per record with its RFC 8785 text) and the observations it states as rows of the
``pith_observations`` view (``<ledger>/pith/``), and ``compare`` sets them beside citeledger's
``current`` observations of the same paper.

Quarantine, never replace: a record is kept under the SHA-256 of its own RFC 8785 bytes, computed
here (``pith.pith_reader.stored_name``), never under a name or digest the file states. A file is kept
only when it is what it says it is (``pith.pith_reader.check_pith``: its digests recomputed, the strict
schema, every member that must agree with another; with ``--pith-key``, its receipt verified); any
other file, hostile ones included (not a regular file, too large, not I-JSON: ``storage.json_documents``)
is a reject row naming the file and the fault, and nothing of it is written. So a forged copy of a
record never touches the genuine one, and two genuine records of one paper are both kept: the one
of the later ``as_of`` is the paper's current one (``current_record``).

Pith's rows are kept apart from ``observations`` on purpose: ``current`` is citeledger's own latest
verdict per reference, and a record read from elsewhere must never take its place there.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import pyarrow as pa

from citeledger.app_errors import InputError, NotFound
from citeledger.catalog.catalog_store import dict_rows
from citeledger.ledger.ledger_store import PITH_OBSERVATION_SCHEMA, PITH_RECORD_SCHEMA, LedgerStore, connect_views
from citeledger.ledger.views import require_ledger
from citeledger.pith import pith_receipts
from citeledger.pith.export_parts import arxiv_parts
from citeledger.pith.pith_reader import PithRead, check_pith, pair_rows, read_pith
from citeledger.pith.schema import RecordKind
from citeledger.storage import locking
from citeledger.storage.json_documents import read_document
from citeledger.storage.places import LedgerDir
from resolvers.errors import CiteledgerError
from resolvers.jcs import jcs


@dataclass
class PithImport:
    """One file read: what kind of Pith record, the digest it states (recomputed and found equal),
    the paper, how many rows it gave and where the record was kept; or (``fault``) why it was not
    imported, with nothing of it written."""

    file: str
    kind: RecordKind | None
    digest: str | None
    paper: str | None
    rows: int
    written: Path | None = None
    fault: str | None = None
    field: str | None = None


def read_pith_file(path: Path, key: pith_receipts.TrustedKey | None = None) -> PithRead:
    """A Pith record file that is what it says it is; otherwise an ``InputError`` naming the file and
    the first fault (its other faults after it)."""
    try:
        document = read_document(path)
    except ValueError as exc:
        raise InputError(str(exc) if str(exc).startswith(f"{path}: ") else f"{path}: {exc}") from None
    try:
        read = read_pith(document)
        faults = check_pith(document) + receipt_faults(document, read.kind, key)
    except CiteledgerError as exc:  # a member missing or of the wrong type; a value no digest holds (2**70)
        raise InputError(f"{path}: {exc}") from None
    if faults:
        more = f" (and {len(faults) - 1} more: {'; '.join(faults[1:4])})" if len(faults) > 1 else ""
        raise InputError(f"{path}: {faults[0]}{more}")
    return read


def receipt_faults(document: dict[str, Any], kind: RecordKind, key: pith_receipts.TrustedKey | None) -> list[str]:
    """With a trusted key, why a record's receipt does not hold (a record without one: none)."""
    if key is None or "receipt" not in document:
        return []
    if kind is RecordKind.PITH_NUMBER_RECORD:
        failures = pith_receipts.verify_number_record(document, key)
    else:
        body = {k: v for k, v in document.items() if k != "receipt"}
        failures = pith_receipts.verify_citation_record(body, document["receipt"], key)
    return [f"receipt: {f.value}" for f in failures]


def _timestamp(value: Any) -> datetime | None:
    try:
        stamp = datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None
    except ValueError:
        return None
    return stamp.astimezone(timezone.utc) if stamp and stamp.tzinfo else stamp


def pith_table(read: PithRead, file: str, imported_at: datetime) -> pa.Table:
    """The rows of one record with their origin, in ``PITH_OBSERVATION_SCHEMA``."""
    rows = []
    for n, row in enumerate(read.rows):
        observed = _timestamp(row["observed_at"])
        if row["observed_at"] is not None and observed is None:
            raise InputError(f"{file}: {row['direction']} observation {n + 1}: observed_at {row['observed_at']!r} "
                             "is not an ISO 8601 time")
        rows.append({**row, "observed_at": observed, "record_digest_verified": read.digest_verified,
                     "imported_from": file, "imported_at": imported_at})
    return pa.Table.from_pylist(rows, schema=PITH_OBSERVATION_SCHEMA)


def record_table(read: PithRead, file: str, imported_at: datetime, key: pith_receipts.TrustedKey | None) -> pa.Table:
    """The one ``pith_records`` row of a record: what it is, of which paper, and the record whole."""
    doc = read.document
    receipt = doc.get("receipt") if isinstance(doc.get("receipt"), dict) else None
    as_of = read.paper.get("as_of")
    row = {
        "stored_as": read.stored_as, "kind": read.kind.value, "record_digest": read.digest,
        "arxiv_id": read.paper.get("arxiv_id"), "pith_number": read.paper.get("pith_number"),
        "short_pith_number": read.paper.get("short_pith_number"), "title": read.paper.get("title"),
        "as_of": as_of, "as_of_at": _timestamp(as_of),
        "outbound": sum(r["direction"] == "outbound" for r in read.rows),
        "inbound": sum(r["direction"] == "inbound" for r in read.rows),
        "signed": receipt is not None, "receipt_key_id": (receipt or {}).get("key_id"),
        "receipt_verified": (receipt is not None) if key is not None else None,
        "imported_from": file, "imported_at": imported_at, "document": jcs(doc).decode("utf-8"),
    }
    return pa.Table.from_pylist([row], schema=PITH_RECORD_SCHEMA)


def _fault_field(message: str, file: str) -> tuple[str, str | None]:
    """A fault's text without the file's name, and the member it names (``outbound[3].resolution.status``)."""
    text = message.removeprefix(f"{file}: ")
    head = text.split(": ", 1)[0]
    member = head if head and " " not in head and head not in ("schema", "inconsistent") else None
    return text, member


def import_pith(files: Sequence[Path], ledger_dir: LedgerDir, imported_at: datetime,
                key: pith_receipts.TrustedKey | None = None) -> list[PithImport]:
    """Each file read and checked on its own: a genuine record kept (``LedgerStore.write_pith_record``),
    any other file a reject row (``rejects``, run id ``pith-import-<time>``) and nothing else. One
    file's fault never stops the others."""
    done: list[PithImport] = []
    kept: list[tuple[str, PithRead, pa.Table, pa.Table]] = []
    for path in files:
        file = str(path)
        try:
            read = read_pith_file(path, key)
            kept.append((file, read, pith_table(read, file, imported_at), record_table(read, file, imported_at, key)))
        except InputError as exc:
            fault, member = _fault_field(str(exc), file)
            done.append(PithImport(file, None, None, None, 0, fault=fault, field=member))
    store = LedgerStore(ledger_dir)
    locking.acquire_ledger(ledger_dir)
    try:
        for file, read, rows, record in kept:
            written = store.write_pith_record(read.stored_as, record, rows)
            done.append(PithImport(file, read.kind, read.digest, read.paper.get("arxiv_id"), len(read.rows), written))
        rejects = [{"run_id": import_id(imported_at), "file": d.file, "line": None, "field": d.field,
                    "reason": d.fault, "excerpt": None} for d in done if d.fault]
        store.write_rejects(import_id(imported_at), "pith", rejects)
    finally:
        locking.release_ledger(ledger_dir)
    order = {str(p): n for n, p in enumerate(files)}
    return sorted(done, key=lambda d: order.get(d.file, 0))


def import_id(imported_at: datetime) -> str:
    """The id an import's reject rows carry: ``pith-import-`` and its UTC time to the microsecond."""
    return "pith-import-" + imported_at.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")


# --- the current record of a paper ------------------------------------------------------------

CURRENT_RECORD_SQL = """SELECT stored_as, kind, arxiv_id, pith_number, short_pith_number, as_of, document
FROM pith_records WHERE arxiv_id = ? AND kind IN ({kinds})
ORDER BY kind = 'pith.paper-citation-record.v1' DESC, as_of_at DESC NULLS LAST, imported_at DESC, stored_as LIMIT 1"""
NUMBER_SQL = """SELECT DISTINCT arxiv_id FROM pith_records
WHERE kind = 'pith_number_record' AND (pith_number = ? OR short_pith_number = ? OR pith_number LIKE ?)"""


def current_record(paper_id: str, ledger_dir: LedgerDir,
                   kinds: Sequence[RecordKind] = tuple(RecordKind)) -> dict[str, Any] | None:
    """The ``pith_records`` row of the paper's current Pith record, or None when none was imported:
    of its citation records the one of the latest ``as_of`` (then the latest imported), else its
    number record."""
    if require_ledger(ledger_dir) and not (Path(ledger_dir) / "pith_records").is_dir():
        return None
    con = connect_views(ledger_dir, None)
    try:
        names = ", ".join(f"'{k.value}'" for k in kinds)
        con.execute(CURRENT_RECORD_SQL.format(kinds=names), [paper_key(paper_id)])
        rows = dict_rows(con)
    finally:
        con.close()
    return rows[0] if rows else None


def paper_of_pith_number(number: str, ledger_dir: LedgerDir) -> str:
    """The arXiv id of the paper an imported number record numbers: ``pith:2025:UHAX...`` in full,
    its short form ``pith:UHAXZSIE``, or a longer prefix of the code; ``NotFound`` otherwise."""
    text = number.strip()
    code = text.split(":")[-1].upper()
    if not code:
        raise NotFound(f"{number!r} is not a pith number (pith:YEAR:CODE or pith:CODE)")
    hits: list[str] = []
    if (Path(ledger_dir) / "pith_records").is_dir():
        con = connect_views(ledger_dir, None)
        try:
            con.execute(NUMBER_SQL, [text, f"pith:{code}", f"pith:%:{code}%"])
            hits = [str(r["arxiv_id"]) for r in dict_rows(con) if r["arxiv_id"]]
        finally:
            con.close()
    if not hits:
        raise NotFound(f"the ledger {ledger_dir} holds no Pith number record numbered {number!r} "
                       "(`citeledger import-pith FILE` reads one)")
    if len(hits) > 1:
        raise NotFound(f"{number!r} names several papers in the ledger ({', '.join(sorted(hits))}): give more of it")
    return hits[0]


# --- comparing ------------------------------------------------------------------------------

OURS_SQL = """SELECT citing_paper, reference_index, raw, status, reason, work_id, doi, arxiv_id, observation_id
FROM current WHERE contains(lower(citing_paper), lower(?)) ORDER BY reference_index"""
# citeledger's references of other papers resolved to this paper's work
OURS_INBOUND_SQL = """SELECT citing_paper, reference_index, raw, status, reason, work_id, doi, arxiv_id, observation_id
FROM current WHERE (arxiv_id = ? OR work_id = 'arxiv:' || ? OR doi = '10.48550/arxiv.' || lower(?))
ORDER BY citing_paper, reference_index"""
# Pith's observations in the paper's current record (``current_record``), one direction
THEIRS_SQL = """SELECT citing_paper, reference_index, status, pith_status, resolver_source, work_id, doi, arxiv_id,
       cited_title, notice_state, notice_reason, digest_verified, record_digest_verified, record_digest, observation_id
FROM pith_observations WHERE stored_as = ? AND direction = ? ORDER BY citing_paper, reference_index"""


def paper_key(paper_id: str) -> str:
    """The paper as both sides name it: an arXiv id without prefix or version, else the id."""
    return arxiv_parts(paper_id)[0] or paper_id.strip()


def _side(pairs: list[dict[str, Any]], ours: list[dict], theirs: list[dict]) -> dict[str, Any]:
    state_pairs = Counter(f"{_status(p['ours'])} / {_status(p['theirs'])}" for p in pairs)
    return {"references": len(pairs), "citeledger": len(ours), "pith": len(theirs),
            "both": sum(1 for p in pairs if p["ours"] and p["theirs"]),
            "same_state": sum(1 for p in pairs if p["same_state"]),
            "state_pairs": dict(sorted(state_pairs.items())), "pairs": pairs}


def compare(paper_id: str, ledger_dir: LedgerDir) -> dict[str, Any]:
    """citeledger's current observations of a paper and those of Pith's current record of it,
    outbound (its references, paired by reference index) and inbound (references of other papers
    to it, paired by citing paper and index), with the counts of state pairs; a paper neither side
    knows is ``NotFound``."""
    require_ledger(ledger_dir)
    key = paper_key(paper_id)
    record = current_record(key, ledger_dir, (RecordKind.PITH_CITATION_RECORD,))
    con = connect_views(ledger_dir, None)
    try:
        con.execute(OURS_SQL, [key])
        ours = [r for r in dict_rows(con) if paper_key(str(r["citing_paper"])) == key]
        con.execute(OURS_INBOUND_SQL, [key, key, key])
        ours_in = [r for r in dict_rows(con) if paper_key(str(r["citing_paper"])) != key]
        theirs: list[dict[str, Any]] = []
        theirs_in: list[dict[str, Any]] = []
        if record is not None:
            con.execute(THEIRS_SQL, [record["stored_as"], "outbound"])
            theirs = dict_rows(con)
            con.execute(THEIRS_SQL, [record["stored_as"], "inbound"])
            theirs_in = dict_rows(con)
    finally:
        con.close()
    if not ours and not theirs and not ours_in and not theirs_in:
        raise NotFound(f"the ledger {ledger_dir} has no observation of the paper {paper_id!r}, neither "
                       "citeledger's nor Pith's (`citeledger import-pith FILE` reads Pith's)")
    outbound = _side(pair_rows(ours, theirs), ours, theirs)
    inbound = _side(pair_rows(ours_in, theirs_in), ours_in, theirs_in)
    pith_record = {k: record[k] for k in ("stored_as", "kind", "as_of")} if record else None
    return {"paper": key, "pith_record": pith_record, **outbound, "inbound": inbound}


def _status(row: Any) -> str:
    return str(row.get("status") or row.get("pith_status")) if row else "-"
