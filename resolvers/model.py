"""Typed records shared by every resolver module: works, references, verdicts.

A verdict is a state plus a reason, both enums (as fuzzycat's ``Status`` and ``Reason``), so the
ledger says not only *what* was decided but *which rule* decided it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping


class Status(str, Enum):
    """The contract's states, declared in the contract's order of precedence."""

    PARSE_UNCERTAIN = "parse_uncertain"
    VERIFIED_EXACT = "verified_exact"
    METADATA_MISMATCH = "metadata_mismatch"
    VERIFIED_FUZZY = "verified_fuzzy"
    MALFORMED_IDENTIFIER = "malformed_identifier"
    UNAVAILABLE = "unavailable"
    UNRESOLVED = "unresolved"

    @property
    def is_link(self) -> bool:
        """True when the observation asserts which work is cited (what precision counts): the one
        meaning of "linked" in citeledger (records, pages, the site, run summaries, exports)."""
        return self in (Status.VERIFIED_EXACT, Status.VERIFIED_FUZZY)

    @property
    def names_work(self) -> bool:
        """True when the observation carries a work: the links, and an identifier whose work
        the string contradicts (``metadata_mismatch``, shown with both sides)."""
        return self.is_link or self is Status.METADATA_MISMATCH


STATE_ORDER: tuple[Status, ...] = tuple(Status)
# the states of a link (``Status.is_link``), and of an observation carrying a work (``names_work``)
LINKED_STATES: frozenset[str] = frozenset(s.value for s in Status if s.is_link)
WORK_STATES: frozenset[str] = frozenset(s.value for s in Status if s.names_work)


def linked_count(by_status: Mapping[str, Any]) -> int:
    """The references linked to a work, from counts by state: ``verified_exact`` and
    ``verified_fuzzy`` only; a ``metadata_mismatch`` names a work the string contradicts and is
    counted on its own, never as a link. Every "linked" figure citeledger shows is this one."""
    return sum(int(by_status.get(state) or 0) for state in LINKED_STATES)


class Reason(str, Enum):
    """Why a rule decided as it did. One reason per verdict; details go to ``evidence``."""

    # parse_uncertain
    BST_ARTEFACT = "bst_artefact"
    AUTHOR_FRAGMENT = "author_fragment"
    AUTHOR_LIST_NO_TITLE = "author_list_no_title"  # names only, any number of them
    TITLE_CUT_SHORT = "title_cut_short"  # authors, year, and a title cut off where no title ends
    TOO_SHORT = "too_short"
    NO_WORDS = "no_words"
    # verified_exact / metadata_mismatch
    ARXIV_ID_MATCH = "arxiv_id_match"
    DOI_MATCH = "doi_match"
    TITLE_CONTRADICTS = "title_contradicts"
    YEAR_CONTRADICTS = "year_contradicts"
    # venue, volume, first page, year, first author: resolvers/verification/contradiction.py
    FIELDS_CONTRADICT = "fields_contradict"
    # verified_fuzzy
    FUZZY_MATCH = "fuzzy_match"
    VENUE_VOLUME_PAGE = "venue_volume_page"  # a title-less string's venue, volume and first page
    # malformed_identifier
    MALFORMED_ARXIV_ID = "malformed_arxiv_id"
    MALFORMED_DOI = "malformed_doi"
    # unavailable
    REMOTE_UNAVAILABLE = "remote_unavailable"
    # unresolved
    IDENTIFIER_NOT_IN_CATALOG = "identifier_not_in_catalog"
    NO_CANDIDATES = "no_candidates"
    BELOW_THRESHOLD = "below_threshold"
    TOO_CLOSE_TO_CALL = "too_close_to_call"
    NOTICE_NOT_WORK = "notice_not_work"
    NO_IDENTIFIER = "no_identifier"


@dataclass(frozen=True, slots=True)
class Work:
    """A known work of the catalog. ``doi`` is lower-case, ``arxiv_id`` canonical, no version."""

    work_id: str
    doi: str | None = None
    arxiv_id: str | None = None
    title: str | None = None
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str | None = None
    volume: str | None = None
    first_page: str | None = None
    pmid: str | None = None
    type: str | None = None
    # Other identifiers of the same work: an arXiv record's journal DOI, 10.48550/arXiv.X, ...
    alt_dois: tuple[str, ...] = ()
    withdrawn: bool = False


@dataclass(frozen=True, slots=True)
class Reference:
    """One input row: a raw reference string at a position in a citing paper's list."""

    citing_paper: str
    reference_index: int
    raw: str
    source: str = "unknown"
    # where the row came from, for error messages and rejects
    file: str | None = None
    line: int | None = None
    # what the source said field by field, under BibTeX's names (a .bib entry's, GROBID's parse of
    # a PDF's reference): the parser takes them over its own reading of ``raw``. Sorted pairs.
    fields: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class MalformedToken:
    """An identifier-like token that is not well formed, and why."""

    scheme: str  # "arxiv" or "doi"
    token: str
    why: str


@dataclass(frozen=True, slots=True)
class ExtractedIdentifiers:
    """Every identifier found in a raw string, normalised, in order of first appearance."""

    dois: tuple[str, ...] = ()
    arxiv_ids: tuple[str, ...] = ()
    malformed: tuple[MalformedToken, ...] = ()

    @property
    def any_wellformed(self) -> bool:
        return bool(self.dois or self.arxiv_ids)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The decision for one reference: a state, the rule's reason, the work (if any) and why."""

    status: Status
    reason: Reason
    work: Work | None = None
    resolver_source: str | None = None
    score: float | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
