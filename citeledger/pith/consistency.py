"""Whether a Pith record says the same thing everywhere it says it: the digests it states are its
content's, and the members outside what is digested or signed agree with what is inside.

A schema checks shapes; it passes a zeroed ``context_digest``, counts that do not add up, or a
number record whose ``pith_number`` or ``paper.title`` was changed (a number record's receipt signs
only its ``canonical_record``; a citation record's digest leaves out ``as_of``). Each check here
re-derives a member from the content it comes from:

* a citation record: ``context_digest`` and every ``observation_digest`` recomputed (``digests``),
  and the digest a ``receipt`` beside it signs;
  the state counts add up to the references and match the statuses listed; ``displayed`` is the
  number listed, within the caps; each lane observes no more than its denominator, the inbound and
  external lanes as many as are listed; the thesis sentence names the day of ``as_of``, the counts
  and the paper; every observation of the paper names it (outbound: as citing paper, inbound: as
  cited paper); observation ids and outbound reference indexes are not repeated; a measured notice
  names the sources it asked, and every source a notice names is a standing source;
* a number record: ``canonical_sha256`` recomputed; the pith number and its short forms and aliases
  are that digest's base32 (the year is the year of submission); ``source`` is the canonical
  record's; ``paper``'s title, licence, categories and date are those the canonical record digests
  (the title through ``title_canon_sha256``), and the graph snapshot's copy is the same paper; the
  links name the number; the claim count is the number of claims listed.

Each problem is one line, ``member: what does not hold``; an empty list means the record is
consistent. Pure functions of the record.
"""
from __future__ import annotations

import base64
import re
from collections import Counter
from typing import Any, Iterator, Mapping

from .digests import PREFIX, canonical_sha256, context_digest, observation_digest, title_canon_sha256
from .export_parts import day_words
from .schema import RecordKind, record_kind

_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_HEX = re.compile(r"^[0-9a-f]{64}$")
_THESIS = re.compile(r"^As of (?P<day>[^,]+), this Paper Citation Record lists (?P<listed>\d+) of (?P<total>\d+) "
                     r"outbound references? and (?P<inbound>\d+) inbound .* for (?P<paper>\S+)\.$")
_CODE = re.compile(r"[A-Z2-7]{26}")
_SHORT_ROUTE = re.compile(r"/paper/([A-Z2-7]{8})(?:$|[/?#.])")


def problems(record: Any) -> list[str]:
    """Every inconsistency of a Pith record of either kind; a record of neither kind is one problem."""
    kind = record_kind(record)
    if kind is RecordKind.PITH_CITATION_RECORD:
        return citation_record_problems(record)
    if kind is RecordKind.PITH_NUMBER_RECORD:
        return number_record_problems(record)
    return [f"schema: not a Pith record ({kind.value})"]


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _digest_problem(where: str, stated: Any, computed: str) -> str | None:
    if not isinstance(stated, str) or not _DIGEST.match(stated):
        return f"{where}: {str(stated)[:80]!r} is not a sha256 digest"
    if stated != computed:
        return f"{where}: states {stated}, its content gives {computed}: the content was changed"
    return None


def _observations(record: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for lane in ("outbound", "inbound"):
        for n, obs in enumerate(_items(record.get(lane))):
            yield f"{lane}[{n}]", _map(obs)


def citation_record_problems(record: Mapping[str, Any]) -> list[str]:
    """The checks of a ``pith.paper-citation-record.v1`` record (module docstring)."""
    computed = context_digest(record)
    found = [_digest_problem("context_digest", record.get("context_digest"), computed)]
    receipt = record.get("receipt")
    if isinstance(receipt, Mapping) and receipt.get("canonical_sha256") != computed.removeprefix(PREFIX):
        found.append(f"receipt.canonical_sha256: {str(receipt.get('canonical_sha256'))[:80]!r} is not the "
                     f"record's context digest {computed}")
    found += [_digest_problem(f"{where}.observation_digest", obs.get("observation_digest"), observation_digest(obs))
              for where, obs in _observations(record)]
    found += _count_problems(record) + _lane_problems(record) + _thesis_problems(record)
    found += _observation_problems(record) + _notice_problems(record)
    return [p for p in found if p]


def _count_problems(record: Mapping[str, Any]) -> list[str]:
    outbound, inbound = _items(record.get("outbound")), _items(record.get("inbound"))
    resolution = _map(record.get("reference_resolution"))
    counts = _map(resolution.get("state_counts"))
    total, displayed = resolution.get("total_outbound_references"), resolution.get("displayed")
    found = []
    if displayed != len(outbound):
        found.append(f"reference_resolution.displayed: {displayed}, but {len(outbound)} outbound observations "
                     "are listed")
    if isinstance(total, int) and isinstance(displayed, int) and displayed > total:
        found.append(f"reference_resolution.displayed: {displayed} is more than total_outbound_references {total}")
    numbers = [v for v in counts.values() if isinstance(v, int)]
    if isinstance(total, int) and sum(numbers) != total:
        found.append(f"reference_resolution.state_counts: add up to {sum(numbers)}, not to "
                     f"total_outbound_references {total}")
    listed = Counter(str(_map(o.get("resolution")).get("status")) for o in map(_map, outbound))
    whole = total == len(outbound)
    for status, n in sorted(listed.items()):
        stated = counts.get(status, 0)
        if (stated != n) if whole else (not isinstance(stated, int) or stated < n):
            found.append(f"reference_resolution.state_counts.{status}: {stated}, but {n} listed outbound "
                         f"observations are {status}")
    if whole:
        found += [f"reference_resolution.state_counts.{s}: {v}, but no listed outbound observation is {s}"
                  for s, v in sorted(counts.items()) if isinstance(v, int) and v and s not in listed]
    caps = _map(record.get("caps"))
    for lane, items in (("outbound", outbound), ("inbound", inbound)):
        cap = caps.get(lane)
        if isinstance(cap, int) and len(items) > cap:
            found.append(f"caps.{lane}: {cap}, but {len(items)} {lane} observations are listed")
    return found


def _lane_problems(record: Mapping[str, Any]) -> list[str]:
    found = []
    listed = {"inbound_itemization": len(_items(record.get("inbound"))),
              "external_citation_measurements": len(_items(record.get("external_citation_measurements")))}
    for n, lane in enumerate(map(_map, _items(record.get("coverage")))):
        name, observed, denominator = lane.get("lane"), lane.get("records_observed"), lane.get("denominator")
        if isinstance(observed, int) and isinstance(denominator, int) and observed > denominator:
            found.append(f"coverage[{n}] ({name}): records_observed {observed} is more than its denominator "
                         f"{denominator}")
        if name in listed and observed != listed[name]:
            found.append(f"coverage[{n}] ({name}): records_observed {observed}, but {listed[name]} are listed")
    return found


def _thesis_problems(record: Mapping[str, Any]) -> list[str]:
    thesis = record.get("thesis")
    match = _THESIS.match(thesis) if isinstance(thesis, str) else None
    if match is None:
        return []  # a thesis in other words states nothing this check can derive
    resolution = _map(record.get("reference_resolution"))
    found = []
    as_of = record.get("as_of")
    try:
        day = day_words(as_of) if isinstance(as_of, str) else None
    except ValueError:
        day = None
    if day != match["day"]:
        found.append(f"as_of: {str(as_of)[:40]!r} is not the day the thesis names ({match['day']})")
    for member, value, said in (("reference_resolution.displayed", resolution.get("displayed"), match["listed"]),
                                ("reference_resolution.total_outbound_references",
                                 resolution.get("total_outbound_references"), match["total"]),
                                ("inbound", len(_items(record.get("inbound"))), match["inbound"])):
        if str(value) != said:
            found.append(f"thesis: says {said} where {member} is {value}")
    arxiv = _map(record.get("paper")).get("arxiv_id")
    if arxiv and match["paper"] not in (f"arXiv:{arxiv}", arxiv):
        found.append(f"thesis: names {match['paper']}, the record's paper is arXiv:{arxiv}")
    return found


def _observation_problems(record: Mapping[str, Any]) -> list[str]:
    arxiv = _map(record.get("paper")).get("arxiv_id")
    found = []
    ids = Counter(obs.get("observation_id") for _, obs in _observations(record))
    found += [f"observation_id {str(i)[:80]!r}: listed {n} times" for i, n in ids.items() if n > 1]
    indexes = Counter(_map(o.get("citation")).get("reference_index") for o in map(_map, _items(record.get("outbound"))))
    found += [f"outbound reference_index {i}: listed {n} times" for i, n in indexes.items() if n > 1]
    if not arxiv:
        return found
    for where, obs in _observations(record):
        side = "citing_paper" if where.startswith("outbound") else "cited_paper"
        paper = _map(obs.get("citation")).get(side)
        if isinstance(paper, Mapping) and paper.get("arxiv_id") != arxiv:
            found.append(f"{where}.citation.{side}.arxiv_id: {str(paper.get('arxiv_id'))[:40]!r}, the record's "
                         f"paper is {arxiv}")
    return found


def _notice_problems(record: Mapping[str, Any]) -> list[str]:
    standing = {_map(s).get("source") for s in _items(record.get("standing_sources"))}
    found = []
    for where, obs in _observations(record):
        notice = _map(obs.get("standing_notice"))
        named = [_map(r).get("source") for r in _items(notice.get("source_receipts"))]
        if notice.get("state") == "measured" and not named:
            found.append(f"{where}.standing_notice: measured, but it names no source it asked")
        found += [f"{where}.standing_notice.source_receipts: {str(s)[:40]!r} is not a standing source"
                  for s in named if s not in standing]
    return found


# --- number records -------------------------------------------------------------------------------


def number_record_problems(record: Mapping[str, Any]) -> list[str]:
    """The checks of a ``pith_number_record`` (module docstring)."""
    canonical = _map(record.get("canonical_record"))
    stated = record.get("canonical_sha256")
    computed = canonical_sha256(canonical)
    if not isinstance(stated, str) or not _HEX.match(stated):
        return [f"canonical_sha256: {str(stated)[:80]!r} is not a hex sha256 digest"]
    if stated != computed:
        return [f"canonical_sha256: states {stated}, its canonical_record gives {computed}: the content was changed"]
    receipt = record.get("receipt")
    found = []
    if isinstance(receipt, Mapping) and receipt.get("canonical_sha256") != stated:
        found.append(f"receipt.canonical_sha256: {str(receipt.get('canonical_sha256'))[:80]!r} is not the "
                     f"record's {stated}")
    code = base64.b32encode(bytes.fromhex(stated)).decode()[:26]
    return found + _number_problems(record, canonical, code) + _paper_problems(record, canonical) + \
        _link_problems(record, code) + _snapshot_problems(record, canonical)


def _number_problems(record: Mapping[str, Any], canonical: Mapping[str, Any], code: str) -> list[str]:
    metadata = _map(canonical.get("metadata"))
    year = str(metadata.get("submitted_at") or "")[:4]
    found = []
    number = record.get("pith_number")
    expected = f"pith:{year}:{code}" if year.isdigit() else None
    if not isinstance(number, str) or not number.endswith(":" + code) or (expected and number != expected):
        found.append(f"pith_number: {str(number)[:60]!r} is not {expected or 'pith:<year>:' + code}, the number of "
                     "its canonical_sha256")
    short = record.get("short_pith_number")
    if short is not None and short != f"pith:{code[:8]}":
        found.append(f"short_pith_number: {str(short)[:40]!r} is not pith:{code[:8]}")
    source = _map(canonical.get("source"))
    for alias in map(_map, _items(record.get("aliases"))):
        kind, value = alias.get("alias_kind"), alias.get("alias_value")
        wanted = {"arxiv": source.get("id"), "arxiv_version": f"{source.get('id')}v{source.get('version')}",
                  "doi": f"10.48550/arxiv.{source.get('id')}"}.get(str(kind)) if source.get("kind") == "arxiv" else None
        if isinstance(kind, str) and kind.startswith("pith_short_") and kind[11:].isdigit():
            wanted = code[:int(kind[11:])]
        if wanted is not None and value != wanted:
            found.append(f"aliases: {kind} {str(value)[:60]!r} is not {wanted}")
    return found


def _paper_problems(record: Mapping[str, Any], canonical: Mapping[str, Any]) -> list[str]:
    found = []
    if _map(record.get("source")) != _map(canonical.get("source")):
        found.append("source: not the canonical record's source")
    paper, metadata = _map(record.get("paper")), _map(canonical.get("metadata"))
    title = paper.get("title")
    if "title_canon_sha256" in metadata and (not isinstance(title, str) or
                                              title_canon_sha256(title) != metadata["title_canon_sha256"]):
        found.append(f"paper.title: {str(title)[:60]!r} is not the title the canonical record digests")
    pairs = (("license", "license"), ("primary_cat", "primary_cat"), ("submitted_at", "submitted_at"))
    found += [f"paper.{ours}: {str(paper.get(ours))[:60]!r} is not the canonical record's "
              f"{str(metadata[theirs])[:60]!r}" for ours, theirs in pairs
              if theirs in metadata and paper.get(ours) != metadata[theirs]]
    cats = paper.get("cross_cats")
    if "cross_cats_sorted" in metadata and (not isinstance(cats, list) or
                                             sorted(map(str, cats)) != metadata["cross_cats_sorted"]):
        found.append("paper.cross_cats: not the categories the canonical record lists")
    return found


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _link_problems(record: Mapping[str, Any], code: str) -> list[str]:
    found = []
    for member in ("links", "agent_actions"):
        for link in _strings(record.get(member)):
            others = [c for c in _CODE.findall(link) if c != code] + \
                [s for s in _SHORT_ROUTE.findall(link) if s != code[:8]]
            if others:
                found.append(f"{member}: {link[:100]!r} names another number than the record's")
    return found


def _snapshot_problems(record: Mapping[str, Any], canonical: Mapping[str, Any]) -> list[str]:
    snapshot = _map(record.get("graph_snapshot"))
    found = []
    if "paper" in snapshot and snapshot["paper"] != record.get("paper"):
        found.append("graph_snapshot.paper: not the record's paper")
    if "source" in snapshot and _map(snapshot["source"]) != _map(canonical.get("source")):
        found.append("graph_snapshot.source: not the canonical record's source")
    claims = _map(snapshot.get("claims"))
    if isinstance(claims.get("count"), int) and isinstance(claims.get("items"), list) and \
            claims["count"] != len(claims["items"]):
        found.append(f"graph_snapshot.claims.count: {claims['count']}, but {len(claims['items'])} claims are listed")
    return found


def digest_of(record: Mapping[str, Any]) -> str:
    """The digest a Pith record is known by, recomputed from its content: a citation record's context
    digest, a number record's ``canonical_sha256`` (with ``sha256:``)."""
    if record_kind(record) is RecordKind.PITH_NUMBER_RECORD:
        return PREFIX + canonical_sha256(_map(record.get("canonical_record")))
    return context_digest(record)
