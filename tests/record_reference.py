"""A citation record made value by value, the way records were built before they were built with
their canonical bytes: the reference ``tests/test_record_build.py`` holds ``record.build_record`` to
(the same values in the same order, the same digest, and a file that is the JCS of that record).
It shares with the builder only the small value makers (a notice, a cited work, a page, an inbound
entry, the paper's section, the coverage lanes' counts) and makes the rest its own way: each
reference's entry from its row, the counts, the digest over the whole record's JCS."""
from __future__ import annotations

import hashlib
from typing import Any, Mapping, Sequence

from citeledger.records.coverage import lanes
from citeledger.records.paper import iso_z, paper_section
from citeledger.records.record import (
    DEFAULT_PAGE_CAP,
    EMPTY_MEANS,
    STANDINGS,
    STATES,
    evidence_value,
    inbound_entry,
    latest_per_reference,
    notice_dict,
    paged,
    resolved_view,
    work_view,
)
from citeledger.records.record_json import RECORD_SCHEMA, plain_value
from resolvers.jcs import jcs_plain
from resolvers.model import WORK_STATES, Status, linked_count


def sorted_rows(rows: Sequence[Mapping[str, Any]], outbound: bool, plain: bool = False) -> list[dict]:
    def key(r: Mapping[str, Any]) -> tuple:
        idx, paper = int(r.get("reference_index") or 0), str(r.get("citing_paper"))
        return (idx, paper) if outbound else (paper, idx)
    return sorted(rows if plain else latest_per_reference(rows), key=key)  # type: ignore[arg-type]


def resolved_entry(row: Mapping[str, Any], works: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    return resolved_view(row, works) if row.get("work_id") else None


def shared_notice(notice: Any, linked: bool, provenance: Mapping[str, Any]) -> dict[str, Any]:
    return notice_dict(notice, linked=linked, source_times=provenance.get("notice_sources") or {})


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
        "snapshot_observed_at": iso_z((provenance.get("catalog_built_at") or {}).get(fingerprint)),
        "cited_as": {
            "raw": row.get("raw") or "",
            "dois": list(row.get("extracted_dois") or []),
            "arxiv_ids": list(row.get("extracted_arxiv_ids") or []),
        },
        "status": status,
        "resolved": resolved_entry(row, works),
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


def coverage_lanes(out_items: list[dict], named: list[dict], inbound_page: Mapping[str, Any],
                   tables: Mapping[str, Any], as_of: Any, paper_work: Mapping[str, Any] | None) -> dict[str, Any]:
    """Resolution, notices, inbound, external citations and the paper's metadata: what each covers,
    out of what, from which tables, as of when, and whether it was measured."""
    decided = sum(1 for i in out_items if i["status"] != Status.UNAVAILABLE.value)
    return lanes(len(out_items), decided, [i["notice"] for i in named], inbound_page, tables, as_of, paper_work)


def build_record_per_row(paper_id: str, paper_work: Mapping[str, Any] | None, outbound: Sequence[Mapping[str, Any]],
                         inbound: Sequence[Mapping[str, Any]], notices: Mapping[str, Any],
                         generated_from: Mapping[str, Any], page_cap: int | None = DEFAULT_PAGE_CAP,
                         works: Mapping[str, Mapping[str, Any]] | None = None,
                         provenance: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``build_record``'s record made value by value and digested whole (see the module)."""
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
        "paper": paper_section(paper_id, plain_value(paper_work), work_view(paper_work), citing_ids),
        "counts": counts,
        "outbound": paged(out_items, page_cap),
        "with_notices": [i for i in out_items if i["notice"]["standing"] not in ("none", "unknown")],
        "inbound": inbound_page,
        "coverage": coverage_lanes(out_items, named, inbound_page, gen.get("tables") or {}, as_of, paper_work),
        "page_caps": {"outbound": page_cap, "inbound": page_cap},
        "empty_means": dict(EMPTY_MEANS),
        "generated_from": gen,
    }
    record["content_digest"] = "sha256:" + hashlib.sha256(jcs_plain(record)).hexdigest()
    return record
