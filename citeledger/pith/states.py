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


# citeledger notice ``reason`` -> Pith ``standing_notice.reason``. Pith's published records name
# one reason; citeledger's others have no published Pith name and keep citeledger's.
CITELEDGER_TO_PITH_REASON: dict[str, str] = {"no_canonical_work": "canonical_work_link_unavailable"}
PITH_TO_CITELEDGER_REASON: dict[str, str] = {v: k for k, v in CITELEDGER_TO_PITH_REASON.items()}


def pith_reason(citeledger_reason: str | None) -> str | None:
    if citeledger_reason is None:
        return None
    return CITELEDGER_TO_PITH_REASON.get(citeledger_reason, citeledger_reason)


def citeledger_reason(pith_notice_reason: str | None) -> str | None:
    if pith_notice_reason is None:
        return None
    return PITH_TO_CITELEDGER_REASON.get(pith_notice_reason, pith_notice_reason)


# citeledger v2 ``coverage`` lane -> Pith ``coverage[].lane``, in Pith's order.
LANES: dict[str, str] = {
    "resolution": "reference_resolution",
    "notices": "standing_notices",
    "inbound": "inbound_itemization",
    "external_citations": "external_citation_measurements",
}
