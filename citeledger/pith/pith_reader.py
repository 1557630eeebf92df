"""Pith records in: a ``pith.paper-citation-record.v1`` record or a ``pith_number_record`` -> the
paper as Pith states it, the record's facts, and rows shaped like the ledger's observation rows (the
ledger's columns, ``ledger/ledger_store.py``'s ``OBSERVATION_SCHEMA``, as far as they map, then Pith's own).

Nothing of the record is lost: ``PithRead.document`` is the whole record, which the ledger keeps
(``pith_records.document``, its RFC 8785 text) and gives back (``record ID --format pith``), and each
row keeps its observation whole (``observation_json``) beside the columns a query wants. A row keeps
Pith's observation id and digest, and says whether that digest is the observation's
(``digest_verified``); ``source`` is ``pith`` (who observed it) and ``reference_source`` is where
Pith read the reference (``arxiv_source``, ``pdf_text``). Pith's ``work_id`` lives in another id
space than the catalog's, so it is kept as ``pith:<id>``; the DOI and arXiv id are what a
comparison can join on. Pith gives no raw string, no score and no rule reason: those are null.
A member that is missing or of the wrong type is an ``InputError`` naming its path; whether the
record is what it says it is (digests, the strict schema, members that must agree) is ``check_pith``.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from citeledger.app_errors import InputError
from resolvers.jcs import jcs

from . import consistency
from .digests import canonical_sha256, context_digest, observation_digest
from .export_parts import arxiv_parts
from .schema import RecordKind, record_kind, schema_errors
from .states import citeledger_reason, citeledger_state

SOURCE = "pith"
LEDGER_COLUMNS = ("observation_id", "observation_digest", "run_id", "observed_at", "citing_paper", "reference_index",
                  "raw", "source", "status", "reason", "resolver_source", "work_id", "doi", "arxiv_id",
                  "extracted_dois", "extracted_arxiv_ids", "score", "evidence")
PITH_COLUMNS = ("direction", "pith_status", "state_mapping", "digest_verified", "reference_source", "cited_title",
                "notice_state", "notice_reason", "record_digest", "source_observed_at", "citing_title",
                "citing_version", "cited_paper", "notice_sources", "notice_observed_at", "stored_as",
                "observation_json")


@dataclass
class PithRead:
    """What one Pith record states: its kind, the digest it states and whether its content gives
    it, the paper, its observations as ledger-shaped rows, and the whole record (``document``),
    known by the SHA-256 of its RFC 8785 bytes (``stored_as``: two records differing in any byte of
    their content, ``as_of`` included, are two records)."""

    kind: RecordKind
    digest: str
    digest_verified: bool
    paper: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)
    document: dict[str, Any] = field(default_factory=dict)
    stored_as: str = ""


def stored_name(record: Mapping[str, Any]) -> str:
    """The hex SHA-256 of a record's RFC 8785 bytes: the name the ledger keeps it under."""
    return hashlib.sha256(jcs(record)).hexdigest()


def check_pith(record: Any) -> list[str]:
    """Why a Pith record is not what it says it is, one line each (empty: it is): a citation
    record's shape against the strict schema (without a ``receipt``, which sits beside the content
    it signs), then, for either kind, every inconsistency ``consistency.problems`` finds."""
    kind = record_kind(record)
    found = []
    if kind is RecordKind.PITH_CITATION_RECORD:
        found = [f"schema: {e}" for e in schema_errors({k: v for k, v in record.items() if k != "receipt"})]
    return found + consistency.problems(record)


def _get(obj: Any, path: str, kinds: tuple[type, ...], *, nullable: bool = False) -> Any:
    """``obj``'s member at dotted ``path``, of one of ``kinds`` (or null when ``nullable``)."""
    value = obj
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            raise InputError(f"{path}: missing")
        value = value[part]
    if value is None and nullable:
        return None
    if not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds:
        raise InputError(f"{path}: expected {' or '.join(k.__name__ for k in kinds)}, got {type(value).__name__}")
    return value


def _object(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``obj[key]`` when it is an object, {} when it is absent or null; any other type is an error."""
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"{key}: expected dict, got {type(value).__name__}")
    return value


def _row(obs: Mapping[str, Any], direction: str, record_digest: str, stored_as: str) -> dict[str, Any]:
    status = _get(obs, "resolution.status", (str,))
    state, mapping = citeledger_state(status)
    work = _get(obs, "citation.cited_work", (dict,))
    cited_paper = _get(obs, "citation.cited_paper", (dict,), nullable=True) or {}
    citing = _get(obs, "citation.citing_paper", (dict,))
    notice = _get(obs, "standing_notice", (dict,))
    receipts = [r for r in notice.get("source_receipts") or [] if isinstance(r, Mapping)]
    times = [str(r["observed_at"]) for r in receipts if r.get("observed_at")]
    work_id = work.get("work_id")
    return {
        "observation_id": _get(obs, "observation_id", (str,)),
        "observation_digest": _get(obs, "observation_digest", (str,)),
        "run_id": f"{SOURCE}:{record_digest}",
        "observed_at": _get(obs, "resolution.observed_at", (str,), nullable=True),
        "citing_paper": _get(obs, "citation.citing_paper.arxiv_id", (str,), nullable=True),
        "reference_index": _get(obs, "citation.reference_index", (int,)),
        "raw": None, "source": SOURCE, "status": state, "reason": None,
        "resolver_source": _get(obs, "resolution.resolver_source", (str,), nullable=True),
        "work_id": f"{SOURCE}:{work_id}" if work_id else None,
        "doi": str(work["doi"]).lower() if work.get("doi") else None,
        "arxiv_id": work.get("arxiv_id") or work.get("pith_arxiv_id") or cited_paper.get("arxiv_id"),
        "extracted_dois": None, "extracted_arxiv_ids": None, "score": None,
        "evidence": json.dumps({"pith": {"cited_work": work, "cited_paper": cited_paper or None,
                                         "standing_notice": notice}}, sort_keys=True),
        "direction": direction, "pith_status": status, "state_mapping": mapping.value,
        "digest_verified": observation_digest(obs) == obs.get("observation_digest"),
        "reference_source": _get(obs, "citation.source", (str,)), "cited_title": work.get("title"),
        "notice_state": notice.get("state"), "notice_reason": citeledger_reason(notice.get("reason")),
        "record_digest": record_digest,
        "source_observed_at": _get(obs, "citation.source_observed_at", (str,), nullable=True),
        "citing_title": citing.get("title"), "citing_version": citing.get("version"),
        "cited_paper": cited_paper.get("arxiv_id"),
        "notice_sources": [str(r.get("source")) for r in receipts], "notice_observed_at": max(times, default=None),
        "stored_as": stored_as, "observation_json": jcs(obs).decode("utf-8"),
    }


def read_citation_record(record: Mapping[str, Any]) -> PithRead:
    """A ``pith.paper-citation-record.v1`` record: its paper and every observation, outbound then
    inbound, in the record's order."""
    stated = _get(record, "context_digest", (str,))
    stored_as = stored_name(record)
    rows = []
    for direction in ("outbound", "inbound"):
        for n, obs in enumerate(_get(record, direction, (list,))):
            try:
                rows.append(_row(obs, direction, stated, stored_as))
            except InputError as exc:
                raise InputError(f"{direction}[{n}].{exc}") from None
    paper = dict(_get(record, "paper", (dict,)), as_of=record.get("as_of"))
    return PithRead(RecordKind.PITH_CITATION_RECORD, stated, context_digest(record) == stated, paper, rows,
                    dict(record), stored_as)


def read_number_record(record: Mapping[str, Any]) -> PithRead:
    """A ``pith_number_record``: the paper it numbers. Its graph snapshot lists reference counts,
    not observations, so it gives no rows."""
    canonical = _get(record, "canonical_record", (dict,))
    stated = _get(record, "canonical_sha256", (str,))
    paper = _get(record, "paper", (dict,))
    source = _get(record, "source", (dict,))
    facts = {
        "pith_number": record.get("pith_number"), "canonical_sha256": stated,
        "arxiv_id": source.get("id") if source.get("kind") == "arxiv" else None, "version": source.get("version"),
        "title": paper.get("title"), "primary_category": paper.get("primary_cat"),
        "cross_categories": paper.get("cross_cats"), "submitted_at": paper.get("submitted_at"),
        "license": paper.get("license"), "key_id": _object(record, "receipt").get("key_id"),
        "references": _object(_object(record, "graph_snapshot"), "references").get("count"),
        "short_pith_number": record.get("short_pith_number"),
        "as_of": record.get("updated_at") or record.get("created_at"),
    }
    return PithRead(RecordKind.PITH_NUMBER_RECORD, stated, canonical_sha256(canonical) == stated, facts, [],
                    dict(record), stored_name(record))


def read_pith(record: Any) -> PithRead:
    """Either kind of Pith record; anything else is an ``InputError`` saying what it is."""
    kind = record_kind(record)
    if kind is RecordKind.PITH_CITATION_RECORD:
        return read_citation_record(record)
    if kind is RecordKind.PITH_NUMBER_RECORD:
        return read_number_record(record)
    raise InputError(f"schema: not a Pith record ({kind.value}); expected pith.paper-citation-record.v1 "
                     "or a pith_number_record")


def pair_rows(ours: Sequence[Mapping[str, Any]], theirs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """citeledger's rows and Pith's side by side, by citing paper (arXiv id without version, or the id
    as given) and reference index. Pith and citeledger may number a bibliography differently, so a
    pair also says whether the cited works agree (same DOI or arXiv id where both name one)."""
    def key(row: Mapping[str, Any]) -> tuple[str, int]:
        paper = str(row.get("citing_paper") or "")
        return (arxiv_parts(paper)[0] or paper, int(row.get("reference_index") or 0))

    left = {key(r): r for r in ours}
    right = {key(r): r for r in theirs}
    pairs = []
    for k in sorted(left.keys() | right.keys()):
        a, b = left.get(k), right.get(k)
        same_work = None
        if a and b:
            shared = [f for f in ("doi", "arxiv_id") if a.get(f) and b.get(f)]
            same_work = all(str(a[f]).lower() == str(b[f]).lower() for f in shared) if shared else None
        pairs.append({"citing_paper": k[0], "reference_index": k[1], "ours": a, "theirs": b,
                      "same_state": (a.get("status") == b.get("status")) if a and b else None,
                      "same_work": same_work})
    return pairs
