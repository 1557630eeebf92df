"""The citation record of one paper: what it cites, how sure each link is, whether each cited work
still stands, and who cites it. As JSON (schema v2, ``citeledger.paper-citation-record.v2``; v1
records, ``pith.paper-citation-record.v1``, stay readable and checkable) and as a page.

Pure functions over plain rows (dicts with the ledger's observation columns), so the ledger code
can feed them straight from DuckDB and tests can feed them by hand. Nothing here reads the wall
clock: every time in a record comes from its inputs, so the same inputs give the same digest.
"""
from __future__ import annotations

import functools
import hashlib
import json
from datetime import date, datetime, timezone
from importlib import resources
from typing import Any, Iterable, Mapping, Sequence

from citeledger.pith import schema as pith_schema
from citeledger.records import paper as record_paper
from citeledger.records.coverage import coverage_lanes, notice_receipts
from citeledger.records.evidence import json_number, parse_evidence, plain_float  # noqa: F401 - tests take json_number from here
from resolvers.canonical import canonical_json
from resolvers.jcs import jcs_plain, jcs_sha256
from resolvers.model import STATE_ORDER, WORK_STATES, linked_count
from resolvers.notices.standing import (
    StandingNotice,
    UnavailableReason,
    notice_from_dict,
    notice_to_dict,
    unavailable_notice,
)

__all__ = [
    "RECORD_SCHEMA",
    "STATES",
    "DEFAULT_PAGE_CAP",
    "canonical_json",
    "content_digest",
    "select_rows",
    "load_schema",
    "RECORD_SCHEMA_V1",
    "validate_record",
]

RECORD_SCHEMA = "citeledger.paper-citation-record.v2"
RECORD_SCHEMA_V1 = "pith.paper-citation-record.v1"
SCHEMA_FILES = {RECORD_SCHEMA: "paper-citation-record.v2.json",
                RECORD_SCHEMA_V1: "citeledger.paper-citation-record.v1.json"}
STATES: tuple[str, ...] = tuple(s.value for s in STATE_ORDER)
STANDINGS = ("retracted", "withdrawn", "expression_of_concern", "reinstated", "corrected", "none", "unknown")
DEFAULT_PAGE_CAP = 1000
DIGEST_FIELD = "content_digest"

EMPTY_MEANS = {
    "outbound": "no reference of this paper is in the ledger's current observations",
    "inbound": "no paper in the ledger has a reference resolved to this paper's work; papers "
               "outside the ledger are not examined",
    "notice_events": "the sources checked list no notice for the work",
}


# ---------------------------------------------------------------------------------------------
# Canonical JSON and digest


_SIMPLE = frozenset({str, bool, int, type(None)})


def plain_value(value: Any) -> Any:
    """DuckDB/pyarrow/numpy values -> JSON values (times as UTC ISO strings, NaN as null; an
    integral float as the integer JCS writes anyway, so ``1.0`` reads back as what was digested)."""
    kind = type(value)
    if kind in _SIMPLE:
        return value
    if kind is dict:
        return {k if type(k) is str else str(k): v if type(v) in _SIMPLE else plain_value(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _SIMPLE else plain_value(v) for v in value]
    if kind is float:
        return plain_float(value)
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return plain_value(float(value))
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
        return value.isoformat(timespec="microseconds") + "Z"
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): plain_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain_value(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return plain_value(value.tolist())
    if hasattr(value, "value") and isinstance(value.value, str):  # enums
        return value.value
    return str(value)


def content_digest(record: Mapping[str, Any]) -> str:
    """``sha256:`` over the record without its digest (and, v2, its receipt): v2 over RFC 8785 JCS
    (``resolvers/jcs.py``), v1 over ``resolvers/canonical.py``'s strict form, as v1 was written."""
    if record.get("schema") == RECORD_SCHEMA_V1:
        body = {k: v for k, v in record.items() if k != DIGEST_FIELD}
        return "sha256:" + hashlib.sha256(canonical_json(body, strict=True).encode("utf-8")).hexdigest()
    return jcs_sha256({k: v for k, v in record.items() if k not in (DIGEST_FIELD, "receipt")})


def _built_digest(record: Mapping[str, Any]) -> str:
    """``content_digest`` of a record ``build_record`` has just made: every value in it is a JSON
    value (made by ``plain_value``, or text and counts of its own), so its JCS needs no read-back
    (``resolvers.jcs.jcs_plain``)."""
    body = {k: v for k, v in record.items() if k not in (DIGEST_FIELD, "receipt")}
    return "sha256:" + hashlib.sha256(jcs_plain(body)).hexdigest()


# ---------------------------------------------------------------------------------------------
# Choosing the rows of one paper


def id_forms(value: str | None) -> set[str]:
    """The spellings under which a paper id may appear as ``citing_paper`` (a light touch; the
    identifier module owns real normalisation)."""
    if not value:
        return set()
    v = value.strip()
    low = v.lower()
    forms = {v, low}
    for prefix in ("arxiv:", "doi:", "https://doi.org/", "http://doi.org/", "https://arxiv.org/abs/"):
        if low.startswith(prefix):
            forms.add(low[len(prefix):])
    for f in list(forms):
        head, sep, tail = f.rpartition("v")
        if sep and tail.isdigit() and head and head[-1].isdigit():
            forms.add(head)  # 1501.00001v2 -> 1501.00001
    return forms


def paper_forms(paper_id: str, paper_work: Mapping[str, Any] | None) -> set[str]:
    forms = id_forms(paper_id)
    arxiv = record_paper.arxiv_of(paper_id)
    if arxiv:
        forms |= {arxiv.lower(), "10.48550/arxiv." + arxiv.lower()}
    if paper_work:
        for key in ("doi", "arxiv_id"):
            forms |= id_forms(paper_work.get(key))
        if paper_work.get("arxiv_id"):
            forms.add("10.48550/arxiv." + str(paper_work["arxiv_id"]).lower())
    return forms


def select_rows(paper_id: str, paper_work: Mapping[str, Any] | None,
                rows: Iterable[Mapping[str, Any]]) -> tuple[list[dict], list[dict]]:
    """From current observation rows, the paper's own references (outbound) and the references
    of other papers resolved to its work (inbound)."""
    forms = paper_forms(paper_id, paper_work)
    work_id = paper_work.get("work_id") if paper_work else None
    outbound, inbound = [], []
    for row in rows:
        row = dict(row)
        mine = bool(id_forms(row.get("citing_paper")) & forms)
        if mine:
            outbound.append(row)
        elif work_id and row.get("work_id") == work_id:
            inbound.append(row)
    return outbound, inbound


def latest_per_reference(rows: Iterable[Mapping[str, Any]]) -> list[dict]:
    """Keep the latest observation of each (citing paper, reference index): callers may pass
    ``observations`` rather than ``current``."""
    best: dict[tuple[str, int], dict] = {}
    simple = _SIMPLE
    for row in rows:  # most values are plain already: plain_value is called for the others only
        r = {k: v if type(v) in simple else plain_value(v) for k, v in row.items()}
        key = (str(r.get("citing_paper")), int(r.get("reference_index") or 0))
        old = best.get(key)
        if old is None or (str(r.get("observed_at") or ""), str(r.get("observation_id") or "")) > (
            str(old.get("observed_at") or ""), str(old.get("observation_id") or "")
        ):
            best[key] = r
    return list(best.values())


# ---------------------------------------------------------------------------------------------
# Building the record


def notice_dict(notice: StandingNotice | Mapping[str, Any] | None, *, linked: bool,
                 source_times: Mapping[str, Any]) -> dict[str, Any]:
    if not linked:
        notice = unavailable_notice(UnavailableReason.NO_CANONICAL_WORK)
    elif notice is None:
        notice = unavailable_notice(UnavailableReason.NOT_CHECKED)
    elif not isinstance(notice, StandingNotice):
        notice = notice_from_dict(notice)
    out = plain_value(notice_to_dict(notice))
    out["checked_at"] = record_paper.iso_z(out["checked_at"])
    out["receipts"] = notice_receipts(out, source_times)
    return out


def evidence_value(value: Any) -> Any:
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        return parse_evidence(value)
    return plain_value(value)


_WORK_KEYS = ("work_id", "doi", "arxiv_id", "title", "authors", "year", "venue", "volume", "first_page", "pmid", "type")


def work_view(work: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not work:
        return None
    out = {k: plain_value(work.get(k)) for k in _WORK_KEYS if work.get(k) is not None}
    if "authors" in out and not isinstance(out["authors"], list):
        out["authors"] = [out["authors"]]
    return out


def resolved_entry(row: Mapping[str, Any], works: Mapping[str, Mapping[str, Any]],
              provenance: Mapping[str, Any]) -> dict[str, Any] | None:
    """The cited work as the record shows it: ids, the catalog's title etc., and which catalog
    sources gave that metadata (``metadata_source``: null when the catalog row is not at hand).
    Made once a pass per cited work and its ids when the caller keeps a
    ``provenance["resolved_cache"]``: the records of the pass share the dict, which nothing
    changes after it is built (as ``shared_notice``)."""
    work_id = row.get("work_id")
    if not work_id:
        return None
    cache = provenance.get("resolved_cache")
    if cache is None:
        return resolved_view(row, works)
    catalog_row = works.get(work_id)
    key = (work_id, row.get("doi"), row.get("arxiv_id"), id(catalog_row))
    hit = cache.get(key)
    if hit is None or hit[0] is not catalog_row:  # the cache holds the row, so its id is not reused
        hit = cache[key] = (catalog_row, resolved_view(row, works), None)  # None: its JCS, made by record_build
    return hit[1]


def resolved_view(row: Mapping[str, Any], works: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    work_id = row["work_id"]
    resolved = {"work_id": work_id, "doi": row.get("doi"), "arxiv_id": row.get("arxiv_id")}
    catalog_row = works.get(work_id)
    known = work_view(catalog_row) or {}
    for k in ("title", "authors", "year", "venue"):
        if k in known:
            resolved[k] = known[k]
    resolved["metadata_source"] = list(plain_value((catalog_row or {}).get("sources")) or []) or None
    return resolved


def outbound_entry(row: Mapping[str, Any], notices: Mapping[str, Any], works: Mapping[str, Mapping[str, Any]],
                    provenance: Mapping[str, Any]) -> dict[str, Any]:
    status = str(row.get("status"))
    work_id = row.get("work_id")
    linked = bool(work_id) and status in WORK_STATES
    fingerprint = (provenance.get("run_catalog") or {}).get(row.get("run_id"))
    return {
        "reference_index": int(row.get("reference_index") or 0),
        "observation_id": row.get("observation_id"),
        "observation_digest": row.get("observation_digest"),
        "run_id": row.get("run_id"),
        "source": row.get("source") or "unknown",
        "source_observed_at": row.get("source_observed_at") or row.get("observed_at"),
        "snapshot_fingerprint": fingerprint,
        "snapshot_observed_at": record_paper.iso_z((provenance.get("catalog_built_at") or {}).get(fingerprint)),
        "cited_as": {
            "raw": row.get("raw") or "",
            "dois": list(row.get("extracted_dois") or []),
            "arxiv_ids": list(row.get("extracted_arxiv_ids") or []),
        },
        "status": status,
        "resolved": resolved_entry(row, works, provenance),
        "resolver_source": row.get("resolver_source"),
        "resolved_at": row.get("observed_at"),
        "score": row.get("score"),
        "evidence": evidence_value(row.get("evidence")),
        "notice": reference_notice(row, work_id, linked, notices, provenance),
    }


def reference_notice(row: Mapping[str, Any], work_id: str | None, linked: bool,
                      notices: Mapping[str, Any], provenance: Mapping[str, Any]) -> dict[str, Any]:
    """The notice of the cited work; for a reference with no work, the notice of a DOI it cites
    that a notice source lists (``notice_check.cited_doi_notice_rows``), if any."""
    if not work_id:
        for doi in row.get("extracted_dois") or ():
            if f"doi:{doi}" in notices:
                return shared_notice(notices[f"doi:{doi}"], True, provenance)
    return shared_notice(notices.get(work_id) if work_id else None, linked, provenance)


def shared_notice(notice: Any, linked: bool, provenance: Mapping[str, Any]) -> dict[str, Any]:
    """``notice_dict``, made once per notice row of a pass when the caller keeps a
    ``provenance["notice_cache"]`` (a work cited by many papers has one notice; the records of
    the pass share the dict, which nothing changes after it is built)."""
    source_times = provenance.get("notice_sources") or {}
    cache = provenance.get("notice_cache")
    if cache is None:
        return notice_dict(notice, linked=linked, source_times=source_times)
    hit = cache.get((id(notice), linked))
    if hit is None or hit[0] is not notice:  # the cache holds the row, so its id is not reused
        hit = cache[(id(notice), linked)] = (notice, notice_dict(notice, linked=linked, source_times=source_times),
                                             None)  # None: its JCS, made by record_build
    return hit[1]


def paged(items: list[dict], cap: int | None) -> dict[str, Any]:
    listed = items if cap is None else items[:cap]
    return {"total": len(items), "listed": len(listed), "cap": cap, "truncated": len(listed) < len(items),
            "items": listed}


def inbound_entry(row: Mapping[str, Any], titles: Mapping[str, str]) -> dict[str, Any]:
    citing = str(row.get("citing_paper"))
    return {
        "citing_paper": citing,
        "citing_title": titles.get(citing),
        "reference_index": int(row.get("reference_index") or 0),
        "observation_id": row.get("observation_id"),
        "observation_digest": row.get("observation_digest"),
        "status": str(row.get("status")),
        "resolver_source": row.get("resolver_source"),
        "source": row.get("source") or "unknown",
        "source_observed_at": row.get("source_observed_at") or row.get("observed_at"),
        "resolved_at": row.get("observed_at"),
    }


def state_counts(out_items: list[dict], in_items: list[dict]) -> tuple[dict[str, Any], list[dict]]:
    """The record's ``counts`` and its items naming a catalog work (those the counts by standing and
    the notices lane are taken over: the links and the ``metadata_mismatch`` references). ``linked``
    counts the links alone (``resolvers.model.linked_count``)."""
    by_status = {s: 0 for s in STATES}
    for item in out_items:
        if item["status"] not in by_status:
            raise ValueError(f"reference {item['reference_index']}: unknown status {item['status']!r}")
        by_status[item["status"]] += 1
    named = [i for i in out_items if i["status"] in WORK_STATES and i["resolved"]]
    by_standing = {s: 0 for s in STANDINGS}
    for item in named:
        by_standing[item["notice"]["standing"]] += 1
    return {"references": len(out_items), "by_status": by_status, "linked": linked_count(by_status),
            "cited_works_by_standing": by_standing, "inbound": len(in_items)}, named


def sorted_rows(rows: Sequence[Mapping[str, Any]], outbound: bool, plain: bool = False) -> list[dict]:
    """The latest row of each reference, plain (``plain_value``), in page order; ``plain``: the caller's
    rows are that already (``ledger_reads.papers_observations``), so they are only sorted."""
    def key(r: Mapping[str, Any]) -> tuple:
        idx, paper = int(r.get("reference_index") or 0), str(r.get("citing_paper"))
        return (idx, paper) if outbound else (paper, idx)
    return sorted(rows if plain else latest_per_reference(rows), key=key)  # type: ignore[arg-type]


def build_record_per_row(paper_id: str, paper_work: Mapping[str, Any] | None, outbound: Sequence[Mapping[str, Any]],
                         inbound: Sequence[Mapping[str, Any]], notices: Mapping[str, Any],
                         generated_from: Mapping[str, Any], page_cap: int | None = DEFAULT_PAGE_CAP,
                         works: Mapping[str, Mapping[str, Any]] | None = None,
                         provenance: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``build_record``'s record made value by value and digested whole: the reference the built path is
    compared with (tests/test_record_build.py), and its fallback."""
    works, provenance = works or {}, provenance or {}
    plain = bool(provenance.get("rows_plain"))
    out_rows, in_rows = sorted_rows(outbound, True, plain), sorted_rows(inbound, False, plain)
    out_items = [outbound_entry(r, notices, works, provenance) for r in out_rows]
    in_items = [inbound_entry(r, provenance.get("citing_titles") or {}) for r in in_rows]
    counts, named = state_counts(out_items, in_items)
    gen = plain_value(dict(generated_from))
    times = [t for t in (r.get("observed_at") for r in out_rows + in_rows) if t]
    as_of = gen.get("as_of") or (max(times) if times else None)
    inbound_page = paged(in_items, page_cap)
    citing_ids = sorted({str(r.get("citing_paper")) for r in out_rows})
    record: dict[str, Any] = {
        "schema": RECORD_SCHEMA,
        "as_of": as_of,
        "paper": record_paper.paper_section(paper_id, plain_value(paper_work), work_view(paper_work), citing_ids),
        "counts": counts,
        "outbound": paged(out_items, page_cap),
        "with_notices": [i for i in out_items if i["notice"]["standing"] not in ("none", "unknown")],
        "inbound": inbound_page,
        "coverage": coverage_lanes(out_items, named, inbound_page, gen.get("tables") or {}, as_of, paper_work),
        "page_caps": {"outbound": page_cap, "inbound": page_cap},
        "empty_means": dict(EMPTY_MEANS),
        "generated_from": gen,
    }
    record[DIGEST_FIELD] = _built_digest(record)
    return record


# ---------------------------------------------------------------------------------------------
# Schema


def load_schema(schema: str = RECORD_SCHEMA) -> dict[str, Any]:
    """A record schema (Draft 2020-12) shipped with the package: v2 by default, v1 by name."""
    name = SCHEMA_FILES.get(schema)
    if name is None:
        raise ValueError(f"unknown record schema {schema!r} (known: {', '.join(SCHEMA_FILES)})")
    return json.loads(resources.files("citeledger").joinpath("schemas", name).read_text("utf-8"))


@functools.lru_cache(maxsize=4)
def _validator(schema: str = RECORD_SCHEMA) -> Any:
    """The schema's validator, built once per process (building it was most of a record's cost).
    The shipped schemas are checked against the metaschema by the tests."""
    import jsonschema  # lazy on purpose: ~0.1 s to import, needed only when records are written or shown

    return jsonschema.Draft202012Validator(load_schema(schema))


def validate_record(record: Mapping[str, Any], *, check_digest: bool = True) -> None:
    """Raise ``jsonschema.ValidationError`` if the record does not fit the schema it names (v2 or
    v1), and ``ValueError`` if its content digest does not match its content. A record of Pith's
    (``pith.paper-citation-record.v1`` with Pith's members: ``pith.schema.record_kind``) is checked
    against Pith's schema; its digests are Pith's (``pith.digests``), checked by the reader."""
    if pith_schema.record_kind(record) is pith_schema.RecordKind.PITH_CITATION_RECORD:
        pith_schema.validate(record)  # Pith's own record, which names the schema citeledger's v1 carried
        return
    schema = record.get("schema")
    _validator(schema if schema in SCHEMA_FILES else RECORD_SCHEMA).validate(record)
    if check_digest and record.get(DIGEST_FIELD) != content_digest(record):
        raise ValueError(f"content digest mismatch: record says {record.get(DIGEST_FIELD)}, "
                         f"content gives {content_digest(record)}")
