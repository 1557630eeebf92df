"""Title-less references by venue + volume + first page: ``G. Aad et al., Phys. Lett. B 716, 1 (2012)``.

The string's locators (``journal_ref.reference_locators``: each volume and the first page after
it, with the keys of the words before it as possible venues) are looked up in the catalog by
(venue key, volume, first page) through ``CatalogLookup.works_by_locator``. Every work found goes
through the verifier's features (``verify.features``) like a fuzzy candidate. The outcome links
only when all works found are one work (a preprint and its journal version are one; an erratum
or a duplicate record on the same page is another: too close to call) and nothing the string
says contradicts it: its first author, its year, its title (when it has one), a notice. The
outcome decides no state; ``resolution.rule_venue_locator`` does.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Sequence

from rapidfuzz import fuzz

from resolvers.catalog import LocatorKey
from resolvers.identifiers.journal_ref import Locator, ocr_skeleton, ocr_venue_key, reference_locators, venue_key
from resolvers.model import Reason, Work
from resolvers.parsing.fields import ParsedReference
from resolvers.parsing.text import STOPWORDS, normalise_text
from resolvers.verification.forms import RefView
from resolvers.verification.verify import Features, features, probability

RULE = "venue_volume_page"
# The string's own title contradicts the work as on the identifier path (``resolution``): a title
# whose words match the work's below 65 (token order aside), counted only when it holds at least
# three lower-case content words: what the parser isolates from a title-less string is names or
# the venue ("Li C-P, Roshchin IV", "Physics of Atomic Nuclei (J"), capitalised, never a title.
TITLE_MIN_WORDS = 3
TITLE_CONTRADICTS_BELOW = 65.0
_TITLE_WORD = re.compile(r"[^\W\d_]{4,}")


@dataclass(frozen=True, slots=True)
class LocatorOutcome:
    """``reason`` is ``VENUE_VOLUME_PAGE`` for a link (``work``, ``score``), else why not."""

    reason: Reason
    evidence: dict[str, Any]
    work: Work | None = None
    score: float | None = None

    @property
    def clear(self) -> bool:
        return self.reason is Reason.VENUE_VOLUME_PAGE


def string_locators(parsed: ParsedReference) -> list[Locator]:
    return reference_locators(parsed.text)


def string_ocr_locators(parsed: ParsedReference) -> list[Locator]:
    """The string's locators with OCR-tolerant venue keys (``journal_ref.ocr_venue_key``)."""
    return reference_locators(parsed.text, ocr_venue_key)


def ocr_found(keys: Sequence[LocatorKey], at_pages: dict[tuple[str, str], list[tuple[str, Work]]]
              ) -> dict[LocatorKey, list[Work]]:
    """The works printed at each (OCR venue key, volume, first page): those at the volume and
    page (``CatalogLookup.works_at_volume_page``) whose stored venue key has that skeleton."""
    out: dict[LocatorKey, list[Work]] = {}
    for key in keys:
        for page in page_variants(key[2]):
            for stored, work in at_pages.get((key[1], page), ()):
                if ocr_skeleton(stored) == key[0]:
                    out.setdefault(key, []).append(work)
    return out


def page_variants(page: str) -> list[str]:
    """A first page as OCR may have misread its leading letter ("c12874" for "e12874"): the page
    with each letter of the same ``ocr_skeleton`` in its place."""
    if not page[:1].isalpha():
        return [page]
    skeleton = ocr_skeleton(page[0])
    return [c + page[1:] for c in "abcdefghijklmnopqrstuvwxyz" if ocr_skeleton(c) == skeleton]


def lookup_keys(locators: Sequence[Locator]) -> list[LocatorKey]:
    return [(key, loc.volume, loc.first_page) for loc in locators for key in loc.keys]


def _one_work(a: Work, b: Work) -> bool:
    """Two catalog records of one work: the same id, or a DOI in common (preprint and journal)."""
    ids_a, ids_b = {a.doi, *a.alt_dois} - {None}, {b.doi, *b.alt_dois} - {None}
    return a.work_id == b.work_id or bool(ids_a & ids_b)


VENUE_SCRAPS_MAX = 10  # characters of key beside the venue's in a "title" that is the venue


def _title_is_locator(title: str | None, key: LocatorKey) -> bool:
    """The parser took the venue (and numbers) for a title: "Phys.Lett.B716:1-29,2012",
    "A. Phys.Rev.D", "Astrophys.J, vol"."""
    if not title:
        return False
    title_key = venue_key(title)
    return (key[0] in title_key and len(title_key) - len(key[0]) <= VENUE_SCRAPS_MAX) or \
        any(key[0] in loc.keys for loc in reference_locators(title))


def _contradiction(parsed: ParsedReference, work: Work, f: Features, key: LocatorKey, ocr: bool) -> str | None:
    """What the string says against the work, or None. A venue met only by its OCR skeleton
    needs the first author to agree as printed: the skeleton of one journal's name may be
    another's (Phys. Rev. E and Phys. Rev. C, which share volumes, years and article numbers)."""
    if ocr and f.author <= 0:
        return "nothing_agrees"
    title = "" if _title_is_locator(parsed.title, key) else (parsed.title or "")
    words = [w for w in _TITLE_WORD.findall(title) if w.islower() and w not in STOPWORDS]
    # a notice (an erratum, a reply) has its own page: a string with no title of its own cites
    # what is printed there, so only a title can say it cites another work than the notice
    if f.notice and len(words) >= TITLE_MIN_WORDS:
        return "notice"
    if f.author < 0:
        return "first_author"
    if f.year < 0:
        return "year"
    work_title = normalise_text(work.title)
    if len(words) >= TITLE_MIN_WORDS and work_title and f.title * 100 < TITLE_CONTRADICTS_BELOW \
            and fuzz.token_sort_ratio(normalise_text(title), work_title) < TITLE_CONTRADICTS_BELOW:
        return "title"
    return None


def _brief(work: Work) -> dict[str, Any]:
    return {"work_id": work.work_id, "title": work.title, "venue": work.venue, "volume": work.volume,
            "first_page": work.first_page, "year": work.year}


def match_locators(parsed: ParsedReference, keys: Sequence[LocatorKey],
                   found: dict[LocatorKey, list[Work]], ocr: bool = False) -> LocatorOutcome | None:
    """The outcome for one string, or None when no locator of it is in the catalog. ``ocr``: the
    keys are OCR skeletons (``ocr_found``). A work at the locator that the string contradicts
    (another first author, another year) is set aside when another one there fits."""
    hits: dict[str, tuple[LocatorKey, Work]] = {}
    for key in keys:
        for work in found.get(key, ()):
            hits.setdefault(work.work_id, (key, work))
    if not hits:
        return None
    # the journal version before its preprint; then the smallest id
    works = sorted((w for _, w in hits.values()), key=lambda w: (w.type in ("preprint", "posted-content"), w.work_id))
    view = RefView.of(parsed)
    checked = []
    for work in works:
        f = replace(features(view, work), venue=1)  # the venue agreed, by its key
        checked.append((work, f, _contradiction(parsed, work, f, hits[work.work_id][0], ocr)))
    fitting = [c for c in checked if c[2] is None]
    best, f, against = (fitting or checked)[0]
    key = hits[best.work_id][0]
    evidence: dict[str, Any] = {
        "rule": RULE, "locator": {"venue_key": key[0], "volume": key[1], "first_page": key[2], **(
            {"venue_ocr_skeleton": True} if ocr else {})},
        "work": _brief(best), "thresholds": {"title_contradicts_below": TITLE_CONTRADICTS_BELOW}}
    others = [w for w, _, _ in (fitting or checked)[1:] if not _one_work(w, best)]
    if others:
        evidence["same_locator"] = [_brief(w) for w in others[:3]]
        return LocatorOutcome(Reason.TOO_CLOSE_TO_CALL, evidence)
    set_aside = [w for w, _, why in checked if why is not None and not _one_work(w, best)] if fitting else []
    if set_aside:
        evidence["same_locator_contradicted"] = [_brief(w) for w in set_aside[:3]]
    evidence["features"] = f.as_dict()
    if against is not None:
        evidence["contradicts"] = against
        return LocatorOutcome(Reason.BELOW_THRESHOLD, evidence)
    return LocatorOutcome(Reason.VENUE_VOLUME_PAGE, evidence, best, round(probability(f), 4))
