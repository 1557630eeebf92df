"""The pieces of a Pith-shaped record taken from citeledger's v2 record (a plain dict): paper
references, the cited work, standing notices, links, and the thesis sentence. citeledger's values are
copied, never re-judged; a fact citeledger does not know is null, as Pith writes "not known"."""
from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Callable, Iterable, Mapping, Sequence
from urllib.parse import quote

from .states import pith_reason

_ARXIV_NEW = re.compile(r"^(?:arxiv:|10\.48550/arxiv\.)?(\d{4}\.\d{4,5})(?:v(\d+))?$", re.IGNORECASE)
_ARXIV_OLD = re.compile(r"^(?:arxiv:|10\.48550/arxiv\.)?([a-z][a-z.\-]*/\d{7})(?:v(\d+))?$", re.IGNORECASE)
_VERSION = re.compile(r"^v?(\d+)$")

PageOf = Callable[[str], str]
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


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


def default_page(paper_id: str) -> str:
    """Where a paper is shown when the caller names no record pages: arXiv's abstract page, doi.org,
    or a ``urn:citeledger:paper:`` name for any other id."""
    arxiv, _ = arxiv_parts(paper_id)
    if arxiv:
        return f"https://arxiv.org/abs/{arxiv}"
    if paper_id.lower().startswith("10."):
        return "https://doi.org/" + quote(paper_id, safe="/:;()._-")
    return "urn:citeledger:paper:" + quote(paper_id, safe="")


def latest_version(versions: Iterable[Mapping[str, Any]] | None) -> int | None:
    numbers = [int(m.group(1)) for v in versions or () if (m := _VERSION.match(str(v.get("version") or "")))]
    return max(numbers) if numbers else None


def paper_snapshot(record: Mapping[str, Any]) -> str | None:
    """When the catalog the paper's metadata came from was taken: the latest catalog snapshot of the
    record's references, when the paper is in the catalog (else nothing is known)."""
    if not (record.get("paper") or {}).get("in_catalog"):
        return None
    times = [i.get("snapshot_observed_at") for i in _items(record, "outbound")]
    return max((t for t in times if t), default=None)


def _items(record: Mapping[str, Any], lane: str) -> list[Mapping[str, Any]]:
    return list((record.get(lane) or {}).get("items") or [])


def paper_head(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record's ``paper``: id, title, versions and dates, the primary category (arXiv's first
    listed category)."""
    paper = record.get("paper") or {}
    work = paper.get("work") or {}
    ident = paper.get("identity") or {}
    arxiv = ident.get("id") if ident.get("scheme") == "arxiv" else arxiv_parts(paper.get("id"))[0]
    categories = paper.get("categories") or []
    return {
        "arxiv_id": arxiv,
        "last_updated": paper.get("last_updated_at"),
        "latest_version": latest_version(paper.get("versions")),
        "primary_category": categories[0] if categories else None,
        "snapshot_observed_at": paper_snapshot(record),
        "submitted_at": paper.get("submitted_at"),
        "title": work.get("title"),
    }


def own_paper_ref(record: Mapping[str, Any], head: Mapping[str, Any]) -> dict[str, Any]:
    """The paper as ``citing_paper`` (outbound) or ``cited_paper`` (inbound): its version is the
    one its id names, when it names one."""
    return {"arxiv_id": head["arxiv_id"], "last_updated": head["last_updated"],
            "snapshot_observed_at": head["snapshot_observed_at"], "submitted_at": head["submitted_at"],
            "title": head["title"], "version": arxiv_parts((record.get("paper") or {}).get("id"))[1]}


def other_paper_ref(paper_id: str, title: str | None) -> dict[str, Any]:
    """A citing paper of an inbound observation: its id and title; its dates are not in the record."""
    arxiv, version = arxiv_parts(paper_id)
    return {"arxiv_id": arxiv, "last_updated": None, "snapshot_observed_at": None, "submitted_at": None,
            "title": title, "version": version}


def joined(values: Any) -> str | None:
    """A list of source names as Pith's one string (``a, b``); null for none."""
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


def cited_work(resolved: Mapping[str, Any] | None, snapshot: str | None, title: str | None) -> dict[str, Any]:
    """The cited work: the catalog's ids and metadata of the work the reference resolved to, or
    (no work) every id null and the title parsed from the reference."""
    work = resolved or {}
    return {
        "arxiv_id": work.get("arxiv_id"),
        "doi": work.get("doi"),
        "metadata_source": joined(work.get("metadata_source")),
        "pith_arxiv_id": None,  # an id in Pith's own corpus: citeledger does not know it
        "snapshot_observed_at": snapshot,
        "title": work.get("title") if resolved else title,
        "venue": work.get("venue"),
        "work_id": work.get("work_id"),
        "year": work.get("year") if isinstance(work.get("year"), int) else None,
    }


def cited_paper(resolved: Mapping[str, Any] | None, snapshot: str | None) -> dict[str, Any] | None:
    """The cited work as an arXiv paper, when it is one (its dates and version: not in the record)."""
    if not resolved or not resolved.get("arxiv_id"):
        return None
    return {"arxiv_id": resolved["arxiv_id"], "last_updated": None, "snapshot_observed_at": snapshot,
            "submitted_at": None, "title": resolved.get("title"), "version": None}


def notice_sentence(checked_at: str | None, events: Sequence[Mapping[str, Any]]) -> str:
    when = checked_at or "an unrecorded time"
    if not events:
        return f"No event found in the named queried sources as of {when}."
    kinds = ", ".join(sorted({str(e.get("type")) for e in events}))
    plural = "s" if len(events) > 1 else ""
    return f"{len(events)} event{plural} found in the named queried sources as of {when}: {kinds}."


def standing_notice(notice: Mapping[str, Any] | None) -> dict[str, Any]:
    """citeledger's notice of the cited work in Pith's words: ``measured`` with the sentence Pith
    writes and the source receipts, or ``unavailable`` with its reason."""
    notice = notice or {"state": "unavailable", "reason": "not_checked"}
    receipts = [{"observed_at": r.get("checked_at"), "source": str(r.get("source"))}
                for r in notice.get("receipts") or []]
    if notice.get("state") != "measured":
        return {"events": [], "reason": pith_reason(notice.get("reason")) or "not_checked",
                "source_receipts": receipts, "state": "unavailable"}
    events = [dict(e) for e in notice.get("events") or []]
    return {"events": events, "observation": notice_sentence(notice.get("checked_at"), events), "reason": None,
            "source_receipts": receipts, "state": "measured"}


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
