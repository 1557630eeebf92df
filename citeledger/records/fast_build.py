"""The citation record built with its canonical bytes: each reference's entry and its JCS made
once from its row, the notices and cited works the records of a pass share encoded once a pass, and
the record's members joined into the bytes the content digest is taken over (and the record file
is made of, ``records.canonical``). Digesting a built record by serialising it whole and scanning
those 70-100 kB for numbers orjson writes otherwise than JCS (and the file's own dump and scan) were
most of a record's cost.

The record is the one ``records.build_record_per_row`` makes from the same inputs, value for value
(tests/test_record_build.py compares both on varied ledgers); whenever an input is outside what
this path vouches for (a float where text is expected, an integer beyond 2**53, a lone surrogate,
an unknown status or standing, an odd row), ``build`` returns None and the caller takes that
per-row path, which raises where it raises. The JCS of what comes from outside the rows (evidence,
notices, catalog values, the paper, coverage) goes through ``resolvers.jcs.jcs_plain``'s checks;
the rows' own values are text, integers and the score, checked here by type.
"""
from __future__ import annotations

from operator import itemgetter
from typing import Any, Mapping, Sequence

import orjson

from citeledger.records import paper as record_paper
from citeledger.records import record as records
from citeledger.records.canonical import BuiltRecord, body_digest
from citeledger.records.coverage import lanes
from citeledger.records.evidence import (  # noqa: F401 - tests take json_number from here
    EXPONENT_BELOW,
    SAFE_INTEGER,
    evidence_value,
    json_number,
    parse_evidence,
    plain_float,
)
from resolvers.errors import JCSError
from resolvers.jcs import jcs_exact, jcs_plain, names_out_of_order, orjson_text_is_jcs
from resolvers.model import WORK_STATES, Status, linked_count
from resolvers.notices.standing import (
    StandingNotice,
)

_SCALARS = frozenset({str, int, type(None)})
_SORTED = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER
Fragment = orjson.Fragment
_OUT_ORDER, _IN_ORDER = itemgetter("reference_index", "citing_paper"), itemgetter("citing_paper", "reference_index")
_NO_NOTICE = ("none", "unknown")
_UNAVAILABLE = Status.UNAVAILABLE.value
_EMPTY_MEANS_JCS = jcs_plain(dict(records.EMPTY_MEANS))
_SCHEMA_JCS = jcs_exact(records.RECORD_SCHEMA)


def _value_jcs(value: Any) -> bytes:
    return jcs_plain(value) if type(value) in (dict, list) else jcs_exact(value)


# The row columns an entry reads; a row given by hand may lack some (None, as ``row.get`` reads them).
_TEXTS = ("run_id", "observed_at", "raw", "observation_id", "observation_digest", "source", "source_observed_at",
          "resolver_source")
_OTHERS = ("status", "work_id", "score", "extracted_dois", "extracted_arxiv_ids", "evidence", "reference_index")
_ROW_DEFAULTS = dict.fromkeys(_TEXTS + _OTHERS + ("doi", "arxiv_id"))
_TEXTS_OF, _OTHERS_OF = itemgetter(*_TEXTS), itemgetter(*_OTHERS)


def _sorted(rows: Sequence[Mapping[str, Any]], outbound: bool, plain: bool) -> list[Mapping[str, Any]] | None:
    """``records.sorted_rows``' order when every row's index is an int and its citing paper text
    (then its key is the row's own pair); None otherwise."""
    if not plain:
        rows = [{**_ROW_DEFAULTS, **r} for r in records.latest_per_reference(rows)]
    try:
        kept = sorted(rows, key=_OUT_ORDER if outbound else _IN_ORDER)
    except (KeyError, TypeError):
        return None
    ok = all(type(r["reference_index"]) is int and type(r["citing_paper"]) is str for r in kept)
    return kept if ok else None


class _Pass:
    """What the references of one record look up: notices and cited works (cached for the pass
    when the caller keeps ``notice_cache`` / ``resolved_cache``, as the per-row path does), each run's
    catalog snapshot."""

    def __init__(self, notices: Mapping[str, Any], works: Mapping[str, Mapping[str, Any]],
                 provenance: Mapping[str, Any]):
        self.notices, self.works = notices, works
        notice_cache, resolved_cache = provenance.get("notice_cache"), provenance.get("resolved_cache")
        self.notice_cache: dict = {} if notice_cache is None else notice_cache
        self.resolved_cache: dict = {} if resolved_cache is None else resolved_cache
        self.source_times = provenance.get("notice_sources") or {}
        self.run_catalog = provenance.get("run_catalog") or {}
        self.built_at = provenance.get("catalog_built_at") or {}
        self.snapshots: dict[Any, tuple[Any, Any]] = {}

    def snapshot(self, run_id: Any) -> tuple[Any, Any] | None:
        """The run's catalog fingerprint and that catalog's build time; None when either is not text."""
        fingerprint = self.run_catalog.get(run_id)
        got = (fingerprint, record_paper.iso_z(self.built_at.get(fingerprint)))
        if not _SCALARS.issuperset(map(type, got)):
            return None
        self.snapshots[run_id] = got
        return got

    def cited(self, row: Mapping[str, Any], work_id: Any, status: str) -> tuple:
        """(catalog row, notice row, resolved, its JCS, notice, its JCS) of a reference, as
        ``records.resolved_entry`` and ``records.reference_notice`` make them: one lookup a reference
        (kept in ``notice_cache`` by work, ids and linkedness)."""
        if not work_id:
            return (None, None, None, None, *self.notice(row))
        linked = status in WORK_STATES
        catalog_row, notice_row = self.works.get(work_id), self.notices.get(work_id)
        key = ("cited", work_id, row["doi"], row["arxiv_id"], linked)
        hit = self.notice_cache.get(key)
        if hit is None or hit[0] is not catalog_row or hit[1] is not notice_row:  # the entry holds the rows
            hit = self.notice_cache[key] = (catalog_row, notice_row, *self.resolved(row, work_id),
                                            *self._notice(notice_row, linked))
        return hit

    def notice(self, row: Mapping[str, Any]) -> tuple[dict, Any]:
        """``records.reference_notice`` of a reference with no work: a cited DOI's notice, if any."""
        notices = self.notices
        for doi in row["extracted_dois"] or ():
            if f"doi:{doi}" in notices:
                return self._notice(notices[f"doi:{doi}"], True)
        return self._notice(None, False)

    def _notice(self, notice: Any, linked: bool) -> tuple[dict, Any]:
        key = (id(notice), linked)  # ``records.shared_notice``'s entry: (row, notice, its JCS or None)
        hit = self.notice_cache.get(key)
        if hit is None or hit[0] is not notice:  # the cache holds the row, so its id is not reused
            made = records.notice_dict(notice, linked=linked, source_times=self.source_times)
            hit = self.notice_cache[key] = (notice, made, _fragment(made))
        elif hit[2] is None:
            hit = self.notice_cache[key] = (notice, hit[1], _fragment(hit[1]))
        return hit[1], hit[2]

    def resolved(self, row: Mapping[str, Any], work_id: Any) -> tuple[dict | None, Any]:
        """``records.resolved_entry``: the cited work's view, and its JCS."""
        catalog_row = self.works.get(work_id)
        key = (work_id, row["doi"], row["arxiv_id"], id(catalog_row))  # as ``records.resolved_entry``
        hit = self.resolved_cache.get(key)
        if hit is None or hit[0] is not catalog_row:
            view = records.resolved_view(row, self.works)
            hit = self.resolved_cache[key] = (catalog_row, view, _fragment(view))
        elif hit[2] is None:
            hit = self.resolved_cache[key] = (catalog_row, hit[1], _fragment(hit[1]))
        return hit[1], hit[2]


def _fragment(value: Any) -> Any:
    """A part the records of a pass share (a notice, a cited work's view) as an ``orjson.Fragment``
    of its JCS, when orjson's sorted text is that (checked once a pass); else False."""
    try:
        out = orjson.dumps(value, option=_SORTED)
    except orjson.JSONEncodeError:
        return False
    return Fragment(out) if orjson_text_is_jcs(out) else False


def _entry(row: Mapping[str, Any], ctx: _Pass) -> tuple[dict, dict | None] | None:
    """``records.outbound_entry`` of one row, and the same entry for its JCS (members in JCS order,
    the shared parts and the evidence as their JCS), or None for that when a number in it may be
    one orjson writes otherwise; None when a value is not one this path takes."""
    status, work_id, score, dois, arxiv_ids, text, index = _OTHERS_OF(row)
    texts = _TEXTS_OF(row)
    if type(status) is not str or not _SCALARS.issuperset(map(type, texts)):
        return None
    run_id, observed_at, raw, oid, odigest, source, seen, via = texts
    raw, source, seen, dois, arxiv_ids = raw or "", source or "unknown", seen or observed_at, list(dois or ()), \
        list(arxiv_ids or ())
    if (dois and not _SCALARS.issuperset(map(type, dois))) or \
            (arxiv_ids and not _SCALARS.issuperset(map(type, arxiv_ids))):
        return None
    snapshot = ctx.snapshots.get(run_id) or ctx.snapshot(run_id)
    if snapshot is None:
        return None
    fingerprint, snapshot_at = snapshot
    _, _, resolved, resolved_jcs, notice, notice_jcs = ctx.cited(row, work_id, status)
    if type(text) is str and text:
        evidence, evidence_jcs = evidence_value(text)
    else:
        evidence, evidence_jcs = records.evidence_value(text), None
    item = {"reference_index": index, "observation_id": oid, "observation_digest": odigest, "run_id": run_id,
            "source": source, "source_observed_at": seen, "snapshot_fingerprint": fingerprint,
            "snapshot_observed_at": snapshot_at, "cited_as": {"raw": raw, "dois": dois, "arxiv_ids": arxiv_ids},
            "status": status, "resolved": resolved, "resolver_source": via, "resolved_at": observed_at,
            "score": score, "evidence": evidence, "notice": notice}
    if evidence_jcs is None or not notice_jcs or not (resolved_jcs or resolved is None) or not _score_vouched(score):
        return item, None
    return item, {"cited_as": {"arxiv_ids": arxiv_ids, "dois": dois, "raw": raw}, "evidence": Fragment(evidence_jcs),
                  "notice": notice_jcs, "observation_digest": odigest, "observation_id": oid,
                  "reference_index": index, "resolved": resolved_jcs, "resolved_at": observed_at,
                  "resolver_source": via, "run_id": run_id, "score": score, "snapshot_fingerprint": fingerprint,
                  "snapshot_observed_at": snapshot_at, "source": source, "source_observed_at": seen, "status": status}


def _score_vouched(score: Any) -> bool:
    """Whether orjson writes the score as JCS does: text, an integer, or a fraction from 1e-4 up in
    magnitude (``records.evidence``)."""
    if type(score) is float:
        return EXPONENT_BELOW <= abs(score) < SAFE_INTEGER and not score.is_integer()
    return True


class _Entries:
    """A record's entries as ``_entries`` tallies them: the entries, their JCS forms (None when
    one is missing), those naming a catalog work (a link or a mismatch) and the noticed ones, the
    counts by status and standing (``records.state_counts``) and what coverage counts
    (``records.coverage.lanes``)."""

    __slots__ = ("items", "canon", "named", "named_notices", "noticed", "noticed_canon", "by_status",
                 "by_standing", "decided")

    def __init__(self) -> None:
        self.items: list[dict] = []
        self.canon: list[dict | None] | None = []
        self.named: list[dict] = []
        self.named_notices: list[Mapping[str, Any]] = []
        self.noticed: list[dict] = []
        self.noticed_canon: list[dict | None] = []
        self.by_status = {s: 0 for s in records.STATES}
        self.by_standing = {s: 0 for s in records.STANDINGS}
        self.decided = 0


def _entries(out_rows: list[Mapping[str, Any]], ctx: _Pass) -> _Entries | None:
    got = _Entries()
    by_status, by_standing, canon = got.by_status, got.by_standing, got.canon
    for row in out_rows:
        made = _entry(row, ctx)
        if made is None:
            return None
        item, item_canon = made
        status, notice = item["status"], item["notice"]
        standing = notice["standing"]
        if status not in by_status or standing not in by_standing:
            return None
        by_status[status] += 1
        got.items.append(item)
        if canon is not None:
            if item_canon is None:
                canon = got.canon = None
            else:
                canon.append(item_canon)
        if status != _UNAVAILABLE:
            got.decided += 1
        if status in WORK_STATES and item["resolved"]:
            got.named.append(item)
            got.named_notices.append(notice)
            by_standing[standing] += 1
        if standing not in _NO_NOTICE:
            got.noticed.append(item)
            got.noticed_canon.append(item_canon)
    return got


def build(paper_id: str, paper_work: Mapping[str, Any] | None, outbound: Sequence[Mapping[str, Any]],
          inbound: Sequence[Mapping[str, Any]], notices: Mapping[str, Any], generated_from: Mapping[str, Any],
          page_cap: int | None, works: Mapping[str, Mapping[str, Any]],
          provenance: Mapping[str, Any]) -> BuiltRecord | None:
    """``records.build_record_per_row``'s record, with its members' JCS kept (``BuiltRecord``);
    None when this path does not take the inputs (see the module)."""
    plain = bool(provenance.get("rows_plain"))
    out_rows, in_rows = _sorted(outbound, True, plain), _sorted(inbound, False, plain)
    if out_rows is None or in_rows is None:
        return None
    try:
        got = _entries(out_rows, _Pass(notices, works, provenance))
        if got is None:
            return None
        return _record(paper_id, paper_work, out_rows, in_rows, got, generated_from, page_cap, provenance)
    except (JCSError, KeyError):
        return None  # the per-row path raises its own error for it (a row lacking a column: it reads None)


def _items_jcs(canon: list[dict | None]) -> bytes | None:
    """The JCS of a list of entries from their JCS forms (orjson writes those as they are, in order),
    or None when one has none or it may not be their JCS."""
    if any(c is None for c in canon):
        return None
    try:
        out = orjson.dumps(canon, option=orjson.OPT_STRICT_INTEGER)
    except orjson.JSONEncodeError:  # an index beyond 2**53, a lone surrogate: the checked writer says which
        return None
    return None if names_out_of_order(out) else out  # an evidence member name from U+E000 up


def _listed_jcs(page: dict[str, Any], canon: list[dict | None] | None) -> bytes:
    """The JCS of ``records.paged`` of the entries; by the checked writer when ``_items_jcs`` cannot."""
    items = None if canon is None else _items_jcs(canon[:len(page["items"])])
    if items is None:
        return jcs_plain(page)
    return b"".join((b'{"cap":', _value_jcs(page["cap"]), b',"items":', items,
                     b',"listed":', _value_jcs(page["listed"]), b',"total":', _value_jcs(page["total"]),
                     b',"truncated":', b"true" if page["truncated"] else b"false",
                     b"}"))  # one copy of the entries' text, not one per piece


def _record(paper_id: str, paper_work: Mapping[str, Any] | None, out_rows: list[Mapping[str, Any]],
            in_rows: list[Mapping[str, Any]], got: _Entries, generated_from: Mapping[str, Any], page_cap: int | None,
            provenance: Mapping[str, Any]) -> BuiltRecord:
    titles = provenance.get("citing_titles") or {}
    in_items = [records.inbound_entry(r, titles) for r in in_rows]
    counts = {"references": len(got.items), "by_status": got.by_status, "linked": linked_count(got.by_status),
              "cited_works_by_standing": got.by_standing, "inbound": len(in_items)}
    gen = records.plain_value(dict(generated_from))
    times = [t for t in (r.get("observed_at") for r in out_rows + in_rows) if t]
    as_of = gen.get("as_of") or (max(times) if times else None)
    inbound_page, outbound_page = records.paged(in_items, page_cap), records.paged(got.items, page_cap)
    citing_ids = sorted({r["citing_paper"] for r in out_rows})
    paper = record_paper.paper_section(paper_id, records.plain_value(paper_work), records.work_view(paper_work),
                                       citing_ids)
    coverage = lanes(len(got.items), got.decided, got.named_notices, inbound_page, gen.get("tables") or {}, as_of,
                     paper_work)
    page_caps = {"outbound": page_cap, "inbound": page_cap}
    record = BuiltRecord(schema=records.RECORD_SCHEMA, as_of=as_of, paper=paper, counts=counts, outbound=outbound_page,
                         with_notices=got.noticed, inbound=inbound_page, coverage=coverage, page_caps=page_caps,
                         empty_means=dict(records.EMPTY_MEANS), generated_from=gen)
    record.members = (
        ("as_of", as_of, _value_jcs(as_of)), ("counts", counts, jcs_plain(counts)),
        ("coverage", coverage, jcs_plain(coverage)), ("empty_means", record["empty_means"], _EMPTY_MEANS_JCS),
        ("generated_from", gen, jcs_plain(gen)), ("inbound", inbound_page, jcs_plain(inbound_page)),
        ("outbound", outbound_page, _listed_jcs(outbound_page, got.canon)),
        ("page_caps", page_caps, jcs_plain(page_caps)), ("paper", paper, jcs_plain(paper)),
        ("schema", records.RECORD_SCHEMA, _SCHEMA_JCS),
        ("with_notices", got.noticed, _items_jcs(got.noticed_canon) or jcs_plain(got.noticed)))
    record.digest = record[records.DIGEST_FIELD] = body_digest(record.members)
    record.unlisted = got.items[len(outbound_page["items"]):]  # on the pages, not in the file
    return record


def build_record(paper_id: str, paper_work: Mapping[str, Any] | None, outbound: Sequence[Mapping[str, Any]],
                 inbound: Sequence[Mapping[str, Any]], notices: Mapping[str, StandingNotice | Mapping[str, Any]],
                 generated_from: Mapping[str, Any], page_cap: int | None = records.DEFAULT_PAGE_CAP,
                 works: Mapping[str, Mapping[str, Any]] | None = None,
                 provenance: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The citation record (schema v2) of ``paper_id`` from its outbound and inbound observation rows.

    ``notices`` maps a cited work_id to its ``StandingNotice`` (or a ``notices`` view row);
    ``works`` (optional) maps work_id to catalog rows so resolved entries carry titles.
    ``generated_from`` names the source tables (``tables``: name -> location) and their time
    (``as_of``); when ``as_of`` is missing the latest ``observed_at`` of the rows stands in.
    ``provenance`` (optional): ``run_catalog`` (run id -> catalog fingerprint), ``catalog_built_at``
    (fingerprint -> build time), ``notice_sources`` (source -> when the catalog took it in),
    ``citing_titles`` (citing paper id -> title), ``notice_cache`` and ``resolved_cache`` (dicts
    kept for one pass of many records over the same notice and catalog rows), ``rows_plain`` (the
    rows are the latest of each reference, their values plain already: ``ledger_reads`` makes them).
    Nothing here reads the clock: same inputs, same digest.
    Counts and coverage are taken over every row; only the listed items are capped.
    Built with its members' canonical bytes by ``fast_build`` (the record file is made of them);
    inputs that path does not vouch for go through ``build_record_per_row``, the reference.
    """
    works, provenance = works or {}, provenance or {}
    built = build(paper_id, paper_work, outbound, inbound, notices, generated_from, page_cap, works,
                               provenance)
    if built is not None:
        return built
    return records.build_record_per_row(paper_id, paper_work, outbound, inbound, notices, generated_from, page_cap,
                                        works,
                                provenance)
