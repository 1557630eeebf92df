"""The citation record of one paper: what it cites, how sure each link is, whether each cited work
still stands, and who cites it (schema v2; its JSON, digest and schema are ``record_json``'s).

``build_record`` is the one builder. Pure functions over plain rows (dicts with the ledger's
observation columns), so the ledger code feeds them straight from DuckDB and tests by hand; nothing
here reads the wall clock: every time in a record comes from its inputs, so the same inputs give
the same digest.

The record is built with its canonical bytes: each reference's entry is made once from its row
with its JCS beside it, the notices and cited works the records of a pass share are encoded once a
pass, and the record's members are joined into the bytes the content digest is taken over and the
record file is made of (``record_json.BuiltRecord``): serialising a record whole to digest it, and
scanning those 70-100 kB for numbers orjson writes otherwise than JCS, were most of a record's cost.
Where a value is outside what orjson's bytes are vouched for (a float where text is expected, an
integer beyond 2**53, a fraction below 1e-4, a lone surrogate, a member name sorting otherwise),
that member's bytes come from the checked writer (``resolvers.jcs.jcs_plain``), which raises where
JCS has no form for a value: the record is the same either way, and its file is its JCS
(``tests/test_record_build.py`` holds it to a record made value by value).
"""
from __future__ import annotations

from operator import itemgetter
from typing import Any, Iterable, Mapping, Sequence

import orjson

from citeledger.records.coverage import lanes, notice_receipts
from citeledger.records.evidence import EXPONENT_BELOW, SAFE_INTEGER, evidence_and_jcs, parse_evidence
from citeledger.records.paper import iso_z, paper_section
from citeledger.records.record_json import RECORD_SCHEMA, BuiltRecord, body_digest, plain_value
from resolvers.jcs import jcs_exact, jcs_plain, names_out_of_order, orjson_text_is_jcs
from resolvers.model import STATE_ORDER, WORK_STATES, Status, linked_count
from resolvers.notices.standing import (
    StandingNotice,
    UnavailableReason,
    notice_from_dict,
    notice_to_dict,
    unavailable_notice,
)

STATES: tuple[str, ...] = tuple(s.value for s in STATE_ORDER)
STANDINGS = ("retracted", "withdrawn", "expression_of_concern", "reinstated", "corrected", "none", "unknown")
DEFAULT_PAGE_CAP = 1000

EMPTY_MEANS = {
    "outbound": "no reference of this paper is in the ledger's current observations",
    "inbound": "no paper in the ledger has a reference resolved to this paper's work; papers "
               "outside the ledger are not examined",
    "notice_events": "the sources checked list no notice for the work",
}

_SIMPLE = frozenset({str, bool, int, type(None)})
_SCALARS = frozenset({str, int, type(None)})
_SORTED = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER
Fragment = orjson.Fragment
_OUT_ORDER, _IN_ORDER = itemgetter("reference_index", "citing_paper"), itemgetter("citing_paper", "reference_index")
_NO_NOTICE = ("none", "unknown")
_UNAVAILABLE = Status.UNAVAILABLE.value
_EMPTY_MEANS_JCS = jcs_plain(dict(EMPTY_MEANS))
_SCHEMA_JCS = jcs_exact(RECORD_SCHEMA)
_WORK_KEYS = ("work_id", "doi", "arxiv_id", "title", "authors", "year", "venue", "volume", "first_page", "pmid", "type")

# The row columns an entry reads; a row given by hand may lack some (None, as ``row.get`` reads them).
_TEXTS = ("run_id", "observed_at", "raw", "observation_id", "observation_digest", "source", "source_observed_at",
          "resolver_source")
_OTHERS = ("status", "work_id", "score", "extracted_dois", "extracted_arxiv_ids", "evidence", "reference_index")
_ROW_DEFAULTS = dict.fromkeys(_TEXTS + _OTHERS + ("doi", "arxiv_id"))
_TEXTS_OF, _OTHERS_OF = itemgetter(*_TEXTS), itemgetter(*_OTHERS)


# ---------------------------------------------------------------------------------------------
# The rows of one record


def latest_per_reference(rows: Iterable[Mapping[str, Any]]) -> list[dict]:
    """Keep the latest observation of each (citing paper, reference index), its values plain:
    callers may pass ``observations`` rather than ``current``."""
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


def sorted_rows(rows: Sequence[Mapping[str, Any]], outbound: bool, plain: bool = False) -> list[Mapping[str, Any]]:
    """The latest row of each reference, plain (``plain_value``), in page order; ``plain``: the caller's
    rows are that already (``ledger_reads.papers_observations``), so they are only sorted."""
    kept = rows if plain else latest_per_reference(rows)
    try:  # the rows' own (int, text) pair as the key when every row has one: the usual rows, sorted fast
        ordered = sorted(kept, key=_OUT_ORDER if outbound else _IN_ORDER)
        if all(type(r["reference_index"]) is int and type(r["citing_paper"]) is str for r in ordered):
            return ordered
    except (KeyError, TypeError):
        pass

    def key(r: Mapping[str, Any]) -> tuple:
        idx, paper = int(r.get("reference_index") or 0), str(r.get("citing_paper"))
        return (idx, paper) if outbound else (paper, idx)
    return sorted(kept, key=key)


# ---------------------------------------------------------------------------------------------
# The values of a record


def notice_dict(notice: StandingNotice | Mapping[str, Any] | None, *, linked: bool,
                source_times: Mapping[str, Any]) -> dict[str, Any]:
    """A reference's notice as the record shows it (no work: ``no_canonical_work``; a work whose
    notice is not at hand: ``not_checked``), with the receipts of the sources it was checked against."""
    if not linked:
        notice = unavailable_notice(UnavailableReason.NO_CANONICAL_WORK)
    elif notice is None:
        notice = unavailable_notice(UnavailableReason.NOT_CHECKED)
    elif not isinstance(notice, StandingNotice):
        notice = notice_from_dict(notice)
    out = plain_value(notice_to_dict(notice))
    out["checked_at"] = iso_z(out["checked_at"])
    out["receipts"] = notice_receipts(out, source_times)
    return out


def evidence_value(value: Any) -> Any:
    """A reference's evidence as the record holds it (``evidence.parse_evidence`` for its text)."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        return parse_evidence(value)
    return plain_value(value)


def work_view(work: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not work:
        return None
    out = {k: plain_value(work.get(k)) for k in _WORK_KEYS if work.get(k) is not None}
    if "authors" in out and not isinstance(out["authors"], list):
        out["authors"] = [out["authors"]]
    return out


def resolved_view(row: Mapping[str, Any], works: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The cited work as the record shows it: ids, the catalog's title etc., and which catalog
    sources gave that metadata (``metadata_source``: null when the catalog row is not at hand)."""
    work_id = row["work_id"]
    resolved = {"work_id": work_id, "doi": row.get("doi"), "arxiv_id": row.get("arxiv_id")}
    catalog_row = works.get(work_id)
    known = work_view(catalog_row) or {}
    for k in ("title", "authors", "year", "venue"):
        if k in known:
            resolved[k] = known[k]
    resolved["metadata_source"] = list(plain_value((catalog_row or {}).get("sources")) or []) or None
    return resolved


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


# ---------------------------------------------------------------------------------------------
# Building the record


class _Pass:
    """What the references of one record look up: notices and cited works (cached for the pass
    when the caller keeps ``notice_cache`` / ``resolved_cache``), each run's catalog snapshot."""

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

    def snapshot(self, run_id: Any) -> tuple[Any, Any]:
        """The run's catalog fingerprint and that catalog's build time."""
        got = self.snapshots.get(run_id)
        if got is None:
            fingerprint = self.run_catalog.get(run_id)
            got = self.snapshots[run_id] = (fingerprint, iso_z(self.built_at.get(fingerprint)))
        return got

    def cited(self, row: Mapping[str, Any], work_id: Any, status: str) -> tuple:
        """(catalog row, notice row, resolved, its JCS, notice, its JCS) of a reference: one lookup a
        reference (kept in ``notice_cache`` by work, ids and linkedness)."""
        if not work_id:
            return (None, None, None, None, *self.notice(row))
        linked = status in WORK_STATES
        catalog_row, notice_row = self.works.get(work_id), self.notices.get(work_id)
        key = ("cited", work_id, row.get("doi"), row.get("arxiv_id"), linked)
        try:
            hit = self.notice_cache.get(key)
        except TypeError:  # an id that is no text (a row given by hand): made, not kept
            return (catalog_row, notice_row, *self.resolved(row, work_id), *self._notice(notice_row, linked))
        if hit is None or hit[0] is not catalog_row or hit[1] is not notice_row:  # the entry holds the rows
            hit = self.notice_cache[key] = (catalog_row, notice_row, *self.resolved(row, work_id),
                                            *self._notice(notice_row, linked))
        return hit

    def notice(self, row: Mapping[str, Any]) -> tuple[dict, Any]:
        """The notice of a reference with no work: a cited DOI's that a notice source lists, if any."""
        notices = self.notices
        for doi in row.get("extracted_dois") or ():
            if f"doi:{doi}" in notices:
                return self._notice(notices[f"doi:{doi}"], True)
        return self._notice(None, False)

    def _notice(self, notice: Any, linked: bool) -> tuple[dict, Any]:
        key = (id(notice), linked)  # (row, notice, its JCS): made once per notice row of a pass
        hit = self.notice_cache.get(key)
        if hit is None or hit[0] is not notice:  # the cache holds the row, so its id is not reused
            made = notice_dict(notice, linked=linked, source_times=self.source_times)
            hit = self.notice_cache[key] = (notice, made, _fragment(made))
        return hit[1], hit[2]

    def resolved(self, row: Mapping[str, Any], work_id: Any) -> tuple[dict | None, Any]:
        """The cited work's view (``resolved_view``), and its JCS: made once a pass per cited work
        and its ids; the records of the pass share the dict, which nothing changes after it is built."""
        catalog_row = self.works.get(work_id)
        key = (work_id, row.get("doi"), row.get("arxiv_id"), id(catalog_row))
        try:
            hit = self.resolved_cache.get(key)
        except TypeError:  # as ``cited``
            view = resolved_view(row, self.works)
            return view, _fragment(view)
        if hit is None or hit[0] is not catalog_row:
            view = resolved_view(row, self.works)
            hit = self.resolved_cache[key] = (catalog_row, view, _fragment(view))
        return hit[1], hit[2]


def _fragment(value: Any) -> Any:
    """A part the records of a pass share (a notice, a cited work's view) as an ``orjson.Fragment``
    of its JCS, when orjson's sorted text is that (checked once a pass); else False."""
    try:
        out = orjson.dumps(value, option=_SORTED)
    except orjson.JSONEncodeError:
        return False
    return Fragment(out) if orjson_text_is_jcs(out) else False


def _columns(row: Mapping[str, Any]) -> tuple[tuple, tuple]:
    try:
        return _TEXTS_OF(row), _OTHERS_OF(row)
    except KeyError:  # a row given by hand, lacking some columns
        full = {**_ROW_DEFAULTS, **row}
        return _TEXTS_OF(full), _OTHERS_OF(full)


def _entry(row: Mapping[str, Any], ctx: _Pass) -> tuple[dict, dict | None]:
    """One reference's entry, and the same entry for its JCS (members in JCS order, the shared parts
    and the evidence as their JCS), or None for that when a value in it may be one orjson writes
    otherwise than JCS."""
    texts, (status, work_id, score, dois, arxiv_ids, text, index) = _columns(row)
    index = index if type(index) is int else int(index or 0)
    run_id, observed_at, raw, oid, odigest, source, seen, via = texts
    raw, source, seen, dois, arxiv_ids = raw or "", source or "unknown", seen or observed_at, list(dois or ()), \
        list(arxiv_ids or ())
    fingerprint, snapshot_at = ctx.snapshot(run_id)
    status = status if type(status) is str else str(status)
    _, _, resolved, resolved_jcs, notice, notice_jcs = ctx.cited(row, work_id, status)
    if type(text) is str and text:
        evidence, evidence_jcs = evidence_and_jcs(text)
    else:
        evidence, evidence_jcs = evidence_value(text), None
    item = {"reference_index": index, "observation_id": oid, "observation_digest": odigest, "run_id": run_id,
            "source": source, "source_observed_at": seen, "snapshot_fingerprint": fingerprint,
            "snapshot_observed_at": snapshot_at, "cited_as": {"raw": raw, "dois": dois, "arxiv_ids": arxiv_ids},
            "status": status, "resolved": resolved, "resolver_source": via, "resolved_at": observed_at,
            "score": score, "evidence": evidence, "notice": notice}
    if evidence_jcs is None or not notice_jcs or not (resolved_jcs or resolved is None) or not _score_vouched(score) \
            or not _SCALARS.issuperset(map(type, (*texts, fingerprint, snapshot_at, *dois, *arxiv_ids))):
        return item, None
    return item, {"cited_as": {"arxiv_ids": arxiv_ids, "dois": dois, "raw": raw}, "evidence": Fragment(evidence_jcs),
                  "notice": notice_jcs, "observation_digest": odigest, "observation_id": oid,
                  "reference_index": index, "resolved": resolved_jcs, "resolved_at": observed_at,
                  "resolver_source": via, "run_id": run_id, "score": score, "snapshot_fingerprint": fingerprint,
                  "snapshot_observed_at": snapshot_at, "source": source, "source_observed_at": seen, "status": status}


def _score_vouched(score: Any) -> bool:
    """Whether orjson writes the score as JCS does: text, an integer, or a fraction from 1e-4 up in
    magnitude (``evidence``)."""
    if type(score) is float:
        return EXPONENT_BELOW <= abs(score) < SAFE_INTEGER and not score.is_integer()
    return True


class _Tally:
    """A record's entries counted: by status and by the standing of those naming a catalog work (a
    link or a ``metadata_mismatch``: the counts by standing and the notices lane are taken over
    them, ``linked`` counts the links alone), those decided, those with a notice; and the JCS form
    of each entry (None: the checked writer makes that list's bytes)."""

    def __init__(self, made: list[tuple[dict, dict | None]]):
        self.items = [item for item, _ in made]
        self.canon: list[dict | None] = [canon for _, canon in made]
        self.by_status = by_status = {s: 0 for s in STATES}
        self.by_standing = by_standing = {s: 0 for s in STANDINGS}
        self.named_notices: list[Mapping[str, Any]] = []
        self.noticed: list[dict] = []
        self.noticed_canon: list[dict | None] = []
        self.decided = 0
        for item in self.items:  # every status first: an unknown one is the error, whatever else is odd
            if item["status"] not in by_status:
                raise ValueError(f"reference {item['reference_index']}: unknown status {item['status']!r}")
            by_status[item["status"]] += 1
        for item, canon in made:
            status, notice = item["status"], item["notice"]
            self.decided += status != _UNAVAILABLE
            if status in WORK_STATES and item["resolved"]:
                by_standing[notice["standing"]] += 1  # (an unknown standing: KeyError)
                self.named_notices.append(notice)
            if notice["standing"] not in _NO_NOTICE:
                self.noticed.append(item)
                self.noticed_canon.append(canon)


def build_record(paper_id: str, paper_work: Mapping[str, Any] | None, outbound: Sequence[Mapping[str, Any]],
                 inbound: Sequence[Mapping[str, Any]], notices: Mapping[str, StandingNotice | Mapping[str, Any]],
                 generated_from: Mapping[str, Any], page_cap: int | None = DEFAULT_PAGE_CAP,
                 works: Mapping[str, Mapping[str, Any]] | None = None,
                 provenance: Mapping[str, Any] | None = None) -> BuiltRecord:
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
    Counts and coverage are taken over every row; only the listed items are capped.
    """
    works, provenance = works or {}, provenance or {}
    plain = bool(provenance.get("rows_plain"))
    out_rows, in_rows = sorted_rows(outbound, True, plain), sorted_rows(inbound, False, plain)
    ctx = _Pass(notices, works, provenance)
    made = [_entry(row, ctx) for row in out_rows]
    titles = provenance.get("citing_titles") or {}
    in_items = [inbound_entry(r, titles) for r in in_rows]
    got = _Tally(made)
    counts = {"references": len(got.items), "by_status": got.by_status, "linked": linked_count(got.by_status),
              "cited_works_by_standing": got.by_standing, "inbound": len(in_items)}
    gen = plain_value(dict(generated_from))
    times = [t for t in (r.get("observed_at") for r in [*out_rows, *in_rows]) if t]
    as_of = gen.get("as_of") or (max(times) if times else None)
    inbound_page, outbound_page = paged(in_items, page_cap), paged(got.items, page_cap)
    citing_ids = sorted({str(r.get("citing_paper")) for r in out_rows})
    paper = paper_section(paper_id, plain_value(paper_work), work_view(paper_work), citing_ids)
    coverage = lanes(len(got.items), got.decided, got.named_notices, inbound_page, gen.get("tables") or {}, as_of,
                     paper_work)
    page_caps = {"outbound": page_cap, "inbound": page_cap}
    record = BuiltRecord(schema=RECORD_SCHEMA, as_of=as_of, paper=paper, counts=counts, outbound=outbound_page,
                         with_notices=got.noticed, inbound=inbound_page, coverage=coverage, page_caps=page_caps,
                         empty_means=dict(EMPTY_MEANS), generated_from=gen)
    record.members = (
        ("as_of", as_of, _value_jcs(as_of)), ("counts", counts, jcs_plain(counts)),
        ("coverage", coverage, jcs_plain(coverage)), ("empty_means", record["empty_means"], _EMPTY_MEANS_JCS),
        ("generated_from", gen, jcs_plain(gen)), ("inbound", inbound_page, jcs_plain(inbound_page)),
        ("outbound", outbound_page, _listed_jcs(outbound_page, got.canon)),
        ("page_caps", page_caps, jcs_plain(page_caps)), ("paper", paper, jcs_plain(paper)),
        ("schema", RECORD_SCHEMA, _SCHEMA_JCS),
        ("with_notices", got.noticed, _items_jcs(got.noticed_canon) or jcs_plain(got.noticed)))
    record.digest = record["content_digest"] = body_digest(record.members)
    record.unlisted = got.items[len(outbound_page["items"]):]  # on the pages, not in the file
    return record


def _value_jcs(value: Any) -> bytes:
    return jcs_plain(value) if type(value) in (dict, list) else jcs_exact(value)


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


def _listed_jcs(page: dict[str, Any], canon: list[dict | None]) -> bytes:
    """The JCS of ``paged`` of the entries; by the checked writer when ``_items_jcs`` cannot."""
    items = _items_jcs(canon[:len(page["items"])])
    if items is None:
        return jcs_plain(page)
    return b"".join((b'{"cap":', _value_jcs(page["cap"]), b',"items":', items,
                     b',"listed":', _value_jcs(page["listed"]), b',"total":', _value_jcs(page["total"]),
                     b',"truncated":', b"true" if page["truncated"] else b"false",
                     b"}"))  # one copy of the entries' text, not one per piece
