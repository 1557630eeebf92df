"""What the rules of the resolution chain see: one reference with its parse and the outcomes gathered
for it (``ReferenceContext``), the batch's catalog and remote answers (``BatchContext``), and the
shape of a rule (``Rule``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from resolvers.candidates.fuzzy import FuzzyOutcome
from resolvers.candidates.locator_match import (
    LocatorOutcome,
)
from resolvers.model import ExtractedIdentifiers, Reason, Reference, Verdict, Work
from resolvers.parsing.fields import ParsedReference


@dataclass
class ReferenceContext:
    reference: Reference
    ids: ExtractedIdentifiers
    parsed: ParsedReference
    uncertain_reason: Reason | None = None
    fuzzy: FuzzyOutcome | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    locator: LocatorOutcome | None = None
    # the identifier rule's verdict, once the batch's lookups are in (``identify``): the chain
    # runs that rule, with its agreement checks, once per reference
    identified: Verdict | None = None
    identifier_tried: bool = False

@dataclass
class BatchContext:
    """What the rules may consult: catalog and remote answers gathered for the whole batch."""

    by_arxiv: dict[str, Work]
    by_doi: dict[str, Work]
    remote_failed: dict[str, str]  # identifier -> why the remote could not answer
    remote_found: dict[str, str] = field(default_factory=dict)  # identifier -> service that found it

Rule = Callable[[ReferenceContext, BatchContext], Verdict | None]
