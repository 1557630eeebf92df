"""citeledger's v2 citation record (a plain dict) -> a ``pith.paper-citation-record.v1`` record.

Every member of Pith's published record is present. What citeledger knows is copied in (states,
ids, the catalog's metadata, notices and their sources, times); what it does not know is null, as
Pith writes it. The observation digests and the context digest follow Pith's rules
(``digests``); ``observation_id`` keeps the ledger's id, so an exported observation leads back to
its ledger row. External citation counts are not in a v2 record: a caller that holds them passes
them as ``measurements`` (one per source, never summed: ``external_measurement``).
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from . import export_parts as parts
from .digests import with_digests
from .schema import PITH_SCHEMA
from .states import LANES, PITH_STATES

REFUSAL = "A citation records a reference. It does not transfer a finding from one paper to another."
MEASURES = {"openalex": "cited_by_count", "crossref": "is-referenced-by-count"}
LINK_KEYS = ("evidence", "html", "integrity", "json", "paper")
PITH_NOTES = {
    "reference_resolution": "Typed states for the displayed outbound observations.",
    "standing_notices": "One-hop event checks from named stored sources.",
    "inbound_itemization": "Citing papers in this ledger itemized under the disclosed page cap.",
    "external_citation_measurements": "A source-named dated measurement, never combined with another source.",
}


def external_measurement(source: str, value: int, observed_at: str, work: str) -> dict[str, Any]:
    """One source's citation count of ``work`` as that source states it (OpenAlex ``cited_by_count``,
    Crossref ``is-referenced-by-count``) and when it was read."""
    if source not in MEASURES:
        raise ValueError(f"external citation source {source!r}: not one of {', '.join(MEASURES)}")
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{source} {MEASURES[source]}: {value!r} is not a count")
    return {"measure": MEASURES[source], "observed_at": observed_at, "source": source, "value": value, "work": work}


def _outbound(item: Mapping[str, Any], own: Mapping[str, Any], page_of: parts.PageOf,
              paper_id: str) -> dict[str, Any]:
    snapshot = item.get("snapshot_observed_at")
    resolved = item.get("resolved")
    cited_paper = parts.cited_paper(resolved, snapshot)
    links = {"citing_paper": page_of(paper_id)}
    if cited_paper:
        links["cited_paper"] = page_of(f"arXiv:{cited_paper['arxiv_id']}")
    cited_work = parts.cited_work(resolved, snapshot, parts.parsed_title(item.get("evidence")))
    return _citation(item, cited_paper, cited_work, dict(own), item.get("source_observed_at"), links,
                     item.get("notice"))


def _inbound(item: Mapping[str, Any], record: Mapping[str, Any], own: Mapping[str, Any],
             page_of: parts.PageOf) -> dict[str, Any]:
    """A reference of another paper in the ledger resolved to this paper's work. The record does not
    carry the notice of its own work, so the standing notice is ``not_checked``."""
    paper = record.get("paper") or {}
    work = dict(paper.get("work") or {}, metadata_source=paper.get("metadata_source"))
    citing = str(item.get("citing_paper"))
    links = {"citing_paper": page_of(citing)}
    cited_paper = dict(own) if own.get("arxiv_id") else None
    if cited_paper:
        links["cited_paper"] = page_of(str(paper.get("id")))
    return _citation(item, cited_paper, parts.cited_work(work, own.get("snapshot_observed_at"), None),
                     parts.other_paper_ref(citing, item.get("citing_title")), item.get("resolved_at"), links, None)


def _citation(item: Mapping[str, Any], cited_paper: Any, cited_work: Any, citing_paper: Any,
              source_observed_at: Any, links: dict[str, Any], notice: Any) -> dict[str, Any]:
    """One citation of the record (outbound or inbound), its observation's resolution beside it."""
    return {
        "citation": {
            "cited_paper": cited_paper,
            "cited_work": cited_work,
            "citing_paper": citing_paper,
            "reference_index": int(item["reference_index"]),
            "source": item.get("source") or "unknown",
            "source_observed_at": source_observed_at,
        },
        "links": links,
        "observation_id": str(item.get("observation_id")),
        "resolution": {"observed_at": item.get("resolved_at"), "resolver_source": item.get("resolver_source"),
                       "status": item.get("status")},
        "standing_notice": parts.standing_notice(notice),
    }


def _lane(name: str, state: str, observed: int, denominator: int | None, sources: Any, as_of: str | None,
          note: str | None) -> dict[str, Any]:
    return {"denominator": denominator, "lane": name, "note": note or PITH_NOTES[name], "records_observed": observed,
            "source": parts.joined(sources), "source_observed_at": as_of, "state": state}


def _coverage(record: Mapping[str, Any], outbound: list[dict], inbound: list[dict],
              measurements: list[dict]) -> list[dict[str, Any]]:
    """Pith's four lanes from citeledger's. The notice lane counts every displayed observation,
    outbound and inbound (a reference with no work has an ``unavailable`` notice, and is counted)
    out of every observation of the record."""
    v2 = record.get("coverage") or {}
    lanes = []
    for ours, theirs in LANES.items():
        lane = v2.get(ours) or {}
        state, observed = lane.get("state") or "not_measured", lane.get("observed") or 0
        denominator = lane.get("denominator")
        sources, as_of, note = lane.get("sources"), lane.get("as_of"), lane.get("means")
        if theirs == "standing_notices":
            observed = len(outbound) + len(inbound)
            denominator = (record.get("outbound") or {}).get("total", len(outbound)) + \
                (record.get("inbound") or {}).get("total", len(inbound))
            state = "measured" if observed == denominator else "partial"
            note = PITH_NOTES[theirs] + " Every observation has its notice: measured, or unavailable with its reason."
        if theirs == "external_citation_measurements" and measurements:
            state, observed, denominator = "measured", len(measurements), len(measurements)
            sources = sorted({m["source"] for m in measurements})
            as_of, note = max(m["observed_at"] for m in measurements), None
        lanes.append(_lane(theirs, state, observed, denominator, sources, as_of, note))
    return lanes


def _state_counts(record: Mapping[str, Any]) -> dict[str, int]:
    by_status = (record.get("counts") or {}).get("by_status") or {}
    counts = {s: int(by_status.get(s) or 0) for s in PITH_STATES}
    counts["unavailable"] = int(by_status.get("unavailable") or 0)  # citeledger's "could not check"
    return counts


def to_pith_record(record: Mapping[str, Any], *, measurements: Iterable[Mapping[str, Any]] = (),
                   links: Mapping[str, str | None] | None = None,
                   page_of: parts.PageOf = parts.default_page) -> dict[str, Any]:
    """The ``pith.paper-citation-record.v1`` form of citeledger's v2 record ``record``.

    ``links``: the record's own pages (``html``, ``json``, ``evidence``, ``integrity``, ``paper``;
    null when not given, ``paper`` defaults to ``page_of`` of the paper id); ``page_of``: paper id ->
    its page (default: arXiv, doi.org, or a ``urn:citeledger:paper:`` name)."""
    paper_id = str((record.get("paper") or {}).get("id"))
    head = parts.paper_head(record)
    own = parts.own_paper_ref(record, head)
    outbound = [_outbound(i, own, page_of, paper_id) for i in (record.get("outbound") or {}).get("items") or []]
    inbound = [_inbound(i, record, own, page_of) for i in (record.get("inbound") or {}).get("items") or []]
    found = [dict(m) for m in measurements]
    caps = record.get("page_caps") or {}
    out_page = record.get("outbound") or {}
    label = f"arXiv:{head['arxiv_id']}" if head["arxiv_id"] else paper_id
    as_of = record.get("as_of")
    record_links: dict[str, str | None] = {key: (links or {}).get(key) for key in LINK_KEYS}
    if record_links["paper"] is None:
        record_links["paper"] = page_of(paper_id)
    pith: dict[str, Any] = {
        "as_of": as_of,
        "caps": {"database_statements": None, "inbound": caps.get("inbound"), "outbound": caps.get("outbound")},
        "coverage": _coverage(record, outbound, inbound, found),
        "external_citation_measurements": found,
        "inbound": inbound,
        "links": record_links,
        "outbound": outbound,
        "paper": head,
        "reference_resolution": {"displayed": len(outbound), "state_counts": _state_counts(record),
                                 "total_outbound_references": int(out_page.get("total", len(outbound)))},
        "refusal": REFUSAL,
        "schema": PITH_SCHEMA,
        "standing_sources": parts.standing_sources(o["standing_notice"] for o in outbound + inbound),
        "thesis": parts.thesis(as_of, len(outbound), int(out_page.get("total", len(outbound))), len(inbound), label),
    }
    return with_digests(pith)
