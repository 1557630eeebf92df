"""citeledger's v2 citation record (a plain dict) -> a ``pith.paper-citation-record.v1`` record.

The record speaks Pith: every member of Pith's published record, with Pith's names for states,
notice sources, notice reasons and lane states, ids in Pith's form (UUIDs), links as Pith's routes
(``/paper/<id>``), and a value wherever citeledger knows one (versions and dates of every arXiv
paper the catalog holds, caps, the text a reference cited when it named no work). What only
citeledger says (its own ids, its ``unavailable`` state, its notice reasons and source names, the
files it wrote) is under one member, ``citeledger``, of the record and of each observation; Pith's
members never carry it. The observation digests and the context digest follow Pith's rules
(``digests``), the extension included.

The coverage lanes say what the v2 record's lanes say (one answer in every form): a lane with
nothing measured is ``unavailable`` in Pith's words, ``not_measured`` in the v2 record; the notice
lane counts the references whose notice sources answered and names those sources with their times.
What the caller takes from the ledger and catalog besides the v2 record comes as arguments:
``measurements`` (external citation counts, one per source, never summed: ``external_measurement``),
``papers`` (the catalog's facts of the arXiv papers the record names), ``own_notice`` (the notice of
the paper's own work, which its inbound citations cite), ``snapshot`` (when the catalog was built),
``files`` (where citeledger wrote this record and its pages) and ``statements`` (the database
statements building a record takes).
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from . import export_parts as parts
from .digests import with_digests
from .schema import PITH_SCHEMA
from .states import LANES, PITH_STATES, pith_source, pith_status

REFUSAL = "A citation records a reference. It does not transfer a finding from one paper to another."
EXTENSION = "citeledger"
MEASURES = {"openalex": "cited_by_count", "crossref": "is-referenced-by-count"}
PITH_NOTES = {
    "reference_resolution": "Typed states for the displayed outbound observations.",
    "standing_notices": "One-hop event checks from named stored sources: the references naming a catalog work "
                        "whose notice sources answered, out of all references naming a catalog work.",
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


class _Exporter:
    """The pieces every observation of one record shares."""

    def __init__(self, record: Mapping[str, Any], papers: Mapping[str, parts.PaperFacts], snapshot: str | None):
        self.record, self.papers = record, papers
        paper = record.get("paper") or {}
        self.paper_id = str(paper.get("id"))
        self.head = parts.paper_head(record, snapshot)
        self.own = parts.own_paper_ref(record, self.head)
        self.work = dict(paper.get("work") or {}, metadata_source=paper.get("metadata_source"))

    def outbound(self, item: Mapping[str, Any]) -> dict[str, Any]:
        resolved = item.get("resolved")
        arxiv = str((resolved or {}).get("arxiv_id") or "")
        cited_paper = parts.paper_ref(arxiv, None, resolved.get("title"), self.papers.get(arxiv)) \
            if resolved and arxiv else None
        links = {"citing_paper": parts.route(self.paper_id)}
        if cited_paper:
            links["cited_paper"] = parts.route(arxiv)
        work = parts.cited_work(resolved, item.get("snapshot_observed_at"), parts.cited_text(item),
                                arxiv if arxiv in self.papers else None)
        return self.observation(item, cited_paper, work, dict(self.own), links, item.get("notice"),
                                (resolved or {}).get("work_id"))

    def inbound(self, item: Mapping[str, Any], own_notice: Mapping[str, Any] | None) -> dict[str, Any]:
        """A reference of another paper in the ledger resolved to this paper's work, with the notice
        citeledger has of that work."""
        citing = str(item.get("citing_paper"))
        arxiv, version = parts.arxiv_parts(citing)
        citing_paper = parts.paper_ref(arxiv, version, item.get("citing_title"), self.papers.get(arxiv)) if arxiv \
            else parts.paper_ref(None, None, item.get("citing_title"), None)
        links = {"citing_paper": parts.route(citing)}
        cited_paper = dict(self.own) if self.own.get("arxiv_id") else None
        if cited_paper:
            links["cited_paper"] = parts.route(self.paper_id)
        work = parts.cited_work(self.work, self.head["snapshot_observed_at"], None,
                                self.head["arxiv_id"] if self.head["snapshot_observed_at"] else None)
        return self.observation(item, cited_paper, work, citing_paper, links, own_notice, self.work.get("work_id"))

    @staticmethod
    def observation(item: Mapping[str, Any], cited_paper: Any, cited_work: Any, citing_paper: Any,
                    links: dict[str, Any], notice: Any, work_id: Any) -> dict[str, Any]:
        """One observation (outbound or inbound): the citation, its resolution, the cited work's notice."""
        standing, said = parts.standing_notice(notice)
        status = str(item.get("status"))
        return {
            "citation": {
                "cited_paper": cited_paper,
                "cited_work": cited_work,
                "citing_paper": citing_paper,
                "reference_index": int(item["reference_index"]),
                "source": item.get("source") or "unknown",
                "source_observed_at": item.get("source_observed_at") or item.get("resolved_at"),
            },
            EXTENSION: {"notice": said, "observation_id": str(item.get("observation_id")), "status": status,
                        "work_id": work_id},
            "links": links,
            "observation_id": parts.pith_id("observation", item.get("observation_id")),
            "resolution": {"observed_at": item.get("resolved_at"), "resolver_source": item.get("resolver_source"),
                           "status": pith_status(status)},
            "standing_notice": standing,
        }


def _lane(name: str, state: bool, observed: int, denominator: int | None, source: str | None,
          at: str | None) -> dict[str, Any]:
    return {"denominator": denominator, "lane": name, "note": PITH_NOTES[name], "records_observed": observed,
            "source": source, "source_observed_at": at, "state": "measured" if state else "unavailable"}


def _coverage(record: Mapping[str, Any], measurements: list[dict]) -> list[dict[str, Any]]:
    """Pith's four lanes, each what the v2 record's lane says: its counts, its sources (the notice
    lane's in Pith's names) and time; ``unavailable`` where the v2 lane measured nothing."""
    v2 = record.get("coverage") or {}
    lanes = []
    for ours, theirs in LANES.items():
        lane = v2.get(ours) or {}
        observed, denominator = int(lane.get("observed") or 0), lane.get("denominator")
        sources, at = lane.get("sources") or [], lane.get("as_of")
        if theirs == "standing_notices":
            sources = sorted({pith_source(str(s)) for s in sources})
        measured = observed > 0
        if theirs == "inbound_itemization":
            measured = True  # the ledger's citing papers were read: all of them itemized, or none there
        if theirs == "external_citation_measurements":
            observed, denominator = len(measurements), len(MEASURES)
            sources = sorted({m["source"] for m in measurements})
            at = max((m["observed_at"] for m in measurements), default=None)
            measured = bool(measurements)
        lanes.append(_lane(theirs, measured, observed, denominator, parts.joined(sources) if measured else None,
                           at if measured else None))
    return lanes


def _state_counts(record: Mapping[str, Any]) -> dict[str, int]:
    """The counts of Pith's six states (citeledger's ``unavailable`` counted as ``unresolved``,
    as its observations say; the extension keeps citeledger's counts)."""
    counts = {s: 0 for s in PITH_STATES}
    for status, n in ((record.get("counts") or {}).get("by_status") or {}).items():
        counts[pith_status(str(status))] += int(n or 0)
    return counts


def to_pith_record(record: Mapping[str, Any], *, measurements: Iterable[Mapping[str, Any]] = (),
                   papers: Mapping[str, parts.PaperFacts] | None = None, own_notice: Mapping[str, Any] | None = None,
                   snapshot: str | None = None, files: Mapping[str, str] | None = None,
                   statements: int | None = None) -> dict[str, Any]:
    """The ``pith.paper-citation-record.v1`` form of citeledger's v2 record ``record`` (module docstring)."""
    make = _Exporter(record, papers or {}, snapshot)
    outbound = [make.outbound(i) for i in (record.get("outbound") or {}).get("items") or []]
    inbound = [make.inbound(i, own_notice) for i in (record.get("inbound") or {}).get("items") or []]
    found = [dict(m) for m in measurements]
    caps, paper = record.get("page_caps") or {}, record.get("paper") or {}
    total = int((record.get("outbound") or {}).get("total", len(outbound)))
    label = f"arXiv:{make.head['arxiv_id']}" if make.head["arxiv_id"] else make.paper_id
    as_of, page = record.get("as_of"), parts.route(make.paper_id)
    pith: dict[str, Any] = {
        "as_of": as_of,
        "caps": {"database_statements": statements, "inbound": caps.get("inbound"), "outbound": caps.get("outbound")},
        EXTENSION: {
            "files": dict(files or {}), "handle": paper.get("handle"), "paper_id": make.paper_id,
            "record_digest": record.get("content_digest"), "record_schema": record.get("schema"),
            "lanes": {name: (record.get("coverage") or {}).get(name, {}).get("state") for name in LANES},
            "state_counts": dict((record.get("counts") or {}).get("by_status") or {}),
        },
        "coverage": _coverage(record, found),
        "external_citation_measurements": found,
        "inbound": inbound,
        "links": {"evidence": "/evidence", "html": f"{page}/citation-record", "integrity": f"{page}/integrity",
                  "json": f"{page}/citation-record.json", "paper": page},
        "outbound": outbound,
        "paper": make.head,
        "reference_resolution": {"displayed": len(outbound), "state_counts": _state_counts(record),
                                 "total_outbound_references": total},
        "refusal": REFUSAL,
        "schema": PITH_SCHEMA,
        "standing_sources": parts.standing_sources(o["standing_notice"] for o in outbound + inbound),
        "thesis": parts.thesis(as_of, len(outbound), total, len(inbound), label),
    }
    return with_digests(pith)
