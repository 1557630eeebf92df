"""The pieces of a Pith-shaped record taken from citeledger's v2 record (a plain dict): paper
references, the cited work, standing notices, routes, ids in Pith's form and the thesis sentence.
citeledger's values are copied, never re-judged; a fact citeledger does not know is null, as Pith
writes "not known"; a fact only citeledger has goes to the ``citeledger`` extension of the record or
of the observation, never into one of Pith's members."""
from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import quote

from .states import pith_reason, pith_source

_ARXIV_NEW = re.compile(r"^(?:arxiv:|10\.48550/arxiv\.)?(\d{4}\.\d{4,5})(?:v(\d+))?$", re.IGNORECASE)
_ARXIV_OLD = re.compile(r"^(?:arxiv:|10\.48550/arxiv\.)?([a-z][a-z.\-]*/\d{7})(?:v(\d+))?$", re.IGNORECASE)
_VERSION = re.compile(r"^v?(\d+)$")

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
# Pith's ids are UUIDs; citeledger's (``obs:<hex>``, ``doi:10.1/x``) become name-based UUIDs (RFC 4122
# version 5) in this namespace, the same id always the same UUID, and are kept as they are in the
# ``citeledger`` extension, so an exported observation leads back to its ledger row.
ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/citeledger/citeledger#pith-ids")

PaperFacts = Mapping[str, Any]  # an arXiv paper as the catalog knows it: title, submitted_at, last_updated, version


def arxiv_parts(paper_id: str | None) -> tuple[str | None, int | None]:
    """``(arXiv id, version)`` of a paper id written as an arXiv id (``arXiv:2501.00254v1``,
    ``hep-th/9901001``, ``10.48550/arXiv.2501.00254``); ``(None, None)`` for any other id."""
    text = (paper_id or "").strip()
    for pattern in (_ARXIV_NEW, _ARXIV_OLD):
        match = pattern.match(text)
        if match:
            arxiv = match.group(1)
            return (arxiv if pattern is _ARXIV_NEW else arxiv.lower()), int(match.group(2)) if match.group(2) else None
    return None, None


def route(paper_id: str) -> str:
    """A paper's route as Pith writes it (``/paper/2501.00254``): its arXiv id, or its id, escaped."""
    arxiv, _ = arxiv_parts(paper_id)
    return "/paper/" + (arxiv or quote(paper_id.strip(), safe=""))


def pith_id(kind: str, ident: Any) -> str | None:
    """citeledger's id of an observation or a work in Pith's form (a UUID), None for no id."""
    return str(uuid.uuid5(ID_NAMESPACE, f"{kind}:{ident}")) if ident else None


def version_number(text: Any) -> int | None:
    match = _VERSION.match(str(text or ""))
    return int(match.group(1)) if match else None


def latest_version(versions: Iterable[Mapping[str, Any]] | None) -> int | None:
    numbers = [n for v in versions or () if (n := version_number(v.get("version"))) is not None]
    return max(numbers) if numbers else None


def paper_facts(work: Mapping[str, Any] | None, versions: Sequence[Mapping[str, Any]] | None,
                snapshot: str | None) -> dict[str, Any] | None:
    """An arXiv paper of the catalog as a Pith paper reference's facts: its title, first and last
    version's times, latest version, and when the catalog holding them was built."""
    if not work:
        return None
    versions = list(versions or [])
    return {"title": work.get("title"), "submitted_at": versions[0]["created"] if versions else None,
            "last_updated": versions[-1]["created"] if versions else None, "version": latest_version(versions),
            "snapshot_observed_at": snapshot}


def _items(record: Mapping[str, Any], lane: str) -> list[Mapping[str, Any]]:
    return list((record.get(lane) or {}).get("items") or [])


def paper_head(record: Mapping[str, Any], snapshot: str | None) -> dict[str, Any]:
    """The record's ``paper``: id, title, versions and dates, the primary category (arXiv's first
    listed category), when the catalog they come from was built (null for a paper not in it)."""
    paper = record.get("paper") or {}
    work = paper.get("work") or {}
    ident = paper.get("identity") or {}
    arxiv = ident.get("id") if ident.get("scheme") == "arxiv" else arxiv_parts(paper.get("id"))[0]
    categories = paper.get("categories") or []
    times = [str(i["snapshot_observed_at"]) for i in _items(record, "outbound") if i.get("snapshot_observed_at")]
    return {
        "arxiv_id": arxiv,
        "last_updated": paper.get("last_updated_at"),
        "latest_version": latest_version(paper.get("versions")),
        "primary_category": categories[0] if categories else None,
        "snapshot_observed_at": (snapshot or max(times, default=None)) if paper.get("in_catalog") else None,
        "submitted_at": paper.get("submitted_at"),
        "title": work.get("title"),
    }


def own_paper_ref(record: Mapping[str, Any], head: Mapping[str, Any]) -> dict[str, Any]:
    """The paper as ``citing_paper`` (outbound) or ``cited_paper`` (inbound): its version is the
    one its ledger id names, else the latest the catalog knows."""
    named = arxiv_parts((record.get("paper") or {}).get("id"))[1]
    return {"arxiv_id": head["arxiv_id"], "last_updated": head["last_updated"],
            "snapshot_observed_at": head["snapshot_observed_at"], "submitted_at": head["submitted_at"],
            "title": head["title"], "version": named or head["latest_version"]}


def paper_ref(arxiv: str | None, named_version: int | None, title: str | None,
              facts: PaperFacts | None) -> dict[str, Any]:
    """Another arXiv paper (a cited paper, an inbound citing paper) as Pith refers to it: the
    catalog's facts where it has the paper, the title the record gives otherwise."""
    facts = facts or {}
    return {"arxiv_id": arxiv, "last_updated": facts.get("last_updated"),
            "snapshot_observed_at": facts.get("snapshot_observed_at"), "submitted_at": facts.get("submitted_at"),
            "title": facts.get("title") or title, "version": named_version or facts.get("version")}


def joined(values: Any) -> str | None:
    """A list of names as Pith's one string (``a, b``); null for none."""
    if isinstance(values, str):
        return values or None
    return ", ".join(str(v) for v in values) if values else None


def parsed_title(evidence: Any) -> str | None:
    """The title citeledger parsed out of the reference string, where its evidence kept one."""
    if not isinstance(evidence, Mapping):
        return None
    for holder in (evidence, evidence.get("fuzzy")):
        if isinstance(holder, Mapping):
            for key in ("parsed_title", "string_title"):
                if isinstance(holder.get(key), str) and holder[key].strip():
                    return holder[key]
    return None


def cited_text(item: Mapping[str, Any]) -> str | None:
    """What a reference with no work cited, as Pith keeps it in ``cited_work.title``: the title
    citeledger parsed from it, else the reference string itself (a string citeledger could not read,
    ``parse_uncertain``, keeps its text)."""
    raw = (item.get("cited_as") or {}).get("raw")
    return parsed_title(item.get("evidence")) or (" ".join(str(raw).split()) or None if raw else None)


def cited_work(resolved: Mapping[str, Any] | None, snapshot: str | None, title: str | None,
               arxiv_paper: str | None) -> dict[str, Any]:
    """The cited work: the catalog's ids and metadata of the work the reference resolved to (its id
    in Pith's form; ``pith_arxiv_id`` the arXiv paper it is, when the catalog has it as one), or (no
    work) every id null and the text the reference cited."""
    work = resolved or {}
    return {
        "arxiv_id": work.get("arxiv_id"),
        "doi": work.get("doi"),
        "metadata_source": joined(work.get("metadata_source")),
        "pith_arxiv_id": arxiv_paper,
        "snapshot_observed_at": snapshot,
        "title": work.get("title") if resolved else title,
        "venue": work.get("venue"),
        "work_id": pith_id("work", work.get("work_id")),
        "year": work.get("year") if isinstance(work.get("year"), int) and not isinstance(work.get("year"), bool)
        else None,
    }


def notice_sentence(checked_at: str | None, events: Sequence[Mapping[str, Any]]) -> str:
    when = checked_at or "an unrecorded time"
    if not events:
        return f"No event found in the named queried sources as of {when}."
    kinds = ", ".join(sorted({str(e.get("type")) for e in events}))
    plural = "s" if len(events) > 1 else ""
    return f"{len(events)} event{plural} found in the named queried sources as of {when}: {kinds}."


def source_receipts(notice: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One receipt per source organisation asked, in Pith's names (``retraction_watch_csv`` and
    ``retraction_watch_doi_nature`` are both ``retraction_watch``), each at its latest check."""
    latest: dict[str, str | None] = {}
    for receipt in notice.get("receipts") or []:
        name, when = pith_source(str(receipt.get("source"))), receipt.get("checked_at")
        old = latest.get(name)
        latest[name] = max(old, when) if old and when else old or when
    return [{"observed_at": latest[name], "source": name} for name in sorted(latest)]


def standing_notice(notice: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """citeledger's notice of the cited work in Pith's words (``measured`` with the sentence Pith
    writes, the events and the sources asked; or ``unavailable`` with its reason) and what of it
    only citeledger says (its reason's own name, each source it asked, the standing it decided)."""
    notice = notice or {"state": "unavailable", "reason": "not_checked"}
    own = {"reason": notice.get("reason"), "sources_checked": list(notice.get("sources_checked") or []),
           "standing": notice.get("standing")}
    if notice.get("state") != "measured":
        return {"events": [], "reason": pith_reason(notice.get("reason") or "not_checked"),
                "source_receipts": source_receipts(notice), "state": "unavailable"}, own
    events = [{"date": e.get("date"), "notice_doi": e.get("notice_doi"), "source": pith_source(str(e.get("source"))),
               "type": str(e.get("type"))} for e in notice.get("events") or []]
    return {"events": events, "observation": notice_sentence(notice.get("checked_at"), events), "reason": None,
            "source_receipts": source_receipts(notice), "state": "measured"}, own


def standing_sources(notices: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every notice source the observations name, with its latest time, by name."""
    latest: dict[str, str | None] = {}
    for notice in notices:
        for stamp in notice.get("source_receipts") or []:
            old, new = latest.get(stamp["source"]), stamp.get("observed_at")
            latest[stamp["source"]] = max(old, new) if old and new else old or new
    return [{"observed_at": latest[s], "source": s} for s in sorted(latest)]


def day_words(as_of: str | None) -> str | None:
    """``2026-08-15T10:47:00Z`` -> ``15 August 2026``."""
    if not as_of:
        return None
    day = datetime.fromisoformat(as_of.replace("Z", "+00:00"))
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"  # not strftime's %B: that follows the locale


def thesis(as_of: str | None, listed: int, total: int, inbound: int, label: str) -> str:
    """The record's first sentence, as Pith words it, naming this ledger as the inbound scope."""
    when = f"As of {day_words(as_of)}" if as_of else "With no dated observation"
    inbound_words = f"{inbound} inbound citation observation{'' if inbound == 1 else 's'} in this ledger"
    return (f"{when}, this Paper Citation Record lists {listed} of {total} outbound references and "
            f"{inbound_words} for {label}.")
