"""The exact path's test over every field: does the string describe another work than the one
its identifier names?

A title says little when it is short ("Deep learning", "Self-harm"), so an identifier pasted
onto another work's string can pass the title test. The locator fields then decide: venue,
volume, first page, year and first author. Each field is compared only when it is clearly
present on both sides; absence is never contradiction. Each comparison forgives what real
strings do to a true link:

- venue: abbreviations (``Phys. Rev. Lett.`` for ``Physical Review Letters``), acronyms
  (``PNAS``), extra words (``Nature (London)``); a venue contradicts only when no word of either
  side abbreviates a word of the other;
- volume, first page: compared as numbers of the string (leading zeros aside), and they
  contradict only when the work's number is nowhere in the string *and* the parser read another
  one for that field (an article number beside a page range is then no contradiction as long as
  either is in the string);
- year: a year off by one (online versus print) agrees; later years never contradict a preprint
  or a book (journal versions, reprints, editions);
- first author: name forms and transliteration (the work's surname anywhere in the string, or a
  parsed surname within edit distance); collaborations are not compared.

Identifiers are masked first: the DOI ``10.1103/PhysRevD.76.013009`` must not vouch for volume 76.
One field can be a misprint or a parse error, so a verdict needs two contradicting fields and
more contradictions than agreements (three when the work's own long title is in the string).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from rapidfuzz import fuzz

from resolvers.identifiers.journal_ref import number_key
from resolvers.model import Work
from resolvers.parsing.fields import ParsedReference, lead_is_title
from resolvers.parsing.lazy import masked_text
from resolvers.parsing.text import compact, fold
from resolvers.verification.forms import NUMBER_TOKEN
from resolvers.verification.verify import AUTHOR_SIMILAR_AT, number_agreement, surname, year_agreement

MIN_CONTRADICTIONS = 2
MIN_CONTRADICTIONS_WITH_TITLE = 3
YEAR_EARLY_TOLERANCE = 1
YEAR_LATE_TOLERANCE = 1
# works cited years after their date without contradiction: journal versions, reprints, editions
LATE_YEARS_FREE = frozenset({"preprint", "posted-content", "book", "monograph", "edited-book",
                             "reference-book", "book-chapter", "dataset", "other"})
_GROUP_AUTHOR = re.compile(r"(?i)\b(?:collaboration|consortium|group|committee|team|organi[sz]ation|"
                           r"society|association|investigators|project)\b")
_LETTERS = re.compile(r"[a-z]+")
# ``verify.YEAR_TOKEN``'s years, found from the year's digits with the look-behind after them (the
# digit before the year is the fifth character back): the same matches, but the regex skips to
# each "1" or "2" instead of trying the look-behind at every character (3x on a reference).
_YEAR_TOKEN = re.compile(r"(1[5-9]\d\d|20[0-4]\d)(?<!\d[\s\S]{4})(?!\d)")
_SMALL_WORDS = frozenset({"of", "the", "and", "in", "for", "on", "de", "der", "des", "la", "le", "und", "et"})
_VENUE_FILLER = frozenset({"of", "the", "and", "in", "for", "on", "part", "series", "section", "de", "der",
                           "des", "la", "le", "und", "et", "proc", "proceedings", "journal", "j"})


@dataclass
class FieldCheck:
    """The verdict of each compared field: ``contradicts`` and ``agrees`` name the fields,
    ``details`` holds both sides of each contradiction for the evidence."""

    contradicts: list[str] = field(default_factory=list)
    agrees: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    def record(self, name: str, verdict: int, string_side: Any = None, work_side: Any = None) -> None:
        if verdict < 0:
            self.contradicts.append(name)
            self.details[name] = {"string": string_side, "work": work_side}
        elif verdict > 0:
            self.agrees.append(name)


def _venue_words(text: str) -> list[str]:
    return [w for w in _LETTERS.findall(fold(text)) if w not in _VENUE_FILLER and len(w) >= 2]


def _abbreviates(short: str, long: str) -> bool:
    return long.startswith(short) and (len(short) >= 3 or short == long)


def _abbreviated_in(word: str, words: list[str]) -> bool:
    """Does any of ``words`` abbreviate ``word`` or ``word`` it? (A word itself among them is
    the usual answer, found without the pairwise test.)"""
    return word in words or any(_abbreviates(s, word) or _abbreviates(word, s) for s in words)


def _venue_verdict(work_venue: str | None, string_text: str, parsed_venue: str | None) -> int:
    """+1 most of the work's venue words are abbreviated in the string, -1 the string names a
    venue none of whose words (or whose initials) abbreviates any of the work's, 0 otherwise."""
    work_words = _venue_words(work_venue or "")
    if not work_words:
        return 0
    string_words = _venue_words(string_text)
    found = sum(_abbreviated_in(w, string_words) for w in work_words)
    if 2 * found >= len(work_words):
        return 1
    venue_words = _venue_words(parsed_venue or "")
    if len("".join(venue_words)) < 3 or found:
        return 0
    initials, work_initials = _initials(parsed_venue or ""), _initials(work_venue or "")
    if any(len(w) >= 2 and w in (initials, work_initials) for w in work_words + venue_words):
        return 0  # an acronym of the other side ("PNAS", "JAMA")
    return -1


def _initials(text: str) -> str:
    """The acronym of a venue: "Proceedings of the National Academy of Sciences" -> "pnas"."""
    return "".join(w[0] for w in _LETTERS.findall(fold(text)) if w not in _SMALL_WORDS)


def names_venue(text: str | None, venue: str | None) -> bool:
    """Is this text (a parsed "title") the work's venue itself, abbreviated or not? A title-less
    string ("J. Smith, Journal of Adolescent Health 20, 360") is no title that contradicts."""
    words, venue_words = _venue_words(text or ""), _venue_words(venue or "")
    if not words or not venue_words:
        return False
    if not all(_abbreviated_in(w, venue_words) for w in words):  # (usually decided by the first word)
        return False
    return 2 * sum(_abbreviated_in(v, words) for v in venue_words) >= len(venue_words)


def _year_verdict(work: Work, years: list[int]) -> int:
    late = 10_000 if (work.type or "") in LATE_YEARS_FREE else YEAR_LATE_TOLERANCE
    return year_agreement(work.year, years, late, YEAR_EARLY_TOLERANCE)


def _author_verdict(work: Work, parsed: ParsedReference, text_compact: str) -> int:
    """+1 the work's first author is in the string; -1 it is not, and the string's first author
    is none of the work's first three (the order of the others may differ); 0 otherwise. Group
    authors are not compared."""
    names = [n for n in work.authors[:3] if n]
    if lead_is_title(parsed, work.title):
        return 0  # "LLaMA: ..." named no author
    if not names or _GROUP_AUTHOR.search(" ".join(names)) or _GROUP_AUTHOR.search(parsed.author_block or ""):
        return 0
    surnames = [s for s in (compact(surname(n)) for n in names) if len(s) >= 2]
    if not surnames:
        return 0
    if len(surnames[0]) >= 3 and surnames[0] in text_compact:
        return 1
    first = compact(parsed.authors[0]) if parsed.authors else ""
    if len(first) < 2 or any(fuzz.ratio(first, s) >= AUTHOR_SIMILAR_AT for s in surnames):
        return 0
    return -1


class StringNumbers:
    """The string's numbers as ``number_key`` makes them, for ``in`` tests: a key that is not
    even a substring of the lower-case string is none of them, and only otherwise is the set of
    its numbers made (most works' volumes and pages are not in a string that cites a preprint)."""

    __slots__ = ("text", "lower", "keys")

    def __init__(self, text: str) -> None:
        self.text, self.lower = text, text.lower()
        self.keys: set[str] | None = None

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str) or key not in self.lower:
            return False  # (a key is a number's lower-case text without its leading zeros)
        if self.keys is None:
            self.keys = {number_key(m.group(0)) for m in NUMBER_TOKEN.finditer(self.text)}
        return key in self.keys


def _number_verdict(value: str, numbers: StringNumbers, parsed: Callable[[], str | None]) -> int:
    """``number_agreement`` of the work's volume or first page, reading the parsed one only when
    it decides (a number of the work's that is not in the string)."""
    if not value or not value.isdigit() or number_key(value) in numbers:
        return number_agreement(value, numbers, None, number_key)
    return number_agreement(value, numbers, parsed(), number_key)


def check_fields(raw: str, parsed: ParsedReference, work: Work) -> FieldCheck:
    """Compare venue, volume, first page, year and first author of the string and the work."""
    text = masked_text(parsed, raw)
    numbers = {number_key(m.group(0)) for m in NUMBER_TOKEN.finditer(text)}
    check = FieldCheck()
    check.record("venue", _venue_verdict(work.venue, text, parsed.venue), parsed.venue, work.venue)
    # numbers compared leading zeros aside, as the locator lookups compare them
    check.record("volume", number_agreement((work.volume or "").strip(), numbers, parsed.volume, number_key),
                 parsed.volume, work.volume)
    check.record("first_page", number_agreement((work.first_page or "").strip(), numbers, parsed.first_page,
                                                number_key), parsed.first_page, work.first_page)
    years = [int(y) for y in _YEAR_TOKEN.findall(text)]
    check.record("year", _year_verdict(work, years), years, work.year)
    check.record("first_author", _author_verdict(work, parsed, compact(text)),
                 parsed.authors[:1], list(work.authors[:1]))
    return check


def contradicting_fields(raw: str, parsed: ParsedReference, work: Work, strong_title: bool) -> FieldCheck | None:
    """``check_fields`` when its fields contradict the work (``fields_contradict``), else None.
    Most identifier hits agree, so the fields are judged cheapest first (numbers, year, then venue
    and author) and the judging stops as soon as the fields left could no longer make enough
    contradictions; only a string that may contradict is checked in full, for its evidence."""
    needed = MIN_CONTRADICTIONS_WITH_TITLE if strong_title else MIN_CONTRADICTIONS
    text = masked_text(parsed, raw)
    numbers = StringNumbers(text)
    verdicts = (lambda: _number_verdict((work.volume or "").strip(), numbers, lambda: parsed.volume),
                lambda: _number_verdict((work.first_page or "").strip(), numbers, lambda: parsed.first_page),
                lambda: _year_verdict(work, [int(y) for y in _YEAR_TOKEN.findall(text)]) if work.year else 0,
                lambda: _venue_verdict(work.venue, text, parsed.venue),
                lambda: _author_verdict(work, parsed, compact(text)))
    contradicts = agrees = 0
    for judged, verdict in enumerate(verdicts, 1):
        v = verdict()
        contradicts, agrees = contradicts + (v < 0), agrees + (v > 0)
        left = len(verdicts) - judged
        if contradicts + left < needed or contradicts + left <= agrees:
            return None
    check = check_fields(raw, parsed, work)
    return check if fields_contradict(check, strong_title) else None


def fields_contradict(check: FieldCheck, strong_title: bool) -> bool:
    """Enough clearly contradicting fields, and more of them than agreeing ones."""
    needed = MIN_CONTRADICTIONS_WITH_TITLE if strong_title else MIN_CONTRADICTIONS
    return len(check.contradicts) >= needed and len(check.contradicts) > len(check.agrees)
