"""Pith's names for states, notice reasons and coverage lanes, and citeledger's for the same.

Pith's per-reference ``resolution.status`` uses citeledger's own state names for the six states it
has; Pith has no ``unavailable`` ("could not check"), which citeledger never folds into another
state. The names are mapped, never the judgements: a Pith ``verified_fuzzy`` on a BibTeX artefact
stays ``verified_fuzzy`` here, and comparing it with citeledger's verdict is the comparison's job.
"""
from __future__ import annotations

import enum

CITELEDGER_STATES = ("parse_uncertain", "verified_exact", "metadata_mismatch", "verified_fuzzy",
                     "malformed_identifier", "unavailable", "unresolved")
PITH_STATES = ("verified_exact", "verified_fuzzy", "metadata_mismatch", "malformed_identifier", "parse_uncertain",
               "unresolved")

# Pith ``resolution.status`` -> citeledger ``status``.
PITH_TO_CITELEDGER_STATE: dict[str, str] = {name: name for name in PITH_STATES}


class StateMapping(str, enum.Enum):
    """How a Pith state name maps to citeledger's."""

    SAME = "same"  # the same name and meaning
    UNKNOWN = "unknown"  # a name Pith's published records do not use


def citeledger_state(pith_status: str) -> tuple[str | None, StateMapping]:
    """citeledger's state for a Pith ``resolution.status`` and how it maps; ``(None, UNKNOWN)`` for a
    name outside Pith's published vocabulary (kept as Pith's in the row, never guessed)."""
    state = PITH_TO_CITELEDGER_STATE.get(pith_status)
    return (state, StateMapping.SAME) if state else (None, StateMapping.UNKNOWN)


def pith_status(citeledger_status: str) -> str:
    """Pith's ``resolution.status`` for citeledger's state: the same name for the six both have;
    citeledger's ``unavailable`` (no source could be asked) is, in Pith's words, a reference not
    resolved (``unresolved``), its own state kept in the record's ``citeledger`` extension."""
    return citeledger_status if citeledger_status in PITH_STATES else "unresolved"


# citeledger notice ``reason`` -> Pith ``standing_notice.reason``. Pith's published records name
# one reason, for a reference with no canonical work; citeledger's reasons that the work's notices
# could not be asked (no source loaded, a source unreadable) get one name in Pith's form. The
# precise reason stays in the ``citeledger`` extension of the observation.
CITELEDGER_TO_PITH_REASON: dict[str, str] = {
    "no_canonical_work": "canonical_work_link_unavailable",
    "no_work_identifier": "canonical_work_link_unavailable",
    "not_checked": "notice_sources_unavailable",
    "source_unreadable": "notice_sources_unavailable",
}
PITH_REASONS = ("canonical_work_link_unavailable", "notice_sources_unavailable")
PITH_TO_CITELEDGER_REASON: dict[str, str] = {"canonical_work_link_unavailable": "no_canonical_work",
                                             "notice_sources_unavailable": "not_checked"}


def pith_reason(citeledger_reason: str | None) -> str | None:
    if citeledger_reason is None:
        return None
    return CITELEDGER_TO_PITH_REASON.get(citeledger_reason, "notice_sources_unavailable")


def citeledger_reason(pith_notice_reason: str | None) -> str | None:
    if pith_notice_reason is None:
        return None
    return PITH_TO_CITELEDGER_REASON.get(pith_notice_reason, pith_notice_reason)


# A notice source as Pith names it: Pith publishes ``crossref`` and ``retraction_watch``; the
# organisations citeledger also asks are named the same way. citeledger's own source names
# (``retraction_watch_csv``, ``crossref_publisher``) stay in the extension.
PITH_SOURCES = ("crossref", "retraction_watch", "openalex", "arxiv")


def pith_source(source: str) -> str:
    """``retraction_watch_doi_nature`` -> ``retraction_watch``: the organisation whose data it is."""
    low = source.lower()
    return next((name for name in PITH_SOURCES if low.startswith(name)), low)


# A coverage lane's state in Pith's words: ``measured`` (with how much of it: records_observed of
# the denominator, as Pith writes "measured 0 of 1"), or ``unavailable`` when nothing was measured.
PITH_LANE_STATES = ("measured", "unavailable")


# citeledger v2 ``coverage`` lane -> Pith ``coverage[].lane``, in Pith's order.
LANES: dict[str, str] = {
    "resolution": "reference_resolution",
    "notices": "standing_notices",
    "inbound": "inbound_itemization",
    "external_citations": "external_citation_measurements",
}
